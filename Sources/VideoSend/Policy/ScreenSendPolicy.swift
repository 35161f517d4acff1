/// What a shared screen keeps when the link or the machine cannot carry everything (DESIGN.md,
/// "Send policies"). Switching needs no renegotiation: only the encoder's size, frame rate and
/// bitrate change.
///
/// | policy   | holds                   | gives way                  | limits                    |
/// |----------|-------------------------|----------------------------|---------------------------|
/// | balanced | frame rate (≥ 15 fps)   | resolution steps down      | ≤ 1920 long side, ≤ 30 fps |
/// | detail   | full resolution         | frame rate (down to 1 fps) | ≤ 1920 long side          |
/// | motion   | frame rate (30)         | quality, then resolution   | ≤ 1280 long side          |
public enum ScreenSendPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case balanced
    case detail
    case motion

    /// `--policy balanced|detail|motion` (also "text" and "video").
    public init?(argument: String) {
        switch argument.lowercased() {
        case "balanced": self = .balanced
        case "detail", "text": self = .detail
        case "motion", "video": self = .motion
        default: return nil
        }
    }

    public var description: String { rawValue }

    /// The words a person sees.
    public var label: String {
        switch self {
        case .balanced: "balanced"
        case .detail: "text and detail"
        case .motion: "motion and video"
        }
    }

    public var maxLongSide: Int { self == .motion ? 1280 : 1920 }
    public static let maxFrameRate = 30

    /// The lowest frame rate the policy gives way to before it touches resolution.
    public var minFrameRate: Int {
        switch self {
        case .balanced: 15
        case .detail: 1
        case .motion: 30
        }
    }

    /// Bits per pixel per frame below which the picture is not worth sending at this size: text
    /// needs the most (detail), motion accepts the least (it gives quality before resolution).
    /// Measured on screen content with x264 veryfast and libvpx speed 8: about 0.1 keeps 1080p text
    /// legible, 0.06 keeps a balanced screen clean, 0.03 is soft but moving.
    public var bitsPerPixel: Double {
        switch self {
        case .balanced: 0.06
        case .detail: 0.10
        case .motion: 0.03
        }
    }
}

/// The size and frame rate a screen leaves at.
public struct SendShape: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var frameRate: Int

    public init(width: Int, height: Int, frameRate: Int) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    public var description: String { "\(width)×\(height) at \(frameRate) fps" }
}

/// Why the screen leaves smaller or slower than its policy's best.
public enum SendLimit: String, Sendable, Hashable, CustomStringConvertible {
    case none
    case bandwidth
    case cpu

    public var description: String { rawValue }
}
