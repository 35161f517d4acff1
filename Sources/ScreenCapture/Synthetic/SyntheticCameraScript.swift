/// The faults a synthetic camera acts out, written after its name:
/// `synthetic:NAME[?FAULT,FAULT…]`. Times count from when the camera set was made (the start of
/// `sharectl camera test` or of a share) and take `s` or `ms` (bare numbers are seconds).
///
/// | fault | meaning |
/// |---|---|
/// | `stall=T` / `stall=T+D` | no frames from T on (for D seconds, then frames again) |
/// | `silent` | never sends a frame (the same as `stall=0`) |
/// | `die=T` | unplugged at T: the open stream ends as disconnected and the camera leaves the list |
/// | `back=T` | plugged in again at T (after a `die`) |
/// | `refuse=WxH` / `refuse=all` | opening that size (or any) fails |
/// | `slowopen=S` | every open takes S seconds |
/// | `fps=N` | frames per second (default 30) |
///
/// Example: `synthetic:front?stall=5+10,die=20,back=30`.
public struct SyntheticCameraScript: Sendable, Equatable {
    public struct Stall: Sendable, Equatable {
        public var from: Duration
        public var length: Duration?

        public init(from: Duration, length: Duration?) {
            self.from = from
            self.length = length
        }
    }

    public var name: String
    public var stalls: [Stall] = []
    public var dies: [Duration] = []
    public var backs: [Duration] = []
    public var refusedSizes: [(Int, Int)] = []
    public var refusesAll = false
    public var slowOpen: Duration = .zero
    public var framesPerSecond = 30

    public static func == (a: Self, b: Self) -> Bool {
        a.name == b.name && a.stalls == b.stalls && a.dies == b.dies && a.backs == b.backs
            && a.refusedSizes.map { [$0.0, $0.1] } == b.refusedSizes.map { [$0.0, $0.1] }
            && a.refusesAll == b.refusesAll
            && a.slowOpen == b.slowOpen && a.framesPerSecond == b.framesPerSecond
    }

    public init(name: String) { self.name = name }

    /// Parses `synthetic:NAME?…` (the `synthetic:` prefix is optional).
    public static func parse(_ text: String) throws(CameraError) -> SyntheticCameraScript {
        var rest = Substring(text)
        if rest.hasPrefix("synthetic:") { rest = rest.dropFirst("synthetic:".count) }
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw CameraError("camera: a synthetic camera needs a name of letters, digits, - or _ (got '\(name)')")
        }
        var script = SyntheticCameraScript(name: name)
        guard parts.count == 2 else { return script }
        for fault in parts[1].split(separator: ",") {
            let pair = fault.split(separator: "=", maxSplits: 1)
            let key = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : nil
            func need() throws(CameraError) -> String {
                guard let value else { throw CameraError("camera: fault '\(key)' needs a value, e.g. \(key)=5s") }
                return value
            }
            switch key {
            case "stall":
                let spec = try need()
                let halves = spec.split(separator: "+", maxSplits: 1)
                let from = try duration(String(halves[0]), fault: key)
                let length = halves.count > 1 ? try duration(String(halves[1]), fault: key) : nil
                script.stalls.append(Stall(from: from, length: length))
            case "silent":
                script.stalls.append(Stall(from: .zero, length: nil))
            case "die": script.dies.append(try duration(try need(), fault: key))
            case "back": script.backs.append(try duration(try need(), fault: key))
            case "slowopen": script.slowOpen = try duration(try need(), fault: key)
            case "refuse":
                let spec = try need()
                if spec == "all" { script.refusesAll = true; continue }
                let wh = spec.split(separator: "x")
                guard wh.count == 2, let w = Int(wh[0]), let h = Int(wh[1]), w > 0, h > 0 else {
                    throw CameraError("camera: refuse wants WIDTHxHEIGHT or all, not '\(spec)'")
                }
                script.refusedSizes.append((w, h))
            case "fps":
                guard let fps = Int(try need()), (1...60).contains(fps) else {
                    throw CameraError("camera: fps wants a whole number from 1 to 60")
                }
                script.framesPerSecond = fps
            default:
                throw CameraError(
                    "camera: unknown synthetic fault '\(key)' (stall, silent, die, back, refuse, slowopen, fps)")
            }
        }
        return script
    }

    static func duration(_ text: String, fault: String) throws(CameraError) -> Duration {
        var number = Substring(text), scale = 1.0
        if number.hasSuffix("ms") {
            number = number.dropLast(2); scale = 0.001
        } else if number.hasSuffix("s") {
            number = number.dropLast()
        }
        guard let value = Double(number), value >= 0, value < 86_400 else {
            throw CameraError("camera: \(fault) wants a time such as 5, 5s or 500ms, not '\(text)'")
        }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    /// Whether the camera is plugged in `elapsed` after the start: the latest `die` or `back` decides.
    public func connected(at elapsed: Duration) -> Bool {
        let lastDie = dies.filter { $0 <= elapsed }.max()
        let lastBack = backs.filter { $0 <= elapsed }.max()
        guard let lastDie else { return true }
        guard let lastBack else { return false }
        return lastBack > lastDie
    }

    /// Whether a frame due `elapsed` after the start is held back by a stall.
    public func stalled(at elapsed: Duration) -> Bool {
        stalls.contains { stall in
            elapsed >= stall.from && (stall.length.map { elapsed < stall.from + $0 } ?? true)
        }
    }

    public func refuses(width: Int, height: Int) -> Bool {
        refusesAll || refusedSizes.contains { $0.0 == width && $0.1 == height }
    }
}
