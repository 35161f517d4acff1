/// When restore tokens are sent and what a Start's token means. Pure rules: the portal session
/// carries them out.
///
/// From ScreenCast version 4 the portal persists a grant (`persist_mode` 2: until revoked) and
/// returns a restore token with every Start; passing it back next time restores the same content
/// without a picker. A token it does not know makes it ask again (a picker on most desktops); a
/// malformed one is refused with an error.
public enum RestoreTokenPolicy {
    public static let firstVersion: UInt32 = 4
    public static let persistUntilRevoked: UInt32 = 2

    /// What SelectSources carries.
    public struct Plan: Sendable, Hashable {
        public var persistMode: UInt32?
        public var restoreToken: String?
        /// Whether Start may wait for a person at a picker. Unattended it may not: a Start that
        /// does not answer at once (the portal is showing a picker) is closed and fails.
        public var mayWaitForPerson: Bool

        public init(persistMode: UInt32?, restoreToken: String?, mayWaitForPerson: Bool) {
            self.persistMode = persistMode
            self.restoreToken = restoreToken
            self.mayWaitForPerson = mayWaitForPerson
        }
    }

    /// The plan for a session. `unattended` means no person is there to choose: the saved token
    /// is sent; without one, only a grant the portal makes by itself (a backend configured to
    /// choose, a pre-approved policy) can succeed; a portal that cannot restore is an error.
    public static func plan(version: UInt32, storedToken: String?, unattended: Bool) throws(PortalError) -> Plan {
        let token = storedToken.flatMap { $0.isEmpty ? nil : $0 }
        guard version >= firstVersion else {
            if unattended {
                throw .tooOld(version: version, needed: firstVersion, feature: "unattended use (restore tokens)")
            }
            return Plan(persistMode: nil, restoreToken: nil, mayWaitForPerson: true)
        }
        return Plan(persistMode: persistUntilRevoked, restoreToken: token, mayWaitForPerson: !unattended)
    }

    /// What a Start's returned token means, given what was sent.
    public enum Outcome: Sendable, Hashable {
        /// The grant was restored (same token back, or a new token for the same grant when sent one).
        case restored(save: String)
        /// A grant made now (no token was sent): save this token.
        case granted(save: String)
        /// A token was sent but the portal made a fresh grant under another token: the old one was
        /// stale. Save the new one.
        case replacedStale(save: String)
        /// No token came back (a portal before version 4, or persistence refused): nothing to save.
        case none
    }

    /// Some portals issue a new token for every restore, so a changed token alone does not prove a
    /// stale one; `askedPerson` (the Start needed a person's choice) does. Without that knowledge a
    /// changed token is reported as replacing a stale one.
    public static func outcome(sent: String?, received: String?) -> Outcome {
        guard let received, !received.isEmpty else { return .none }
        guard let sent, !sent.isEmpty else { return .granted(save: received) }
        return sent == received ? .restored(save: received) : .replacedStale(save: received)
    }

    /// After SelectSources or Start failed with a token sent: try once more without it (a new
    /// grant, with a picker) when a person is there; unattended, the failure stands.
    public static func retryWithoutToken(after error: PortalError, tokenSent: Bool, unattended: Bool) -> Bool {
        guard tokenSent, !unattended else { return false }
        switch error {
        case .callFailed, .refused(_, 2): return true
        default: return false
        }
    }
}
