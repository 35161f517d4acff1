import Foundation
import ScreenCapture
import ShareCore

/// Runs a blocking call on a thread of its own and resumes with its result, so an actor awaiting
/// it never blocks the cooperative pool.
func onThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}

/// One camera the director opened, for one attempt: opens it on a thread of its own (a device may
/// take seconds; the rules give up after 6), feeds its frames into the director's `CameraFeed`
/// under its attempt number, and closes it on a thread too.
actor ManagedCamera {
    enum OpenResult: Sendable {
        case opened(CameraFormat)
        case failed(String)
    }

    let camera: CameraInfo
    let format: CameraFormat
    let attempt: Int
    private let provider: any CameraProvider
    private var stream: (any CameraStream)?
    private var closed = false

    init(camera: CameraInfo, format: CameraFormat, attempt: Int, provider: any CameraProvider) {
        self.camera = camera
        self.format = format
        self.attempt = attempt
        self.provider = provider
    }

    /// Opens the camera; frames go to `feed`, an end of its own to `ended`.
    func open(feed: CameraFeed, ended: @escaping @Sendable (CameraEnd) -> Void) async -> OpenResult {
        let (camera, format, attempt, provider) = (self.camera, self.format, self.attempt, self.provider)
        let result: Result<any CameraStream, CameraError> = await onThread("camera-open") {
            do throws(CameraError) {
                let stream = try provider.open(
                    camera, format: format,
                    deliver: { feed.push($0, generation: attempt) }, ended: ended)
                return .success(stream)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let opened):
            if closed {
                await onThread("camera-close") { opened.stop() }
                return .failed("closed while opening")
            }
            stream = opened
            return .opened(opened.format)
        case .failure(let error):
            return .failed(error.description)
        }
    }

    /// Stops the stream (joining its thread on a thread of its own).
    func close() async {
        closed = true
        guard let stream else { return }
        self.stream = nil
        await onThread("camera-close") { stream.stop() }
    }
}
