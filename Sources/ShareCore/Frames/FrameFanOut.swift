import Synchronization

/// One frame source sent to several consumers (a call's screen or camera goes to every
/// connection): each consumer takes a `branch()`, a source of its own. Frames are values, so
/// nothing is copied until a consumer converts its own.
///
/// The one guarantee: **no frame reaches a branch after that branch's `stop()`, or the fan-out's,
/// has returned.** Each branch delivers under a lock of its own, which its `stop()` takes, so a
/// stop waits for a delivery already under way to that branch and no later one starts; branches
/// do not wait on one another. A branch's `deliver` must therefore be cheap (a queue push) and
/// must not stop or restart its own branch.
///
/// When the source runs (`Running`):
/// - `.whileBranchesRun`: from the first branch started to the last one stopped;
/// - `.betweenStartAndStop`: from the fan-out's `start()` to its `stop()`, whatever the branches
///   do (a capture that lives as long as the share, and branches that come and go with encoders).
///
/// Thread-safe: frames arrive on the source's thread; branches and the fan-out start and stop
/// from anywhere.
public final class FrameFanOut<Source: Sendable>: Sendable {
    public enum Running: Sendable { case whileBranchesRun, betweenStartAndStop }

    /// The source as its owner knows it (a supervised capture's restart and drills).
    public let source: Source
    private let frames: any VideoFrameSource
    private let running: Running
    /// Whether the source runs, decided and carried out under this lock so starts and stops of the
    /// source never cross.
    private let control: Locked<Control>
    private let branches = Locked<[Int: Branch]>([:])
    private let nextID = Atomic<Int>(0)

    private struct Control {
        var started: Bool
        var branchCount = 0
        var sourceRunning = false
    }

    public convenience init(_ source: Source, running: Running = .whileBranchesRun) where Source: VideoFrameSource {
        self.init(source, frames: source, running: running)
    }

    public convenience init(_ source: any VideoFrameSource, running: Running = .whileBranchesRun)
    where Source == any VideoFrameSource {
        self.init(source, frames: source, running: running)
    }

    private init(_ source: Source, frames: any VideoFrameSource, running: Running) {
        self.source = source
        self.frames = frames
        self.running = running
        control = Locked(Control(started: running == .whileBranchesRun))
    }

    /// Lets the source run (`.betweenStartAndStop`; with `.whileBranchesRun` it is allowed from
    /// the start, and this undoes a `stop()`).
    public func start() {
        reconcile { $0.started = true }
    }

    /// Stops the source; when this returns no frame reaches any branch until `start()`.
    public func stop() {
        reconcile { $0.started = false }
    }

    /// A source of its own for one consumer: the frames from its `start` to its `stop`.
    public func branch() -> any VideoFrameSource {
        Branch(fanOut: self, id: nextID.add(1, ordering: .relaxed).newValue)
    }

    /// A branch that takes over from `earlier`, a branch of the same fan-out started before it to
    /// hold the source running (a screen started beside ICE and DTLS, before its encoder): its
    /// `start` attaches it first and only then stops `earlier`, so the source never stops in
    /// between; its `stop` stops both, so `earlier` never outlives it.
    public func branch(takingOverFrom earlier: any VideoFrameSource) -> any VideoFrameSource {
        TakeOver(own: branch(), earlier: earlier)
    }

    private final class TakeOver: VideoFrameSource {
        let own: any VideoFrameSource
        let earlier: any VideoFrameSource

        init(own: any VideoFrameSource, earlier: any VideoFrameSource) {
            self.own = own
            self.earlier = earlier
        }

        func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
            own.start(deliver: deliver)
            earlier.stop()
        }

        func stop() {
            earlier.stop()
            own.stop()
        }
    }

    /// Applies `change` and starts or stops the source to match, under `control`.
    private func reconcile(_ change: (inout Control) -> Void) {
        let mode = running
        control.withLock { c in
            change(&c)
            let wanted = c.started && (mode == .betweenStartAndStop || c.branchCount > 0)
            guard wanted != c.sourceRunning else { return }
            c.sourceRunning = wanted
            if wanted {
                frames.start { [weak self] frame in self?.deliver(frame) }
            } else {
                frames.stop()  // returns when no more frames will arrive
            }
        }
    }

    private func deliver(_ frame: VideoFrame) {
        let all = branches.withLock { Array($0.values) }
        // Several encoders: one conversion of the frame for all of them.
        let frame = all.count > 1 ? frame.sharingConversions() : frame
        for branch in all { branch.deliver(frame) }
    }

    private func attach(_ branch: Branch) {
        let added = branches.withLock { $0.updateValue(branch, forKey: branch.id) == nil }
        if added { reconcile { $0.branchCount += 1 } }
    }

    private func detach(_ branch: Branch) {
        let removed = branches.withLock { $0.removeValue(forKey: branch.id) != nil }
        if removed { reconcile { $0.branchCount -= 1 } }
    }

    private final class Branch: VideoFrameSource {
        let fanOut: FrameFanOut
        let id: Int
        /// Where this branch's frames go while it is started; deliveries hold this lock.
        private let sink = Locked(FrameSink())

        init(fanOut: FrameFanOut, id: Int) {
            self.fanOut = fanOut
            self.id = id
        }

        func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
            sink.withLock { $0.deliver = deliver }
            fanOut.attach(self)
        }

        /// No frame reaches this branch after it returns.
        func stop() {
            sink.withLock { $0.deliver = nil }  // waits out a delivery under way
            fanOut.detach(self)
        }

        func deliver(_ frame: VideoFrame) {
            sink.withLock { $0.deliver?(frame) }
        }
    }
}
