import GLibLoop

/// The process's one GLib main loop: libnice, libsoup (the room server, WHIP and the room socket)
/// and GDBus (the portal) all run on its thread. Made when a command first needs it; the command
/// stops it once everything on it has stopped.
enum ProcessLoop {
    static let shared = GLibLoop(name: "glib")
}
