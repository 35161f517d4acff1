/// The camera director's decisions, as a pure state machine: it is told what is connected, what
/// opened or failed, when a stream ended and how many frames have arrived, always with `now`, and
/// answers with what to do (open a camera at one of its formats, look for cameras, say something,
/// remember a camera). `CameraDirector` carries the actions out.
///
/// - Remembered: the chosen camera, by stable id, with its name for while it is missing. Start on
///   it if connected, else on the first other camera, and say so.
/// - Followed: the camera in use disappearing (or dying: ENODEV, POLLERR, POLLHUP) falls back to
///   another at once; the remembered one coming back is switched back to; while no camera works,
///   a look every 3 s.
/// - Watched: no first frame 3 s after opening, or none for 3 s after frames → restart the same
///   device; still nothing → its next format → another camera. Nothing to fall back to: "No signal
///   from NAME — check its input", and the camera is kept (a later frame is noticed). A camera that
///   fell silent is returned to only after it reconnects (leaves the list and comes back).
/// - An open not finished in 6 s counts as refused (→ its next format). Restarts of the same
///   device at most once every 5 s.
public struct CameraDirectorRules: Sendable {
    public static let firstFrameLimit: Duration = .seconds(3)
    public static let silenceLimit: Duration = .seconds(3)
    public static let openLimit: Duration = .seconds(6)
    public static let restartSpacing: Duration = .seconds(5)
    public static let lookInterval: Duration = .seconds(3)

    public struct Camera: Sendable, Equatable {
        public var id: String
        public var name: String
        /// Its formats in the order they are tried, as words ("640×480 YUYV at 30 fps").
        public var formats: [String]

        public init(id: String, name: String, formats: [String]) {
            self.id = id
            self.name = name
            self.formats = formats
        }
    }

    public enum Action: Sendable, Equatable {
        /// Close whatever is open and open this camera at `formats[format]`; report back with `attempt`.
        case open(id: String, format: Int, attempt: Int)
        /// Close whatever is open (nothing left to use).
        case close
        /// List the connected cameras now and report them with `devices(_:now:)`.
        case look
        /// Keep this camera as the one to start on next time.
        case remember(id: String, name: String)
        /// A step in words, for the person.
        case say(String)
    }

    public enum Phase: Sendable, Equatable {
        /// No camera to use (none connected, or all silent).
        case noCamera
        case opening(since: ContinuousClock.Instant)
        case waitingForFirstFrame(since: ContinuousClock.Instant)
        case streaming(lastFrame: ContinuousClock.Instant)
        /// Kept although nothing arrives: nothing else to fall back to.
        case noSignal
    }

    public private(set) var remembered: (id: String, name: String)?
    public private(set) var connected: [Camera] = []
    public private(set) var current: Camera?
    public private(set) var formatIndex = 0
    public private(set) var phase: Phase = .noCamera
    public private(set) var attempt = 0
    /// Cameras that fell silent or died; cleared when they leave the list.
    public private(set) var silent: Set<String> = []
    private var started = false
    private var failures = 0
    private var lastOpen: ContinuousClock.Instant?
    private var lastLook: ContinuousClock.Instant?
    private var frames: UInt64 = 0
    private var saidNoCamera = false

    public init(remembered: (id: String, name: String)?) {
        self.remembered = remembered
    }

    /// The state in words.
    public var status: String {
        switch phase {
        case .noCamera: "No camera found"
        case .opening, .waitingForFirstFrame: "Starting camera…"
        case .streaming: "Using \(current?.name ?? "camera")"
        case .noSignal: "No signal from \(current?.name ?? "camera") — check its input"
        }
    }

    // MARK: Events

