#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A secret a command takes (a bearer token, a TURN credential, a room link with its `?t=` token),
/// from one of three places, in this order:
///
/// 1. the command line: `--NAME VALUE` (readable by every user of the machine in `ps`, so it
///    comes with a warning) or `--NAME-file PATH`; giving both is a usage error;
/// 2. a systemd credential, when neither flag is given: the file `credential` in
///    `$CREDENTIALS_DIRECTORY` (a unit's `LoadCredential=NAME:PATH`, readable by the service
///    alone, never in its environment or on its command line);
/// 3. the environment variable (an empty variable counts as unset);
/// 4. nothing: `resolve` returns nil.
///
/// A file is read whole (at most `SecretOption.maxFileBytes`) and its trailing line breaks are
/// dropped; a file that is missing, unreadable or empty is an error that names the file.
public struct SecretOption: Sendable {
    /// What the secret is, for messages: "the bearer token".
    public var what: String
    /// The flag that takes the secret itself: "token" for `--token`.
    public var flag: String
    /// The flag that takes a file: "token-file".
    public var fileFlag: String
    /// The environment variable, if there is one: "WHIP_TOKEN".
    public var environment: String?
    /// The systemd credential's name, if there is one: "whip-token".
    public var credential: String?

    public init(
        what: String, flag: String, fileFlag: String, environment: String? = nil, credential: String? = nil
    ) {
        self.what = what
        self.flag = flag
        self.fileFlag = fileFlag
        self.environment = environment
        self.credential = credential
    }

    public static let maxFileBytes = 64 * 1024

    public enum Source: Hashable, Sendable {
        case commandLine
        case file(path: String)
        case credential(name: String)
        case environment(name: String)
    }

    public struct Resolved: Hashable, Sendable {
        public var value: String
        public var source: Source
        /// Set when the secret came on the command line: say it before going on.
        public var warning: String?

        public init(value: String, source: Source, warning: String? = nil) {
            self.value = value
            self.source = source
            self.warning = warning
        }
    }

    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The secret, from `flagValue` (`--flag`), `filePath` (`--file-flag`) or `environment`.
    /// `read` reads a file (tests pass their own); the default is `SecretOption.readFile`.
    public func resolve(
        flagValue: String?, filePath: String?, environment variables: [String: String],
        read: (String) throws(Failure) -> String = SecretOption.readFile
    )
        throws(Failure) -> Resolved?
    {
        switch (flagValue, filePath) {
        case (.some, .some):
            throw Failure(
                description: "--\(flag) and --\(fileFlag) both give \(what); keep one (--\(fileFlag) "
                    + "keeps it out of the process list)")
        case (let value?, nil):
            guard !value.isEmpty else { throw Failure(description: "--\(flag) is empty") }
            var alternatives = "--\(fileFlag) PATH"
            if let environment { alternatives += " or \(environment)" }
            return Resolved(
                value: value, source: .commandLine,
                warning: "--\(flag) puts \(what) on the command line, where other users of this "
                    + "machine can read it in the process list (ps); use \(alternatives) instead")
        case (nil, let path?):
            let text: String
            do { text = try read(path) } catch { throw Failure(description: "--\(fileFlag): \(error.description)") }
            let value = Self.droppingTrailingLineBreaks(text)
            guard !value.isEmpty else {
                throw Failure(description: "--\(fileFlag) \(path) is empty; it should hold \(what)")
            }
            return Resolved(value: value, source: .file(path: path))
        case (nil, nil):
            if let credential, let directory = variables["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
                let path = directory + "/" + credential
                if access(path, F_OK) == 0 {
                    let text: String
                    do { text = try read(path) } catch {
                        throw Failure(description: "the systemd credential \(credential): \(error.description)")
                    }
                    let value = Self.droppingTrailingLineBreaks(text)
                    guard !value.isEmpty else {
                        throw Failure(description: "the systemd credential \(credential) (\(path)) is empty")
                    }
                    return Resolved(value: value, source: .credential(name: credential))
                }
            }
            guard let environment, let value = variables[environment], !value.isEmpty else { return nil }
            return Resolved(value: Self.droppingTrailingLineBreaks(value), source: .environment(name: environment))
        }
    }

    static func droppingTrailingLineBreaks(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == "\r" || last == "\r\n" { text = text.dropLast() }
        return String(text)
    }

    /// Reads a secret file: at most `maxFileBytes`, as UTF-8. Its errors name the file and say why.
    public static func readFile(_ path: String) throws(Failure) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let why =
                errno == ENOENT
                ? "there is no such file"
                : errno == EACCES
                    ? "permission denied"
                    : String(cString: strerror(errno))
            throw Failure(description: "cannot read the secret file \(path): \(why)")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read the secret file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maxFileBytes else {
                throw Failure(
                    description: "the secret file \(path) is larger than \(maxFileBytes / 1024) KiB; "
                        + "is it the right file?")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Failure(description: "the secret file \(path) is not UTF-8 text")
        }
        return text
    }
}
