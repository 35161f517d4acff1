import Foundation
import ShareCore
import StatsLine

/// One process a scenario starts (`sharectl serve`, `share --room`, `watch`, Chromium): its
/// output goes to `DIR/NAME.log` and into timestamped lines that a thread of its own reads from
/// the pipe; commands go to its standard input. Used from the runner's thread; only the line
/// list is shared with the reader thread.
final class ScenarioProcess {
    let name: String
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines: Lines
    private(set) var started = false

    /// Lines read so far and not yet taken, stamped with scenario time when read.
    final class Lines: Sendable {
        private let pending = Locked<[ScenarioRecord.Line]>([])
        private let clock: @Sendable () -> Double

        init(clock: @escaping @Sendable () -> Double) { self.clock = clock }

        func add(_ text: String) {
            let t = clock()
            pending.withLock { $0.append(ScenarioRecord.Line(t: t, text: text)) }
        }

        func take() -> [ScenarioRecord.Line] {
            pending.withLock { p in
                defer { p = [] }; return p
            }
        }
    }

    /// `environment` is added to this process's own (a room link goes there, out of `ps` and the log).
    init(
        name: String, executable: String, arguments: [String], environment: [String: String] = [:], log: String,
        clock: @escaping @Sendable () -> Double
    ) {
        self.name = name
        lines = Lines(clock: clock)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let logHandle = FileHandle(forWritingAtPath: log)
        logHandle?.write(Data("$ \(([executable] + arguments).joined(separator: " "))\n".utf8))
        let reading = output.fileHandleForReading
        let sink = lines
        let thread = Thread {
            var buffer = Data()
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                logHandle?.write(chunk)
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    sink.add(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            if !buffer.isEmpty { sink.add(String(decoding: buffer, as: UTF8.self)) }
            try? logHandle?.close()
        }
        thread.name = "scenario-\(name)"
        self.readerThread = thread
    }

    private let readerThread: Thread

    func start() throws {
        try process.run()
        started = true
        // The child holds its own ends now.
        try? output.fileHandleForWriting.close()
        try? input.fileHandleForReading.close()
        readerThread.start()
    }

    var running: Bool { started && process.isRunning }
    var exitStatus: Int32? { started && !process.isRunning ? process.terminationStatus : nil }
    var pid: Int32 { process.processIdentifier }

    func takeLines() -> [ScenarioRecord.Line] { lines.take() }

    /// Writes a command line to its standard input; false if it could not (it has gone).
    @discardableResult
    func send(_ command: String) -> Bool {
        guard running else { return false }
        do {
            try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
            return true
        } catch {
            return false
        }
    }

    func signal(_ number: Int32) {
        if running { kill(process.processIdentifier, number) }
    }

    /// SIGTERM, then SIGKILL if it has not gone within `grace` seconds.
    func stop(grace: Double = 8) {
        guard running else { return }
        try? input.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Follows a call's `--stats-json` file as it grows: each call returns the complete lines added
/// since, read as `CallStatsLine`s; a line that is not one is counted in `unread`, the first
/// one's reason kept in `firstUnread`.
final class StatsFollower {
    let path: String
    private var offset: UInt64 = 0
    private var partial = Data()
    private(set) var unread = 0
    private(set) var firstUnread: String?

    init(path: String) { self.path = path }

    func newLines<Line: Decodable>(as kind: Line.Type) -> [Line] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        do {
            // Cut short (written again from the start): read it from the start.
            if try handle.seekToEnd() < offset {
                offset = 0
                partial = Data()
            }
            try handle.seek(toOffset: offset)
            let data = try handle.readToEnd() ?? Data()
            offset += UInt64(data.count)
            partial.append(data)
        } catch {
            return []
        }
        var lines: [Line] = []
        while let newline = partial.firstIndex(of: 0x0A) {
            let line = partial[partial.startIndex..<newline]
            partial.removeSubrange(partial.startIndex...newline)
            do {
                lines.append(try StatsLineJSON.decode(Line.self, from: line))
            } catch {
                unread += 1
                if firstUnread == nil { firstUnread = "\(error)" }
            }
        }
        return lines
    }
}
