import Foundation
import ShareCore
#if canImport(Glibc)
    import Glibc
#endif

/// A room's state file, read and written without following a link: written whole to a new file
/// beside it (a random name opened with `O_EXCL`, mode 0600 from the start, fsync) and renamed
/// over it. A symbolic link at the path is refused, and none can be planted at the temporary
/// name. Blocking: `StateFileWriter` calls it on its own queue, never on the loop thread.
enum StateFile {
    /// The file's bytes, or nil when there is no file yet.
    static func read(_ path: String) throws -> Data? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw RoomServerError.stateFile(path, reason: Self.reason())
        }
        try refuseLink(path, status)
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw RoomServerError.stateFile(path, reason: Self.reason()) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw RoomServerError.stateFile(path, reason: "\(error)")
        }
    }

    static func write(_ data: Data, to path: String) throws {
        var status = stat()
        if lstat(path, &status) == 0 { try refuseLink(path, status) }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var random = SystemRandomNumberGenerator()
        let temporary = directory + "/." + url.lastPathComponent + "." + String(random.next(), radix: 16) + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw RoomServerError.stateFile(path, reason: Self.reason()) }
        var failure: String?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    failure = Self.reason()
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = Self.reason() }
        if close(descriptor) != 0, failure == nil { failure = Self.reason() }
        if failure == nil, rename(temporary, path) != 0 { failure = Self.reason() }
        if let failure {
            unlink(temporary)
            throw RoomServerError.stateFile(path, reason: failure)
        }
        // The rename itself survives a crash once the directory is on disk too.
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    private static func refuseLink(_ path: String, _ status: stat) throws {
        if status.st_mode & S_IFMT == S_IFLNK {
            throw RoomServerError.stateFile(path, reason: "it is a symbolic link; give the path of a regular file")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw RoomServerError.stateFile(path, reason: "it is not a regular file")
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}

/// Writes state files one after another on its own queue, so the loop thread never waits for a
/// disk. A failed write in the background is logged; one the caller waits for throws.
final class StateFileWriter: Sendable {
    private let queue = DispatchQueue(label: "sharectl.room-state")
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// Queues a write and returns at once.
    func write(_ data: Data, to path: String) {
        let logger = self.logger
        queue.async {
            do { try StateFile.write(data, to: path) } catch { logger.warning("\(error)", ["room.state": path]) }
        }
    }

    /// Writes after everything queued before, and waits for it.
    func writeNow(_ data: Data, to path: String) async throws {
        try await run { try StateFile.write(data, to: path) }
    }

    func read(_ path: String) async throws -> Data? {
        try await run { try StateFile.read(path) }
    }

    /// Returns once every write queued so far is done.
    func drain() async {
        _ = try? await run {}
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
