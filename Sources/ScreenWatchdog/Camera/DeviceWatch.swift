#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import Synchronization

/// Watches a device directory (/dev) with inotify on a thread of its own and calls `changed` when
/// a video node appears or goes. `stop()` joins the thread.
final class DeviceWatch: Sendable {
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Nil when inotify is not available here (the director then relies on its looks).
    init?(directory: String, changed: @escaping @Sendable () -> Void) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, directory, UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB)) >= 0 else {
            close(fd)
            return nil
        }
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while running.load(ordering: .acquiring) {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 200) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                if Self.namesVideoNode(buffer, count: count) { changed() }
            }
            close(fd)
            finished.signal()
        }
        thread.name = "camera-devices"
        thread.start()
    }

    /// Whether any inotify event in the buffer names a `videoN` node.
    static func namesVideoNode(_ buffer: [UInt8], count: Int) -> Bool {
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
            let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
            let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)].prefix { $0 != 0 }
            if String(decoding: nameBytes, as: UTF8.self).hasPrefix("video") { return true }
            offset += header + length
        }
        return false
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    deinit { stop() }
}
