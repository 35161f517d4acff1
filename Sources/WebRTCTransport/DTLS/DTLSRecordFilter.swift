/// What reaches OpenSSL of an incoming DTLS datagram: the records that could be valid for this
/// connection, in order, and nothing else (RFC 6347 §4.1.2.7: an invalid record is discarded
/// silently and the association goes on).
///
/// OpenSSL drops most invalid records itself, but not the same ones in every 3.0.x patch release:
/// 3.0.17 to 3.0.20 end the association (an `internal error` alert) on a protected record too
/// short to hold the AES-GCM nonce and tag, such as an epoch-1 record of 4 bytes arriving before
/// or after the keys; 3.0.22 drops it. Such records are taken out here, so the outcome does not
/// depend on the installed library.
///
/// RFC 6347 §4.1 record layer, 13-byte header:
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  content type |         version (254.253)     |     epoch     :
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// :     epoch     |          sequence number (48 bits)            :
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// :                               |            length             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// A record is kept when:
/// - its type is change_cipher_spec (20), alert (21), handshake (22) or application_data (23);
/// - its version is DTLS 1.0 (254.255, which ClientHellos may carry) or DTLS 1.2 (254.253);
/// - its epoch is 0 or 1 (DTLS-SRTP never renegotiates, so no later epoch exists);
/// - its length fits in what is left of the datagram;
/// - in epoch 0 (plaintext): change_cipher_spec is the single byte 1, an alert is two bytes and only
///   while the handshake runs (after it the peer's alerts are protected), a handshake record is a
///   whole run of fragment headers (RFC 6347 §4.2.2) each within its message, and application
///   data never appears;
/// - in epoch 1 (protected, AES-GCM only, see `DTLSContext.cipherList`): at least the 8-byte
///   explicit nonce and 16-byte tag (RFC 5288 §3).
///
/// A pure value: no OpenSSL, no clock. The transport keeps one and counts what it drops.
public struct DTLSRecordFilter: Sendable {
    public static let headerLength = 13
    /// RFC 5288: explicit nonce (8) + GCM tag (16); no protected record of our ciphers is shorter.
    public static let minimumProtectedLength = 24
    /// RFC 6347 §4.1.2.1: 2^14 + 2048 for a protected record; plaintext is at most 2^14.
    public static let maximumProtectedLength = 16_384 + 2_048
    public static let maximumPlaintextLength = 16_384

    /// Why a record was left out, for the debug log and the tests.
    public enum Rejection: Hashable, Sendable, CustomStringConvertible {
        case headerCutShort(bytesLeft: Int)
        case unknownContentType(UInt8)
        case unknownVersion(UInt16)
        case unexpectedEpoch(UInt16)
        case lengthBeyondDatagram(length: Int, bytesLeft: Int)
        case tooLong(length: Int)
        case protectedRecordTooShort(length: Int)
        case malformedPlaintext(contentType: UInt8, reason: String)

        public var description: String {
            switch self {
            case let .headerCutShort(left): "a record header cut short (\(left) of 13 bytes)"
            case let .unknownContentType(type): "content type \(type) is not a DTLS 1.2 record"
            case let .unknownVersion(version): "record version 0x\(String(version, radix: 16)) is not DTLS"
            case let .unexpectedEpoch(epoch): "epoch \(epoch) cannot occur on this connection"
            case let .lengthBeyondDatagram(length, left): "length \(length) runs past the datagram (\(left) bytes left)"
            case let .tooLong(length): "length \(length) exceeds the DTLS limit"
            case let .protectedRecordTooShort(length):
                "a protected record of \(length) bytes cannot hold the AES-GCM nonce and tag (24)"
            case let .malformedPlaintext(type, reason): "a plaintext record of type \(type): \(reason)"
            }
        }
    }

    public struct Result: Sendable {
        /// The kept records, back to back, exactly as they arrived; empty when none is kept.
        public var kept: [UInt8]
        public var keptRecords: Int
        public var rejections: [Rejection]
    }

    /// Whether the handshake has completed; plaintext alerts are refused after it.
    public var handshakeComplete: Bool

