import ShareCore

/// A camera as the director sees it: a stable id that survives unplugging and renumbering
/// (`v4l2:BUS_INFO/CARD`, or `synthetic:NAME`), a name for people, where it is now, and the formats
/// it offers in the order the format rule tries them.
public struct CameraInfo: Sendable, Hashable {
    public var id: String
    public var name: String
    /// The device node (`/dev/video0`) or the synthetic camera's name.
    public var path: String
    public var driver: String
    public var formats: [CameraFormat]
    /// Every size and layout it lists, with all their rates (what `formats` was chosen from).
    public var options: [CameraFormatOption]
    /// What the device says it can do, in words ("video capture", "streaming", …).
    public var capabilities: [String]

    public init(
        id: String, name: String, path: String, driver: String, formats: [CameraFormat],
        options: [CameraFormatOption] = [], capabilities: [String] = []
    ) {
        self.id = id
        self.name = name
        self.path = path
        self.driver = driver
        self.formats = formats
        self.options = options
        self.capabilities = capabilities
    }
}

/// Why a camera stream ended on its own.
public enum CameraEnd: Sendable, Equatable, CustomStringConvertible {
    /// ENODEV, POLLERR or POLLHUP: the camera is gone or dead.
    case disconnected(String)
    /// Any other failure while streaming.
    case failed(String)

    public var description: String {
        switch self {
        case .disconnected(let why): "disconnected (\(why))"
        case .failed(let why): "failed (\(why))"
        }
    }
}

/// What went wrong opening or reading a camera, in words a person can act on.
public struct CameraError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One open camera delivering frames on a thread of its own. `stop()` blocks until no more frames
/// or end reports will arrive, so it is called from a thread, never from an actor.
public protocol CameraStream: AnyObject, Sendable {
    var format: CameraFormat { get }
    func stop()
}

/// A kind of camera: lists what is connected and opens one. `open` blocks (a device may take
/// seconds), so callers run it on a thread of their own.
public protocol CameraProvider: Sendable {
    func cameras() -> [CameraInfo]
    /// Opens `camera` at `format`; frames go to `deliver`, a stream that ends on its own reports
    /// once to `ended`. Both are called on the stream's thread.
    func open(
        _ camera: CameraInfo, format: CameraFormat, deliver: @escaping @Sendable (VideoFrame) -> Void,
        ended: @escaping @Sendable (CameraEnd) -> Void
    ) throws(CameraError) -> any CameraStream
}
