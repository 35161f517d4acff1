/// A command line that cannot run as written, said so a person can put it right:
/// "--policy is an option of share, not of serve (see: sharectl serve --help)".
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
