import Foundation
import ScreenWatchdog

/// A scenario file that is not right, said with where and what: `Scenarios/wedge.json:
/// faults[0].at: 95 s is past the scenario's end (90 s)`.
public struct ScenarioError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var path: String
    public var reason: String

    public init(file: String, path: String, reason: String) {
        self.file = file
        self.path = path
        self.reason = reason
    }

    public var description: String { path.isEmpty ? "\(file): \(reason)" : "\(file): \(path): \(reason)" }
}

/// Reads a scenario file and checks it: known fields only, the right types, names that exist,
/// roles that fit each fault, times inside the scenario, values in range.
public enum ScenarioParser {
    public static let sources = ["synthetic", "portal", "camera"]
    public static let codecs = ["h264", "vp8"]
    public static let policies = ["balanced", "detail", "motion"]
    public static let cameras = ["synthetic", "vivid"]
    public static let viewerKinds = ["builtin", "browser"]
    public static let sharerKinds = ["sharectl", "browser"]
    public static var rungs: [String] {
        ["restartCapture"]
            + (SenderLadder.Rung.allCases.map(\.description) + ReceiverLadder.Rung.allCases.map(\.description))
            .filter { $0 != "none" }
    }

    public static func load(path: String, parameters: [String: Double] = [:]) throws -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(file: path, path: "", reason: "cannot read the file (does it exist?)")
        }
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parse(data, file: path, expectedName: stem, parameters: parameters)
    }

    /// `expectedName`: the file's name without `.json`, which `name` must repeat.
    /// `parameters`: values for declared parameters (others keep their defaults).
    public static func parse(
        _ data: Data, file: String, expectedName: String? = nil,
        parameters overrides: [String: Double] = [:]
    ) throws -> Scenario {
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ScenarioError(file: file, path: "", reason: "not JSON (\(Self.jsonProblem(error)))")
        }
        var reader = Reader(file: file)
        let root = try reader.object(json, "")
        try reader.only(root, "", ["name", "summary", "duration", "parameters", "start", "faults", "expect"])

        // Parameters first: numbers elsewhere may name them.
        var parameters: [String: Scenario.Parameter] = [:]
        if let declared = root["parameters"] {
            let object = try reader.object(declared, "parameters")
            for (name, value) in object.sorted(by: { $0.key < $1.key }) {
                let path = "parameters.\(name)"
                let spec = try reader.object(value, path)
                try reader.only(spec, path, ["default", "minimum", "maximum", "summary"])
                var parameter = Scenario.Parameter(
                    value: try reader.plainNumber(spec["default"], "\(path).default"),
                    minimum: try spec["minimum"].map { try reader.plainNumber($0, "\(path).minimum") },
                    maximum: try spec["maximum"].map { try reader.plainNumber($0, "\(path).maximum") },
                    summary: try spec["summary"].map { try reader.string($0, "\(path).summary") })
                if let given = overrides[name] { parameter.value = given }
                if let minimum = parameter.minimum, parameter.value < minimum {
                    throw reader.error(
                        path,
                        "\(Scenario.Expectation.number(parameter.value)) is below its minimum \(Scenario.Expectation.number(minimum))"
                    )
                }
                if let maximum = parameter.maximum, parameter.value > maximum {
                    throw reader.error(
                        path,
                        "\(Scenario.Expectation.number(parameter.value)) is above its maximum \(Scenario.Expectation.number(maximum))"
                    )
                }
                parameters[name] = parameter
            }
        }
        for name in overrides.keys where parameters[name] == nil {
            throw reader.error(
                "parameters",
                "no parameter '\(name)' to set (it declares: \(parameters.keys.sorted().joined(separator: ", ").nonEmpty ?? "none"))"
            )
        }
        reader.parameters = parameters.mapValues(\.value)

        let name = try reader.string(root["name"], "name")
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw reader.error("name", "'\(name)' should be letters, digits and dashes")
        }
        if let expectedName, name != expectedName {
            throw reader.error("name", "'\(name)' differs from the file's name '\(expectedName)'")
        }
        let summary = try reader.string(root["summary"], "summary")
        let duration = try reader.number(root["duration"], "duration")
        guard duration > 0 else { throw reader.error("duration", "must be more than 0 s") }

        // What to start.
        let startObject = try reader.object(root["start"], "start")
        try reader.only(startObject, "start", ["server", "browser", "sharers", "viewers", "sfu"])
        let sfu = try reader.choice(startObject["sfu"], "start.sfu", ["mesh", "janus"], default: "mesh")
        let server = try startObject["server"].map { try reader.bool($0, "start.server") } ?? false
        let browser = try startObject["browser"].map { try reader.bool($0, "start.browser") } ?? false
        var sharers: [Scenario.Sharer] = []
        for (index, value) in try reader.array(startObject["sharers"], "start.sharers").enumerated() {
            let path = "start.sharers[\(index)]"
            let object = try reader.object(value, path)
            let kind = try reader.choice(object["kind"], "\(path).kind", sharerKinds, default: "sharectl")
            if kind == "browser" {
                guard browser else {
                    throw reader.error("\(path).kind", "a browser sharer needs \"browser\": true under start")
                }
                if let key = object.keys.sorted().first(where: { !["name", "kind"].contains($0) }) {
                    throw reader.error(
                        "\(path).\(key)",
                        "a browser sharer shares Chromium's fake screen: its source, size, rate, codec, policy and camera are Chromium's own (give only name and kind)"
                    )
                }
                sharers.append(
                    Scenario.Sharer(
                        name: try reader.participantName(object["name"], "\(path).name"), source: "synthetic",
                        width: 0, height: 0, fps: 30, codec: "chromium", policy: "chromium", camera: nil, kind: kind))
                continue
            }
            try reader.only(
                object, path, ["name", "kind", "source", "size", "fps", "codec", "policy", "camera", "simulcast"])
            let size = try object["size"].map { try reader.string($0, "\(path).size") } ?? "1280x720"
            let parts = size.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (96...7680).contains(parts[0]), (60...4320).contains(parts[1]) else {
                throw reader.error("\(path).size", "'\(size)' is not WIDTHxHEIGHT between 96x60 and 7680x4320")
            }
            let fps = try object["fps"].map { try reader.number($0, "\(path).fps") } ?? 30
            guard fps >= 1, fps <= 60, fps == fps.rounded() else {
                throw reader.error("\(path).fps", "a whole number from 1 to 60, not \(fps)")
            }
            sharers.append(
                Scenario.Sharer(
                    name: try reader.participantName(object["name"], "\(path).name"),
                    source: try reader.choice(object["source"], "\(path).source", sources, default: "synthetic"),
                    width: parts[0], height: parts[1], fps: Int(fps),
                    codec: try reader.choice(object["codec"], "\(path).codec", codecs, default: "h264"),
                    policy: try reader.choice(object["policy"], "\(path).policy", policies, default: "balanced"),
                    camera: try object["camera"].map { try reader.choice($0, "\(path).camera", cameras, default: nil) },
                    simulcast: try object["simulcast"].map { try reader.bool($0, "\(path).simulcast") } ?? true)
            )
        }
        guard !sharers.isEmpty else { throw reader.error("start.sharers", "at least one sharer is needed") }
        var viewers: [Scenario.Viewer] = []
        let viewerList: [Any] = try startObject["viewers"].map { try reader.array($0, "start.viewers") } ?? []
        for (index, value) in viewerList.enumerated() {
            let path = "start.viewers[\(index)]"
            let object = try reader.object(value, path)
            try reader.only(object, path, ["name", "kind"])
            let kind = try reader.choice(object["kind"], "\(path).kind", viewerKinds, default: "builtin")
            if kind == "browser" && !browser {
                throw reader.error("\(path).kind", "a browser viewer needs \"browser\": true under start")
            }
            viewers.append(
                Scenario.Viewer(name: try reader.participantName(object["name"], "\(path).name"), kind: kind))
        }
        if !viewers.isEmpty && !server {
            throw reader.error("start.server", "viewers meet the sharer in a room: set \"server\": true")
        }
        var seen = Set<String>()
        for (index, person) in (sharers.map(\.name) + viewers.map(\.name)).enumerated()
        where !seen.insert(person).inserted {
            throw reader.error(
                index < sharers.count ? "start.sharers" : "start.viewers", "the name '\(person)' is used twice")
        }
        var start = Scenario.Start(server: server, browser: browser, sharers: sharers, viewers: viewers)
        start.sfu = sfu
        let sharerNames = sharers.map(\.name), viewerNames = viewers.map(\.name)

        // Faults.
        var faults: [Scenario.Fault] = []
        let faultList: [Any] = try root["faults"].map { try reader.array($0, "faults") } ?? []
        for (index, value) in faultList.enumerated() {
            let path = "faults[\(index)]"
            let object = try reader.object(value, path)
            try reader.only(
                object, path, ["kind", "at", "for", "every", "target", "screenOf", "rateKbit", "lossPercent"])
            let kindName = try reader.string(object["kind"], "\(path).kind")
            guard let kind = Scenario.FaultKind(rawValue: kindName) else {
                throw reader.error(
                    "\(path).kind",
                    "unknown fault '\(kindName)' (known: \(Scenario.FaultKind.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            let at = try reader.number(object["at"], "\(path).at")
            guard at >= 0, at < duration else {
                throw reader.error(
                    "\(path).at",
                    "\(Scenario.Expectation.number(at)) s is outside the scenario (0 to \(Scenario.Expectation.number(duration)) s)"
                )
            }
            let lasting = try object["for"].map { try reader.number($0, "\(path).for") }
            if let lasting, lasting <= 0 { throw reader.error("\(path).for", "must be more than 0 s") }
            let every = try object["every"].map { try reader.number($0, "\(path).every") }
            if let every, every <= (lasting ?? 0) || every <= 0 {
                throw reader.error(
                    "\(path).every",
                    "must be longer than the fault lasts (\(Scenario.Expectation.number(lasting ?? 0)) s)")
            }
            let target = try reader.string(object["target"], "\(path).target")
            var fault = Scenario.Fault(kind: kind, at: at, duration: lasting, every: every, target: target)
            switch kind {
            case .captureStall, .encoderStall, .reshare, .cameraUnplug, .cameraSilent:
                guard let sharer = sharers.first(where: { $0.name == target }) else {
                    throw reader.error(
                        "\(path).target",
                        "a \(kind.rawValue) happens to a sharer (\(sharerNames.joined(separator: ", "))), not '\(target)'"
                    )
                }
                if sharer.kind == "browser" {
                    throw reader.error(
                        "\(path).target",
                        "\(target) is a browser sharer: a \(kind.rawValue) is put into a sharectl sharer only")
                }
                if kind == .cameraUnplug || kind == .cameraSilent, sharer.camera == nil, sharer.source != "camera" {
                    throw reader.error(
                        "\(path).target",
                        "\(target) has no camera (give the sharer \"camera\": \"synthetic\" or \"vivid\")")
                }
            case .decoderWedge, .decoderWedgeSticky:
                guard viewerNames.contains(target) else {
                    throw reader.error(
                        "\(path).target",
                        "a \(kind.rawValue) happens to a viewer (\(viewerNames.joined(separator: ", ").nonEmpty ?? "none")), not '\(target)'"
                    )
                }
                if let screenOf = object["screenOf"] {
                    let owner = try reader.string(screenOf, "\(path).screenOf")
                    guard sharerNames.contains(owner) else {
                        throw reader.error("\(path).screenOf", "'\(owner)' is not a sharer")
                    }
                    fault.screenOf = owner
                } else {
                    guard sharers.count == 1 else {
                        throw reader.error(path, "with several sharers, say whose screen with \"screenOf\"")
                    }
                    fault.screenOf = sharers[0].name
                }
            case .link:
                guard seen.contains(target) else {
                    throw reader.error("\(path).target", "'\(target)' is not in the scenario")
                }
                fault.rateKbit = try object["rateKbit"].map { try reader.number($0, "\(path).rateKbit") }.map {
                    Int($0)
                }
                fault.lossPercent = try object["lossPercent"].map { try reader.number($0, "\(path).lossPercent") }
                guard fault.rateKbit != nil || fault.lossPercent != nil else {
                    throw reader.error(path, "a link fault needs rateKbit, lossPercent or both")
                }
                if let rate = fault.rateKbit, rate < 8 {
                    throw reader.error("\(path).rateKbit", "at least 8 kbit/s, not \(rate)")
                }
                if let loss = fault.lossPercent, !(0...100).contains(loss) {
                    throw reader.error("\(path).lossPercent", "0 to 100, not \(loss)")
                }
            }
            if kind != .link {
                for key in ["rateKbit", "lossPercent"] where object[key] != nil {
                    throw reader.error("\(path).\(key)", "only a link fault takes it")
                }
            }
            if object["screenOf"] != nil, kind != .decoderWedge, kind != .decoderWedgeSticky {
                throw reader.error("\(path).screenOf", "only a decoder wedge takes it")
            }
            faults.append(fault)
        }

        // Expectations.
        var expectations: [Scenario.Expectation] = []
        let expectList = try reader.array(root["expect"], "expect")
        guard !expectList.isEmpty else { throw reader.error("expect", "a scenario needs at least one expectation") }
        for (index, value) in expectList.enumerated() {
            let path = "expect[\(index)]"
            let object = try reader.object(value, path)
            try reader.only(
                object, path,
                [
                    "kind", "viewer", "sharer", "fault", "within", "rung", "text", "fps", "settle",
                    "width", "height", "seconds"
                ])
            let kindName = try reader.string(object["kind"], "\(path).kind")
            guard let kind = Scenario.ExpectationKind(rawValue: kindName) else {
                throw reader.error(
                    "\(path).kind",
                    "unknown expectation '\(kindName)' (known: \(Scenario.ExpectationKind.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            var expectation = Scenario.Expectation(kind: kind)
            expectation.viewer = try object["viewer"].map { try reader.string($0, "\(path).viewer") }
            expectation.sharer = try object["sharer"].map { try reader.string($0, "\(path).sharer") }
            expectation.within = try object["within"].map { try reader.number($0, "\(path).within") }
            expectation.rung = try object["rung"].map { try reader.choice($0, "\(path).rung", rungs, default: nil) }
            expectation.text = try object["text"].map { try reader.string($0, "\(path).text") }
            expectation.fps = try object["fps"].map { try reader.number($0, "\(path).fps") }
            expectation.settle = try object["settle"].map { try reader.number($0, "\(path).settle") }
            expectation.width = try object["width"].map { Int(try reader.number($0, "\(path).width")) }
            expectation.height = try object["height"].map { Int(try reader.number($0, "\(path).height")) }
            expectation.seconds = try object["seconds"].map { try reader.number($0, "\(path).seconds") }
            if let fault = object["fault"] {
                let number = try reader.number(fault, "\(path).fault")
                guard number == number.rounded(), number >= 0, Int(number) < faults.count else {
                    throw reader.error(
                        "\(path).fault",
                        "names fault \(Scenario.Expectation.number(number)), but the faults are 0 to \(faults.count - 1)"
                    )
                }
                expectation.fault = Int(number)
            }
            if let viewer = expectation.viewer, !viewerNames.contains(viewer) {
                throw reader.error(
                    "\(path).viewer",
                    "'\(viewer)' is not a viewer (\(viewerNames.joined(separator: ", ").nonEmpty ?? "none"))")
            }
            if let sharer = expectation.sharer, !sharerNames.contains(sharer) {
                throw reader.error(
                    "\(path).sharer", "'\(sharer)' is not a sharer (\(sharerNames.joined(separator: ", ")))")
            }
            func need(_ present: Bool, _ field: String) throws {
                if !present { throw reader.error(path, "a \(kind.rawValue) expectation needs \"\(field)\"") }
            }
            switch kind {
            case .viewRestored, .viewRestoredOrGiveUp, .giveUpNotice:
                try need(expectation.viewer != nil, "viewer")
                try need(expectation.within != nil, "within")
            case .watchdogReaches, .watchdogStaysBelow:
                try need(expectation.rung != nil, "rung")
            case .noticeShown:
                try need(expectation.text?.isEmpty == false, "text")
                try need(expectation.within != nil, "within")
            case .minFrameRate:
                try need(expectation.viewer != nil, "viewer")
                try need(expectation.fps.map { $0 > 0 } ?? false, "fps")
            case .minResolution:
                try need(expectation.viewer != nil, "viewer")
                try need((expectation.width ?? 0) > 0 && (expectation.height ?? 0) > 0, "width and height")
            case .noStallLongerThan:
                try need(expectation.viewer != nil, "viewer")
                try need(expectation.seconds.map { $0 > 0 } ?? false, "seconds")
            case .cameraRecovered:
                try need(expectation.sharer != nil, "sharer")
                try need(expectation.within != nil, "within")
            }
            if let within = expectation.within {
                guard within > 0 else { throw reader.error("\(path).within", "must be more than 0 s") }
                let from = expectation.fault.map { faults[$0].at } ?? 0
                if from + within > duration {
                    throw reader.error(
                        "\(path).within",
                        "\(Scenario.Expectation.number(from + within)) s is past the scenario's end (\(Scenario.Expectation.number(duration)) s): it could not be judged"
                    )
                }
            }
            expectations.append(expectation)
        }
        return Scenario(
            name: name, summary: summary, duration: duration, parameters: parameters, start: start,
            faults: faults, expect: expectations)
    }

    static func jsonProblem(_ error: Error) -> String {
        let text = "\(error)"
        if let range = text.range(of: "NSDebugDescription=") {
            return String(text[range.upperBound...].prefix { $0 != "," && $0 != "}" && $0 != ")" })
        }
        return "it does not parse"
    }

    /// Typed reads with paths in the errors.
    struct Reader {
        let file: String
        var parameters: [String: Double] = [:]

        func error(_ path: String, _ reason: String) -> ScenarioError {
            ScenarioError(file: file, path: path, reason: reason)
        }

        func object(_ value: Any?, _ path: String) throws -> [String: Any] {
            guard let value else { throw error(path, "missing") }
            guard let object = value as? [String: Any] else { throw error(path, "should be an object {…}") }
            return object
        }

        func array(_ value: Any?, _ path: String) throws -> [Any] {
            guard let value else { throw error(path, "missing") }
            guard let array = value as? [Any] else { throw error(path, "should be a list […]") }
            return array
        }

        func string(_ value: Any?, _ path: String) throws -> String {
            guard let value else { throw error(path, "missing") }
            guard let string = value as? String else { throw error(path, "should be text in quotes") }
            return string
        }

        func bool(_ value: Any, _ path: String) throws -> Bool {
            guard let bool = value as? Bool, !(value is String) else { throw error(path, "should be true or false") }
            return bool
        }

        /// A number, or `"$NAME"` for a declared parameter.
        func number(_ value: Any?, _ path: String) throws -> Double {
            if let text = value as? String, text.hasPrefix("$") {
                let name = String(text.dropFirst())
                guard let resolved = parameters[name] else {
                    throw error(path, "'\(text)' names no parameter (declare it under \"parameters\")")
                }
                return resolved
            }
            return try plainNumber(value, path)
        }

        func plainNumber(_ value: Any?, _ path: String) throws -> Double {
            guard let value else { throw error(path, "missing") }
            guard !(value is String), let number = (value as? Double) ?? (value as? Int).map(Double.init),
                number.isFinite
            else {
                throw error(path, "should be a number")
            }
            return number
        }

        func choice(_ value: Any?, _ path: String, _ choices: [String], default fallback: String?) throws -> String {
            guard let value else {
                if let fallback { return fallback }
                throw error(path, "missing (one of: \(choices.joined(separator: ", ")))")
            }
            let text = try string(value, path)
            guard choices.contains(text) else {
                throw error(path, "'\(text)' is not one of: \(choices.joined(separator: ", "))")
            }
            return text
        }

        func participantName(_ value: Any?, _ path: String) throws -> String {
            let name = try string(value, path)
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw error(path, "'\(name)' should be letters, digits and dashes")
            }
            return name
        }

        func only(_ object: [String: Any], _ path: String, _ known: [String]) throws {
            for key in object.keys.sorted() where !known.contains(key) {
                throw error(
                    path.isEmpty ? key : "\(path).\(key)",
                    "unknown field (known here: \(known.joined(separator: ", ")))")
            }
        }
    }
}

extension Scenario.Expectation {
    init(kind: Scenario.ExpectationKind) { self.kind = kind }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
