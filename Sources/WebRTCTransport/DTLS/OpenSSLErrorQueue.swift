internal import COpenSSL

/// OpenSSL reports failures on a per-thread error queue; these read it into words and empty it.
enum OpenSSLErrorQueue {
    /// Empties the queue (before a call whose failure is to be reported, so old entries don't mix in).
    static func clear() { ERR_clear_error() }

    /// Every entry on the queue as "reason; reason", oldest first, or `fallback` when it is empty.
    /// The queue is left empty.
    static func drain(fallback: String) -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) {
                reasons.append(String(cString: reason))
            } else {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
    }
}
