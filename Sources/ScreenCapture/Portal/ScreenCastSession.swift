import Foundation
import GLibLoop
import ShareCore
import Synchronization

/// A ScreenCast portal session over GDBus: CreateSession, SelectSources, Start and
/// OpenPipeWireRemote, each Request's Response subscribed before the call. Follows
/// `Session.Closed` (the compositor or the user ended the share) and the portal leaving the bus.
///
/// GDBus runs on the GLib loop thread; `open` waits for the portal's answers, so call it from a
/// plain thread (never an actor or the cooperative pool).
public final class ScreenCastSession: Sendable {
    public static let desktopName = "org.freedesktop.portal.Desktop"
    public static let desktopPath = "/org/freedesktop/portal/desktop"
    public static let screenCastInterface = "org.freedesktop.portal.ScreenCast"

    public struct Options: Sendable {
        public var sourceTypes: ScreenCastCapabilities.SourceTypes = .monitor
        public var cursor = true
        public var unattended = false
        public var tokenStore: RestoreTokenStore
        /// How long a Start may wait for a person at a picker (unattended: the wait for a restore).
        public var startTimeout: Duration = .seconds(120)
        /// How long an unattended Start may take before it counts as waiting at a picker.
        public var unattendedStartTimeout: Duration = .seconds(8)

        public init(tokenStore: RestoreTokenStore) { self.tokenStore = tokenStore }
    }

    /// The one stream the session captures (the last the portal lists).
    public struct Stream: Sendable, Hashable {
        public var nodeID: UInt32
        public var width: Int?
        public var height: Int?
        public var sourceType: ScreenCastCapabilities.SourceTypes?
    }

    public let capabilities: ScreenCastCapabilities
    public let stream: Stream
    public let cursorMode: ScreenCastCapabilities.CursorModes?
    public let tokenOutcome: RestoreTokenPolicy.Outcome
    private let loop: GLibLoop
    private let bus: LoopConfined<PortalBus>
    private let sessionPath: String
    private let subscriptions: [UInt32]
    private let remote: Locked<Int32>
    private let closedState: ClosedState

    /// Reads the portal's ScreenCast properties (version, source types, cursor modes).
    public static func capabilities(loop: GLibLoop) throws(PortalError) -> ScreenCastCapabilities {
        let bus = try LoopConfined.portalBus(on: loop)
        return try readCapabilities(loop: loop, bus: bus)
    }

    private static func readCapabilities(loop: GLibLoop, bus: LoopConfined<PortalBus>) throws(PortalError)
        -> ScreenCastCapabilities
    {
        let reply: PortalValue
        do {
            reply = try bus.run { (bus) throws(PortalError) in
                try bus.call(
                    destination: desktopName, path: desktopPath, interface: "org.freedesktop.DBus.Properties",
                    method: "GetAll", arguments: .tuple([.string(screenCastInterface)]))
            }
        } catch .callFailed(_, let name, let message) {
            switch name {
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                throw .noPortal(message)
            case "org.freedesktop.DBus.Error.UnknownInterface", "org.freedesktop.DBus.Error.InvalidArgs",
                "org.freedesktop.DBus.Error.UnknownMethod":
                throw .noScreenCast(message)
            default:
                throw .noPortal("\(message)\(name.map { " (\($0))" } ?? "")")
            }
        }
        guard case .dictionary(let properties)? = reply.items?.first, !properties.isEmpty else {
            throw .noScreenCast("it lists no ScreenCast properties")
        }
        return try ScreenCastCapabilities(properties: properties)
    }

