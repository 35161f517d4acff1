import Foundation
import ScreenCapture
import ScreenWatchdog
import ShareCore
import Synchronization
import RoomProtocol

/// `sharectl camera list` and `sharectl camera test`: the cameras here, and the director run
/// against them with every step printed.
enum CameraCommand {
    static func run(_ arguments: Arguments, logger: Logger) async throws {
        switch arguments.positional.first {
        case "list": try list(arguments)
        case "test": try await test(arguments, logger: logger)
        default:
            throw Arguments.UsageError(description: "camera wants 'list' or 'test' (see: sharectl help)")
        }
    }

    /// `--device` holds one camera, or several separated by ';' (the first is the chosen one, or
    /// `auto` for the remembered one); the synthetic ones among them become cameras of their own.
    static func parseDevices(_ value: String?) throws -> (
        choice: CameraDirector.Choice, synthetic: [SyntheticCameraScript]
    ) {
        guard let value, !value.isEmpty, value != "auto" else { return (.auto, []) }
        let specs = value.split(separator: ";").map { String($0).trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        var scripts: [SyntheticCameraScript] = []
        for spec in specs where spec.hasPrefix("synthetic:") {
            do { scripts.append(try SyntheticCameraScript.parse(spec)) } catch {
                throw Arguments.UsageError(description: error.description)
            }
        }
        guard let first = specs.first, first != "auto" else { return (.auto, scripts) }
        return (.device(first), scripts)
    }

    static func providers(synthetic: [SyntheticCameraScript]) -> [any CameraProvider] {
        var providers: [any CameraProvider] = [V4L2Cameras()]
        if !synthetic.isEmpty { providers.append(SyntheticCameras(scripts: synthetic)) }
        return providers
    }

    static func list(_ arguments: Arguments) throws {
        let (_, synthetic) = try parseDevices(arguments.value("device"))
        let v4l2 = V4L2Cameras()
        let survey = v4l2.survey()
        var cameras = survey.compactMap { try? $0.result.get() }
        for case .failure(let error) in survey.map(\.result) { say("(\(error.description))") }
        if !synthetic.isEmpty { cameras += SyntheticCameras(scripts: synthetic).cameras() }
        let remembered = CameraMemory.standard().load()
        if cameras.isEmpty {
            say("No camera found (looked at \(v4l2.nodes().count) video nodes in /dev)")
        }
        for camera in cameras {
            let mark = remembered?.id == camera.id ? "  (remembered)" : ""
            say("\(camera.name) — \(camera.path), \(camera.driver)\(mark)")
            say("  id: \(camera.id)")
            if !camera.capabilities.isEmpty { say("  can: \(camera.capabilities.joined(separator: ", "))") }
            say("  formats in the order they are tried (* = the choice):")
            for (index, format) in camera.formats.enumerated() {
                say("  \(index == 0 ? "*" : " ") \(format)")
            }
            if !camera.options.isEmpty { say("  every size and rate listed:") }
            for option in camera.options {
                let rates = option.intervals.map { $0.description.replacingOccurrences(of: " fps", with: "") }
                say(
                    "    \(option.width)×\(option.height) \(option.pixel.rawValue): \(rates.joined(separator: ", ")) fps"
                )
            }
            if camera.formats.isEmpty { say("    no format sharectl can read (YUYV, NV12, MJPEG)") }
        }
        if let remembered, !cameras.contains(where: { $0.id == remembered.id }) {
            say("\(remembered.name) is remembered but isn't connected")
        }
    }

    static func test(_ arguments: Arguments, logger: Logger) async throws {
        let duration = try arguments.double("duration")
        let (choice, synthetic) = try parseDevices(arguments.value("device"))
        let start = Clocks.monotonicMicros()
        @Sendable func stamp(_ micros: Int64) -> String {
            let elapsed = Double(micros - start) / 1e6, mono = Double(micros) / 1e6
            return "[\(fixed(elapsed, 2))s mono \(fixed(mono, 3))]"
        }
        let director = CameraDirector(
            providers: providers(synthetic: synthetic), choice: choice,
            memory: CameraMemory.standard(), logger: logger
        ) { step in
            say("\(stamp(step.atMicros)) \(step.words)")
        }
        let frames = Atomic<UInt64>(0)
        let firstSize = Locked<String>("")
        director.feed.start { frame in
            frames.add(1, ordering: .relaxed)
            firstSize.withLock { if $0.isEmpty { $0 = "\(frame.width)×\(frame.height) \(frame.format.rawValue)" } }
        }
        let task = Task { await director.run() }
        var last: UInt64 = 0
        var lastUsing = ""
        let seconds = Int(duration.rounded(.up))
        for _ in 0..<seconds {
            try? await Task.sleep(for: .seconds(1))
            let now = frames.load(ordering: .relaxed)
            let status = await director.status
            if let (camera, format) = await director.using {
                let using = "\(camera.name) at \(format)"
                if using != lastUsing {
                    say("\(stamp(Clocks.monotonicMicros())) format: \(camera.name) (\(camera.path)) \(format)")
                }
                lastUsing = using
                say(
                    "\(stamp(Clocks.monotonicMicros())) \(now - last) frames in the last second from \(camera.name); \(status)"
                )
            } else {
                say("\(stamp(Clocks.monotonicMicros())) \(now - last) frames in the last second; \(status)")
            }
            last = now
        }
        task.cancel()
        await task.value
        director.feed.stop()
        say(
            "camera test: \(frames.load(ordering: .relaxed)) frames in \(seconds) s; first frame \(firstSize.withLock { $0.isEmpty ? "never arrived" : $0 })"
        )
    }

    static func fixed(_ value: Double, _ places: Int) -> String {
        let scale = [1.0, 10, 100, 1000][places]
        let scaled = Int64((value * scale).rounded())
        let whole = scaled / Int64(scale), fraction = abs(scaled % Int64(scale))
        let digits = String(fraction)
        return "\(whole).\(String(repeating: "0", count: places - digits.count))\(digits)"
    }
}

/// `share --camera auto|none|DEVICE|synthetic:NAME`: the camera director that runs beside a WHIP
/// share (the share's controller runs it), its steps said as they happen; its feed is the share's
/// camera track.
enum ShareCamera {
    /// Nil for `--camera none` or no `--camera`.
    static func director(_ arguments: Arguments, logger: Logger) throws -> CameraDirector? {
        guard let value = arguments.value("camera"), value != "none" else { return nil }
        let (choice, synthetic) = try CameraCommand.parseDevices(value)
        return CameraDirector(
            providers: CameraCommand.providers(synthetic: synthetic), choice: choice,
            memory: CameraMemory.standard(), logger: logger
        ) { step in
            say("Camera: \(step.words)")
        }
    }
}
