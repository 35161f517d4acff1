internal import CYUV
import ShareCore

/// Conversion and scaling with libyuv: every capture format to I420, and I420 to any size.
public enum FrameConverter {
    public enum ConversionError: Error, CustomStringConvertible, Sendable {
        case unsupported(PixelFormat)
        case malformed(String)
        case libyuv(String, Int32)

        public var description: String {
            switch self {
            case .unsupported(let format): "convert: \(format.rawValue) to I420 is not supported"
            case .malformed(let why): "convert: malformed frame: \(why)"
            case .libyuv(let call, let code): "convert: libyuv \(call) failed (\(code))"
            }
        }
    }

    /// A plane for libyuv to fill, left as the allocator gave it: every conversion and scale here
    /// writes each byte of its output (and a failed one is thrown away), so zeroing 3 MB a 1080p
    /// frame first was work for nothing.
    static func plane(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// Converts a frame to tightly packed I420 of the same size (a copy when it already is I420).
    public static func toI420(_ frame: VideoFrame) throws(ConversionError) -> VideoFrame {
        let w = frame.width, h = frame.height
        guard w > 0, h > 0, frame.planes.count == frame.format.planeCount else {
            throw .malformed("\(frame.format.rawValue) \(w)×\(h) with \(frame.planes.count) planes")
        }
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var y = plane(w * h), u = plane(cw * ch), v = plane(cw * ch)
        let source = frame.planes[0]
        let needed = { (stride: Int, rows: Int, rowBytes: Int) in
            stride >= rowBytes && (rows - 1) * stride + rowBytes <= source.bytes.count
        }
        let result: Int32
        switch frame.format {
        case .bgrx, .bgra, .rgbx, .rgba:
            guard needed(source.stride, h, w * 4) else { throw .malformed("packed plane too small for \(w)×\(h)") }
            result = source.bytes.withUnsafeBufferPointer { src in
                y.withUnsafeMutableBufferPointer { yp in
                    u.withUnsafeMutableBufferPointer { up in
                        v.withUnsafeMutableBufferPointer { vp in
                            let s = Int32(source.stride)
                            switch frame.format {
                            // libyuv names formats by 32-bit word, little-endian: B,G,R,A in memory is "ARGB".
                            case .bgrx, .bgra:
                                return ARGBToI420(
                                    src.baseAddress, s, yp.baseAddress, Int32(w), up.baseAddress, Int32(cw),
                                    vp.baseAddress, Int32(cw), Int32(w), Int32(h))
                            default:
                                return ABGRToI420(
                                    src.baseAddress, s, yp.baseAddress, Int32(w), up.baseAddress, Int32(cw),
                                    vp.baseAddress, Int32(cw), Int32(w), Int32(h))
                            }
                        }
                    }
                }
            }
        case .yuyv:
            guard needed(source.stride, h, w * 2) else { throw .malformed("YUYV plane too small for \(w)×\(h)") }
            result = source.bytes.withUnsafeBufferPointer { src in
                y.withUnsafeMutableBufferPointer { yp in
                    u.withUnsafeMutableBufferPointer { up in
                        v.withUnsafeMutableBufferPointer { vp in
                            YUY2ToI420(
                                src.baseAddress, Int32(source.stride), yp.baseAddress, Int32(w), up.baseAddress,
                                Int32(cw), vp.baseAddress, Int32(cw), Int32(w), Int32(h))
                        }
                    }
                }
            }
        case .nv12:
            let uv = frame.planes[1]
            guard needed(source.stride, h, w), uv.stride >= cw * 2, (ch - 1) * uv.stride + cw * 2 <= uv.bytes.count
            else {
                throw .malformed("NV12 planes too small for \(w)×\(h)")
            }
            result = source.bytes.withUnsafeBufferPointer { src in
                uv.bytes.withUnsafeBufferPointer { uvp in
                    y.withUnsafeMutableBufferPointer { yp in
                        u.withUnsafeMutableBufferPointer { up in
                            v.withUnsafeMutableBufferPointer { vp in
                                NV12ToI420(
                                    src.baseAddress, Int32(source.stride), uvp.baseAddress, Int32(uv.stride),
                                    yp.baseAddress, Int32(w), up.baseAddress, Int32(cw), vp.baseAddress, Int32(cw),
                                    Int32(w), Int32(h))
                            }
                        }
                    }
                }
            }
        case .i420:
            return try scaleI420(frame, width: w, height: h)
        }
        guard result == 0 else { throw .libyuv("to I420 from \(frame.format.rawValue)", result) }
        return VideoFrame(
            format: .i420, width: w, height: h,
            planes: [Plane(bytes: y, stride: w), Plane(bytes: u, stride: cw), Plane(bytes: v, stride: cw)],
            captureMicros: frame.captureMicros, sequence: frame.sequence)
    }

    /// `frame` as I420 at `width`×`height`: converted, and scaled when the size differs. A frame
    /// handed to several encoders carries `FrameConversions`: then each picture is made once, by
    /// the first encoder that asks, and shared.
    public static func i420(_ frame: VideoFrame, width: Int, height: Int) throws(ConversionError) -> VideoFrame {
        guard let shared = frame.conversions else {
            let full = try toI420(frame)
            guard full.width != width || full.height != height else { return full }
            return try scaleI420(full, width: width, height: height)
        }
        let full = try shared.picture(width: frame.width, height: frame.height) {
            () throws(ConversionError) -> VideoFrame in try toI420(frame)
        }
        guard full.width != width || full.height != height else { return full }
        return try shared.picture(width: width, height: height) { () throws(ConversionError) -> VideoFrame in
            try scaleI420(full, width: width, height: height)
        }
    }

    /// Scales an I420 frame to `width`×`height` (box filter: sharp enough for text, cheap).
    public static func scaleI420(_ frame: VideoFrame, width: Int, height: Int) throws(ConversionError) -> VideoFrame {
        guard frame.format == .i420, frame.planes.count == 3, width > 0, height > 0 else {
            throw .malformed("scale needs an I420 frame and a positive size")
        }
        let sw = frame.width, sh = frame.height, scw = (sw + 1) / 2, sch = (sh + 1) / 2
        let p = frame.planes
        guard p[0].stride >= sw, p[1].stride >= scw, p[2].stride >= scw,
            (sh - 1) * p[0].stride + sw <= p[0].bytes.count,
            (sch - 1) * p[1].stride + scw <= p[1].bytes.count,
            (sch - 1) * p[2].stride + scw <= p[2].bytes.count
        else {
            throw .malformed("I420 planes too small for \(sw)×\(sh)")
        }
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        var y = plane(width * height), u = plane(cw * ch), v = plane(cw * ch)
        let result = p[0].bytes.withUnsafeBufferPointer { sy in
            p[1].bytes.withUnsafeBufferPointer { su in
                p[2].bytes.withUnsafeBufferPointer { sv in
                    y.withUnsafeMutableBufferPointer { dy in
                        u.withUnsafeMutableBufferPointer { du in
                            v.withUnsafeMutableBufferPointer { dv in
                                I420Scale(
                                    sy.baseAddress, Int32(p[0].stride), su.baseAddress, Int32(p[1].stride),
                                    sv.baseAddress, Int32(p[2].stride),
                                    Int32(sw), Int32(sh),
                                    dy.baseAddress, Int32(width), du.baseAddress, Int32(cw), dv.baseAddress, Int32(cw),
                                    Int32(width), Int32(height), kFilterBox)
                            }
                        }
                    }
                }
            }
        }
        guard result == 0 else { throw .libyuv("I420Scale", result) }
        return VideoFrame(
            format: .i420, width: width, height: height,
            planes: [Plane(bytes: y, stride: width), Plane(bytes: u, stride: cw), Plane(bytes: v, stride: cw)],
            captureMicros: frame.captureMicros, sequence: frame.sequence)
    }
}
