internal import CGIO
internal import CShareSoup
import Foundation
import GLibLoop
import RoomProtocol
import ShareCore
import Signalling

/// A Janus of the room server's own (`sharectl serve --sfu janus` without `--janus`): Debian's
/// `janus` with only the VideoRoom plugin and the WebSocket transport, configured in a private
/// folder, its WebSocket on 127.0.0.1 only, no HTTP or admin API, and a VideoRoom admin key that
/// only the server knows, so no participant can make a room. It is stopped with SIGINT (SIGTERM
/// may abort it), then SIGKILL after 10 s.
public final class JanusProcess: Sendable {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Its WebSocket, `ws://127.0.0.1:PORT`.
    public let url: String
    /// The VideoRoom's admin key (`create` needs it).
    public let adminKey: String
    /// The private folder with its configuration and `janus.log`.
    public let directory: String
    public let pid: Int32
    private let exited: Latch
    /// waitpid's status once it has exited.
    private let status: Locked<Int32?>
    /// Set by `stop()`: an exit after it is the one asked for.
    private let stopping = Locked(false)

    /// Where Debian puts Janus's plugins and transports.
    static let libraryFolder = "/usr/lib/x86_64-linux-gnu/janus"
    static let wanted: [String: Set<String>] = [
        "plugins": ["libjanus_videoroom.so"], "transports": ["libjanus_websockets.so"], "events": [], "loggers": []
    ]

    private init(
        url: String, adminKey: String, directory: String, pid: Int32, exited: Latch, status: Locked<Int32?>
    ) {
        self.url = url
        self.adminKey = adminKey
        self.directory = directory
        self.pid = pid
        self.exited = exited
        self.status = status
    }

    /// Waits until Janus exits of itself (never returns after `stop()` asked it to) and says how:
    /// "exit 1", "signal 11 (Segmentation fault, core dumped)".
    public func unexpectedExit() async -> String? {
        await exited.wait()
        guard !stopping.withLock({ $0 }), let status = status.withLock({ $0 }) else { return nil }
        return Self.describe(status: status)
    }

    static func describe(status: Int32) -> String {
        let signal = status & 0x7f
        guard signal != 0 else { return "exit \((status >> 8) & 0xff)" }
        let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
        return "signal \(signal) (\(name)\(status & 0x80 != 0 ? ", core dumped" : ""))"
    }

