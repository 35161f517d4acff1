import GLibLoop
import ShareCore

/// One ICE agent per call leg (RFC 8445, libnice 0.1.21 in RFC 5245 compatibility mode): one
/// stream with one component, as BUNDLE and rtcp-mux need. Trickles both ways (RFC 8838), restarts
/// (§9), keeps checking the selected pair (lost after 50 s unanswered, or at once when the peer
/// revokes consent) and carries datagrams for the DTLS/SRTP layer above.
///
/// Thread-safe. libnice lives on the `GLibLoop` passed in: every libnice call runs on the loop
/// thread, reached without blocking through `invoke`; events and incoming datagrams arrive there.
/// `send` may be called from any thread.
///
///     let agent = ICEAgent(loop: loop, configuration: .init(role: .controlling), logger: logger)
///     try agent.setReceiveHandler { datagram in dtls.demux(datagram) }
///     let mine = try await agent.start()           // then trickle agent.localCandidates
///     try await agent.setRemoteCredentials(ufrag: theirs.ufrag, pwd: theirs.pwd)
///     try await agent.addRemoteCandidate("candidate:1 1 UDP 2013266431 127.0.0.1 40000 typ host")
public final class ICEAgent: Sendable {
    public let configuration: Configuration
    /// State changes, in order, ending with `.closed`. One consumer.
    public let stateChanges: AsyncStream<State>
    /// Local candidates and end-of-candidates as they are gathered (again after each restart),
    /// ending when the agent closes. One consumer.
    public let localCandidates: AsyncStream<LocalCandidateEvent>

    private let loop: GLibLoop
    private let logger: Logger
    private let shared: ICEShared
    private let core: LoopConfined<ICENiceAgent>

    public init(loop: GLibLoop, configuration: Configuration, logger: Logger) {
        self.loop = loop
        self.configuration = configuration
        self.logger = logger
        let (states, stateContinuation) = AsyncStream.makeStream(of: State.self)
        let (candidates, candidateContinuation) = AsyncStream.makeStream(of: LocalCandidateEvent.self)
        stateChanges = states
        localCandidates = candidates
        shared = ICEShared(stateContinuation: stateContinuation, candidateContinuation: candidateContinuation)
        core = LoopConfined(
            ICENiceAgent(loop: loop, shared: shared, configuration: configuration, logger: logger), on: loop)
    }

    deinit {
        // Hand the core to the loop thread, where it detaches its callbacks and releases libnice.
        // If the loop has stopped, the work is dropped and the core goes here: nothing calls back.
        core.invoke { $0.release() }
    }

    // MARK: State

    public var state: State { shared.state }
    /// The pair in use, once libnice has selected one (cleared by a restart).
    public var selectedPair: SelectedPair? { shared.selectedPair }
    /// This side's ufrag and pwd, once started (new after each restart).
    public var localCredentials: Credentials? { shared.localCredentials }
    public var remoteCredentials: Credentials? { shared.remoteCredentials }
    public var counters: Counters { shared.counters }

    // MARK: Setup

    /// Sets the handler for incoming datagrams. Only before `start()`.
    public func setReceiveHandler(_ handler: @escaping ReceiveHandler) throws(ICEError) {
        try shared.setReceiveHandler(handler)
    }

    /// Creates the libnice agent and starts gathering; candidates then arrive on
    /// `localCandidates`. Returns this side's credentials.
    @discardableResult
    public func start() async throws(ICEError) -> Credentials {
        let handler = try shared.markStarted()
        do {
            // All at once, each within 5 s (ICELocalAddresses.resolve): a DNS that hangs delays the
            // start by one deadline and then says which host it could not find.
            let stunServer = configuration.stunServer, turnServers = configuration.turnServers
            var addresses = try await ICELocalAddresses.resolveAll(
                (stunServer.map { [$0.host] } ?? [])
                    + turnServers.map(\.host))
            let resolvedSTUN = stunServer.map { ICEResolvedServer(address: addresses.removeFirst(), port: $0.port) }
            let resolvedTURN = zip(addresses, turnServers).map { ICEResolvedTURN(address: $0, server: $1) }
            let core = self.core
            return try await loop.iceWork { () throws(ICEError) -> Credentials in
                try core.value.start(stun: resolvedSTUN, turn: resolvedTURN, receiveHandler: handler)
            }
        } catch {
            logger.error("ICE could not start: \(error)")
            await close()
            throw error
        }
    }

    // MARK: Remote side

    /// The peer's RFC 8445 §5.3 credentials (from its SDP `a=ice-ufrag` / `a=ice-pwd`).
    public func setRemoteCredentials(ufrag: String, pwd: String) async throws(ICEError) {
        try shared.requireStarted()
        let core = self.core
        let credentials = Credentials(ufrag: ufrag, pwd: pwd)
        try await loop.iceWork { () throws(ICEError) in try core.value.setRemoteCredentials(credentials) }
    }

    /// Adds one trickled remote candidate: `candidate:...` or `a=candidate:...`. A line that is
    /// not a candidate throws `malformedCandidate` saying what is wrong; a candidate for another
    /// component than 1 is ignored (rtcp-mux).
    public func addRemoteCandidate(_ sdpLine: String) async throws(ICEError) {
        _ = try ICECandidateLine.attribute(sdpLine)
        try shared.requireStarted()
        let core = self.core
        _ = try await loop.iceWork { () throws(ICEError) -> Bool in try core.value.addRemoteCandidate(sdpLine) }
    }

    /// The peer has sent all its candidates (`a=end-of-candidates`): libnice may now conclude
    /// that ICE failed once every pair has.
    public func endOfRemoteCandidates() async throws(ICEError) {
        try shared.requireStarted()
        let core = self.core
        try await loop.iceWork { () throws(ICEError) in try core.value.endOfRemoteCandidates() }
    }

    /// ICE restart (RFC 8445 §9): new local credentials, the peer's candidates forgotten, local
    /// candidates trickled again under the new ufrag. Both sides restart; then exchange credentials
    /// and candidates as at the start.
    public func restart() async throws(ICEError) -> Credentials {
        try shared.requireStarted()
        let core = self.core
        return try await loop.iceWork { () throws(ICEError) -> Credentials in try core.value.restart() }
    }

    // MARK: Data

    /// Sends one datagram on the selected pair. Any thread. False when libnice refused it (not
    /// connected yet, consent revoked, socket full, or closed).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { shared.send($0) }
    }

    /// Sends one datagram from a buffer the caller owns. Any thread.
    @discardableResult
    public func send(_ buffer: UnsafeRawBufferPointer) -> Bool { shared.send(buffer) }

    // MARK: Close

    /// Detaches and releases the libnice agent on the loop thread; the streams end with `.closed`.
    public func close() async {
        let core = self.core
        let shared = self.shared
        do {
            try await loop.iceWork { core.value.release() }
        } catch {
            shared.end()  // the loop has stopped: nothing runs there any more
        }
    }
}
