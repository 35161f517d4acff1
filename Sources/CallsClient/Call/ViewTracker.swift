/// Movement of one decoded view: frames per second, freezes (a second or more without a new
/// frame after frames came), and the stall rule of the media report (4 s without movement,
/// held up to 3 minutes; any change of the count is movement).
public struct ViewTracker: Sendable {
    public init() {}

    public private(set) var lastFrames = -1
    var movedAt: ContinuousClock.Instant?
    var stalledSince: ContinuousClock.Instant?
    var frozen = false
    public private(set) var freezes = 0
    public private(set) var fps = 0.0

    public mutating func update(frames: Int, now: ContinuousClock.Instant, elapsed: Double) {
        if lastFrames >= 0 { fps = Double(max(0, frames - lastFrames)) / max(0.001, elapsed) }
        if frames != lastFrames {
            movedAt = now
            stalledSince = nil
            frozen = false
        } else if frames > 0, !frozen {
            frozen = true
            freezes += 1
        }
        if movedAt == nil { movedAt = now }
        lastFrames = frames
    }

    public mutating func stalled(now: ContinuousClock.Instant) -> Bool {
        guard let movedAt, now - movedAt >= .seconds(4) else { return false }
        if stalledSince == nil { stalledSince = now }
        return now - stalledSince! <= .seconds(180)
    }

    public mutating func reset() { self = ViewTracker() }
}
