/// Writes RGB pictures as PNG without a compression library: the zlib stream uses stored
/// (uncompressed) deflate blocks, which every PNG reader accepts. Snapshots are for looking at,
/// not for archiving, so size does not matter here.
public enum PNGWriter {
    /// Encodes packed 8-bit RGB rows (`width × 3` bytes each, `stride` apart) as a PNG file.
    public static func encodeRGB(_ rgb: [UInt8], width: Int, height: Int, stride: Int) -> [UInt8] {
        precondition(width > 0 && height > 0 && stride >= width * 3 && rgb.count >= (height - 1) * stride + width * 3)
        var raw = [UInt8]()
        raw.reserveCapacity((width * 3 + 1) * height)
        for row in 0..<height {
            raw.append(0)  // filter: none
            raw.append(contentsOf: rgb[row * stride..<row * stride + width * 3])
        }
        var header = ByteWriter()
        header.write(UInt32(width)); header.write(UInt32(height))
        header.write(contentsOf: [8, 2, 0, 0, 0])  // 8 bits, truecolour, deflate, no filter, no interlace
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        chunk("IHDR", header.bytes, into: &png)
        chunk("IDAT", zlibStored(raw), into: &png)
        chunk("IEND", [], into: &png)
        return png
    }

    /// An I420 frame as PNG (BT.601 video range to RGB).
    public static func encode(i420 frame: VideoFrame) -> [UInt8] {
        precondition(frame.format == .i420 && frame.planes.count == 3)
        let w = frame.width, h = frame.height
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        let (yp, up, vp) = (frame.planes[0], frame.planes[1], frame.planes[2])
        for row in 0..<h {
            for x in 0..<w {
                let c = Double(Int(yp.bytes[row * yp.stride + x]) - 16) * 1.164
                let d = Double(Int(up.bytes[(row / 2) * up.stride + x / 2]) - 128)
                let e = Double(Int(vp.bytes[(row / 2) * vp.stride + x / 2]) - 128)
                let i = (row * w + x) * 3
                rgb[i] = clamp(c + 1.596 * e)
                rgb[i + 1] = clamp(c - 0.392 * d - 0.813 * e)
                rgb[i + 2] = clamp(c + 2.017 * d)
            }
        }
        return encodeRGB(rgb, width: w, height: h, stride: w * 3)
    }

    private static func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }

    private static func chunk(_ type: String, _ data: [UInt8], into png: inout [UInt8]) {
        var writer = ByteWriter()
        writer.write(UInt32(data.count))
        let typeAndData = Array(type.utf8) + data
        writer.write(contentsOf: typeAndData)
        writer.write(crc32(typeAndData))
        png += writer.bytes
    }

    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            let last: UInt8 = offset + count == data.count ? 1 : 0
            out.append(last)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        var writer = ByteWriter()
        writer.write(b << 16 | a)
        return out + writer.bytes
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
