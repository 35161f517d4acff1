/// A fault put into a running share or call on purpose, for drills and tests (off unless asked
/// for). Typed `fault WORD [NAME]` on standard input and a scenario's faults read into one.
public enum FaultDrill: Sendable, Equatable {
    /// The sharer's screen capture stops delivering frames until it is restarted.
    case captureStall
    /// The sharer's screen encoders take frames and produce nothing until a fresh one is made.
    case encoderStall
    /// A viewer's decoder of `name`'s screen (nil: every screen) swallows every frame: until it is
    /// rebuilt, or with `sticky` across rebuilds until the screen is shared anew.
    case decoderWedge(name: String?, sticky: Bool)
    /// Every decoder fault ends.
    case clear

    public struct Unknown: Error, CustomStringConvertible, Sendable {
        public let word: String
        public var description: String {
            "unknown fault '\(word)' (capture-stall, encoder-stall, decoder-wedge [NAME], decoder-wedge-sticky [NAME], clear)"
        }
    }

    /// Reads `WORD [NAME]`: a name is taken only by the decoder wedges.
    public init(word: String, name: String? = nil) throws(Unknown) {
        switch word {
        case "capture-stall": self = .captureStall
        case "encoder-stall": self = .encoderStall
        case "decoder-wedge": self = .decoderWedge(name: name, sticky: false)
        case "decoder-wedge-sticky": self = .decoderWedge(name: name, sticky: true)
        case "clear": self = .clear
        default: throw Unknown(word: word)
        }
    }

    /// The word that names it.
    public var word: String {
        switch self {
        case .captureStall: "capture-stall"
        case .encoderStall: "encoder-stall"
        case .decoderWedge(_, let sticky): sticky ? "decoder-wedge-sticky" : "decoder-wedge"
        case .clear: "clear"
        }
    }
}
