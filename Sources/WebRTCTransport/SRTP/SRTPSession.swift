import ShareCore

/// SRTP for one DTLS-SRTP connection over libsrtp2: an outbound libsrtp session that protects
/// everything we send (any SSRC) and an inbound one that unprotects everything we receive, keyed
/// from the DTLS handshake: the DTLS client writes with the client key and reads with the server
/// key, the server the other way round (RFC 5764 §4.2).
///
/// Thread-safe: each direction sits behind its own `Locked`, so the send path (protect) and the
/// receive path (unprotect) run on their own threads without waiting for each other; two threads
/// on the same direction take turns. Failures are `SRTPError` values, never traps.
public final class SRTPSession: Sendable {
    public let profile: SRTPProfile
    public let role: DTLSRole
    private let outbound: Locked<SRTPStream>
    private let inbound: Locked<SRTPStream>

    /// Builds both directions from the keys DTLS exported, for the end that played `role`.
    public init(keys: SRTPKeyingMaterial, role: DTLSRole, logger: Logger = .disabled) throws(SRTPError) {
        let peer: DTLSRole = role == .client ? .server : .client
        let sending = try SRTPStream(
            direction: .outbound, profile: keys.profile,
            masterKeyAndSalt: keys.masterKeyAndSalt(writtenBy: role))
        let receiving = try SRTPStream(
            direction: .inbound, profile: keys.profile,
            masterKeyAndSalt: keys.masterKeyAndSalt(writtenBy: peer))
        profile = keys.profile
        self.role = role
        outbound = Locked(sending)
        inbound = Locked(receiving)
        logger.debug("SRTP session ready", ["srtp.profile": keys.profile.rawValue, "dtls.role": role.rawValue])
    }

    /// An RTP packet as SRTP (header in clear, payload encrypted, tag appended).
    public func protect(rtp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try outbound.withLock { stream throws(SRTPError) in try stream.process(packet, .protectRTP) }
    }

    /// An RTCP compound packet as SRTCP (index and tag appended).
    public func protectRTCP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try outbound.withLock { stream throws(SRTPError) in try stream.process(packet, .protectRTCP) }
    }

    /// The RTP packet inside an SRTP packet, after its tag and replay window accept it.
    public func unprotect(srtp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try inbound.withLock { stream throws(SRTPError) in try stream.process(packet, .unprotectRTP) }
    }

    /// The RTCP compound packet inside an SRTCP packet, after its tag and replay window accept it.
    public func unprotectRTCP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try inbound.withLock { stream throws(SRTPError) in try stream.process(packet, .unprotectRTCP) }
    }
}
