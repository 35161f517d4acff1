/// Why the portal could not give us a screen, in words a person can act on.
public enum PortalError: Error, CustomStringConvertible, Sendable, Equatable {
    case noSessionBus(String)
    case noPortal(String)
    case noScreenCast(String)
    case tooOld(version: UInt32, needed: UInt32, feature: String)
    case refused(step: String, code: UInt32)
    case timedOut(step: String, seconds: Int)
    case pickerNeeded(String)
    case tokenRejected(String)
    case callFailed(method: String, errorName: String?, message: String)
    case noStreams
    case sessionClosed(String)
    case badReply(String)

    public var description: String {
        switch self {
        case .noSessionBus(let why):
            "portal: no D-Bus session bus (\(why)); screen capture needs a desktop session "
                + "(DBUS_SESSION_BUS_ADDRESS set, e.g. run from the session or via systemd --user)"
        case .noPortal(let why):
            "portal: xdg-desktop-portal is not running on the session bus (\(why)); install xdg-desktop-portal "
                + "and the backend for your desktop (xdg-desktop-portal-wlr for sway and wlroots, "
                + "xdg-desktop-portal-gnome, xdg-desktop-portal-kde)"
        case .noScreenCast(let why):
            "portal: the desktop portal offers no ScreenCast (\(why)); install the backend for your desktop "
                + "(xdg-desktop-portal-wlr for sway and wlroots, xdg-desktop-portal-gnome, xdg-desktop-portal-kde) "
                + "and make sure it is chosen for XDG_CURRENT_DESKTOP"
        case .tooOld(let version, let needed, let feature):
            "portal: ScreenCast version \(version) is too old for \(feature) (needs version \(needed)); "
                + "update xdg-desktop-portal and its backend"
        case .refused(let step, let code):
            code == 1
                ? "portal: the screen share was cancelled in the portal's dialog (\(step))"
                : "portal: the portal refused \(step) (response \(code))"
        case .timedOut(let step, let seconds):
            "portal: no answer to \(step) within \(seconds) s"
        case .pickerNeeded(let why):
            "portal: \(why); --unattended never opens a picker: run once without --unattended to choose "
                + "a screen, which saves a restore token for later runs"
        case .tokenRejected(let why):
            "portal: the saved restore token was refused (\(why)); run once without --unattended to grant again"
        case .callFailed(let method, let name, let message):
            "portal: \(method) failed: \(message)\(name.map { " (\($0))" } ?? "")"
        case .noStreams:
            "portal: Start returned no stream to capture"
        case .sessionClosed(let why):
            "portal: the screen share session was closed (\(why))"
        case .badReply(let why):
            "portal: unexpected reply: \(why)"
        }
    }
}
