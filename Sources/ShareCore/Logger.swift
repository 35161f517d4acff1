#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A logger that libraries take and only `sharectl` configures (level and destination).
/// Metadata keys are dotted: `"ice.pair"`, `"rtp.ssrc"`, `"watchdog.rung"`.
public struct Logger: Sendable {
    public enum Level: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    public typealias Metadata = [String: String]

    /// One log record, as a sink receives it.
    public struct Record: Sendable {
        public let level: Level
        public let label: String
        public let message: String
        public let metadata: Metadata
    }

    public let label: String
    public var level: Level
    public var metadata: Metadata
    private let sink: @Sendable (Record) -> Void

    public init(
        label: String, level: Level = .info, metadata: Metadata = [:],
        sink: @escaping @Sendable (Record) -> Void = Logger.standardError
    ) {
        self.label = label
        self.level = level
        self.metadata = metadata
        self.sink = sink
    }

    /// A logger that drops everything (the default for libraries used without one).
    public static let disabled = Logger(label: "disabled", level: .error, sink: { _ in })

    /// The same destination and level under another label, e.g. `logger.child("ice")`.
    public func child(_ label: String, metadata extra: Metadata = [:]) -> Logger {
        Logger(label: "\(self.label).\(label)", level: level, metadata: metadata.merging(extra) { $1 }, sink: sink)
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        guard level >= self.level else { return }
        sink(
            Record(
                level: level, label: label, message: message(),
                metadata: metadata.isEmpty ? self.metadata : self.metadata.merging(metadata) { $1 }))
    }

    public func trace(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        log(.trace, message(), metadata)
    }
    public func debug(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        log(.debug, message(), metadata)
    }
    public func info(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        log(.info, message(), metadata)
    }
    public func notice(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        log(.notice, message(), metadata)
    }
    public func warning(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        log(.warning, message(), metadata)
    }
    public func error(_ message: @autoclosure () -> String, _ metadata: Metadata = [:]) {
        log(.error, message(), metadata)
    }

    /// Writes `LEVEL label: message key=value ...` to standard error, one line per record; under
    /// systemd's journal (standard error is the stream `JOURNAL_STREAM` names) each line starts
    /// with its syslog priority, `<4>` for a warning, so `journalctl -p warning` finds it.
    public static let standardError: @Sendable (Record) -> Void = { record in
        var line =
            (journalStream ? journalPrefix(record.level) : "") + "\(record.level) \(record.label): \(record.message)"
        for key in record.metadata.keys.sorted() { line += " \(key)=\(record.metadata[key]!)" }
        line += "\n"
        StandardError.write(line)
    }
}

extension Logger {
    /// The syslog priority prefix sd-daemon(3) reads on a service's standard error: debug 7 (and
    /// trace), info 6, notice 5, warning 4, error 3.
    public static func journalPrefix(_ level: Level) -> String {
        switch level {
        case .trace, .debug: "<7>"
        case .info: "<6>"
        case .notice: "<5>"
        case .warning: "<4>"
        case .error: "<3>"
        }
    }

    /// Whether standard error is the journal's stream: `JOURNAL_STREAM` is `DEVICE:INODE` of it
    /// (systemd.exec(5)); a process started from such a service with its output elsewhere has the
    /// variable but another descriptor, and gets no prefixes.
    public static func isJournalStream(_ variable: String?, device: UInt64, inode: UInt64) -> Bool {
        guard let variable else { return false }
        let parts = variable.split(separator: ":")
        guard parts.count == 2, let d = UInt64(parts[0]), let i = UInt64(parts[1]) else { return false }
        return d == device && i == inode
    }

    static let journalStream: Bool = {
        var info = stat()
        guard fstat(2, &info) == 0, let variable = getenv("JOURNAL_STREAM") else { return false }
        return isJournalStream(
            String(cString: variable), device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }()
}

/// Collects records in memory, for tests that check what was said.
public final class LogCapture: Sendable {
    private let records = Locked<[Logger.Record]>([])
    public init() {}
    public func logger(label: String = "test", level: Logger.Level = .trace) -> Logger {
        Logger(label: label, level: level) { [self] record in records.withLock { $0.append(record) } }
    }
    public var all: [Logger.Record] { records.withLock { $0 } }
    public var messages: [String] { all.map(\.message) }
}
