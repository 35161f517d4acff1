#if canImport(Glibc)
    import Glibc
#endif
import Foundation

/// A TCP port on 127.0.0.1 that is free now, for a child process to listen on (a Janus the room
/// server starts, a scenario's room server). It is taken below the kernel's ephemeral range
/// (net.ipv4.ip_local_port_range, 32768–60999 by default): a port from that range (what binding
/// port 0 gives) can be handed to another socket's outgoing connection between this check and the
/// child's bind.
public func freeLoopbackPort() -> Result<Int, FreePortError> {
    let ephemeralLow =
        (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
        .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } }
        ?? 32768
    let range = 10_000..<max(10_001, min(ephemeralLow, 65_536))
    var lastErrno: Int32 = 0
    for _ in 0..<64 {
        switch bindable(Int.random(in: range)) {
        case .success(let port): return .success(port)
        case .failure(let error): lastErrno = error.errno
        }
    }
    return .failure(FreePortError(errno: lastErrno))
}

/// Binds `port` (0: the kernel's pick) on 127.0.0.1 and lets it go; the port bound.
private func bindable(_ port: Int) -> Result<Int, FreePortError> {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return .failure(FreePortError(errno: errno)) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { return .failure(FreePortError(errno: errno)) }
    return .success(Int(UInt16(bigEndian: address.sin_port)))
}

public struct FreePortError: Error, CustomStringConvertible, Sendable {
    public let errno: Int32
    public var description: String { "no free port on 127.0.0.1: errno \(errno)" }
}
