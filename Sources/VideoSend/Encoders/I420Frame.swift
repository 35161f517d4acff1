/// An uncompressed picture in I420 (YUV 4:2:0 planar, 8-bit): a full-size luma plane and two
/// chroma planes of half width and height (rounded up), each packed without row padding.
public struct I420Frame: Hashable, Sendable {
    public let width: Int
    public let height: Int
    public var y: [UInt8]
    public var u: [UInt8]
    public var v: [UInt8]

    public var chromaWidth: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }

    /// Wraps planes of exactly `width × height` and `chromaWidth × chromaHeight` bytes; nil when
    /// the sizes do not match.
    public init?(width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8]) {
        guard width > 0, height > 0 else { return nil }
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        guard y.count == width * height, u.count == chroma, v.count == chroma else { return nil }
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
    }

    /// A moving test pattern: a sliding diagonal gradient, a white square crossing the picture,
    /// drifting chroma and a band of fixed fine noise, so that encoders see motion, edges and
    /// detail. `index` is the frame number; the same index always gives the same picture.
    public static func testPattern(width: Int, height: Int, index: Int) -> I420Frame {
        precondition(width > 0 && height > 0, "a test pattern needs a size")
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        var y = [UInt8](repeating: 0, count: width * height)
        let shift = index &* 3
        let square = max(8, min(width, height) / 5)
        let squareX = (index &* 7) % max(1, width - square)
        let squareY = (height - square) / 2
        let noiseTop = height - height / 4
        for row in 0..<height {
            let rowStart = row * width
            for column in 0..<width {
                var value = (column &+ 2 &* row &+ shift) & 0xFF
                if row >= noiseTop {
                    // Fixed high-frequency texture: a cheap integer hash of the position.
                    var hash = UInt32(truncatingIfNeeded: column &* 73_856_093 ^ row &* 19_349_663)
                    hash = (hash ^ (hash >> 13)) &* 0x5bd1e995
                    value = 64 + Int(hash >> 25)
                }
                if column >= squareX && column < squareX + square && row >= squareY && row < squareY + square {
                    value = 235
                }
                y[rowStart + column] = UInt8(truncatingIfNeeded: value)
            }
        }
        var u = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
        var v = u
        for row in 0..<chromaHeight {
            for column in 0..<chromaWidth {
                u[row * chromaWidth + column] = UInt8(truncatingIfNeeded: 64 + (column &+ index) % 128)
                v[row * chromaWidth + column] = UInt8(truncatingIfNeeded: 64 + (row &+ 2 &* index) % 128)
            }
        }
        return I420Frame(unchecked: width, height, y, u, v)
    }

    private init(unchecked width: Int, _ height: Int, _ y: [UInt8], _ u: [UInt8], _ v: [UInt8]) {
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
    }
}
