import CallsClient
import Foundation
import RTPWire
import ScreenCapture
import ShareCore
import VideoSend
import WebRTCTransport

/// `sharectl bench-pipeline FRAMES.bgrx`: the send pipeline's throughput on 1920×1080 screen
/// content, as fast as it goes (not paced): convert (libyuv BGRx → I420) → encode (x264 or libvpx,
/// the factory's settings) → packetize (1200-byte payloads) → RTP sender → SRTP protect
/// (AES_CM_128_HMAC_SHA1_80, a fixed test key). The frames are drawn before the clock starts and
/// written to FRAMES.bgrx (packed BGRx, one frame after another) so `scripts/bench.sh` can time
/// GStreamer on the very same pictures. Prints one JSON object: the settings, then per codec the
/// frames a second (wall), CPU milliseconds a frame (the process's user + system time over the
/// timed part, encoder threads included), bytes out, and the wall time split by stage.
/// `--content camera` runs the encoders as for a camera (VP8 without its screen-content mode).
/// `--no-write` leaves a frames file of an earlier run with at least as many `--frames` as it is.
enum BenchPipelineCommand {
    /// The fixed SRTP master key and salt of the benchmark (30 bytes: key 00…0f, salt 10…1d).
    static let testKeyAndSalt: [UInt8] = Array(0..<30)

    struct Settings: Sendable {
        var frames: Int
        var width: Int
        var height: Int
        var frameRate: Int
        var bitrate: Int
        var path: String
        /// What the encoders are told they carry (VP8's screen-content mode is on for `.screen`).
        var content: VideoContent
        /// The frames file is already there from an earlier run with the same frame count.
        var reuseFile: Bool
    }

    struct CodecRun: Sendable {
        var codec: VideoCodec
        var implementation: String
        var threads: Int
        var vp8Speed: Int?
        var keyframeInterval: Int
        var wallSeconds: Double
        var cpuSeconds: Double
        var encodedBytes = 0
        var keyframes = 0
        var packets = 0
        var protectedBytes = 0
        var convertSeconds = 0.0
        var encodeSeconds = 0.0
        var packetizeSeconds = 0.0
        var protectSeconds = 0.0
    }

