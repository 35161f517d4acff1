import CallsClient
import Foundation
import ShareCore

/// Commands typed (or piped) on standard input while a share runs, one a line:
/// `policy balanced|detail|motion`, `keyframe`, `mute`, `unmute`, `fault capture-stall|encoder-stall` (drills; in a
/// room also `fault decoder-wedge [NAME]`, `fault decoder-wedge-sticky [NAME]`, `fault clear`), `stop`.
enum ControlInput {
    enum Command: Equatable, Sendable {
        case policy(String)
        case keyframe
        /// The microphone's mute switch.
        case mute(Bool)
        /// A fault drill (a decoder wedge names whose screen; nil: every screen).
        case fault(FaultDrill)
        case stop
    }

    static let usage =
        "policy balanced|detail|motion, keyframe, mute, unmute, fault capture-stall|encoder-stall|decoder-wedge [NAME]|decoder-wedge-sticky [NAME]|clear, stop"

    /// One line: a command, nil for a blank line, or why it is not one.
    static func parse(_ line: String) -> Result<Command, Complaint>? {
        let words = line.split(separator: " ").map(String.init)
        guard let first = words.first else { return nil }
        switch (first, words.count) {
        case ("policy", 2): return .success(.policy(words[1]))
        case ("keyframe", 1): return .success(.keyframe)
        case ("mute", 1): return .success(.mute(true))
        case ("unmute", 1): return .success(.mute(false))
        case ("fault", 2...):
            let name = words.count > 2 ? words[2...].joined(separator: " ") : nil
            do {
                return .success(.fault(try FaultDrill(word: words[1], name: name)))
            } catch {
                return .failure(Complaint(text: "\(error)"))
            }
        case ("stop", 1), ("quit", 1): return .success(.stop)
        default: return .failure(Complaint(text: "unknown command '\(escapedForLog(line))' (\(usage))"))
        }
    }

    struct Complaint: Error, Equatable, Sendable { let text: String }
}

/// What the user asks of a running command, in the order it arrives: typed commands (and lines
/// that were not commands), SIGINT or SIGTERM, SIGUSR1. The command waits on `requests`; nothing
/// polls. Signals arrive through DispatchSources; standard input is read by a thread of its own
/// (its reads block), which ends at the end of input.
final class UserRequests {
    enum Request: Equatable, Sendable {
        case command(ControlInput.Command)
        /// A line that was not a command, and why.
        case complaint(String)
        /// SIGINT or SIGTERM.
        case stopSignal
        /// SIGUSR1: stop the share or share again (in a room).
        case toggleSignal
    }

    let requests: AsyncStream<Request>
    private let continuation: AsyncStream<Request>.Continuation
    /// Held by the stream (its termination handler), so the signal sources live as long as someone
    /// can still read `requests`, whenever this object itself is released.
    private let sources = Locked<[any DispatchSourceSignal]>([])

    init() {
        (requests, continuation) = AsyncStream.makeStream(of: Request.self)
        continuation.onTermination = { [sources] _ in
            sources.withLock { all in
                for source in all { source.cancel() }
            }
        }
    }

    /// SIGINT and SIGTERM become `.stopSignal` (and no longer end the process).
    func takeStopSignals() -> Self {
        for number in [SIGINT, SIGTERM] { take(signal: number, as: .stopSignal) }
        return self
    }

    /// SIGUSR1 becomes `.toggleSignal`.
    func takeToggleSignal() -> Self {
        take(signal: SIGUSR1, as: .toggleSignal)
        return self
    }

    /// Lines on standard input become commands or complaints.
    func readStandardInput() -> Self {
        let continuation = self.continuation
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                switch ControlInput.parse(line) {
                case .success(let command): continuation.yield(.command(command))
                case .failure(let complaint): continuation.yield(.complaint(complaint.text))
                case nil: continue
                }
            }
        }
        thread.name = "control-input"
        thread.start()
        return self
    }

    private func take(signal number: Int32, as request: Request) {
        signal(number, SIG_IGN)
        let continuation = self.continuation
        sources.withLock { all in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(request) }
            source.resume()
            all.append(source)
        }
    }
}
