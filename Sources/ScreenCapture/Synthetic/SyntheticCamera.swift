import Foundation
import ShareCore
import Synchronization

/// Cameras that exist only in software, each acting out a `SyntheticCameraScript` (stall, die,
/// refuse a format, come back) on the clock that starts when the set is made. For tests and for
/// failover drills: `sharectl camera test --device synthetic:front?stall=5`.
public struct SyntheticCameras: CameraProvider {
    public let scripts: [SyntheticCameraScript]
    /// Monotonic microseconds at which every script's clock starts.
    public let originMicros: Int64

    public static let sizes: [(Int, Int)] = [(640, 480), (320, 240), (1280, 720)]

    public init(scripts: [SyntheticCameraScript], originMicros: Int64 = Clocks.monotonicMicros()) {
        self.scripts = scripts
        self.originMicros = originMicros
    }

    public static func id(of name: String) -> String { "synthetic:\(name)" }

    func elapsed() -> Duration { .microseconds(Clocks.monotonicMicros() - originMicros) }

    public func cameras() -> [CameraInfo] {
        let now = elapsed()
        return scripts.filter { $0.connected(at: now) }.map { script in
            let options = Self.sizes.map {
                CameraFormatOption(
                    pixel: .yuyv, width: $0.0, height: $0.1,
                    intervals: [FrameInterval(fps: UInt32(script.framesPerSecond)), FrameInterval(fps: 15)])
            }
            return CameraInfo(
                id: Self.id(of: script.name), name: "Synthetic \(script.name)", path: script.name,
                driver: "synthetic", formats: CameraFormatRule.ranked(options))
        }
    }

    public func open(
        _ camera: CameraInfo, format: CameraFormat, deliver: @escaping @Sendable (VideoFrame) -> Void,
        ended: @escaping @Sendable (CameraEnd) -> Void
    ) throws(CameraError) -> any CameraStream {
        guard let script = scripts.first(where: { Self.id(of: $0.name) == camera.id }) else {
            throw CameraError("camera: no synthetic camera named '\(camera.path)'")
        }
        if script.slowOpen > .zero {
            let micros = script.slowOpen.inMicroseconds
            usleep(useconds_t(min(micros, 60_000_000)))
        }
        guard script.connected(at: elapsed()) else { throw CameraError("camera: \(camera.name) is not connected") }
        guard !script.refuses(width: format.width, height: format.height) else {
            throw CameraError("its script refuses \(format.width)×\(format.height)")
        }
        return SyntheticCameraStream(
            script: script, format: format, originMicros: originMicros, deliver: deliver, ended: ended)
    }
}

/// One open synthetic camera: a thread sends YUYV frames (a colour of its own and a moving bar) at
/// the format's rate, skipping frames while its script stalls and ending as disconnected when it dies.
public final class SyntheticCameraStream: CameraStream, Sendable {
    public let format: CameraFormat
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    init(
        script: SyntheticCameraScript, format: CameraFormat, originMicros: Int64,
        deliver: @escaping @Sendable (VideoFrame) -> Void, ended: @escaping @Sendable (CameraEnd) -> Void
    ) {
        self.format = format
        let thread = Thread { [self] in
            let interval = Int64(1_000_000 / max(1, format.interval.framesPerSecond))
            let start = Clocks.monotonicMicros()
            var number: Int64 = 0
            var sequence: UInt64 = 0
            let shade = UInt8(truncatingIfNeeded: script.name.utf8.reduce(0) { $0 &+ Int($1) &* 37 })
            var end: CameraEnd?
            while running.load(ordering: .acquiring) {
                let due = start + number * interval
                let now = Clocks.monotonicMicros()
                if due > now { usleep(useconds_t(min(due - now, 100_000))); continue }
                number += 1
                let elapsed = Duration.microseconds(now - originMicros)
                if !script.connected(at: elapsed) { end = .disconnected("unplugged by its script"); break }
                if script.stalled(at: elapsed) { continue }
                deliver(Self.picture(format: format, number: sequence, shade: shade, captured: now))
                sequence += 1
            }
            finished.signal()
            if let end { ended(end) }
        }
        thread.name = "synthetic-camera"
        thread.start()
    }

    static func picture(format: CameraFormat, number: UInt64, shade: UInt8, captured: Int64) -> VideoFrame {
        let w = format.width, h = format.height, rowBytes = w * 2
        var bytes = [UInt8](repeating: 0, count: rowBytes * h)
        let bar = Int(number % UInt64(max(1, w / 8))) * 8
        bytes.withUnsafeMutableBufferPointer { out in
            for y in 0..<h {
                let row = y * rowBytes
                for x in stride(from: 0, to: w, by: 2) {
                    let luma: UInt8 = (x >= bar && x < bar + 16) ? 235 : 60 &+ UInt8(y * 120 / max(1, h))
                    out[row + x * 2] = luma
                    out[row + x * 2 + 1] = shade
                    out[row + x * 2 + 2] = luma
                    out[row + x * 2 + 3] = 255 &- shade
                }
            }
        }
        return VideoFrame(
            format: .yuyv, width: w, height: h, planes: [Plane(bytes: bytes, stride: rowBytes)],
            captureMicros: captured, sequence: number)
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    deinit { stop() }
}
