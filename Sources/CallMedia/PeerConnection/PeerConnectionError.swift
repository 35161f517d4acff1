/// Why a peer-connection call was refused, in words a person can act on.
public enum PeerConnectionError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The text is not SDP (the parser's reason follows).
    case notSDP(String)
    /// The description is SDP but cannot be used (no fingerprint, no ICE credentials, no codec…).
    case unusableDescription(String)
    /// The call does not fit where the exchange stands (an answer without an offer, …).
    case wrongState(String)
    /// Sending was asked of a transceiver that does not send that.
    case notSending(String)
    /// ICE, DTLS or SRTP failed, or the connection was closed.
    case connectionFailed(String)
    /// A local part could not start (ICE agent, certificate, decoder).
    case localFailure(String)

    public var description: String {
        switch self {
        case .notSDP(let reason): "the remote description is not valid SDP: \(reason)"
        case .unusableDescription(let reason): reason
        case .wrongState(let reason): reason
        case .notSending(let reason): reason
        case .connectionFailed(let reason): "connection \(reason)"
        case .localFailure(let reason): reason
        }
    }
}
