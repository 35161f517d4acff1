internal import CNice
import ShareCore
import Synchronization

/// What an `ICEAgent`'s callers (any thread) and its loop-thread core share: status behind a
/// `Locked`, counters as atomics, the event streams' continuations, and the send target.
final class ICEShared: Sendable {
    /// The agent pointer the send path uses. `nice_agent_send` takes libnice's own agent mutex
    /// (agent.c, `nice_agent_send_messages_nonblocking_internal`), so any thread may call it; the
    /// `Locked` around this target only keeps the agent from being released during a send.
    struct SendTarget: @unchecked Sendable {
        let agent: OpaquePointer
        let streamID: UInt32
    }

    private struct Status {
        var state: ICEAgent.State = .new
        var selectedPair: ICEAgent.SelectedPair?
        var localCredentials: ICEAgent.Credentials?
        var remoteCredentials: ICEAgent.Credentials?
        var receiveHandler: ICEAgent.ReceiveHandler?
        var started = false
        var ended = false
    }

    private let status = Locked(Status())
    private let sendTarget = Locked<SendTarget?>(nil)
    private let datagramsSent = Atomic<Int>(0)
    private let bytesSent = Atomic<Int>(0)
    private let sendsRefused = Atomic<Int>(0)
    private let datagramsReceived = Atomic<Int>(0)
    private let bytesReceived = Atomic<Int>(0)
    private let stateContinuation: AsyncStream<ICEAgent.State>.Continuation
    private let candidateContinuation: AsyncStream<ICEAgent.LocalCandidateEvent>.Continuation

    init(
        stateContinuation: AsyncStream<ICEAgent.State>.Continuation,
        candidateContinuation: AsyncStream<ICEAgent.LocalCandidateEvent>.Continuation
    ) {
        self.stateContinuation = stateContinuation
        self.candidateContinuation = candidateContinuation
    }

    // MARK: Read by callers

    var state: ICEAgent.State { status.withLock { $0.state } }
    var selectedPair: ICEAgent.SelectedPair? { status.withLock { $0.selectedPair } }
    var localCredentials: ICEAgent.Credentials? { status.withLock { $0.localCredentials } }
    var remoteCredentials: ICEAgent.Credentials? { status.withLock { $0.remoteCredentials } }
    var localUfrag: String { status.withLock { $0.localCredentials?.ufrag ?? "" } }

    var counters: ICEAgent.Counters {
        ICEAgent.Counters(
            datagramsSent: datagramsSent.load(ordering: .relaxed),
            bytesSent: bytesSent.load(ordering: .relaxed),
            sendsRefused: sendsRefused.load(ordering: .relaxed),
            datagramsReceived: datagramsReceived.load(ordering: .relaxed),
            bytesReceived: bytesReceived.load(ordering: .relaxed))
    }

    // MARK: Lifecycle

    func setReceiveHandler(_ handler: @escaping ICEAgent.ReceiveHandler) throws(ICEError) {
        try status.withLock { (status: inout Status) throws(ICEError) in
            guard !status.started else { throw .alreadyStarted }
            status.receiveHandler = handler
        }
    }

    /// Marks the agent started; returns the receive handler to install.
    func markStarted() throws(ICEError) -> ICEAgent.ReceiveHandler? {
        try status.withLock { (status: inout Status) throws(ICEError) -> ICEAgent.ReceiveHandler? in
            if status.ended { throw .closed }
            guard !status.started else { throw .alreadyStarted }
            status.started = true
            return status.receiveHandler
        }
    }

    func requireStarted() throws(ICEError) {
        try status.withLock { (status: inout Status) throws(ICEError) in
            if status.ended { throw .closed }
            guard status.started else { throw .notStarted }
        }
    }

    func begin(credentials: ICEAgent.Credentials, target: SendTarget) {
        status.withLock { $0.localCredentials = credentials }
        sendTarget.withLock { $0 = target }
    }

    func restarted(credentials: ICEAgent.Credentials) {
        status.withLock {
            $0.localCredentials = credentials
            $0.remoteCredentials = nil
            $0.selectedPair = nil
        }
    }

    func setRemoteCredentials(_ credentials: ICEAgent.Credentials) {
        status.withLock { $0.remoteCredentials = credentials }
    }

    func setSelectedPair(_ pair: ICEAgent.SelectedPair) {
        status.withLock { $0.selectedPair = pair }
    }

    /// Stops sending, publishes `.closed` and finishes both streams. Idempotent.
    func end() {
        sendTarget.withLock { $0 = nil }
        let first = status.withLock { status -> Bool in
            defer { status.ended = true; status.state = .closed; status.started = true }
            return !status.ended
        }
        guard first else { return }
        stateContinuation.yield(.closed)
        stateContinuation.finish()
        candidateContinuation.finish()
    }

    // MARK: Events (loop thread)

    func publish(_ state: ICEAgent.State, logger: Logger) {
        let (changed, pair) = status.withLock { status -> (Bool, ICEAgent.SelectedPair?) in
            guard !status.ended, status.state != state else { return (false, nil) }
            status.state = state
            return (true, status.selectedPair)
        }
        guard changed else { return }
        switch state {
        case .failed(let reason): logger.warning(reason, ["ice.state": "failed"])
        case .connected, .completed:
            logger.info(
                "ICE \(state)",
                pair.map { ["ice.state": "\(state)", "ice.pair": $0.description] } ?? ["ice.state": "\(state)"])
        default: logger.debug("ICE \(state)", ["ice.state": "\(state)"])
        }
        stateContinuation.yield(state)
    }

    func candidate(_ event: ICEAgent.LocalCandidateEvent) {
        guard !status.withLock({ $0.ended }) else { return }
        candidateContinuation.yield(event)
    }

    func countReceived(_ length: Int) {
        datagramsReceived.add(1, ordering: .relaxed)
        bytesReceived.add(length, ordering: .relaxed)
    }

    // MARK: Data (any thread)

    func send(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return false }
        let sent = sendTarget.withLock { target -> Int32 in
            guard let target else { return -1 }
            return nice_agent_send(
                target.agent, target.streamID, ICENiceAgent.componentID, guint(buffer.count),
                base.assumingMemoryBound(to: gchar.self))
        }
        guard sent == Int32(buffer.count) else {
            sendsRefused.add(1, ordering: .relaxed)
            return false
        }
        datagramsSent.add(1, ordering: .relaxed)
        bytesSent.add(buffer.count, ordering: .relaxed)
        return true
    }
}
