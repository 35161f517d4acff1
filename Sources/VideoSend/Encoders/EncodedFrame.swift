/// One encoded frame as an encoder hands it to the payloader.
public struct EncodedFrame: Hashable, Sendable {
    /// H.264: an Annex-B access unit; VP8: one VP8 frame.
    public var bytes: [UInt8]
    public var isKeyframe: Bool
    /// The timestamp the frame was submitted with (90 kHz).
    public var frameIndex: Int64

    public init(bytes: [UInt8], isKeyframe: Bool, frameIndex: Int64) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.frameIndex = frameIndex
    }
}

/// An encoder refused its settings or a frame.
public struct EncoderError: Error, Hashable, Sendable, CustomStringConvertible {
    public var codec: String
    public var message: String

    public init(codec: String, _ message: String) {
        self.codec = codec
        self.message = message
    }

    public var description: String { "\(codec): \(message)" }
}
