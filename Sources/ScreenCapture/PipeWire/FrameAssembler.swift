import ShareCore

/// Turns the bytes of one PipeWire buffer into a `VideoFrame`: honours the chunk's stride, the
/// crop region, the damage regions (only damaged rectangles are copied into the picture kept from
/// the last buffer) and draws the cursor from cursor metadata when asked. Pure byte work, so the
/// rules are tested with hand-made buffers; the stream calls it on PipeWire's thread.
public struct FrameAssembler: Sendable {
    public struct Rect: Sendable, Hashable {
        public var x, y, width, height: Int
        public init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }

        func clipped(to bounds: Rect) -> Rect? {
            let x0 = max(x, bounds.x), y0 = max(y, bounds.y)
            let x1 = min(x + width, bounds.x + bounds.width), y1 = min(y + height, bounds.y + bounds.height)
            return x1 > x0 && y1 > y0 ? Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
        }
    }

    /// A cursor image: 4 bytes a pixel with alpha, `rgbaOrder` true for R,G,B,A in memory, false
    /// for B,G,R,A. `x`,`y` is where its top-left goes in the frame (position minus hotspot).
    public struct Cursor: Sendable, Hashable {
        public var x, y, width, height, stride: Int
        public var pixels: [UInt8]
        public var rgbaOrder: Bool
        public init(x: Int, y: Int, width: Int, height: Int, stride: Int, pixels: [UInt8], rgbaOrder: Bool) {
            (self.x, self.y, self.width, self.height, self.stride) = (x, y, width, height, stride)
            self.pixels = pixels
            self.rgbaOrder = rgbaOrder
        }
    }

    public enum AssemblyError: Error, CustomStringConvertible, Sendable, Equatable {
        case tooSmall(needed: Int, got: Int)
        case badGeometry(String)
        public var description: String {
            switch self {
            case .tooSmall(let needed, let got): "pipewire: buffer too small (\(got) bytes, need \(needed))"
            case .badGeometry(let why): "pipewire: bad buffer geometry: \(why)"
            }
        }
    }

    public private(set) var format: PixelFormat
    public private(set) var width = 0
    public private(set) var height = 0
    private var pixels: [UInt8] = []
    private var valid = false

    public init(format: PixelFormat) { self.format = format }

    /// Forget the kept picture (new format or size: the next buffer is copied whole).
    public mutating func reset(format: PixelFormat) {
        self.format = format
        valid = false
    }

    /// Copies from a buffer of `bufferWidth`×`bufferHeight` pixels, rows `stride` bytes apart.
    /// `damage` nil (or a changed size) copies everything; otherwise only the damaged rectangles
    /// (buffer coordinates). Returns the number of pixels copied.
    @discardableResult
    public mutating func take(
        _ source: UnsafeRawBufferPointer, stride: Int, bufferWidth: Int, bufferHeight: Int,
        crop: Rect?, damage: [Rect]?
    ) throws(AssemblyError) -> Int {
        guard bufferWidth > 0, bufferHeight > 0, bufferWidth <= 16384, bufferHeight <= 16384 else {
            throw .badGeometry("\(bufferWidth)×\(bufferHeight)")
        }
        let stride = stride == 0 ? bufferWidth * 4 : abs(stride)
        guard stride >= bufferWidth * 4 else { throw .badGeometry("stride \(stride) for \(bufferWidth) pixels") }
        let full = Rect(x: 0, y: 0, width: bufferWidth, height: bufferHeight)
        let area = crop.flatMap { $0.clipped(to: full) } ?? full
        let needed = (area.y + area.height - 1) * stride + (area.x + area.width) * 4
        guard source.count >= needed else { throw .tooSmall(needed: needed, got: source.count) }
        if !valid || area.width != width || area.height != height {
            width = area.width
            height = area.height
            valid = false
        }
        let rects: [Rect]
        if valid, let damage {
            rects = damage.compactMap { $0.clipped(to: area) }
        } else {
            rects = [area]
        }
        if rects == [area] {
            // The whole picture anew: into fresh bytes, every one of them written below. The kept
            // ones are usually still held by the last frame (kept for repeats, or on its way to the
            // encoder), and writing into them would first copy all of them (8 MB at 1080p).
            let count = width * height * 4
            pixels = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        }
        var copied = 0
        pixels.withUnsafeMutableBytes { out in
            for rect in rects {
                let rowBytes = rect.width * 4
                for row in 0..<rect.height {
                    let from = (rect.y + row) * stride + rect.x * 4
                    let to = ((rect.y - area.y + row) * width + (rect.x - area.x)) * 4
                    out.baseAddress!.advanced(by: to).copyMemory(
                        from: source.baseAddress!.advanced(by: from), byteCount: rowBytes)
                }
                copied += rect.width * rect.height
            }
        }
        valid = true
        return copied
    }

    /// The kept picture as a frame, with `cursor` blended in when given (the kept picture itself
    /// stays without it, so a moving cursor leaves no trail).
    public func frame(cursor: Cursor?, captureMicros: Int64, sequence: UInt64) -> VideoFrame? {
        guard valid else { return nil }
        var bytes = pixels
        if let cursor { Self.blend(cursor, into: &bytes, width: width, height: height, format: format) }
        return VideoFrame(
            format: format, width: width, height: height, planes: [Plane(bytes: bytes, stride: width * 4)],
            captureMicros: captureMicros, sequence: sequence)
    }

    static func blend(_ cursor: Cursor, into bytes: inout [UInt8], width: Int, height: Int, format: PixelFormat) {
        let frameRGB = format == .rgbx || format == .rgba
        guard cursor.stride >= cursor.width * 4,
            cursor.pixels.count >= (cursor.height - 1) * cursor.stride + cursor.width * 4
        else { return }
        for row in 0..<cursor.height {
            let y = cursor.y + row
            guard y >= 0, y < height else { continue }
            for column in 0..<cursor.width {
                let x = cursor.x + column
                guard x >= 0, x < width else { continue }
                let c = row * cursor.stride + column * 4
                let alpha = Int(cursor.pixels[c + 3])
                guard alpha > 0 else { continue }
                // Channels of the cursor in the frame's order.
                let sameOrder = cursor.rgbaOrder == frameRGB
                let s0 = Int(cursor.pixels[sameOrder ? c : c + 2]), s1 = Int(cursor.pixels[c + 1])
                let s2 = Int(cursor.pixels[sameOrder ? c + 2 : c])
                let d = (y * width + x) * 4
                bytes[d] = UInt8((s0 * alpha + Int(bytes[d]) * (255 - alpha)) / 255)
                bytes[d + 1] = UInt8((s1 * alpha + Int(bytes[d + 1]) * (255 - alpha)) / 255)
                bytes[d + 2] = UInt8((s2 * alpha + Int(bytes[d + 2]) * (255 - alpha)) / 255)
            }
        }
    }
}
