import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import TestSupport

/// Where a raw socket finds a test's room: the server's port, the room's token, its WebSocket path.
extension TestRoomServer {
    var port: Int { RawSocket.port(of: base) }
    var token: String { String(invite.split(separator: "=").last!) }
    var socketPath: String { "/ws/\(room)?t=\(token)" }
}

struct RawSocketError: Error, CustomStringConvertible {
    let description: String
}

/// A TCP client on a plain POSIX socket for what a polite client never does: stream a body that
/// never ends, send any `Origin`, stop reading, leave pings unanswered. Blocking, with 10 s
/// timeouts; one test drives it, one call at a time (hence `@unchecked`).
final class RawSocket: @unchecked Sendable {
    private let fd: Int32
    private var pending: [UInt8] = []
    let port: Int
    /// The last read ended because nothing came within the timeout (not because the peer closed).
    private(set) var timedOut = false

    init(port: Int, receiveBuffer: Int? = nil, timeoutSeconds: Int = 10) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw RawSocketError(description: "connect: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    static func port(of base: String) -> Int { Int(base.split(separator: ":").last!)! }

    /// Sends all of `bytes`; false once the peer has closed or reset (no SIGPIPE).
    @discardableResult func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    @discardableResult func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// More bytes into `pending`; false on end, error or timeout.
    private func fill() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        timedOut = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        guard n > 0 else { return false }
        pending += buffer[0..<n]
        return true
    }

    private func take(_ count: Int) -> [UInt8]? {
        while pending.count < count { guard fill() else { return nil } }
        defer { pending.removeFirst(count) }
        return Array(pending[0..<count])
    }

    /// An HTTP response's status line and headers; nil if none came.
    func readHead() -> String? {
        while true {
            if let end = pending.indices.dropLast(3).first(where: { pending[$0..<$0 + 4] == [13, 10, 13, 10] }) {
                let head = String(decoding: pending[0..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                return head
            }
            guard fill() else { return nil }
        }
    }

    /// Asks for a WebSocket upgrade; returns the response head ("HTTP/1.1 101 ..." when it worked).
    func upgrade(_ path: String, origin: String? = nil) -> String? {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        guard send(request + "\r\n") else { return nil }
        return readHead()
    }

    /// One masked text frame (the mask is zero, so the payload reads as it is).
    @discardableResult func sendText(_ text: String) -> Bool {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        frame += [0, 0, 0, 0]
        return send(frame + payload)
    }

    /// The next frame from the server (opcode and payload); nil on end or timeout.
    func readFrame() -> (opcode: UInt8, payload: [UInt8])? {
        guard let head = take(2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let bytes = take(2) else { return nil }
            length = Int(bytes[0]) << 8 | Int(bytes[1])
        } else if length == 127 {
            guard let bytes = take(8) else { return nil }
            length = bytes.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = take(length) else { return nil }
        return (head[0] & 0x0F, payload)
    }

    /// The next text frame, skipping pings and pongs; nil on end, close or timeout.
    func readText() -> String? {
        while let frame = readFrame() {
            if frame.opcode == 1 { return String(decoding: frame.payload, as: UTF8.self) }
            if frame.opcode == 8 { return nil }
        }
        return nil
    }
}
