import ShareCore

/// Draws screen-like content into BGRx frames, deterministically from a frame number: a desktop,
/// an editor window whose lines of text scroll, a smaller window that moves across the screen, a
/// clock, and the machine-readable `Timecode` band across the top. Sharp text and flat areas are
/// what a shared screen looks like to an encoder; the moving window and scrolling text give it
/// motion every frame.
///
/// Confined to the thread that renders (it reuses one canvas between frames).
public final class SyntheticScreen {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    private var canvas: [UInt8]
    private let stride: Int

    private static let desktop: (UInt8, UInt8, UInt8) = (0x5A, 0x3D, 0x2B)  // B, G, R
    private static let editorBackground: (UInt8, UInt8, UInt8) = (0xF8, 0xF8, 0xF8)
    private static let ink: (UInt8, UInt8, UInt8) = (0x30, 0x30, 0x30)
    private static let titleBar: (UInt8, UInt8, UInt8) = (0x90, 0x60, 0x30)
    private static let panel: (UInt8, UInt8, UInt8) = (0x40, 0x80, 0xE0)

    private static let prose = [
        "SHARECTL SYNTHETIC SCREEN - LINES OF TEXT SCROLL SO EVERY FRAME CHANGES",
        "FUNC ENCODE(FRAME) -> ACCESSUNIT  // X264 OR LIBVPX ON ITS OWN THREAD",
        "THE WATCHDOG CLIMBS KEYFRAME, FRESH ENCODER, REBUILD, SHARE AGAIN",
        "A STATIC SCREEN SENDS NOTHING THROUGH THE PORTAL: REPEAT THE LAST FRAME",
        "0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ (=) / - _ . , : ?",
        "RTP/RTCP, SDP, ICE, DTLS-SRTP, OPUS, H.264 AND VP8",
    ]

    public init(width: Int = 1920, height: Int = 1080, framesPerSecond: Int = 30) {
        precondition(width >= 96 && height >= 60, "the synthetic screen needs at least 96×60 pixels")
        self.width = width
        self.height = height
        self.framesPerSecond = max(1, framesPerSecond)
        stride = width * 4
        canvas = [UInt8](repeating: 0, count: width * 4 * height)
    }

    /// Draws frame `number`; `wallClockMillis` goes into the timecode (the time it was captured).
    public func render(frame number: UInt64, wallClockMillis: UInt64, captureMicros: Int64) -> VideoFrame {
        fill(x: 0, y: 0, w: width, h: height, Self.desktop)
        let scale = max(1, height / 360)  // glyph pixel size: 3 at 1080p

        // The editor: most of the screen, text scrolling up one pixel row per frame.
        let ex = width / 20, ey = height / 10, ew = width * 13 / 20, eh = height * 7 / 10
        drawWindow(x: ex, y: ey, w: ew, h: eh, title: "NOTES.TXT - EDITOR", scale: scale)
        let lineHeight = (BitmapFont.height + 3) * scale
        let scroll = Int(number % UInt64(lineHeight * 1000))
        let top = ey + 12 * scale
        let firstLine = scroll / lineHeight
        let offset = scroll % lineHeight
        var y = top - offset
        var line = firstLine
        while y < ey + eh - lineHeight {
            if y >= top {
                let text = "\(String(format3(line))) " + Self.prose[line % Self.prose.count]
                drawText(text, x: ex + 4 * scale, y: y, scale: scale, color: Self.ink, clipRight: ex + ew - 2 * scale)
            }
            y += lineHeight
            line += 1
        }

        // A small window that travels across the screen and back.
        let mw = width / 5, mh = height / 5
        let travel = max(1, width - mw)
        let step = Int(number * UInt64(max(1, width / 240))) % (2 * travel)
        let mx = step < travel ? step : 2 * travel - step
        let my = height * 6 / 10 + Int((number / 2) % UInt64(max(1, height / 8)))
        drawWindow(x: mx, y: min(my, height - mh), w: mw, h: mh, title: "MOVING", scale: scale)
        fill(x: mx + mw / 8, y: min(my, height - mh) + mh / 3, w: mw * 3 / 4, h: mh / 3, Self.panel)

        // The clock, top right: seconds and milliseconds since the source started.
        let elapsedMillis = number * 1000 / UInt64(framesPerSecond)
        let clock = "\(two(elapsedMillis / 3_600_000)):\(two(elapsedMillis / 60_000 % 60)):\(two(elapsedMillis / 1000 % 60)).\(three(elapsedMillis % 1000))"
        let clockWidth = clock.count * (BitmapFont.width + 1) * scale * 2
        fill(x: width - clockWidth - 24 * scale, y: Timecode.bandHeight(for: height) + 6 * scale,
             w: clockWidth + 16 * scale, h: (BitmapFont.height + 4) * scale * 2, (0x20, 0x20, 0x20))
        drawText(clock, x: width - clockWidth - 16 * scale, y: Timecode.bandHeight(for: height) + 10 * scale,
                 scale: scale * 2, color: (0xFF, 0xFF, 0xFF), clipRight: width)

        Timecode(frameNumber: UInt32(truncatingIfNeeded: number), captureMillis: wallClockMillis)
            .draw(intoPacked: &canvas, width: width, height: height, stride: stride)
        return VideoFrame(format: .bgrx, width: width, height: height, planes: [Plane(bytes: canvas, stride: stride)],
                          captureMicros: captureMicros, sequence: number)
    }

    // MARK: Drawing

    private func fill(x: Int, y: Int, w: Int, h: Int, _ color: (UInt8, UInt8, UInt8)) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return }
        canvas.withUnsafeMutableBufferPointer { pixels in
            for row in y0..<y1 {
                var index = row * stride + x0 * 4
                for _ in x0..<x1 {
                    pixels[index] = color.0; pixels[index + 1] = color.1; pixels[index + 2] = color.2; pixels[index + 3] = 255
                    index += 4
                }
            }
        }
    }

    private func drawWindow(x: Int, y: Int, w: Int, h: Int, title: String, scale: Int) {
        fill(x: x - scale, y: y - scale, w: w + 2 * scale, h: h + 2 * scale, (0x10, 0x10, 0x10))
        fill(x: x, y: y, w: w, h: h, Self.editorBackground)
        fill(x: x, y: y, w: w, h: 10 * scale, Self.titleBar)
        drawText(title, x: x + 3 * scale, y: y + 2 * scale, scale: scale, color: (0xFF, 0xFF, 0xFF), clipRight: x + w)
    }

    private func drawText(_ text: String, x: Int, y: Int, scale: Int, color: (UInt8, UInt8, UInt8), clipRight: Int) {
        var penX = x
        for character in text {
            if penX + BitmapFont.width * scale > clipRight { break }
            let rows = BitmapFont.rows(for: character)
            for (row, bits) in rows.enumerated() where bits != 0 {
                for column in 0..<BitmapFont.width where bits & (0x10 >> UInt8(column)) != 0 {
                    fill(x: penX + column * scale, y: y + row * scale, w: scale, h: scale, color)
                }
            }
            penX += (BitmapFont.width + 1) * scale
        }
    }

    private func two(_ value: UInt64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    private func three(_ value: UInt64) -> String { value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)" }
    private func format3(_ value: Int) -> String { three(UInt64(value % 1000)) }
}

@available(*, unavailable)
extension SyntheticScreen: Sendable {}
