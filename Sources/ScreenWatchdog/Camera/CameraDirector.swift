import Foundation
import ScreenCapture
import ShareCore

/// One step of the director, for the person: its words and when it happened (monotonic
/// microseconds; for "Using NAME…" the capture time of that camera's first frame).
public struct CameraStep: Sendable {
    public var words: String
    public var atMicros: Int64
}

/// Carries out `CameraDirectorRules`: lists cameras (V4L2 and synthetic), follows hot-plug
/// (inotify on /dev), opens and closes `ManagedCamera`s, feeds the frames of whichever is current
/// into one `CameraFeed`, remembers the chosen camera, and says every step. Holds control state
/// only; frame counts are atomics read each tick.
public actor CameraDirector {
    public enum Choice: Sendable, Equatable {
        /// The remembered camera, else the first.
        case auto
        /// A camera by stable id, device node, name or `synthetic:NAME`; it becomes the remembered one.
        case device(String)
    }

    enum Event: Sendable {
        case tick
        case look
        /// A node appeared in /dev: look now, and once more when its driver has settled.
        case nodeAppeared
        case opened(attempt: Int, result: ManagedCamera.OpenResult, camera: ManagedCamera)
        case ended(attempt: Int, end: CameraEnd)
        case refused(attempt: Int, reason: String)
    }

    public nonisolated let feed = CameraFeed()
    private let providers: [any CameraProvider]
    private let choice: Choice
    private let memory: CameraMemory?
    private let logger: Logger
    private let onStep: @Sendable (CameraStep) -> Void
    private let tickInterval: Duration
    /// The look shortly after a device node appeared.
    private var secondLook = SecondLook()
    private var rules = CameraDirectorRules(remembered: nil)
    private var cameras: [(info: CameraInfo, provider: any CameraProvider)] = []
    private var current: ManagedCamera?
    private let events: AsyncStream<Event>
    private let post: AsyncStream<Event>.Continuation

    public init(
        providers: [any CameraProvider], choice: Choice, memory: CameraMemory?, logger: Logger,
        tickInterval: Duration = .milliseconds(250), onStep: @escaping @Sendable (CameraStep) -> Void
    ) {
        self.providers = providers
        self.choice = choice
        self.memory = memory
        self.logger = logger
        self.tickInterval = tickInterval
        self.onStep = onStep
        (events, post) = AsyncStream.makeStream(of: Event.self)
    }

    /// The state in words.
    public var status: String { rules.status }

    /// The camera in use and its format, when one streams.
    public var using: (CameraInfo, CameraFormat)? {
        guard let current else { return nil }
        return (current.camera, current.format)
    }

    /// Runs until cancelled: follows, watches and switches cameras, then closes the last one.
    public func run() async {
        let post = self.post
        let watch = DeviceWatch(directory: "/dev") {
            // A node appears before its driver is ready: look now and once more shortly after (SecondLook).
            post.yield(.nodeAppeared)
        }
        if watch == nil { logger.warning("camera: cannot watch /dev for cameras; looking every 3 s only") }
        let list = await listCameras()
        rules = CameraDirectorRules(remembered: resolveChoice(list))
        await perform(rules.devices(list.map(Self.describe), now: .now))

        let interval = tickInterval
        // The ticks come from a child that ends with the run.
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    post.yield(.tick)
                }
            }
            defer { group.cancelAll() }
            let pollsSynthetic = providers.contains { $0 is SyntheticCameras }
            await withTaskCancellationHandler {
                for await event in events {
                    if Task.isCancelled { break }
                    switch event {
                    case .tick:
                        if pollsSynthetic || secondLook.tick(now: .now) { await look() }
                        let frames = current.map { feed.frames(of: $0.attempt) } ?? 0
                        await perform(rules.tick(now: .now, frames: frames))
                    case .look:
                        await look()
                    case .nodeAppeared:
                        secondLook.nodeAppeared(now: .now)
                        await look()
                    case .opened(let attempt, let result, let camera):
                        guard attempt == rules.attempt, camera === current else {
                            await camera.close()
                            continue
                        }
                        switch result {
                        case .opened(let format):
                            logger.info(
                                "camera: opened \(camera.camera.name) at \(format)", ["camera.id": camera.camera.id])
                            await perform(rules.opened(attempt: attempt, now: .now))
                        case .failed(let reason):
                            await perform(rules.openFailed(attempt: attempt, reason: reason, now: .now))
                        }
                    case .refused(let attempt, let reason):
                        await perform(rules.openFailed(attempt: attempt, reason: reason, now: .now))
                    case .ended(let attempt, let end):
                        logger.info("camera: stream ended: \(end)")
                        var disconnected = false
                        if case .disconnected = end { disconnected = true }
                        await perform(rules.ended(attempt: attempt, disconnected: disconnected, now: .now))
                    }
                }
            } onCancel: {
                post.finish()
            }
        }
        if let watch { await onThread("camera-watch-stop") { watch.stop() } }
        await current?.close()
        current = nil
    }

    private func look() async {
        let list = await listCameras()
        await perform(rules.devices(list.map(Self.describe), now: .now))
    }

    /// Every provider's cameras, listed on a thread (enumeration makes blocking ioctls). A V4L2
    /// node that is still there but could not be read just now (busy while another node comes or
    /// goes) keeps the camera it had: only a node that is gone is an unplug.
    private func listCameras() async -> [CameraInfo] {
        let providers = self.providers
        let surveyed: [(path: String, result: Result<CameraInfo, CameraError>, provider: Int)] = await onThread(
            "camera-list"
        ) {
            providers.enumerated().flatMap { index, provider in
                if let v4l2 = provider as? V4L2Cameras { return v4l2.survey().map { ($0.path, $0.result, index) } }
                return provider.cameras().map { ($0.path, .success($0), index) }
            }
        }
        var found: [(CameraInfo, Int)] = []
        for entry in surveyed {
            switch entry.result {
            case .success(let info):
                found.append((info, entry.provider))
            case .failure(let error):
                logger.debug("camera: \(error.description)")
                if let kept = cameras.first(where: { $0.info.path == entry.path }) {
                    found.append((kept.info, entry.provider))
                }
            }
        }
        cameras = found.map { ($0.0, providers[$0.1]) }
        logger.debug("camera: listed \(found.count) cameras: \(found.map(\.0.path).joined(separator: " "))")
        return found.map(\.0)
    }

    static func describe(_ info: CameraInfo) -> CameraDirectorRules.Camera {
        CameraDirectorRules.Camera(id: info.id, name: info.name, formats: info.formats.map(\.description))
    }

    /// The remembered camera: the one asked for (and then saved), else the saved one.
    private func resolveChoice(_ list: [CameraInfo]) -> (id: String, name: String)? {
        switch choice {
        case .auto:
            return memory?.load()
        case .device(let wanted):
            let key = wanted.split(separator: "?", maxSplits: 1).first.map(String.init) ?? wanted
            let found = list.first { $0.id == key || $0.path == key || $0.name == key || "synthetic:\($0.path)" == key }
            let chosen = found.map { ($0.id, $0.name) } ?? (key, key)
            if found != nil { try? memory?.save(id: chosen.0, name: chosen.1) }
            return chosen
        }
    }

    private func say(_ words: String, at micros: Int64 = Clocks.monotonicMicros()) {
        logger.notice("camera: \(words)")
        onStep(CameraStep(words: words, atMicros: micros))
    }

    private func perform(_ actions: [CameraDirectorRules.Action]) async {
        for action in actions {
            switch action {
            case .say(let words):
                if words.hasPrefix("Using "), let first = feed.firstFrameAt {
                    say(words, at: first)
                } else {
                    say(words)
                }
            case .look:
                post.yield(.look)
            case .remember(let id, let name):
                do { try memory?.save(id: id, name: name) } catch {
                    logger.warning("camera: cannot remember the camera in \(memory?.path ?? "?"): \(error)")
                }
            case .close:
                await closeCurrent()
            case .open(let id, let format, let attempt):
                await closeCurrent()
                guard let entry = cameras.first(where: { $0.info.id == id }), format < entry.info.formats.count else {
                    post.yield(.refused(attempt: attempt, reason: "not listed any more"))
                    continue
                }
                let camera = ManagedCamera(
                    camera: entry.info, format: entry.info.formats[format], attempt: attempt,
                    provider: entry.provider)
                current = camera
                feed.switchTo(generation: attempt)
                let post = self.post, feed = self.feed
                Task {
                    let result = await camera.open(feed: feed) { end in post.yield(.ended(attempt: attempt, end: end)) }
                    post.yield(.opened(attempt: attempt, result: result, camera: camera))
                }
            }
        }
    }

    private func closeCurrent() async {
        guard let camera = current else { return }
        current = nil
        await camera.close()
    }
}
