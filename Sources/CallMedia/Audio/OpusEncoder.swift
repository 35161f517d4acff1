internal import COpus
internal import CShareOpus
import ShareCore

/// Opus as the design sends it: 48 kHz, 20 ms frames (960 samples per channel), the restricted
/// low-delay application (CELT only), constrained VBR. Restricted low-delay has no SILK, so no
/// in-band FEC and no DTX: digital silence compresses to small CELT packets, but a packet still goes
/// every 20 ms. `usesDTX` says so rather than pretending.
///
/// Owns its `OpusEncoder *`; confined to the thread that encodes.
public final class OpusAudioEncoder {
    public static let sampleRate = 48_000
    public static let frameSamples = 960

    public let channels: Int
    public private(set) var bitrate: Int
    /// DTX needs SILK, which the restricted low-delay application does not have.
    public let usesDTX = false
    /// The largest packet: what fits the smallest datagram the project supports (576 bytes, the
    /// least an IPv4 host must take) after IPv4 (20), UDP (8), RTP (12) and the SRTP tag (10).
    /// libopus keeps every frame within it (full-scale DC at 128 kbit/s asked for 536 bytes).
    public static let maxPacketBytes = 576 - 20 - 8 - 12 - 10
    private let handle: OpaquePointer
    private var output = [UInt8](repeating: 0, count: OpusAudioEncoder.maxPacketBytes)

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(channels: Int = 2, bitrate: Int = 64_000) throws(Failure) {
        guard channels == 1 || channels == 2 else {
            throw Failure(description: "opus: \(channels) channels (1 or 2 only)")
        }
        var error: Int32 = 0
        guard
            let handle = opus_encoder_create(
                Int32(Self.sampleRate), Int32(channels), OPUS_APPLICATION_RESTRICTED_LOWDELAY, &error),
            error == OPUS_OK
        else {
            throw Failure(description: "opus: cannot create an encoder (\(String(cString: opus_strerror(error))))")
        }
        self.handle = handle
        self.channels = channels
        self.bitrate = bitrate
        guard CShareOpus_set_vbr(handle, 1, 1) == OPUS_OK, CShareOpus_set_bitrate(handle, Int32(bitrate)) == OPUS_OK
        else {
            opus_encoder_destroy(handle)
            throw Failure(description: "opus: the encoder refused constrained VBR at \(bitrate) bit/s")
        }
    }

    deinit { opus_encoder_destroy(handle) }

    public func setBitrate(_ bitsPerSecond: Int) {
        if CShareOpus_set_bitrate(handle, Int32(bitsPerSecond)) == OPUS_OK { bitrate = bitsPerSecond }
    }

    /// Forgets the signal's history (as at a transition into digital silence).
    public func reset() { _ = CShareOpus_reset_encoder(handle) }

    /// Encodes one 20 ms frame of interleaved 16-bit samples (960 × channels of them).
    public func encode(_ pcm: [Int16]) throws(Failure) -> [UInt8] {
        guard pcm.count == Self.frameSamples * channels else {
            throw Failure(description: "opus: a frame is \(Self.frameSamples * channels) samples, got \(pcm.count)")
        }
        let capacity = Int32(output.count)
        let count = pcm.withUnsafeBufferPointer { samples in
            output.withUnsafeMutableBufferPointer { out in
                opus_encode(handle, samples.baseAddress!, Int32(Self.frameSamples), out.baseAddress!, capacity)
            }
        }
        guard count > 0 else {
            throw Failure(description: "opus: encode failed (\(String(cString: opus_strerror(count))))")
        }
        return Array(output[0..<Int(count)])
    }
}

@available(*, unavailable)
extension OpusAudioEncoder: Sendable {}

/// Decodes Opus packets back to 48 kHz interleaved samples; a lost packet is concealed.
public final class OpusAudioDecoder {
    public let channels: Int
    private let handle: OpaquePointer
    private var pcm: [Int16]

    public init(channels: Int = 2) throws(OpusAudioEncoder.Failure) {
        var error: Int32 = 0
        guard let handle = opus_decoder_create(48_000, Int32(channels), &error), error == OPUS_OK else {
            throw OpusAudioEncoder.Failure(
                description: "opus: cannot create a decoder (\(String(cString: opus_strerror(error))))")
        }
        self.handle = handle
        self.channels = channels
        pcm = [Int16](repeating: 0, count: 5760 * channels)
    }

    deinit { opus_decoder_destroy(handle) }

    /// Forgets the prediction (a packet marked as the first after the sender's encoder was
    /// reopened); the timeline goes on.
    public func reset() { _ = CShareOpus_reset_decoder(handle) }

    /// Decodes one packet; `nil` conceals one lost 20 ms frame.
    public func decode(_ packet: [UInt8]?) throws(OpusAudioEncoder.Failure) -> [Int16] {
        let maxFrame = Int32(5760)
        let count: Int32 = pcm.withUnsafeMutableBufferPointer { out in
            if let packet {
                return packet.withUnsafeBufferPointer { data in
                    opus_decode(handle, data.baseAddress, Int32(data.count), out.baseAddress!, maxFrame, 0)
                }
            }
            return opus_decode(handle, nil, 0, out.baseAddress!, Int32(OpusAudioEncoder.frameSamples), 0)
        }
        guard count >= 0 else {
            throw OpusAudioEncoder.Failure(
                description: "opus: cannot decode a packet (\(String(cString: opus_strerror(count))))")
        }
        return Array(pcm[0..<Int(count) * channels])
    }
}

@available(*, unavailable)
extension OpusAudioDecoder: Sendable {}
