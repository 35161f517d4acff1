/// A fault scenario (`Scenarios/NAME.json`): what to start, which faults to put in at which
/// times, and what must follow. `ScenarioParser` reads and checks the files (`sharectl scenario
/// check`), `sharectl scenario run` carries one out and `ScenarioJudge` judges what it saw.
///
/// Times are seconds from the start of the scenario. Any number may be written as
/// `"$NAME"`, a parameter declared under `parameters` with a default (the soak's length).
public struct Scenario: Codable, Sendable, Equatable {
    public var name: String
    public var summary: String
    /// How long the scenario runs, in seconds.
    public var duration: Double
    /// The parameters it declares and the values used (defaults unless given).
    public var parameters: [String: Parameter]
    public var start: Start
    public var faults: [Fault]
    public var expect: [Expectation]

    public struct Parameter: Codable, Sendable, Equatable {
        public var value: Double
        public var minimum: Double?
        public var maximum: Double?
        public var summary: String?
    }

    public struct Start: Codable, Sendable, Equatable {
        /// Start the room server (`sharectl serve`).
        public var server: Bool
        /// Start a headless browser for the viewers of kind `browser`.
        public var browser: Bool
        public var sharers: [Sharer]
        public var viewers: [Viewer]
        /// Where the room's media goes: `mesh`, or `janus` (`serve --sfu janus`: a Janus VideoRoom
        /// behind the room server).
        public var sfu: String = "mesh"
    }

    public struct Sharer: Codable, Sendable, Equatable {
        public var name: String
        /// `synthetic` or `portal` (a screen), or `camera`.
        public var source: String
        public var width: Int
        public var height: Int
        public var fps: Int
        /// `h264` or `vp8`.
        public var codec: String
        /// `balanced`, `detail` or `motion`.
        public var policy: String
        /// A camera beside the screen: `synthetic` or `vivid` (a V4L2 device in QEMU), or none.
        public var camera: String?
        /// `sharectl` (`share --room`) or `browser`: the browser client in headless Chromium shares
        /// Chromium's fake screen (its size, rate and codec are Chromium's) and climbs its own ladder.
        public var kind: String
        /// The screen from shared layer encoders, each viewer sent the layer its link carries (the
        /// default); false: `share --room --no-simulcast`, an encoder per viewer.
        public var simulcast: Bool

        public init(
            name: String, source: String, width: Int, height: Int, fps: Int, codec: String, policy: String,
            camera: String?, kind: String = "sharectl", simulcast: Bool = true
        ) {
            self.kind = kind
            self.simulcast = simulcast
            self.name = name
            self.source = source
            self.width = width
            self.height = height
            self.fps = fps
            self.codec = codec
            self.policy = policy
            self.camera = camera
        }
    }

    public struct Viewer: Codable, Sendable, Equatable {
        public var name: String
        /// `builtin` (`sharectl watch`) or `browser`.
        public var kind: String

        public init(name: String, kind: String) {
            self.name = name
            self.kind = kind
        }
    }

    public enum FaultKind: String, Codable, Sendable, CaseIterable {
        /// The sharer's capture delivers nothing.
        case captureStall
        /// The sharer's encoder takes frames and puts out nothing.
        case encoderStall
        /// A viewer's decoder for the sharer's screen swallows everything; a new decoder is sound.
        case decoderWedge
        /// As `decoderWedge`, and every new decoder for that screen wedges too.
        case decoderWedgeSticky
        /// The sharer stops and shares again by hand.
        case reshare
        /// The sharer's camera disappears (unplugged).
        case cameraUnplug
        /// The sharer's camera stays open and delivers nothing.
        case cameraSilent
        /// A participant's link is limited (rate, loss), as tc and nftables do it.
        case link
    }

