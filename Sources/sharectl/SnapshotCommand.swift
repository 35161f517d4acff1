import Foundation
import ScreenCapture
import ShareCore

enum SnapshotCommand {
    static func run(_ arguments: Arguments) throws {
        guard let path = arguments.positional.first else {
            throw Arguments.UsageError(description: "snapshot needs a path, e.g. sharectl snapshot screen.png")
        }
        let width = try arguments.int("width"), height = try arguments.int("height")
        guard width >= 96, height >= 60, width <= 7680, height <= 4320 else {
            throw Arguments.UsageError(
                description: "the synthetic screen is 96×60 to 7680×4320, not \(width)×\(height)")
        }
        let screen = SyntheticScreen(width: width, height: height)
        let number = UInt64(try arguments.int("frame"))
        let millis = UInt64(Date().timeIntervalSince1970 * 1000)
        let frame = try FrameConverter.toI420(screen.render(frame: number, wallClockMillis: millis, captureMicros: 0))
        try Data(PNGWriter.encode(i420: frame)).write(to: URL(fileURLWithPath: path))
        say("snapshot: wrote \(path) (\(width)×\(height), frame \(number))")
    }
}
