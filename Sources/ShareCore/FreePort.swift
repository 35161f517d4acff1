#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1 that is free now (the kernel's pick for a socket bound to port 0), for
/// a child process to listen on: a Janus the room server starts, a scenario's room server. nil
/// with the errno when no socket could be bound.
public func freeLoopbackPort() -> Result<Int, FreePortError> {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return .failure(FreePortError(errno: errno)) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
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
