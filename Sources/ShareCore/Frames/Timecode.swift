/// A machine-readable band across the top of a synthetic picture: the frame number and capture
/// time, drawn as 96 equal columns of dark or light luma so it survives encoding and scaling. A
/// receiver reads it back from the decoded picture to measure end-to-end latency and freezes.
///
/// Columns, left to right: 4 marker (1 0 1 0), 32 frame number, 48 capture time in
/// milliseconds (wall clock, so sender and receiver on one machine agree), 8 CRC-8 of those ten
/// bytes, 4 marker (0 1 0 1). The band is `bandHeight(for:)` rows tall; each column is sampled
/// in its middle third, away from the edges that block-based codecs blur.
public struct Timecode: Sendable, Hashable, CustomStringConvertible {
    public var frameNumber: UInt32
    public var captureMillis: UInt64

    public static let columns = 96
    static let dark: UInt8 = 16
    static let light: UInt8 = 235

    public init(frameNumber: UInt32, captureMillis: UInt64) {
        self.frameNumber = frameNumber
        self.captureMillis = captureMillis & 0xFFFF_FFFF_FFFF
    }

    public var description: String { "frame \(frameNumber) @ \(captureMillis) ms" }

    /// Rows the band takes in a picture of this height (at least 8, a sixtieth of the height).
    public static func bandHeight(for height: Int) -> Int { max(8, height / 60) }

    /// The 96 column values, 1 for light.
    var bits: [UInt8] {
        var payload = [UInt8]()
        for shift in stride(from: 24, through: 0, by: -8) {
            payload.append(UInt8(truncatingIfNeeded: frameNumber >> UInt32(shift)))
        }
        for shift in stride(from: 40, through: 0, by: -8) {
            payload.append(UInt8(truncatingIfNeeded: captureMillis >> UInt64(shift)))
        }
        payload.append(Self.crc8(payload))
        var bits: [UInt8] = [1, 0, 1, 0]
        for byte in payload { for bit in (0..<8).reversed() { bits.append((byte >> UInt8(bit)) & 1) } }
        bits += [0, 1, 0, 1]
        return bits
    }

    /// Draws the band into a luma plane (I420's Y, or any 8-bit plane of the frame's size).
    public func draw(intoLuma luma: inout [UInt8], width: Int, height: Int, stride: Int) {
        let rows = min(Self.bandHeight(for: height), height)
        let bits = self.bits
        for column in 0..<Self.columns {
            let x0 = column * width / Self.columns, x1 = (column + 1) * width / Self.columns
            let value = bits[column] == 1 ? Self.light : Self.dark
            for y in 0..<rows {
                let row = y * stride
                for x in x0..<x1 { luma[row + x] = value }
            }
        }
    }

    /// Draws the band into a packed 4-byte-per-pixel plane (BGRx and friends: grey is the same in
    /// every channel order).
    public func draw(intoPacked pixels: inout [UInt8], width: Int, height: Int, stride: Int) {
        let rows = min(Self.bandHeight(for: height), height)
        let bits = self.bits
        // Full-range grey that converts to the video-range luma above.
        let greys: [UInt8] = [0, 255]
        for column in 0..<Self.columns {
            let x0 = column * width / Self.columns, x1 = (column + 1) * width / Self.columns
            let grey = greys[Int(bits[column])]
            for y in 0..<rows {
                var index = y * stride + x0 * 4
                for _ in x0..<x1 {
                    pixels[index] = grey; pixels[index + 1] = grey; pixels[index + 2] = grey; pixels[index + 3] = 255
                    index += 4
                }
            }
        }
    }

    /// Reads a band back from a luma plane; nil when there is none (markers or CRC do not match).
    public static func read(fromLuma luma: [UInt8], width: Int, height: Int, stride: Int) -> Timecode? {
        let rows = min(bandHeight(for: height), height)
        guard width >= columns, rows >= 3, luma.count >= (rows - 1) * stride + width else { return nil }
        var bits = [UInt8]()
        bits.reserveCapacity(columns)
        for column in 0..<columns {
            let x0 = column * width / columns, x1 = (column + 1) * width / columns
            let span = x1 - x0
            let xs = (x0 + span / 3)...(max(x0 + span / 3, x1 - 1 - span / 3))
            let ys = (rows / 3)...(max(rows / 3, rows - 1 - rows / 3))
            var sum = 0, count = 0
            for y in ys { for x in xs { sum += Int(luma[y * stride + x]); count += 1 } }
            bits.append(sum / max(count, 1) >= 128 ? 1 : 0)
        }
        guard Array(bits[0..<4]) == [1, 0, 1, 0], Array(bits[92..<96]) == [0, 1, 0, 1] else { return nil }
        var payload = [UInt8](repeating: 0, count: 11)
        for index in 0..<88 where bits[4 + index] == 1 { payload[index / 8] |= 0x80 >> UInt8(index % 8) }
        guard crc8(Array(payload[0..<10])) == payload[10] else { return nil }
        var frame: UInt32 = 0
        for byte in payload[0..<4] { frame = frame << 8 | UInt32(byte) }
        var millis: UInt64 = 0
        for byte in payload[4..<10] { millis = millis << 8 | UInt64(byte) }
        return Timecode(frameNumber: frame, captureMillis: millis)
    }

    /// CRC-8, polynomial x^8 + x^2 + x + 1 (0x07), initial value 0.
    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }
}