    /// Starts `janus` and waits until its WebSocket makes a session (at most `timeout`).
    /// `iceInterfaces` become its `ice_enforce_list` (the interfaces it gathers candidates on).
    public static func start(
        iceInterfaces: [String], loop: GLibLoop, logger: Logger, timeout: Duration = .seconds(30)
    ) async throws -> JanusProcess {
        guard
            let executable = ["/usr/bin/janus", "/usr/local/bin/janus"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw Failure(description: "janus is not installed (Debian package janus); or give --janus ws://HOST:PORT")
        }
        var template = Array("/tmp/sharectl-janus-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure(description: "could not make a private folder for Janus: errno \(errno)")
        }
        let directory = String(cString: made)
        let port: Int
        switch freeLoopbackPort() {
        case .success(let free): port = free
        case .failure(let error): throw Failure(description: "could not find a port for Janus: \(error)")
        }
        var secrets = SecretSource.system
        let adminKey = secrets.next()
        try write(configuration(directory: directory, port: port, adminKey: adminKey, iceInterfaces: iceInterfaces))
        let log = directory + "/janus.log"
        let pid = try spawn(
            executable, ["-F", directory, "-C", directory + "/janus.jcfg"], log: log, directory: directory)
        let exited = Latch()
        let exitStatus = Locked<Int32?>(nil)
        // Reaps the child on a thread of its own (waitpid blocks), then opens the latch.
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus.withLock { $0 = status }
            exited.open()
        }
        reaper.name = "janus-reaper"
        reaper.start()
        let janus = JanusProcess(
            url: "ws://127.0.0.1:\(port)", adminKey: adminKey, directory: directory, pid: pid, exited: exited,
            status: exitStatus)
        // Each attempt may take 5 s (a busy machine answers slowly); a refused connection, while
        // Janus is not listening yet, returns at once.
        let began = ContinuousClock.now
        var lastError = "no attempt"
        while true {
            if exited.isOpen {
                throw Failure(description: "janus exited at start; its log: \(log)")
            }
            do {
                let session = try JanusSession(url: janus.url, loop: loop, logger: .disabled, timeout: .seconds(5))
                do {
                    try await session.open()
                    await session.close()
                    break
                } catch {
                    await session.close()
                    throw error
                }
            } catch {
                lastError = "\(error)"
            }
            if ContinuousClock.now - began > timeout {
                await janus.stop()
                throw Failure(
                    description:
                        "janus did not answer on \(janus.url) within \(timeout) (the last attempt: \(lastError)); its log: \(log)"
                )
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        logger.info("janus started (pid \(janus.pid)), its WebSocket on \(janus.url), its files in \(directory)")
        return janus
    }

    /// SIGINT, then SIGKILL when it has not gone within 10 s.
    public func stop() async {
        stopping.withLock { $0 = true }
        guard !exited.isOpen else { return }
        kill(pid, SIGINT)
        if await !exited.wait(upTo: .seconds(10)) {
            kill(pid, SIGKILL)
            _ = await exited.wait(upTo: .seconds(2))
        }
    }

    static func configuration(directory: String, port: Int, adminKey: String, iceInterfaces: [String])
        -> [String: String]
    {
        func disabled(_ kind: String) -> String {
            let present = (try? FileManager.default.contentsOfDirectory(atPath: "\(libraryFolder)/\(kind)")) ?? []
            return present.filter { $0.hasSuffix(".so") && !(wanted[kind] ?? []).contains($0) }.sorted()
                .joined(separator: ",")
        }
        let enforce = iceInterfaces.isEmpty ? "" : "ice_enforce_list = \"\(iceInterfaces.joined(separator: ","))\"\n"
        return [
            "\(directory)/janus.jcfg": """
            general: {
                configs_folder = "\(directory)"
                plugins_folder = "\(libraryFolder)/plugins"
                transports_folder = "\(libraryFolder)/transports"
                events_folder = "\(libraryFolder)/events"
                loggers_folder = "\(libraryFolder)/loggers"
                debug_level = 4
                debug_timestamps = true
                debug_colors = false
                protected_folders = ["/bin", "/boot", "/dev", "/etc", "/lib", "/proc", "/sbin", "/sys", "/usr", "/var"]
            }
            media: {}
            nat: {
                nice_debug = false
                ignore_mdns = true
                \(enforce)}
            plugins: { disable = "\(disabled("plugins"))" }
            transports: { disable = "\(disabled("transports"))" }
            loggers: { disable = "\(disabled("loggers"))" }
            events: { broadcast = false, disable = "\(disabled("events"))" }

            """,
            "\(directory)/janus.transport.websockets.jcfg": """
            general: { json = "compact", ws = true, ws_port = \(port), ws_ip = "127.0.0.1", wss = false, ws_logging = "err,warn" }
            admin: { admin_ws = false, admin_wss = false }

            """,
            "\(directory)/janus.plugin.videoroom.jcfg": """
            general: { admin_key = "\(adminKey)", lock_rtp_forward = true }

            """
        ]
    }

    static func write(_ files: [String: String]) throws {
        for (path, text) in files {
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            else {
                throw Failure(description: "could not write Janus's configuration \(path)")
            }
        }
    }

    /// Starts `executable` in `directory` (a core it dumps lands there, beside its log) with its
    /// output in `log`, its input from /dev/null and no other descriptor of ours. The child gets
    /// every signal back at its default and none blocked: a server that takes SIGINT and SIGTERM
    /// itself has them blocked or ignored, and Janus must hear SIGINT.
    static func spawn(_ executable: String, _ arguments: [String], log: String, directory: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        CShareSoup_spawn_chdir(&actions, directory)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours goes with it: not the room server's listening socket, nor its
        // connections (a process spawned from a busy one inherits hundreds).
        CShareSoup_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw Failure(description: "could not start janus: \(String(cString: strerror(result)))")
        }
        return pid
    }
}
