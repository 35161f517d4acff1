import Foundation
import StatsLine

/// One second of a share or a call as its `--stats-json` line says it: a line of this build is
/// read as its command's `StatsLine` type (StatsSample+Lines.swift); older builds' lines and
/// hand-made ones are read tolerantly: every field but the time may be missing, and fields not
/// known here are ignored. Names follow the share line: `video.fpsEncoded`, `connection.rttMs`,
/// `watchdog.rung`, …; a call's `peers[]` are its connections.
public struct StatsSample: Sendable, Equatable {
    public var t: Double
    public var codec: String?
    public var encoder: String?
    public var width: Int?
    public var height: Int?
    public var fpsEncoded: Double?
    public var fpsSent: Double?
    public var bitrateKbps: Double?
    public var targetKbps: Double?
    public var limitedBy: String?
    public var keyframes: Int?
    public var keyframeRequests: Int?
    public var pliReceived: Int?
    public var nacksReceived: Int?
    public var connections: [Connection] = []
    public var watchdog: Watchdog?
    /// What a watcher decoded (`watch --janus`); nil on a sender's line.
    public var received: Received?

    public init(t: Double) { self.t = t }

    /// A watcher's second: the publisher's video as it arrived and was decoded here.
    public struct Received: Sendable, Equatable {
        public var publisher: String
        public var framesDecoded = 0
        public var keyframesDecoded = 0
        public var fps: Double = 0
        public var bitrateKbps: Double = 0
        public var packetsLost = 0
        public var nacksSent = 0
        public var plisSent = 0
        public var layer: Int?
        public var queuingDelayMs: Double?
        public var audioFramesDecoded = 0

        public init(publisher: String) { self.publisher = publisher }
    }

    public struct Connection: Sendable, Equatable {
        /// The person or endpoint (`peer`, `name` or `id` in the file), else the candidate pair.
        public var peer: String?
        public var state: String?
        public var pair: String?
        public var relayed: Bool?
        public var rttMs: Double?
        public var fractionLost: Double?
    }

    public struct Watchdog: Sendable, Equatable {
        public var state: String?
        public var rung: String?
        /// `lastStep` and `recent`, as steps.
        public var steps: [Step] = []

        public init(state: String?, rung: String?, steps: [Step]) {
            self.state = state
            self.rung = rung
            self.steps = steps
        }
    }

    public struct Step: Sendable, Equatable, Hashable {
        public var number: Int?
        public var t: Double
        public var action: String
        public var subject: String?
        public var reason: String

        public init(number: Int?, t: Double, action: String, subject: String?, reason: String) {
            self.number = number
            self.t = t
            self.action = action
            self.subject = subject
            self.reason = reason
        }
    }

    /// The worst (highest) RTT of the sample's connections.
    public var rttMs: Double? { connections.compactMap(\.rttMs).max() }
}

/// A stats file that cannot be read, said so a person can act on it.
public struct StatsFileError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var reason: String

    public init(path: String, line: Int?, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    public var description: String {
        if let line { return "\(path) line \(line): \(reason)" }
        return "\(path): \(reason)"
    }
}

/// Reads a `--stats-json` file: one JSON object per line.
public enum StatsFile {
    public struct Contents: Sendable, Equatable {
        public var samples: [StatsSample]
        /// Lines passed over and why (a last line cut short by the share ending mid-write).
        public var notes: [String]
    }

    public static func read(path: String) throws -> Contents {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StatsFileError(path: path, line: nil, reason: "cannot read the file (does it exist? is it readable?)")
        }
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    /// A malformed line in the middle is an error naming the line; a malformed last line (the share
    /// was stopped while writing it) is passed over with a note.
    public static func parse(_ text: String, path: String = "stats") throws -> Contents {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { !$0.element.trimmingCharacters(in: .whitespaces).isEmpty }
        var samples: [StatsSample] = []
        var notes: [String] = []
        for (position, (index, line)) in lines.enumerated() {
            do {
                var sample = try sample(from: String(line))
                if sample.t.isNaN { sample.t = (samples.last?.t ?? 0) + 1 }
                samples.append(sample)
            } catch let reason as Reason {
                if position == lines.count - 1 && !samples.isEmpty {
                    notes.append("line \(index + 1) passed over: \(reason.text) (cut short when the share stopped?)")
                } else {
                    throw StatsFileError(path: path, line: index + 1, reason: reason.text)
                }
            }
        }
        guard !samples.isEmpty else {
            throw StatsFileError(
                path: path, line: nil, reason: "no statistics in it (write one with sharectl share --stats-json PATH)")
        }
        return Contents(samples: samples, notes: notes)
    }

