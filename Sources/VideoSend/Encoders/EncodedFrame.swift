import Foundation

/// One encoded frame as an encoder hands it to the payloader.
public struct EncodedFrame: Hashable, Sendable {
    /// H.264: an Annex-B access unit; VP8: one VP8 frame.
    public var bytes: [UInt8]
    public var isKeyframe: Bool
    /// The timestamp the frame was submitted with (90 kHz).
    public var frameIndex: Int64
    /// The quantizer the encoder chose for the frame, when it says.
    public var quantizer: FrameQuantizer?

    public init(bytes: [UInt8], isKeyframe: Bool, frameIndex: Int64, quantizer: FrameQuantizer? = nil) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.frameIndex = frameIndex
        self.quantizer = quantizer
    }
}

/// How coarsely a frame was quantized, on its codec's own scale. A rate-controlled encoder spends
/// the bits it is given: on cheap content (a still desktop, a ball on a flat field) it runs at its
/// finest quantizer, and what the frames cost says more about the budget than about the content.
/// The quantizer tells the two apart: `costInBand` is what the same frame would roughly cost at a
/// quality inside a band, from the quantizer's step size (bits fall about in proportion to it).
public enum FrameQuantizer: Hashable, Sendable, CustomStringConvertible {
    /// H.264 QP, 0–51: the step doubles every 6.
    case h264(qp: Int)
    /// VP8 quantizer index, 0–127 (the bitstream's, as Chromium's `qpSum` reports it).
    case vp8(index: Int)

    /// The quantizers between which a frame's bits are taken as what the content costs: H.264
    /// QP 24–37 and VP8 index 29–95, libwebrtc's quality scaler's thresholds (under the low one
    /// it takes a picture for finer than it needs, over the high one for coarser). Apart, they
    /// keep a size from flapping: a picture stepped up to a larger size at a quantizer in between
    /// stays there.
    public static func band(for codec: VideoCodec) -> (fine: FrameQuantizer, coarse: FrameQuantizer) {
        switch codec {
        case .h264: (.h264(qp: 24), .h264(qp: 37))
        case .vp8: (.vp8(index: 29), .vp8(index: 95))
        }
    }

    public var codec: VideoCodec {
        switch self {
        case .h264: .h264
        case .vp8: .vp8
        }
    }

    /// The quantizer's step size, relative within its codec.
    public var step: Double {
        switch self {
        case .h264(let qp):
            return pow(2, Double(min(max(qp, 0), 51) - 4) / 6)
        case .vp8(let index):
            // RFC 6386's AC step table, piecewise: 4 + index up to 55, then steeper spans.
            let q = Double(min(max(index, 0), 127))
            if q <= 55 { return 4 + q }
            if q <= 84 { return 59 + 2 * (q - 55) }
            if q <= 103 { return 117 + 3 * (q - 84) }
            return 174 + 4.5 * (q - 103)
        }
    }

    /// What a frame of `bytes` at this quantizer would roughly cost inside the band (`band`):
    /// finer than the band, less (it spent bits the content did not need: a ball on a flat field
    /// sent at QP 1 costs a twentieth of that at QP 24); coarser, more (1080p squeezed into
    /// 260 kbit/s at QP 52 spends few bits and is no fit for 1080p); inside it, what it cost.
    public func costInBand(bytes: Int) -> Double {
        cost(bytes: bytes, notFinerThan: Self.band(for: codec).fine)
    }

    /// The middle of the band (the geometric mean of its ends' steps): H.264 QP 30, VP8 index 60.
    /// A balanced share's frame rate settles where its frames are quantized about here
    /// (`SendShaper`), where a detail share's settles at the band's fine end.
    public static func middle(for codec: VideoCodec) -> FrameQuantizer {
        switch codec {
        case .h264: .h264(qp: 30)
        case .vp8: .vp8(index: 60)
        }
    }

    /// What a frame of `bytes` at this quantizer would roughly cost between `reference` and the
    /// band's coarse end: finer than `reference`, less; coarser than the band, more; between, what
    /// it cost. `costInBand` is this with the band's fine end.
    public func cost(bytes: Int, notFinerThan reference: FrameQuantizer) -> Double {
        let band = Self.band(for: codec)
        if step < reference.step { return Double(bytes) * step / reference.step }
        if step > band.coarse.step { return Double(bytes) * step / band.coarse.step }
        return Double(bytes)
    }

    public var value: Int {
        switch self {
        case .h264(let qp): qp
        case .vp8(let index): index
        }
    }

    public var description: String {
        switch self {
        case .h264(let qp): "QP \(qp)"
        case .vp8(let index): "q \(index)"
        }
    }
}

/// An encoder refused its settings or a frame.
public struct EncoderError: Error, Hashable, Sendable, CustomStringConvertible {
    public var codec: String
    public var message: String

    public init(codec: String, _ message: String) {
        self.codec = codec
        self.message = message
    }

    public var description: String { "\(codec): \(message)" }
}