    /// Opens a session and starts it: picker or restore token, as the options and the portal
    /// allow. `onClosed` runs (on the GLib loop thread) when the session ends from outside.
    public static func open(
        loop: GLibLoop, options: Options, logger: Logger,
        onClosed: @escaping @Sendable (String) -> Void
    ) throws(PortalError) -> ScreenCastSession {
        let bus = try LoopConfined.portalBus(on: loop)
        let capabilities = try readCapabilities(loop: loop, bus: bus)
        logger.info(
            "portal: ScreenCast version \(capabilities.version), sources \(capabilities.sourceTypes.names), "
                + "cursor modes \(capabilities.cursorModes.names)")
        guard let types = capabilities.sourceTypesToRequest(wanted: options.sourceTypes) else {
            throw .noScreenCast(
                "it offers no source type (AvailableSourceTypes is \(capabilities.sourceTypes.rawValue))")
        }
        let stored = options.tokenStore.load()
        let plan = try RestoreTokenPolicy.plan(
            version: capabilities.version, storedToken: stored, unattended: options.unattended)
        if options.unattended && plan.restoreToken == nil {
            logger.notice(
                "portal: no saved restore token at \(options.tokenStore.path); asking for a grant without waiting for a picker"
            )
        }
        do {
            return try ScreenCastSession(
                loop: loop, bus: bus, capabilities: capabilities, types: types, plan: plan,
                options: options, logger: logger, onClosed: onClosed)
        } catch {
            guard
                RestoreTokenPolicy.retryWithoutToken(
                    after: error, tokenSent: plan.restoreToken != nil,
                    unattended: options.unattended)
            else {
                if plan.restoreToken != nil, options.unattended, case .callFailed(_, _, let message) = error {
                    throw .tokenRejected(message)
                }
                throw error
            }
            logger.notice("portal: the saved restore token was refused (\(error)); asking for a new grant")
            options.tokenStore.clear()
            var fresh = plan
            fresh.restoreToken = nil
            return try ScreenCastSession(
                loop: loop, bus: bus, capabilities: capabilities, types: types, plan: fresh,
                options: options, logger: logger, onClosed: onClosed)
        }
    }

