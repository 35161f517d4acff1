internal import CSRTP
import ShareCore

/// One libsrtp session (`srtp_t`) for one direction: outbound (protect, any SSRC we send) or
/// inbound (unprotect, any SSRC we receive). Owns the handle; used under its owner's lock.
final class SRTPStream {
    enum Direction: String { case outbound, inbound }

    /// RFC 3711 §3.3.2 replay window size, as libwebrtc uses (libsrtp allows 64…32768).
    static let replayWindow = 1024
    /// Room libsrtp may write past a packet: the longest tag and MKI (`SRTP_MAX_TRAILER_LEN`), and
    /// the 4-byte SRTCP index.
    static let trailerRoom = Int(SRTP_MAX_TAG_LEN) + Int(SRTP_MAX_MKI_LEN) + 4

    /// How many SSRCs an inbound session keeps a libsrtp stream for (its replay window and
    /// keys). libsrtp makes one for every SSRC that authenticates and never lets go; past this
    /// the least recently seen is removed (its SSRC would start afresh if it came back).
    static let inboundSSRCs = 32

    let direction: Direction
    /// `srtp_t`, released in deinit.
    private let session: OpaquePointer
    /// Inbound: the SSRCs libsrtp holds a stream for, least recently seen first out.
    private var streams = BoundedMap<UInt32, Bool>(capacity: inboundSSRCs)

    init(direction: Direction, profile: SRTPProfile, masterKeyAndSalt: [UInt8]) throws(SRTPError) {
        try SRTPLibrary.ensureStarted()
        guard masterKeyAndSalt.count == profile.masterKeyLength + profile.masterSaltLength else {
            throw .invalidKeys(
                "\(profile) takes a \(profile.masterKeyLength)-byte key and a \(profile.masterSaltLength)-byte salt, got \(masterKeyAndSalt.count) bytes in all"
            )
        }
        var policy = srtp_policy_t()
        switch profile {
        case .aes128CMHMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(Self.replayWindow)
        // A sender may resend a packet unchanged (NACK answered without RTX); the receiver's window
        // still refuses the second copy.
        policy.allow_repeat_tx = direction == .outbound ? 1 : 0
        policy.next = nil
        var created: OpaquePointer?
        var key = masterKeyAndSalt
        let status = key.withUnsafeMutableBufferPointer { key in
            policy.key = key.baseAddress
            return srtp_create(&created, &policy)
        }
        // libsrtp copied the key; wipe ours.
        for index in key.indices { key[index] = 0 }
        guard status == srtp_err_status_ok, let created else {
            throw .failed(
                operation: "srtp_create (\(direction.rawValue), \(profile))", status: status.rawValue,
                meaning: SRTPLibrary.statusMeaning(status.rawValue))
        }
        self.direction = direction
        self.session = created
    }

    deinit { srtp_dealloc(session) }

    enum Operation: String {
        case protectRTP = "protect RTP"
        case protectRTCP = "protect RTCP"
        case unprotectRTP = "unprotect SRTP"
        case unprotectRTCP = "unprotect SRTCP"
    }

    /// Runs one libsrtp packet operation on a copy of `packet` and returns the result.
    func process(_ packet: [UInt8], _ operation: Operation) throws(SRTPError) -> [UInt8] {
        let minimum: (what: String, bytes: Int) =
            switch operation {
            case .protectRTP: ("RTP packet", 12)
            case .protectRTCP: ("RTCP packet", 8)
            case .unprotectRTP: ("SRTP packet", 12)
            case .unprotectRTCP: ("SRTCP packet", 8 + 4)
            }
        guard packet.count >= minimum.bytes else {
            throw .packetTooShort(what: minimum.what, got: packet.count, need: minimum.bytes)
        }
        let capacity = packet.count + Self.trailerRoom
        var length = Int32(packet.count)
        var status = srtp_err_status_ok
        let session = self.session
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            packet.withUnsafeBufferPointer { input in
                _ = buffer.initialize(from: input)
            }
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            status =
                switch operation {
                case .protectRTP: srtp_protect(session, base, &length)
                case .protectRTCP: srtp_protect_rtcp(session, base, &length)
                case .unprotectRTP: srtp_unprotect(session, base, &length)
                case .unprotectRTCP: srtp_unprotect_rtcp(session, base, &length)
                }
            // On success `length` is the result's size: protect grew the packet by the trailer it
            // wrote (within `trailerRoom`), unprotect shrank it. On failure nothing is returned.
            initialized = status == srtp_err_status_ok ? max(0, min(Int(length), capacity)) : 0
        }
        guard status == srtp_err_status_ok else { throw Self.error(for: status.rawValue, operation) }
        switch operation {
        case .unprotectRTP: seen(ssrcAt: 8, in: packet)  // RTP: the SSRC after sequence and timestamp
        case .unprotectRTCP: seen(ssrcAt: 4, in: packet)  // RTCP: the sender's SSRC
        case .protectRTP, .protectRTCP: break  // ours: as many as we send
        }
        return output
    }

    /// Notes the SSRC of a packet libsrtp just authenticated; when that makes one too many,
    /// removes the stream seen least recently.
    private func seen(ssrcAt offset: Int, in packet: [UInt8]) {
        let ssrc = packet[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard let evicted = streams.set(true, for: ssrc) else { return }
        _ = srtp_remove_stream(session, evicted.key.bigEndian)  // libsrtp takes it in network order
    }

    private static func error(for status: UInt32, _ operation: Operation) -> SRTPError {
        switch status {
        case srtp_err_status_replay_fail.rawValue: .replayed
        case srtp_err_status_replay_old.rawValue, srtp_err_status_pkt_idx_old.rawValue: .tooOld
        case srtp_err_status_auth_fail.rawValue: .authenticationFailed
        case srtp_err_status_key_expired.rawValue: .keyExpired
        default: .failed(operation: operation.rawValue, status: status, meaning: SRTPLibrary.statusMeaning(status))
        }
    }
}
