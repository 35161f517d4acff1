/// What a wait says when its time is up: what it waited for, and for how long. The limit is a
/// guard against a hang, not a timing assertion: a test that needs an upper bound says so itself.
public struct NotReached: Error, CustomStringConvertible {
    public let what: String
    public let within: Duration
    public let file: String
    public let line: Int

    public var description: String { "\(file):\(line): not reached within \(within): \(what)" }
}

/// Looks at `condition` every `every` until it holds; after `within` throws `NotReached` naming
/// `what` (read then, so it can say what was seen). For state the test can only look at (counters,
/// statistics, an agent's state); where the test's own fake or callback makes the change, wait on
/// a `Watched` value instead.
public func until(
    _ what: @autoclosure () -> String, within: Duration = .seconds(60),
    every: Duration = .milliseconds(50), file: String = #fileID, line: Int = #line,
    _ condition: () async throws -> Bool
) async throws {
    try await eventually(what(), within: within, every: every, file: file, line: line) {
        try await condition() ? () : nil
    }
}

/// `until` for a condition that has a value to hand back once it holds (nil until then).
public func eventually<Value>(
    _ what: @autoclosure () -> String, within: Duration = .seconds(60),
    every: Duration = .milliseconds(50), file: String = #fileID, line: Int = #line,
    _ condition: () async throws -> Value?
) async throws -> Value {
    let deadline = ContinuousClock.now + within
    while true {
        if let value = try await condition() { return value }
        guard ContinuousClock.now < deadline else {
            throw NotReached(what: what(), within: within, file: file, line: line)
        }
        try await Task.sleep(for: every)
    }
}
