@testable import CallsClient
import Foundation
import GLibLoop
import ScreenCapture
import ShareCore
import TestSupport
import Testing
import VideoSend
@testable import CallMedia

/// A camera beside a shared screen, between two real peer connections on 127.0.0.1: capped at
/// 500 kbit/s and 360 lines from its first frame, still capped after a switch to a camera of
/// another shape (the same track), and given its defaults back when the share stops. And the
/// fan-out that gives one camera to every connection of a room call. Timeouts only guard hangs.
@Suite struct CappedCameraTests {
    @Test func theCameraIsCappedBesideTheScreenAndGivenBackAfter() async throws {
        let loop = GLibLoop(name: "capped-camera")
        defer { loop.stop() }
        let a = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let b = try PeerConnection(loop: loop, configuration: .init(loopbackOnly: true), logger: .disabled)
        let sent = try await a.addTransceiver(kind: .video, direction: .sendonly, trackID: "camera")
        _ = try await b.addTransceiver(kind: .video, direction: .recvonly)
        try await b.setRemoteDescription(try await a.createOffer(), type: .offer)
        try await a.setRemoteDescription(try await b.createAnswer(), type: .answer)
        let feed = SwitchingSource(SyntheticScreenSource(width: 640, height: 480, framesPerSecond: 15))
        let defaults = CappedCamera.Defaults(bitrate: 1_200_000, longSide: 1280)
        let camera = CappedCamera(feed, connection: a, transceiver: sent, defaults: defaults, besideScreen: true)
        try await a.attachVideoSource(
            camera, to: sent, bitrate: defaults.bitrate, framesPerSecond: 15,
            maxLongSide: defaults.longSide, policy: .detail, content: .camera)
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()

        // Capped from the first frame: a 4:3 camera at 480×360.
        try await until("B decodes the capped camera") {
            (await b.statistics().transceiver(.video)?.received?.framesDecoded ?? 0) >= 5
        }
        var received = await b.statistics().transceiver(.video)?.received
        var figures = await a.statistics().transceiver(.video)?.sent
        #expect(received?.width == 480 && received?.height == 360)
        #expect(
            figures?.maxBitrate == 500_000 && figures?.maxLongSide == 480 && (figures?.targetBitrate ?? .max) <= 500_000
        )

        // Another camera of another shape on the same track: still 360 lines.
        feed.switchTo(SyntheticScreenSource(width: 1280, height: 720, framesPerSecond: 15))
        try await until("B decodes the other camera at 640×360") {
            let r = await b.statistics().transceiver(.video)?.received
            return r?.width == 640 && r?.height == 360
        }
        figures = await a.statistics().transceiver(.video)?.sent
        #expect(figures?.maxLongSide == 640)

        // The share stops: the defaults come back, no renegotiation.
        camera.setBesideScreen(false)
        try await until("B decodes the camera at its full size") {
            let r = await b.statistics().transceiver(.video)?.received
            return r?.width == 1280 && r?.height == 720
        }
        figures = await a.statistics().transceiver(.video)?.sent
        #expect(figures?.maxBitrate == 1_200_000 && figures?.maxLongSide == 1280)
        received = await b.statistics().transceiver(.video)?.received
        #expect((received?.decodeErrors ?? 1) == 0)
        #expect(!camera.besideScreen && camera.frameCount > 0)
        await a.close()
        await b.close()
        feed.stop()
    }

    @Test func theFanOutRunsItsSourceWhileABranchIsStarted() {
        let source = ManualSource()
        let fanOut = FrameFanOut(source)
        let one = fanOut.branch(), two = fanOut.branch()
        let got = Locked<[String]>([])
        one.start { _ in got.withLock { $0.append("one") } }
        two.start { _ in got.withLock { $0.append("two") } }
        #expect(source.starts == 1, "one source for every branch")
        source.push()
        #expect(got.withLock { $0.sorted() } == ["one", "two"])
        one.stop()
        source.push()
        #expect(got.withLock { $0.sorted() } == ["one", "two", "two"])
        #expect(source.stops == 0)
        two.stop()
        #expect(source.stops == 1, "the last branch stopped: the source stops")
        source.push()
        #expect(got.withLock { $0.count } == 3)
        let three = fanOut.branch()
        three.start { _ in got.withLock { $0.append("three") } }
        source.push()
        #expect(source.starts == 2 && got.withLock { $0.last } == "three")
        three.stop()
    }
}

/// One track fed by whichever source is current, as the camera director's feed is.
private final class SwitchingSource: VideoFrameSource {
    // A struct, not a tuple: a closure in a lock's generic value is rewrapped by every `withLock`
    // (see `FrameSink`).
    private struct State {
        var source: any VideoFrameSource
        var deliver: (@Sendable (VideoFrame) -> Void)?
    }
    private let state: Locked<State>

    init(_ source: any VideoFrameSource) { state = Locked(State(source: source)) }

    func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        let source = state.withLock {
            $0.deliver = deliver; return $0.source
        }
        source.start(deliver: deliver)
    }

    func stop() {
        let source = state.withLock {
            $0.deliver = nil; return $0.source
        }
        source.stop()
    }

    func switchTo(_ next: any VideoFrameSource) {
        let (previous, deliver) = state.withLock { s in
            defer { s.source = next }
            return (s.source, s.deliver)
        }
        previous.stop()
        if let deliver { next.start(deliver: deliver) }
    }
}

/// Frames when the test says so.
private final class ManualSource: VideoFrameSource {
    private struct State {
        var deliver: (@Sendable (VideoFrame) -> Void)?
        var starts = 0, stops = 0
    }
    private let state = Locked(State())
    var starts: Int { state.withLock { $0.starts } }
    var stops: Int { state.withLock { $0.stops } }

    func start(deliver: @escaping @Sendable (VideoFrame) -> Void) {
        state.withLock {
            $0.deliver = deliver; $0.starts += 1
        }
    }
    func stop() {
        state.withLock {
            $0.deliver = nil; $0.stops += 1
        }
    }
    func push() {
        let frame = VideoFrame(
            format: .i420, width: 2, height: 2,
            planes: [
                Plane(bytes: [0, 0, 0, 0], stride: 2),
                Plane(bytes: [0], stride: 1), Plane(bytes: [0], stride: 1)
            ],
            captureMicros: 0)
        state.withLock { $0.deliver }?(frame)
    }
}