    private struct Reason: Error { var text: String }

    private static func sample(from line: String) throws -> StatsSample {
        switch try? StatsLineJSON.decode(line) {
        case .share(let share): return StatsSample(share)
        case .call(let call): return StatsSample(call)
        case .janusWatch(let watch): return StatsSample(watch)
        case nil: return try olderSample(from: line)
        }
    }

    /// A line that is not one of this build's: from an older build, or made by hand.
    private static func olderSample(from line: String) throws -> StatsSample {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        } catch {
            throw Reason(text: "not JSON (\(excerpt(line)))")
        }
        guard let root = object as? [String: Any] else { throw Reason(text: "not a JSON object (\(excerpt(line)))") }
        var sample = StatsSample(t: .nan)
        if let t = root["t"] {
            guard let t = number(t), t.isFinite, t >= 0 else { throw Reason(text: "'t' is not a time in seconds") }
            sample.t = t
        }
        let video = root["video"] as? [String: Any] ?? [:]
        sample.codec = video["codec"] as? String
        sample.encoder = video["encoder"] as? String
        sample.width = video["width"].flatMap(number).map { Int($0) }
        sample.height = video["height"].flatMap(number).map { Int($0) }
        sample.fpsEncoded = video["fpsEncoded"].flatMap(number)
        sample.fpsSent = video["fpsSent"].flatMap(number)
        sample.bitrateKbps = video["bitrateKbps"].flatMap(number)
        sample.targetKbps = video["targetKbps"].flatMap(number)
        sample.limitedBy = video["limitedBy"] as? String
        sample.keyframes = video["keyframes"].flatMap(number).map { Int($0) }
        sample.keyframeRequests = video["keyframeRequests"].flatMap(number).map { Int($0) }
        sample.pliReceived = video["pliReceived"].flatMap(number).map { Int($0) }
        sample.nacksReceived = video["nacksReceived"].flatMap(number).map { Int($0) }

        var connections: [(String?, [String: Any])] = []
        if let one = root["connection"] as? [String: Any] { connections.append((nil, one)) }
        if let list = root["connections"] as? [[String: Any]] { connections += list.map { (nil, $0) } }
        if let byPeer = root["connections"] as? [String: Any] {
            connections += byPeer.sorted { $0.key < $1.key }.compactMap { key, value in
                (value as? [String: Any]).map { (key, $0) }
            }
        }
        // A call line: each participant's connection under its name.
        for peer in root["peers"] as? [[String: Any]] ?? [] {
            var connection = peer["connection"] as? [String: Any] ?? [:]
            connection["name"] = peer["name"] ?? peer["id"]
            connections.append((nil, connection))
        }
        sample.connections = connections.map { key, object in
            StatsSample.Connection(
                peer: key ?? (object["peer"] as? String) ?? (object["name"] as? String) ?? (object["id"] as? String),
                state: object["state"] as? String, pair: object["pair"] as? String, relayed: object["relayed"] as? Bool,
                rttMs: object["rttMs"].flatMap(number), fractionLost: object["fractionLost"].flatMap(number))
        }

        if let watchdog = root["watchdog"] as? [String: Any] {
            var steps: [StatsSample.Step] = []
            if let recent = watchdog["recent"] as? [[String: Any]] { steps += recent.compactMap(step) }
            if let last = watchdog["lastStep"] as? [String: Any], let step = step(last), !steps.contains(step) {
                steps.append(step)
            }
            sample.watchdog = StatsSample.Watchdog(
                state: watchdog["state"] as? String, rung: watchdog["rung"] as? String, steps: steps)
        }
        return sample
    }

    private static func step(_ object: [String: Any]) -> StatsSample.Step? {
        guard let action = object["action"] as? String, let t = object["t"].flatMap(number) else { return nil }
        return StatsSample.Step(
            number: object["number"].flatMap(number).map { Int($0) }, t: t, action: action,
            subject: object["subject"] as? String, reason: object["reason"] as? String ?? "")
    }

    private static func number(_ value: Any) -> Double? {
        if let double = value as? Double { return double }
        if let int = value as? Int { return Double(int) }
        return nil
    }

    private static func excerpt(_ line: String) -> String {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.count > 40 ? "starts \"\(trimmed.prefix(40))…\"" : "\"\(trimmed)\""
    }
}