    public init(handshakeComplete: Bool = false) {
        self.handshakeComplete = handshakeComplete
    }

    /// Splits `datagram` into records and keeps the valid ones. A header that cannot be read ends
    /// the walk (the rest of the datagram cannot be framed).
    public func filter(_ datagram: [UInt8]) -> Result {
        var result = Result(kept: [], keptRecords: 0, rejections: [])
        var offset = 0
        while offset < datagram.count {
            let left = datagram.count - offset
            guard left >= Self.headerLength else {
                result.rejections.append(.headerCutShort(bytesLeft: left))
                break
            }
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            guard length <= left - Self.headerLength else {
                result.rejections.append(.lengthBeyondDatagram(length: length, bytesLeft: left - Self.headerLength))
                break
            }
            let end = offset + Self.headerLength + length
            if let rejection = check(datagram, recordAt: offset, length: length) {
                result.rejections.append(rejection)
            } else {
                result.kept.append(contentsOf: datagram[offset..<end])
                result.keptRecords += 1
            }
            offset = end
        }
        return result
    }

    private func check(_ bytes: [UInt8], recordAt offset: Int, length: Int) -> Rejection? {
        let type = bytes[offset]
        guard (20...23).contains(type) else { return .unknownContentType(type) }
        let version = UInt16(bytes[offset + 1]) << 8 | UInt16(bytes[offset + 2])
        guard version == 0xFEFD || version == 0xFEFF else { return .unknownVersion(version) }
        let epoch = UInt16(bytes[offset + 3]) << 8 | UInt16(bytes[offset + 4])
        switch epoch {
        case 0:
            guard length <= Self.maximumPlaintextLength else { return .tooLong(length: length) }
            let body = bytes[(offset + Self.headerLength)..<(offset + Self.headerLength + length)]
            return checkPlaintext(type: type, body: body)
        case 1:
            guard length <= Self.maximumProtectedLength else { return .tooLong(length: length) }
            guard length >= Self.minimumProtectedLength else { return .protectedRecordTooShort(length: length) }
            return nil
        default:
            return .unexpectedEpoch(epoch)
        }
    }

    private func checkPlaintext(type: UInt8, body: ArraySlice<UInt8>) -> Rejection? {
        func malformed(_ reason: String) -> Rejection { .malformedPlaintext(contentType: type, reason: reason) }
        switch type {
        case 20:
            return body.count == 1 && body.first == 1 ? nil : malformed("change_cipher_spec is not the single byte 1")
        case 21:
            guard body.count == 2 else { return malformed("an alert of \(body.count) bytes, not 2") }
            guard (1...2).contains(body[body.startIndex]) else {
                return malformed("alert level \(body[body.startIndex])")
            }
            return handshakeComplete ? malformed("a plaintext alert after the handshake") : nil
        case 22:
            return checkHandshakeFragments(body).map(malformed)
        default:
            return malformed("application data before any keys")
        }
    }

    /// RFC 6347 §4.2.2: each handshake fragment is msg_type(1) length(3) message_seq(2)
    /// fragment_offset(3) fragment_length(3), then its bytes; a record holds one or more.
    private func checkHandshakeFragments(_ body: ArraySlice<UInt8>) -> String? {
        guard !body.isEmpty else { return "an empty handshake record" }
        var index = body.startIndex
        while index < body.endIndex {
            guard body.endIndex - index >= 12 else { return "a handshake fragment header cut short" }
            func u24(_ at: Int) -> Int { Int(body[at]) << 16 | Int(body[at + 1]) << 8 | Int(body[at + 2]) }
            let messageLength = u24(index + 1)
            let fragmentOffset = u24(index + 6)
            let fragmentLength = u24(index + 9)
            guard fragmentOffset + fragmentLength <= messageLength else {
                return "fragment \(fragmentOffset)+\(fragmentLength) beyond its message of \(messageLength) bytes"
            }
            guard fragmentLength <= body.endIndex - index - 12 else {
                return "a fragment of \(fragmentLength) bytes runs past its record"
            }
            index += 12 + fragmentLength
        }
        return nil
    }
}