    public struct Fault: Codable, Sendable, Equatable {
        public var kind: FaultKind
        /// When it starts.
        public var at: Double
        /// How long it lasts at most (nil: until the watchdog mends it — a capture restart, a fresh
        /// encoder, a new decoder — or for a link and a silent camera, to the end).
        public var duration: Double?
        /// Put in again every so many seconds until the end (soak).
        public var every: Double?
        /// Who it happens to: a sharer, or for decoder wedges and links a viewer or sharer.
        public var target: String
        /// For decoder wedges: whose screen (the sharer); defaults to the only sharer.
        public var screenOf: String?
        public var rateKbit: Int?
        public var lossPercent: Double?

        /// The times it is put in, up to `end`.
        public func times(until end: Double) -> [Double] {
            guard let every, every > 0 else { return [at] }
            return Array(stride(from: at, to: end, by: every))
        }
    }

    public enum ExpectationKind: String, Codable, Sendable, CaseIterable {
        /// The viewer's view of the screen decodes again within `within` s of each fault.
        case viewRestored
        /// The view decodes again within `within` s of each fault, or the sharer gives up on it
        /// with the notice "Couldn't restore NAME's view — try Stop and Share again" by then.
        case viewRestoredOrGiveUp
        /// The sharer shows "Couldn't restore NAME's view — try Stop and Share again" within `within` s.
        case giveUpNotice
        /// The sharer's watchdog reaches `rung` (within `within` s of the fault, if given); besides
        /// the ladders' rungs, `restartCapture` names the capture restart.
        case watchdogReaches
        /// The watchdog never reaches `rung` (`keyframe`: it takes no step at all).
        case watchdogStaysBelow
        /// The sharer shows `text` within `within` s of the fault.
        case noticeShown
        /// The viewer decodes at least `fps` frames a second, after the first `settle` seconds.
        case minFrameRate
        /// The viewer decodes at least `width`×`height`.
        case minResolution
        /// The viewer's screen never stands still longer than `seconds`.
        case noStallLongerThan
        /// The sharer's camera gives frames again within `within` s of the fault.
        case cameraRecovered
    }

    public struct Expectation: Codable, Sendable, Equatable {
        public var kind: ExpectationKind
        public var viewer: String?
        public var sharer: String?
        /// Which fault (index in `faults`) the time counts from; nil: the start.
        public var fault: Int?
        public var within: Double?
        public var rung: String?
        public var text: String?
        public var fps: Double?
        public var settle: Double?
        public var width: Int?
        public var height: Int?
        public var seconds: Double?

        /// In words, e.g. "bea's view restored within 30 s of fault 1 (decoderWedge)".
        public func describe(in scenario: Scenario) -> String {
            let from = fault.map { " of faults[\($0)] (\(scenario.faults[$0].kind.rawValue))" } ?? " of the start"
            let within = self.within.map { " within \(Self.number($0)) s\(from)" } ?? ""
            switch kind {
            case .viewRestored: return "\(viewer ?? "?")'s view restored\(within)"
            case .viewRestoredOrGiveUp: return "\(viewer ?? "?")'s view restored, or the give-up notice,\(within)"
            case .giveUpNotice: return "the give-up notice for \(viewer ?? "?")\(within)"
            case .watchdogReaches: return "the watchdog reaches \(rung ?? "?")\(within)"
            case .watchdogStaysBelow: return "the watchdog never reaches \(rung ?? "?")"
            case .noticeShown: return "the notice \"\(text ?? "")\"\(within)"
            case .minFrameRate:
                return
                    "\(viewer ?? "?") decodes at least \(Self.number(fps ?? 0)) fps after \(Self.number(settle ?? 0)) s"
            case .minResolution: return "\(viewer ?? "?") decodes at least \(width ?? 0)×\(height ?? 0)"
            case .noStallLongerThan:
                return "\(viewer ?? "?")'s view never stands still longer than \(Self.number(seconds ?? 0)) s"
            case .cameraRecovered: return "\(sharer ?? "?")'s camera gives frames again\(within)"
            }
        }

        public static func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }
    }
}
