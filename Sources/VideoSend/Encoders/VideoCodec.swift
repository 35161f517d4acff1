/// The video codecs sharectl sends.
public enum VideoCodec: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case h264 = "H264"
    case vp8 = "VP8"

    public var description: String { rawValue }

    /// `--codec h264|vp8`.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "h264", "h.264", "avc": self = .h264
        case "vp8": self = .vp8
        default: return nil
        }
    }
}