    static func run(_ arguments: Arguments) async throws {
        guard let path = arguments.positional.first else {
            throw Arguments.UsageError(
                description: "bench-pipeline needs a path for the frames file (scripts/bench.sh gives one)")
        }
        let frames = try arguments.int("frames")
        let kbps = try arguments.int("bitrate")
        guard frames >= 10, frames <= 3000 else {
            throw Arguments.UsageError(description: "--frames is 10 to 3000, not \(frames)")
        }
        guard kbps >= 100, kbps <= 50_000 else {
            throw Arguments.UsageError(description: "--bitrate is 100 to 50000 kbit/s, not \(kbps)")
        }
        let codecs: [VideoCodec]
        if let name = arguments.value("codec") {
            guard let codec = VideoCodec(argument: name) else {
                throw Arguments.UsageError(description: "--codec is h264 or vp8, not '\(name)'")
            }
            codecs = [codec]
        } else {
            codecs = VideoCodec.allCases
        }
        let contentName = arguments.valueOrDefault("content")
        guard let content = VideoContent(rawValue: contentName) else {
            throw Arguments.UsageError(description: "--content is screen or camera, not '\(contentName)'")
        }
        let settings = Settings(
            frames: frames, width: 1920, height: 1080, frameRate: 30, bitrate: kbps * 1000, path: path,
            content: content, reuseFile: arguments.has("no-write"))
        // Encoders block for milliseconds a call: the work runs on a thread of its own.
        let outcome: Result<String, any Error> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do {
                    let data = try JSONSerialization.data(
                        withJSONObject: try measure(settings, codecs: codecs), options: [.sortedKeys])
                    continuation.resume(returning: .success(String(decoding: data, as: UTF8.self)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.name = "bench-pipeline"
            thread.stackSize = 8 << 20
            thread.start()
        }
        say(try outcome.get())
    }

    private static func measure(_ settings: Settings, codecs: [VideoCodec]) throws -> [String: Any] {
        let pictures = try render(settings)
        var rows: [[String: Any]] = []
        for codec in codecs {
            let result = try time(codec, pictures: pictures, settings: settings)
            let n = Double(pictures.count)
            var row: [String: Any] = [
                "codec": codec.rawValue,
                "implementation": result.implementation,
                "threads": result.threads,
                "keyframeInterval": result.keyframeInterval,
                "framesPerSecond": n / result.wallSeconds,
                "cpuMillisPerFrame": result.cpuSeconds * 1000 / n,
                "wallSeconds": result.wallSeconds,
                "encodedBytes": result.encodedBytes,
                "keyframes": result.keyframes,
                "packets": result.packets,
                "protectedBytes": result.protectedBytes,
                "splitMillisPerFrame": [
                    "convert": result.convertSeconds * 1000 / n,
                    "encode": result.encodeSeconds * 1000 / n,
                    "packetize": result.packetizeSeconds * 1000 / n,
                    "protect": result.protectSeconds * 1000 / n
                ]
            ]
            if let speed = result.vp8Speed { row["vp8Speed"] = speed }
            rows.append(row)
        }
        return [
            "implementation": "sharectl",
            "frames": pictures.count,
            "width": settings.width,
            "height": settings.height,
            "frameRate": settings.frameRate,
            "bitrateKbps": settings.bitrate / 1000,
            "content": settings.content.rawValue,
            "maxPayloadSize": 1200,
            "srtpProfile": SRTPProfile.aes128CMHMACSHA1_80.rawValue,
            "srtpKeyHex": testKeyAndSalt.map { String(format: "%02x", $0) }.joined(),
            "framesFile": settings.path,
            "results": rows
        ]
    }

    /// Draws the synthetic screen's frames (moving content) and writes them to the frames file.
    private static func render(_ settings: Settings) throws -> [VideoFrame] {
        let screen = SyntheticScreen(
            width: settings.width, height: settings.height, framesPerSecond: settings.frameRate)
        let frameBytes = settings.width * 4 * settings.height
        var file: FileHandle?
        if settings.reuseFile {
            let size = (try? FileManager.default.attributesOfItem(atPath: settings.path)[.size] as? Int) ?? nil
            guard let size, size >= frameBytes * settings.frames else {
                throw Arguments.UsageError(
                    description:
                        "--no-write: \(settings.path) holds fewer than \(settings.frames) frames of \(frameBytes) bytes"
                )
            }
        } else {
            guard FileManager.default.createFile(atPath: settings.path, contents: nil),
                let handle = FileHandle(forWritingAtPath: settings.path)
            else {
                throw Arguments.UsageError(description: "cannot write the frames file \(settings.path)")
            }
            file = handle
        }
        defer { try? file?.close() }
        let start = Clocks.wallMillis()
        var pictures: [VideoFrame] = []
        pictures.reserveCapacity(settings.frames)
        for index in 0..<settings.frames {
            let micros = Int64(index) * 1_000_000 / Int64(settings.frameRate)
            let frame = screen.render(
                frame: UInt64(index), wallClockMillis: start + UInt64(micros / 1000), captureMicros: micros)
            let plane = frame.planes[0]
            guard plane.stride == settings.width * 4 else {
                throw Arguments.UsageError(
                    description: "the synthetic screen gave rows of \(plane.stride) bytes, not \(settings.width * 4)")
            }
            try file?.write(contentsOf: Data(plane.bytes))
            pictures.append(frame)
        }
        return pictures
    }

    /// One codec through the whole send path, every frame as soon as the one before is done.
    private static func time(_ codec: VideoCodec, pictures: [VideoFrame], settings: Settings) throws -> CodecRun {
        let factory = VideoEncoderFactory(codec: codec, frameRate: settings.frameRate, content: settings.content)
        let encoder = try factory.make(width: settings.width, height: settings.height, bitrate: settings.bitrate)
        var payloader = VideoPayloader(codec: codec, maxPayloadSize: 1200)
        let keys = try SRTPKeyingMaterial(profile: .aes128CMHMACSHA1_80, exported: exportLayout(testKeyAndSalt))
        let srtp = try SRTPSession(keys: keys, role: .client)

        struct Tally { var packets = 0, bytes = 0, nanos: UInt64 = 0, failures = 0 }
        let tally = Locked(Tally())
        let sender = RTPStreamSender(
            configuration: .init(ssrc: 0x1234_5678, payloadType: codec == .h264 ? 102 : 96, clockRate: 90_000),
            transportSequence: nil, firstSequence: 1
        ) { packet in
            let began = DispatchTime.now().uptimeNanoseconds
            let protected = try? srtp.protect(rtp: packet)
            let took = DispatchTime.now().uptimeNanoseconds - began
            tally.withLock { t in
                t.nanos += took
                if let protected { t.packets += 1; t.bytes += protected.count } else { t.failures += 1 }
            }
            return protected != nil
        }

        var result = CodecRun(
            codec: codec, implementation: encoder.implementation, threads: factory.threadCount,
            vp8Speed: (encoder as? VP8Encoder)?.configuration.speed,
            keyframeInterval: (encoder as? X264Encoder)?.configuration.keyframeInterval
                ?? (encoder as? VP8Encoder)?.configuration.keyframeInterval ?? 0,
            wallSeconds: 0, cpuSeconds: 0)
        var convertNanos: UInt64 = 0, encodeNanos: UInt64 = 0, sendNanos: UInt64 = 0
        let cpuBefore = processCPUSeconds()
        let wallBefore = DispatchTime.now().uptimeNanoseconds
        for (index, frame) in pictures.enumerated() {
            let t0 = DispatchTime.now().uptimeNanoseconds
            // As the pipeline does it: libyuv to I420, then the encoder's picture.
            guard let picture = I420Frame(try FrameConverter.toI420(frame)) else {
                throw EncoderError(codec: codec.rawValue, "conversion gave no I420 picture")
            }
            let t1 = DispatchTime.now().uptimeNanoseconds
            let timestamp = Int64(index) * 90_000 / Int64(settings.frameRate)
            let encoded = try encoder.encode(picture, timestamp90kHz: timestamp)
            let t2 = DispatchTime.now().uptimeNanoseconds
            if let encoded {
                result.encodedBytes += encoded.bytes.count
                if encoded.isKeyframe { result.keyframes += 1 }
                let units = try payloader.payload(encoded)
                sender.send(units, timestamp: UInt32(truncatingIfNeeded: timestamp), nowMicros: Int64(t2 / 1000))
            }
            let t3 = DispatchTime.now().uptimeNanoseconds
            convertNanos += t1 - t0
            encodeNanos += t2 - t1
            sendNanos += t3 - t2
        }
        let wallAfter = DispatchTime.now().uptimeNanoseconds
        result.cpuSeconds = processCPUSeconds() - cpuBefore
        result.wallSeconds = Double(wallAfter - wallBefore) / 1e9
        let counted = tally.withLock { $0 }
        guard counted.failures == 0 else {
            throw BenchError(description: "bench-pipeline: \(counted.failures) \(codec) packets could not be protected")
        }
        result.packets = counted.packets
        result.protectedBytes = counted.bytes
        result.convertSeconds = Double(convertNanos) / 1e9
        result.encodeSeconds = Double(encodeNanos) / 1e9
        result.protectSeconds = Double(counted.nanos) / 1e9
        result.packetizeSeconds = Double(sendNanos - min(sendNanos, counted.nanos)) / 1e9
        return result
    }

    struct BenchError: Error, CustomStringConvertible { var description: String }

    /// The DTLS exporter's layout (client key, server key, client salt, server salt) with the test
    /// key and salt on both sides.
    private static func exportLayout(_ keyAndSalt: [UInt8]) -> [UInt8] {
        let key = Array(keyAndSalt[0..<16]), salt = Array(keyAndSalt[16..<30])
        return key + key + salt + salt
    }

    /// User plus system CPU time of the whole process (every thread), in seconds.
    private static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
