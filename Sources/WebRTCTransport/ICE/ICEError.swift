/// What went wrong in the ICE layer, in words a person can act on.
public enum ICEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A remote `candidate:` line libnice could not take.
    case malformedCandidate(line: String, reason: String)
    /// A STUN/TURN URL that does not parse.
    case invalidServerURL(String, String)
    /// A STUN/TURN host name that did not resolve.
    case unresolvableHost(String)
    /// A STUN/TURN host name whose lookup took longer than the deadline.
    case resolutionTimedOut(host: String, after: Duration)
    /// libnice refused to create the agent or its stream.
    case agentSetupFailed(String)
    /// libnice found no address to gather on (or no port in range).
    case gatheringFailed
    /// libnice rejected credentials (empty, too short or too long).
    case credentialsRejected(ufrag: String)
    /// Called before `start()`.
    case notStarted
    /// `start()` called twice.
    case alreadyStarted
    /// The agent was closed.
    case closed
    /// The GLib loop the agent lives on has stopped.
    case loopStopped

    public var description: String {
        switch self {
        case .malformedCandidate(let line, let reason):
            return "ice: malformed remote candidate \"\(line)\": \(reason)"
        case .invalidServerURL(let url, let reason):
            return "ice: invalid STUN/TURN server \"\(url)\": \(reason)"
        case .unresolvableHost(let host):
            return "ice: could not resolve the STUN/TURN host \"\(host)\"; check the name and the network"
        case .resolutionTimedOut(let host, let after):
            return
                "ice: the STUN/TURN host \"\(host)\" did not resolve within \(after.secondsText); check the name and "
                + "the network's DNS"
        case .agentSetupFailed(let what):
            return "ice: libnice could not set up the agent (\(what))"
        case .gatheringFailed:
            return "ice: libnice could not gather candidates: no usable local address (check the allowed interfaces)"
        case .credentialsRejected(let ufrag):
            return
                "ice: libnice rejected the remote credentials (ufrag \"\(ufrag)\"); RFC 8445 needs a ufrag of 4+ and a pwd of 22+ characters"
        case .notStarted: return "ice: the agent has not been started"
        case .alreadyStarted: return "ice: the agent has already been started"
        case .closed: return "ice: the agent is closed"
        case .loopStopped: return "ice: the GLib loop the agent runs on has stopped"
        }
    }
}