    private init(
        loop: GLibLoop, bus: LoopConfined<PortalBus>, capabilities: ScreenCastCapabilities,
        types: ScreenCastCapabilities.SourceTypes, plan: RestoreTokenPolicy.Plan, options: Options, logger: Logger,
        onClosed: @escaping @Sendable (String) -> Void
    ) throws(PortalError) {
        self.loop = loop
        self.bus = bus
        self.capabilities = capabilities
        let requests = RequestRunner(loop: loop, bus: bus)
        let closedState = ClosedState()
        self.closedState = closedState

        let created = try requests.run("CreateSession", timeout: .seconds(15)) { token in
            .tuple([.dictionary(["handle_token": .string(token), "session_handle_token": .string("sharectl\(token)")])])
        }
        guard let sessionPath = created["session_handle"]?.string else {
            throw .badReply("CreateSession gave no session handle")
        }
        self.sessionPath = sessionPath
        logger.info("portal: session \(sessionPath)")
        // Follow the session from now on: Closed, and the portal itself leaving the bus.
        subscriptions = try bus.run { (bus) throws(PortalError) in
            let closed = bus.subscribe(
                sender: Self.desktopName, interface: "org.freedesktop.portal.Session", member: "Closed",
                path: sessionPath
            ) { _ in
                if closedState.close() { onClosed("the desktop or the user ended the screen share") }
            }
            let owner = bus.subscribe(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", path: "/org/freedesktop/DBus"
            ) { arguments in
                guard let items = arguments.items, items.count == 3, items[0].string == Self.desktopName,
                    items[2].string == ""
                else { return }
                if closedState.close() { onClosed("xdg-desktop-portal left the session bus") }
            }
            return [closed, owner]
        }
        do throws(PortalError) {
            var selection: [String: PortalValue] = ["types": .uint32(types.rawValue), "multiple": .bool(false)]
            let cursorMode = capabilities.cursorModeToRequest(wantCursor: options.cursor)
            if let cursorMode { selection["cursor_mode"] = .uint32(cursorMode.rawValue) }
            if let persist = plan.persistMode { selection["persist_mode"] = .uint32(persist) }
            if let token = plan.restoreToken { selection["restore_token"] = .string(token) }
            self.cursorMode = cursorMode
            _ = try requests.run("SelectSources", timeout: .seconds(15)) { token in
                var withToken = selection
                withToken["handle_token"] = .string(token)
                return .tuple([.objectPath(sessionPath), .dictionary(withToken)])
            }
            let startTimeout = plan.mayWaitForPerson ? options.startTimeout : options.unattendedStartTimeout
            let started: [String: PortalValue]
            do throws(PortalError) {
                started = try requests.run("Start", timeout: startTimeout) { token in
                    .tuple([.objectPath(sessionPath), .string(""), .dictionary(["handle_token": .string(token)])])
                }
            } catch .timedOut(_, let seconds) where !plan.mayWaitForPerson {
                throw PortalError.pickerNeeded(
                    plan.restoreToken == nil
                        ? "there is no saved restore token and the portal did not grant the share by itself within \(seconds) s "
                            + "(it is waiting for a person to choose)"
                        : "the saved restore token did not restore the grant; the portal waited \(seconds) s for a person to choose"
                )
            } catch {
                throw error
            }
            guard let streams = started["streams"]?.items, let last = streams.last?.items, last.count == 2,
                let node = last[0].uint32
            else {
                throw PortalError.noStreams
            }
            let properties = last[1]
            let size = properties["size"]?.items?.compactMap(\.int)
            stream = Stream(
                nodeID: node, width: size?.count == 2 ? size?[0] : nil, height: size?.count == 2 ? size?[1] : nil,
                sourceType: properties["source_type"]?.uint32.map { .init(rawValue: $0) })
            tokenOutcome = RestoreTokenPolicy.outcome(
                sent: plan.restoreToken, received: started["restore_token"]?.string)
            switch tokenOutcome {
            case .restored(let token), .granted(let token), .replacedStale(let token):
                do { try options.tokenStore.save(token) } catch {
                    logger.warning("portal: could not save the restore token to \(options.tokenStore.path): \(error)")
                }
            case .none:
                break
            }
            if case .replacedStale = tokenOutcome {
                logger.notice("portal: the saved restore token was stale; the portal made a new grant (token saved)")
            }
            let fd = try bus.run { (bus) throws(PortalError) in
                try bus.callTakingFD(
                    destination: Self.desktopName, path: Self.desktopPath, interface: Self.screenCastInterface,
                    method: "OpenPipeWireRemote", arguments: .tuple([.objectPath(sessionPath), .dictionary([:])])
                ).1
            }
            remote = Locked(fd)
        } catch {
            Self.closeSession(loop: loop, bus: bus, path: sessionPath, subscriptions: subscriptions)
            throw error
        }
    }

    /// A new close-on-exec duplicate of the PipeWire remote fd (each connection takes its own).
    public func duplicateRemoteFD() -> Int32? {
        remote.withLock { fd in
            guard fd >= 0 else { return nil }
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
            return copy >= 0 ? copy : nil
        }
    }

    public var isClosed: Bool { closedState.isClosed }

    /// Ends the session (Session.Close) and drops the remote. Safe to call twice.
    public func close() {
        _ = closedState.close()
        let fd = remote.withLock { fd -> Int32 in
            defer { fd = -1 }; return fd
        }
        guard fd >= 0 else { return }
        Foundation.close(fd)
        Self.closeSession(loop: loop, bus: bus, path: sessionPath, subscriptions: subscriptions)
    }

    deinit { close() }

    private static func closeSession(
        loop: GLibLoop, bus: LoopConfined<PortalBus>, path: String, subscriptions: [UInt32]
    ) {
        _ = try? bus.run { (bus) throws(PortalError) in
            for id in subscriptions { bus.unsubscribe(id) }
            _ = try? bus.call(
                destination: desktopName, path: path, interface: "org.freedesktop.portal.Session",
                method: "Close", arguments: .tuple([]), timeoutMillis: 3000)
        }
    }
}

/// Runs portal requests: subscribes to the predicted Request path's Response, then calls, then
/// waits (on the calling thread) for the Response.
private struct RequestRunner {
    let loop: GLibLoop
    let bus: LoopConfined<PortalBus>
    private static let counter = Atomic<Int>(0)