    /// The cameras connected now, in the order they are offered. The first call starts the director.
    public mutating func devices(_ list: [Camera], now: ContinuousClock.Instant) -> [Action] {
        let ids = Set(list.map(\.id))
        let previous = Set(connected.map(\.id))
        silent = silent.filter { ids.contains($0) }
        connected = list
        lastLook = now
        var actions: [Action] = []

        guard started else {
            started = true
            guard let first = eligible(excluding: nil) else { return sayNoCamera(now) }
            var choice = first
            if let remembered, let found = list.first(where: { $0.id == remembered.id }) {
                choice = found
            } else if let remembered {
                actions.append(.say("\(remembered.name) isn't connected; using \(first.name)"))
            } else {
                remembered = (first.id, first.name)
                actions.append(.remember(id: first.id, name: first.name))
            }
            return actions + open(choice, format: 0, now: now, words: "Starting camera…")
        }

        if let current, !ids.contains(current.id) {
            actions.append(.say("Camera disconnected"))
            return actions + fallBack(from: current, now: now, markSilent: false)
        }
        if let remembered, current?.id != remembered.id, ids.contains(remembered.id), !previous.contains(remembered.id),
            let camera = list.first(where: { $0.id == remembered.id }), !silent.contains(camera.id)
        {
            actions.append(.say("\(camera.name) is back; switching to it"))
            return actions + open(camera, format: 0, now: now, words: "Starting camera…")
        }
        switch phase {
        case .noCamera:
            if let camera = preferred() { return open(camera, format: 0, now: now, words: "Starting camera…") }
        case .noSignal:
            if let current, let camera = eligible(excluding: current.id) {
                silent.insert(current.id)
                return [.say("Switching from \(current.name) to \(camera.name)")]
                    + open(camera, format: 0, now: now, words: "Starting camera…")
            }
        default: break
        }
        return actions
    }

    /// The open of `attempt` finished and the camera is streaming.
    public mutating func opened(attempt: Int, now: ContinuousClock.Instant) -> [Action] {
        guard attempt == self.attempt, case .opening = phase else { return [] }
        phase = .waitingForFirstFrame(since: now)
        return []
    }

    /// The open of `attempt` failed (refused format, busy device…): its next format, else another camera.
    public mutating func openFailed(attempt: Int, reason: String, now: ContinuousClock.Instant) -> [Action] {
        guard attempt == self.attempt, case .opening = phase, let current else { return [] }
        return refused(current, reason: reason, now: now)
    }

    /// The stream of `attempt` ended on its own; `disconnected` for ENODEV, POLLERR or POLLHUP.
    public mutating func ended(attempt: Int, disconnected: Bool, now: ContinuousClock.Instant) -> [Action] {
        guard attempt == self.attempt, let current else { return [] }
        switch phase {
        case .waitingForFirstFrame, .streaming, .noSignal: break
        default: return []
        }
        let words = disconnected ? "Camera disconnected" : "\(current.name) stopped"
        return [.say(words)] + fallBack(from: current, now: now, markSilent: true)
    }

    /// Once a second (or more often): `frames` is the count of frames the current camera has delivered.
    public mutating func tick(now: ContinuousClock.Instant, frames count: UInt64) -> [Action] {
        let moved = count != frames
        frames = count
        switch phase {
        case .noCamera:
            return lookIfDue(now)
        case .opening(let since):
            if now - since >= Self.openLimit, let current {
                return refused(current, reason: "did not open within 6 s", now: now)
            }
        case .waitingForFirstFrame(let since):
            if moved {
                phase = .streaming(lastFrame: now)
                return [.say("Using \(current?.name ?? "camera") (\(formatWords))")]
            }
            if now - since >= Self.firstFrameLimit { return silence(now: now, first: true) }
        case .streaming(let last):
            if moved {
                phase = .streaming(lastFrame: now)
                failures = 0
                return []
            }
            if now - last >= Self.silenceLimit { return silence(now: now, first: false) }
        case .noSignal:
            if moved {
                phase = .streaming(lastFrame: now)
                failures = 0
                return [.say("\(current?.name ?? "Camera") is sending again")]
            }
            return lookIfDue(now)
        }
        return []
    }

    // MARK: Steps

    private var formatWords: String {
        guard let current, formatIndex < current.formats.count else { return "" }
        return current.formats[formatIndex]
    }

