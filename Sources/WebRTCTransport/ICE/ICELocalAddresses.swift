import Foundation
import Glibc
import ShareCore

/// The local addresses an agent offers host candidates on. libnice gathers only on addresses it
/// is given once any is given, so the agent always gives 127.0.0.1 (tests run where only `lo`
/// exists) and, unless `loopbackOnly`, the other addresses of interfaces that are up.
enum ICELocalAddresses {
    struct InterfaceAddress: Equatable {
        let interface: String
        let address: String
    }

    static let loopback = "127.0.0.1"

    /// 127.0.0.1 first, then the allowed interface addresses; no IPv6 link-local address (those
    /// need a scope id that SDP candidates cannot carry), and no other loopback address unless
    /// named in `allowed`, by itself or by its interface (a peer that refuses 127.0.0.1, as Janus
    /// does, can be met on 127.0.0.2).
    static func select(from interfaces: [InterfaceAddress], loopbackOnly: Bool, allowed: [String]) -> [String] {
        var result = [loopback]
        guard !loopbackOnly else { return result }
        for entry in interfaces {
            let lower = entry.address.lowercased()
            let named = allowed.contains(entry.interface) || allowed.contains(entry.address)
            if lower.hasPrefix("fe80:") { continue }
            if (entry.address.hasPrefix("127.") || lower == "::1") && !named { continue }
            if !allowed.isEmpty, !named { continue }
            if !result.contains(entry.address) { result.append(entry.address) }
        }
        return result
    }

    /// The IPv4 and IPv6 addresses of interfaces that are up (getifaddrs; no blocking call).
    static func current() -> [InterfaceAddress] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var result: [InterfaceAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sockaddrPointer = entry.pointee.ifa_addr,
                entry.pointee.ifa_flags & UInt32(IFF_UP) != 0
            else { continue }
            let family = Int32(sockaddrPointer.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let converted: UnsafePointer<CChar>?
            if family == AF_INET {
                converted = sockaddrPointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ip4 in
                    var address = ip4.pointee.sin_addr
                    return inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                }
            } else {
                converted = sockaddrPointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ip6 in
                    var address = ip6.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                }
            }
            guard converted != nil else { continue }
            result.append(
                InterfaceAddress(
                    interface: String(cString: entry.pointee.ifa_name),
                    address: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return result
    }

    /// True for a literal IPv4 or IPv6 address (libnice's STUN/TURN settings take only those).
    static func isNumeric(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// Resolves a STUN/TURN host name to one numeric address, or gives up after `deadline`.
    /// getaddrinfo blocks (and cannot be interrupted), so `lookup` runs on a thread of its own,
    /// never on the cooperative pool, an actor or the GLib loop; the caller waits on a continuation
    /// that the lookup or a Dispatch timer resumes, whichever comes first. A lookup given up on is
    /// left to finish on its thread and its answer dropped.
    static func resolve(
        _ host: String, deadline: Duration = .seconds(5),
        lookup: @escaping @Sendable (String) -> String? = resolveBlocking
    ) async throws(ICEError) -> String {
        if isNumeric(host) { return host }
        let outcome: LookupOutcome = await withCheckedContinuation { continuation in
            let once = LookupContinuation(continuation)
            let nanoseconds = max(0, Int(deadline.inNanoseconds))
            let timer = DeadlineTimer(after: .nanoseconds(nanoseconds)) { once.resume(.timedOut) }
            timer.arm()
            let thread = Thread {
                let address = lookup(host)
                timer.cancel()
                once.resume(address.map(LookupOutcome.address) ?? .failed)
            }
            thread.name = "ice-resolve"
            thread.start()
        }
        switch outcome {
        case .address(let address): return address
        case .failed: throw .unresolvableHost(host)
        case .timedOut: throw .resolutionTimedOut(host: host, after: deadline)
        }
    }

    /// Every host resolved at once (each within `deadline`), in order; the first failure in order
    /// is thrown. So eight TURN servers that hang cost one deadline, not eight.
    static func resolveAll(
        _ hosts: [String], deadline: Duration = .seconds(5),
        lookup: @escaping @Sendable (String) -> String? = resolveBlocking
    ) async throws(ICEError)
        -> [String]
    {
        let results = await withTaskGroup(of: (Int, Result<String, ICEError>).self) { group in
            for (index, host) in hosts.enumerated() {
                group.addTask {
                    do throws(ICEError) {
                        return (index, .success(try await resolve(host, deadline: deadline, lookup: lookup)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results = [Result<String, ICEError>?](repeating: nil, count: hosts.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
        var addresses: [String] = []
        for result in results {
            switch result {
            case .success(let address)?: addresses.append(address)
            case .failure(let error)?: throw error
            case nil: throw .unresolvableHost("?")  // every task reports; kept for the type checker
            }
        }
        return addresses
    }

    private enum LookupOutcome: Sendable {
        case address(String), failed, timedOut
    }

    /// The once-only hand-off of a lookup's outcome: the lookup thread and the deadline timer
    /// race to resume; the first wins.
    private final class LookupContinuation: Sendable {
        private let continuation: Locked<CheckedContinuation<LookupOutcome, Never>?>
        init(_ continuation: CheckedContinuation<LookupOutcome, Never>) { self.continuation = Locked(continuation) }
        func resume(_ outcome: LookupOutcome) {
            let taken = continuation.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
            taken?.resume(returning: outcome)
        }
    }

    static func resolveBlocking(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard
            getnameinfo(
                first.pointee.ai_addr, first.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0,
                NI_NUMERICHOST) == 0
        else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
