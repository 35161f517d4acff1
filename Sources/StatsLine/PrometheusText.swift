/// The Prometheus text exposition format (version 0.0.4): families with `# HELP` and `# TYPE`, one
/// sample a line, label values escaped. Pure; `ShareMetrics` fills it.
public struct PrometheusText: Sendable {
    public enum Kind: String, Sendable { case counter, gauge }

    public struct Sample: Sendable, Equatable {
        public var labels: [(String, String)]
        public var value: Double

        public init(_ value: Double, labels: [(String, String)] = []) {
            self.value = value
            self.labels = labels
        }

        public static func == (a: Sample, b: Sample) -> Bool {
            a.value == b.value && a.labels.map(\.0) == b.labels.map(\.0) && a.labels.map(\.1) == b.labels.map(\.1)
        }
    }

    /// The content type a scraper expects for this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private var lines: [String] = []

    public init() {}

    /// One family: its help, its kind, and its samples (none: the family is left out, as a
    /// counter or gauge that does not apply yet).
    public mutating func family(_ name: String, _ kind: Kind, help: String, _ samples: [Sample]) {
        guard !samples.isEmpty else { return }
        lines.append("# HELP \(name) \(Self.escapeHelp(help))")
        lines.append("# TYPE \(name) \(kind.rawValue)")
        for sample in samples {
            let labels =
                sample.labels.isEmpty
                ? "" : "{" + sample.labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
            lines.append("\(name)\(labels) \(Self.number(sample.value))")
        }
    }

    /// One family of one unlabelled sample.
    public mutating func family(_ name: String, _ kind: Kind, help: String, _ value: Double?) {
        family(name, kind, help: help, value.map { [Sample($0)] } ?? [])
    }

    public var text: String { lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n" }

    /// Label values: backslash, double quote and line feed escaped.
    static func escapeLabel(_ value: String) -> String { escape(value, quote: true) }

    /// Help text: backslash and line feed escaped.
    static func escapeHelp(_ value: String) -> String { escape(value, quote: false) }

    private static func escape(_ value: String, quote: Bool) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"" where quote: out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whole numbers without a fraction; NaN and the infinities as the format spells them.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
