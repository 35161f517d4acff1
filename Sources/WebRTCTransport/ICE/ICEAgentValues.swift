extension ICEAgent {
    /// The agent's connection state (RFC 8445 with libnice's names in brackets).
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// Created, not yet started.
        case new
        /// Gathering local candidates (also after a restart) [GATHERING].
        case gathering
        /// Checking candidate pairs [CONNECTING].
        case checking
        /// A pair works; media may flow [CONNECTED].
        case connected
        /// Nomination is done and checking has finished [READY].
        case completed
        /// No pair works, or consent was lost; `reason` says which, in words [FAILED].
        case failed(reason: String)
        /// `close()` was called.
        case closed

        public var description: String {
            switch self {
            case .new: "new"
            case .gathering: "gathering"
            case .checking: "checking"
            case .connected: "connected"
            case .completed: "completed"
            case .failed(let reason): "failed (\(reason))"
            case .closed: "closed"
            }
        }

        /// Connected or completed: datagrams can be sent.
        public var isConnected: Bool { self == .connected || self == .completed }
        public var isFailed: Bool { if case .failed = self { true } else { false } }
    }

    /// The reason given when a connected pair stops answering its checks for 50 s, or the peer
    /// revokes consent (a 403 to a check, RFC 7675 §5.2).
    public static let consentLostReason =
        "connection lost: the peer stopped answering connectivity checks for 50 s, or revoked consent"

    /// RFC 8445 §5.1.1 candidate types.
    public enum CandidateType: String, Sendable, Equatable { case host, srflx, prflx, relay }

    /// The pair libnice selected: what the "ice.pair" log metadata and diagnostics show.
    public struct SelectedPair: Sendable, Equatable, CustomStringConvertible {
        /// "address:port" (IPv6 in brackets).
        public var localAddress: String
        public var remoteAddress: String
        public var localType: CandidateType
        public var remoteType: CandidateType
        /// "udp" or "tcp".
        public var transport: String

        public var description: String {
            "\(localAddress) \(localType) <-> \(remoteAddress) \(remoteType) \(transport)"
        }
        /// "direct" or "relayed", as the status line says it.
        public var isRelayed: Bool { localType == .relay || remoteType == .relay }
    }

    /// RFC 8445 §5.3 short-term credentials of one side.
    public struct Credentials: Sendable, Equatable {
        public var ufrag: String
        public var pwd: String
        public init(ufrag: String, pwd: String) {
            self.ufrag = ufrag
            self.pwd = pwd
        }
    }

    /// What the local side trickles to the peer (RFC 8838).
    public struct LocalCandidateEvent: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// An SDP attribute value: `candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ host`.
            case candidate(String)
            /// Gathering finished for this generation: signal `a=end-of-candidates`.
            case endOfCandidates
        }
        public var kind: Kind
        /// The local ufrag this candidate belongs to (it changes on restart), for trickle fragments.
        public var ufrag: String
    }

    /// Datagrams and bytes through the agent, both ways.
    public struct Counters: Sendable, Equatable {
        public var datagramsSent = 0
        public var bytesSent = 0
        /// `send` calls that libnice refused (not connected yet, or the socket would block).
        public var sendsRefused = 0
        public var datagramsReceived = 0
        public var bytesReceived = 0
    }

    /// Called on the loop thread for each incoming datagram; the buffer is valid only during the
    /// call. Keep it cheap: copy or demux (RFC 7983 first byte) and return.
    public typealias ReceiveHandler = @Sendable (UnsafeRawBufferPointer) -> Void
}
