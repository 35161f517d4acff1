#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Unbuffered writes to file descriptor 2, safe from any thread.
public enum StandardError {
    public static func write(_ text: String) { writeAll(text, to: 2) }
}

/// Unbuffered writes to file descriptor 1, safe from any thread.
public enum StandardOutput {
    public static func write(_ text: String) { writeAll(text, to: 1) }
}

private func writeAll(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

#if canImport(Glibc)
    private let systemWrite = Glibc.write
#else
    private let systemWrite = Darwin.write
#endif