    func run(
        _ method: String, timeout: Duration,
        arguments: (String) -> PortalValue
    ) throws(PortalError) -> [String: PortalValue] {
        let token = "sharectl\(getpid())_\(Self.counter.add(1, ordering: .relaxed).newValue)"
        let waiter = ResponseWaiter()
        let call = arguments(token)
        let path = try bus.run { (bus) throws(PortalError) -> String in
            "/org/freedesktop/portal/desktop/request/\(bus.senderToken)/\(token)"
        }
        let subscription = try bus.run { (bus) throws(PortalError) -> UInt32 in
            let id = bus.subscribe(
                sender: ScreenCastSession.desktopName, interface: "org.freedesktop.portal.Request",
                member: "Response", path: path
            ) { waiter.finish($0) }
            do throws(PortalError) {
                let reply = try bus.call(
                    destination: ScreenCastSession.desktopName, path: ScreenCastSession.desktopPath,
                    interface: ScreenCastSession.screenCastInterface, method: method, arguments: call)
                if let handle = reply.items?.first?.string, handle != path {
                    // A portal older than 0.9 names its own request path; we cannot follow it.
                    bus.unsubscribe(id)
                    throw .tooOld(version: 0, needed: 1, feature: "predictable request paths (got \(handle))")
                }
            } catch {
                bus.unsubscribe(id)
                throw error
            }
            return id
        }
        let response = waiter.wait(timeout: timeout)
        _ = try? bus.run { (bus) throws(PortalError) in
            bus.unsubscribe(subscription)
            if response == nil {  // close the request (and any dialog it opened)
                _ = try? bus.call(
                    destination: ScreenCastSession.desktopName, path: path,
                    interface: "org.freedesktop.portal.Request", method: "Close", arguments: .tuple([]),
                    timeoutMillis: 2000)
            }
        }
        guard let response else { throw .timedOut(step: method, seconds: Int(timeout.components.seconds)) }
        guard let items = response.items, items.count == 2, let code = items[0].uint32 else {
            throw .badReply("\(method)'s Response is not (ua{sv})")
        }
        guard code == 0 else { throw .refused(step: method, code: code) }
        guard case .dictionary(let results) = items[1] else {
            throw .badReply("\(method)'s results are not a dictionary")
        }
        return results
    }
}

private final class ResponseWaiter: Sendable {
    private let value = Locked<PortalValue?>(nil)
    private let done = DispatchSemaphore(value: 0)
    func finish(_ response: PortalValue) {
        value.withLock { $0 = response }
        done.signal()
    }
    func wait(timeout: Duration) -> PortalValue? {
        let millis = Int(timeout.inMilliseconds)
        guard done.wait(timeout: .now() + .milliseconds(millis)) == .success else { return nil }
        return value.withLock { $0 }
    }
}

private final class ClosedState: Sendable {
    private let closed = Atomic<Bool>(false)
    /// True the first time only.
    func close() -> Bool { !closed.exchange(true, ordering: .acquiringAndReleasing) }
    var isClosed: Bool { closed.load(ordering: .acquiring) }
}

extension LoopConfined where Value == PortalBus {
    /// A bus connection made on the loop thread, used there and released there.
    static func portalBus(on loop: GLibLoop) throws(PortalError) -> LoopConfined<PortalBus> {
        try portalCall { try loop.invokeAndWait { LoopConfined(try PortalBus(), on: loop) } }
    }

    /// Runs `work` with the bus on the loop thread and waits for it (from a plain thread).
    func run<T: Sendable>(_ work: @escaping @Sendable (PortalBus) throws(PortalError) -> T) throws(PortalError) -> T {
        try portalCall { try invokeAndWait { bus in try work(bus) } }
    }
}

/// The loop's own failure (it has stopped) as a portal error; portal errors as they are.
private func portalCall<T>(_ body: () throws -> T) throws(PortalError) -> T {
    do {
        return try body()
    } catch let error as PortalError {
        throw error
    } catch {
        throw .callFailed(method: "GLib loop", errorName: nil, message: "\(error)")
    }
}
