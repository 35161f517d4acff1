import CallsClient
import Foundation
import ShareCore

/// Commands typed (or piped) on standard input while a share runs, one a line:
/// `policy balanced|detail|motion`, `keyframe`, `fault capture-stall|encoder-stall` (drills; in a room
/// also `fault decoder-wedge [NAME]`, `fault decoder-wedge-sticky [NAME]`, `fault clear`), `stop`. A thread of its own does the blocking
/// reads; the command loop takes what arrived once a tick. End of input simply ends the reader.
final class ControlInput: Sendable {
    enum Command: Equatable, Sendable {
        case policy(String)
        case keyframe
        /// A fault drill (a decoder wedge names whose screen; nil: every screen).
        case fault(FaultDrill)
        case stop
    }

    private let pending = Locked<[Command]>([])
    private let complaints = Locked<[String]>([])

    /// Starts reading standard input on its own thread.
    func start() {
        let thread = Thread { [self] in
            while let line = readLine(strippingNewline: true) {
                let words = line.split(separator: " ").map(String.init)
                guard let first = words.first else { continue }
                switch (first, words.count) {
                case ("policy", 2): pending.withLock { $0.append(.policy(words[1])) }
                case ("keyframe", 1): pending.withLock { $0.append(.keyframe) }
                case ("fault", 2...):
                    let name = words.count > 2 ? words[2...].joined(separator: " ") : nil
                    do {
                        let drill = try FaultDrill(word: words[1], name: name)
                        pending.withLock { $0.append(.fault(drill)) }
                    } catch {
                        complaints.withLock { $0.append("\(error)") }
                    }
                case ("stop", 1), ("quit", 1): pending.withLock { $0.append(.stop) }
                default:
                    complaints.withLock {
                        $0.append(
                            "unknown command '\(line)' (policy balanced|detail|motion, keyframe, fault capture-stall|encoder-stall|decoder-wedge [NAME]|decoder-wedge-sticky [NAME]|clear, stop)"
                        )
                    }
                }
            }
        }
        thread.name = "control-input"
        thread.start()
    }

    /// What arrived since the last call, and any lines that were not commands.
    func take() -> (commands: [Command], complaints: [String]) {
        let commands = pending.withLock { p in
            defer { p = [] }; return p
        }
        let said = complaints.withLock { c in
            defer { c = [] }; return c
        }
        return (commands, said)
    }
}
