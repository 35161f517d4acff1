internal import CGIO
import Foundation

/// The session bus connection the portal is reached through: one owning class for the
/// `GDBusConnection`. Confined to the GLib loop thread (signal subscriptions deliver on the
/// context that was the thread default when they were made, which is the loop's).
final class PortalBus {
    private let connection: OpaquePointer
    /// Our unique name as the portal spells it in request paths (":1.42" → "1_42").
    let senderToken: String

    init() throws(PortalError) {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            let message = Self.take(error)
            throw .noSessionBus(message)
        }
        self.connection = connection
        let unique = g_dbus_connection_get_unique_name(connection).map { String(cString: $0) } ?? ""
        senderToken = String(unique.dropFirst()).replacingOccurrences(of: ".", with: "_")
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// A method call that waits for its reply (blocks the loop thread for one round trip).
    /// `arguments` is a tuple; the reply is the reply's tuple.
    func call(
        destination: String, path: String, interface: String, method: String, arguments: PortalValue,
        timeoutMillis: Int32 = 10_000
    ) throws(PortalError) -> PortalValue {
        var error: UnsafeMutablePointer<GError>?
        guard
            let reply = g_dbus_connection_call_sync(
                connection, destination, path, interface, method,
                GVariantConversion.make(arguments), nil, G_DBUS_CALL_FLAGS_NONE,
                timeoutMillis, nil, &error)
        else {
            let (name, message) = Self.takeWithName(error)
            throw .callFailed(
                method: "\(interface.split(separator: ".").last ?? "").\(method)", errorName: name, message: message)
        }
        defer { g_variant_unref(reply) }
        return GVariantConversion.read(reply)
    }

    /// A method call whose reply carries file descriptors; returns the reply and the first fd,
    /// duplicated close-on-exec (the caller owns it).
    func callTakingFD(
        destination: String, path: String, interface: String, method: String,
        arguments: PortalValue
    ) throws(PortalError) -> (PortalValue, Int32) {
        var error: UnsafeMutablePointer<GError>?
        var fds: UnsafeMutablePointer<GUnixFDList>?
        guard
            let reply = g_dbus_connection_call_with_unix_fd_list_sync(
                connection, destination, path, interface, method, GVariantConversion.make(arguments), nil,
                G_DBUS_CALL_FLAGS_NONE, 10_000, nil, &fds, nil, &error)
        else {
            let (name, message) = Self.takeWithName(error)
            throw .callFailed(
                method: "\(interface.split(separator: ".").last ?? "").\(method)", errorName: name, message: message)
        }
        defer {
            g_variant_unref(reply)
            if let fds { g_object_unref(UnsafeMutableRawPointer(fds)) }
        }
        let value = GVariantConversion.read(reply)
        guard let fds, case .handle(let index)? = value.items?.first else {
            throw .callFailed(method: method, errorName: nil, message: "the reply carried no file descriptor")
        }
        let fd = g_unix_fd_list_get(fds, index, &error)  // a dup, close-on-exec
        guard fd >= 0 else {
            throw .callFailed(method: method, errorName: nil, message: Self.take(error))
        }
        return (value, fd)
    }

    /// Subscribes to a signal; `handler` runs on the loop thread with the signal's arguments.
    func subscribe(
        sender: String?, interface: String, member: String, path: String?,
        handler: @escaping (PortalValue) -> Void
    ) -> UInt32 {
        let box = Unmanaged.passRetained(SignalBox(handler))
        return g_dbus_connection_signal_subscribe(
            connection, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                let box = Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue()
                box.handler(parameters.map { GVariantConversion.read($0) } ?? .tuple([]))
            },
            box.toOpaque(),
            { data in Unmanaged<SignalBox>.fromOpaque(data!).release() })
    }

    func unsubscribe(_ id: UInt32) {
        g_dbus_connection_signal_unsubscribe(connection, id)
    }

    private static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
        takeWithName(error).message
    }

    /// The error's message and, for a remote D-Bus error, its name (then stripped from the message).
    private static func takeWithName(_ error: UnsafeMutablePointer<GError>?) -> (name: String?, message: String) {
        guard let error else { return (nil, "unknown error") }
        defer { g_error_free(error) }
        var name: String?
        if let remote = g_dbus_error_get_remote_error(error) {
            name = String(cString: remote)
            g_free(remote)
            g_dbus_error_strip_remote_error(error)
        }
        return (name, error.pointee.message.map { String(cString: $0) } ?? "unknown error")
    }
}

@available(*, unavailable) extension PortalBus: Sendable {}

private final class SignalBox {
    let handler: (PortalValue) -> Void
    init(_ handler: @escaping (PortalValue) -> Void) { self.handler = handler }
}
