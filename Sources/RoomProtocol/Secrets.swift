/// Where room tokens and resume keys come from: the system's random source, or (in tests) a
/// seeded generator so runs repeat. Secrets are 128 bits, URL-safe base64 without padding.
public struct SecretSource: Sendable {
    private var seeded: SplitMix64?

    /// Secrets from the system's cryptographic random source (getrandom).
    public static var system: SecretSource { SecretSource(seeded: nil) }

    /// Repeatable secrets for tests. Never use for a real room.
    public static func seeded(_ seed: UInt64) -> SecretSource { SecretSource(seeded: SplitMix64(state: seed)) }

    public mutating func next() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        if var generator = seeded {
            for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: generator.next()) }
            seeded = generator
        } else {
            var generator = SystemRandomNumberGenerator()
            for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: generator.next()) }
        }
        return Self.base64URL(bytes)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { value |= UInt32(byte) << (16 - 8 * UInt32(offset)) }
            let characters = chunk.count + 1
            for position in 0..<characters {
                out.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return out
    }

    /// Compares two secrets in time that depends only on their lengths.
    public static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}

private struct SplitMix64: Sendable {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