    private func eligible(excluding id: String?) -> Camera? {
        connected.first { $0.id != id && !silent.contains($0.id) }
    }

    /// The remembered camera when it can be used, else the first usable one.
    private func preferred(excluding id: String? = nil) -> Camera? {
        if let remembered, remembered.id != id, !silent.contains(remembered.id),
            let camera = connected.first(where: { $0.id == remembered.id })
        {
            return camera
        }
        return eligible(excluding: id)
    }

    private mutating func open(_ camera: Camera, format: Int, now: ContinuousClock.Instant, words: String?) -> [Action]
    {
        if current?.id != camera.id { failures = 0 }
        current = camera
        formatIndex = format
        attempt += 1
        phase = .opening(since: now)
        lastOpen = now
        frames = 0
        saidNoCamera = false
        return (words.map { [Action.say($0)] } ?? []) + [.open(id: camera.id, format: format, attempt: attempt)]
    }

    private mutating func fallBack(from camera: Camera, now: ContinuousClock.Instant, markSilent: Bool) -> [Action] {
        if markSilent { silent.insert(camera.id) }
        if let next = preferred(excluding: camera.id) {
            return [.say("Switching to \(next.name)")] + open(next, format: 0, now: now, words: "Starting camera…")
        }
        current = nil
        attempt += 1
        return [.close] + sayNoCamera(now)
    }

    private mutating func sayNoCamera(_ now: ContinuousClock.Instant) -> [Action] {
        phase = .noCamera
        current = nil
        lastLook = now
        guard !saidNoCamera else { return [] }
        saidNoCamera = true
        return [.say("No camera found")]
    }

    private mutating func lookIfDue(_ now: ContinuousClock.Instant) -> [Action] {
        guard lastLook.map({ now - $0 >= Self.lookInterval }) ?? true else { return [] }
        lastLook = now
        return [.look]
    }

    /// No first frame, or none for 3 s: restart, next format, another camera, or say no signal.
    private mutating func silence(now: ContinuousClock.Instant, first: Bool) -> [Action] {
        guard let current else { return [] }
        let why = first ? "No picture from \(current.name) within 3 s" : "No frames from \(current.name) for 3 s"
        if failures == 0 {
            guard restartAllowed(now) else { return [] }
            failures = 1
            return [.say("\(why); restarting it")]
                + open(current, format: formatIndex, now: now, words: "Starting camera…")
        }
        if failures == 1, formatIndex + 1 < current.formats.count {
            guard restartAllowed(now) else { return [] }
            failures = 2
            let next = formatIndex + 1
            return [.say("\(why) after a restart; trying \(current.formats[next])")]
                + open(current, format: next, now: now, words: "Starting camera…")
        }
        if let other = preferred(excluding: current.id) {
            silent.insert(current.id)
            return [.say("\(why); switching to \(other.name)")]
                + open(other, format: 0, now: now, words: "Starting camera…")
        }
        phase = .noSignal
        lastLook = now
        return [.say("No signal from \(current.name) — check its input")]
    }

    private func restartAllowed(_ now: ContinuousClock.Instant) -> Bool {
        lastOpen.map { now - $0 >= Self.restartSpacing } ?? true
    }

    /// The format was refused: the next one, then another camera, then nothing.
    private mutating func refused(_ camera: Camera, reason: String, now: ContinuousClock.Instant) -> [Action] {
        if formatIndex + 1 < camera.formats.count {
            let next = formatIndex + 1
            return [.say("\(camera.name) refused \(formatWords) (\(reason)); trying \(camera.formats[next])")]
                + open(camera, format: next, now: now, words: nil)
        }
        let words = Action.say("\(camera.name) could not be started (\(reason))")
        silent.insert(camera.id)
        if let other = preferred(excluding: camera.id) {
            return [words, .say("Switching to \(other.name)")]
                + open(other, format: 0, now: now, words: "Starting camera…")
        }
        current = nil
        attempt += 1
        return [words, .close] + sayNoCamera(now)
    }
}
