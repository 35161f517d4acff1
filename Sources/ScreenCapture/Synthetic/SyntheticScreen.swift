import ShareCore

/// Draws screen-like content into BGRx frames, deterministically from a frame number: a desktop,
/// an editor window whose lines of text scroll, a smaller window that moves across the screen, a
/// clock, and the machine-readable `Timecode` band across the top. Sharp text and flat areas are
/// what a shared screen looks like to an encoder; the moving window and scrolling text give it
/// motion every frame.
///
/// The still parts (desktop, editor frame) and the text document are drawn once; each frame is
/// then mostly row copies, so a 1080p frame costs a few milliseconds even in a debug build.
/// Confined to the thread that renders (it reuses its buffers between frames).
public final class SyntheticScreen {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    private let stride: Int
    private var canvas: [UInt8]
    private var base: [UInt8]
    /// The editor's text, pre-drawn: `documentLines` lines, then the first screenful again so a
    /// window onto it can wrap around.
    private var document: [UInt8]
    private let documentStride: Int
    private let documentHeight: Int
    private let documentPeriodRows: Int
    private let editor: (x: Int, y: Int, w: Int, h: Int)
    private let textArea: (x: Int, y: Int, w: Int, h: Int)
    private let scale: Int

    private static let documentLines = 60
    private static let desktop: Pixel = (0x5A, 0x3D, 0x2B)  // B, G, R
    private static let paper: Pixel = (0xF8, 0xF8, 0xF8)
    private static let ink: Pixel = (0x30, 0x30, 0x30)
    private static let titleBar: Pixel = (0x90, 0x60, 0x30)
    private static let panel: Pixel = (0x40, 0x80, 0xE0)
    private static let white: Pixel = (0xFF, 0xFF, 0xFF)

    private static let prose = [
        "SHARECTL SYNTHETIC SCREEN - LINES OF TEXT SCROLL SO EVERY FRAME CHANGES",
        "FUNC ENCODE(FRAME) -> ACCESSUNIT  // X264 OR LIBVPX ON ITS OWN THREAD",
        "THE WATCHDOG CLIMBS KEYFRAME, FRESH ENCODER, REBUILD, SHARE AGAIN",
        "A STATIC SCREEN SENDS NOTHING THROUGH THE PORTAL: REPEAT THE LAST FRAME",
        "0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ (=) / - _ . , : ?",
        "RTP/RTCP, SDP, ICE, DTLS-SRTP, OPUS, H.264 AND VP8"
    ]

    typealias Pixel = (UInt8, UInt8, UInt8)

    public init(width: Int = 1920, height: Int = 1080, framesPerSecond: Int = 30) {
        precondition(width >= 96 && height >= 60, "the synthetic screen needs at least 96×60 pixels")
        self.width = width
        self.height = height
        self.framesPerSecond = max(1, framesPerSecond)
        stride = width * 4
        scale = max(1, height / 360)  // glyph pixel size: 3 at 1080p
        editor = (width / 20, height / 10, width * 13 / 20, height * 7 / 10)
        textArea = (editor.x + 4 * scale, editor.y + 12 * scale, editor.w - 6 * scale, editor.h - 14 * scale)
        canvas = [UInt8](repeating: 0, count: stride * height)

        // The still picture: desktop and the editor's frame.
        base = [UInt8](repeating: 0, count: stride * height)
        Self.fill(&base, stride: stride, bounds: (width, height), x: 0, y: 0, w: width, h: height, Self.desktop)
        Self.drawWindow(
            &base, stride: stride, bounds: (width, height), x: editor.x, y: editor.y, w: editor.w, h: editor.h,
            title: "NOTES.TXT - EDITOR", scale: scale)

        // The document the editor scrolls through.
        let lineHeight = (BitmapFont.height + 3) * scale
        let visibleLines = textArea.h / lineHeight + 2
        documentStride = max(1, textArea.w) * 4
        documentPeriodRows = Self.documentLines * lineHeight
        documentHeight = (Self.documentLines + visibleLines) * lineHeight
        document = [UInt8](repeating: 0, count: documentStride * documentHeight)
        let docBounds = (max(1, textArea.w), documentHeight)
        Self.fill(
            &document, stride: documentStride, bounds: docBounds, x: 0, y: 0, w: docBounds.0, h: documentHeight,
            Self.paper)
        for line in 0..<(Self.documentLines + visibleLines) {
            let number = line % Self.documentLines
            let text = (number < 10 ? "00" : "0") + "\(number) " + Self.prose[number % Self.prose.count]
            Self.drawText(
                &document, stride: documentStride, bounds: docBounds, text, x: 0, y: line * lineHeight,
                scale: scale, color: Self.ink)
        }
    }

    /// Draws frame `number`; `wallClockMillis` goes into the timecode (the time it was captured).
    public func render(frame number: UInt64, wallClockMillis: UInt64, captureMicros: Int64) -> VideoFrame {
        let bounds = (width, height)
        canvas.withUnsafeMutableBytes { out in base.withUnsafeBytes { out.copyMemory(from: $0) } }

        // The editor's text, scrolled up one pixel row per frame.
        let scroll = Int(number % UInt64(documentPeriodRows))
        let rowBytes = min(documentStride, max(0, (width - textArea.x) * 4))
        canvas.withUnsafeMutableBytes { out in
            document.withUnsafeBytes { doc in
                for row in 0..<max(0, textArea.h) where textArea.y + row < height && scroll + row < documentHeight {
                    (out.baseAddress! + (textArea.y + row) * stride + textArea.x * 4)
                        .copyMemory(from: doc.baseAddress! + (scroll + row) * documentStride, byteCount: rowBytes)
                }
            }
        }

        // A small window that travels across the screen and back.
        let mw = width / 5, mh = height / 5
        let travel = max(1, width - mw)
        let step = Int(number * UInt64(max(1, width / 240)) % UInt64(2 * travel))
        let mx = step < travel ? step : 2 * travel - step
        let my = min(height * 6 / 10 + Int((number / 2) % UInt64(max(1, height / 8))), height - mh)
        Self.drawWindow(
            &canvas, stride: stride, bounds: bounds, x: mx, y: my, w: mw, h: mh, title: "MOVING", scale: scale)
        Self.fill(
            &canvas, stride: stride, bounds: bounds, x: mx + mw / 8, y: my + mh / 3, w: mw * 3 / 4, h: mh / 3,
            Self.panel)

        // The clock, top right: time since the source started.
        let elapsed = number * 1000 / UInt64(framesPerSecond)
        let clock =
            "\(Self.digits(elapsed / 3_600_000, 2)):\(Self.digits(elapsed / 60_000 % 60, 2)):"
            + "\(Self.digits(elapsed / 1000 % 60, 2)).\(Self.digits(elapsed % 1000, 3))"
        let clockScale = scale * 2
        let clockWidth = clock.count * (BitmapFont.width + 1) * clockScale
        let clockY = Timecode.bandHeight(for: height) + 6 * scale
        Self.fill(
            &canvas, stride: stride, bounds: bounds, x: width - clockWidth - 24 * scale, y: clockY,
            w: clockWidth + 16 * scale, h: (BitmapFont.height + 4) * clockScale, (0x20, 0x20, 0x20))
        Self.drawText(
            &canvas, stride: stride, bounds: bounds, clock, x: width - clockWidth - 16 * scale,
            y: clockY + 2 * clockScale, scale: clockScale, color: Self.white)

        Timecode(frameNumber: UInt32(truncatingIfNeeded: number), captureMillis: wallClockMillis)
            .draw(intoPacked: &canvas, width: width, height: height, stride: stride)
        return VideoFrame(
            format: .bgrx, width: width, height: height, planes: [Plane(bytes: canvas, stride: stride)],
            captureMicros: captureMicros, sequence: number)
    }

    // MARK: Drawing (into any 4-byte-per-pixel buffer)

    /// Fills a rectangle, clipped: one row is drawn, then copied to the others.
    private static func fill(
        _ pixels: inout [UInt8], stride: Int, bounds: (Int, Int),
        x: Int, y: Int, w: Int, h: Int, _ color: Pixel
    ) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(bounds.0, x + w), y1 = min(bounds.1, y + h)
        guard x0 < x1, y0 < y1 else { return }
        let rowBytes = (x1 - x0) * 4
        pixels.withUnsafeMutableBytes { raw in
            let first = raw.baseAddress! + y0 * stride + x0 * 4
            let words = first.bindMemory(to: UInt32.self, capacity: x1 - x0)
            let value = UInt32(color.0) | UInt32(color.1) << 8 | UInt32(color.2) << 16 | 0xFF00_0000
            words.initialize(repeating: value.littleEndian, count: x1 - x0)
            for row in (y0 + 1)..<y1 {
                (raw.baseAddress! + row * stride + x0 * 4).copyMemory(from: first, byteCount: rowBytes)
            }
        }
    }

    private static func drawWindow(
        _ pixels: inout [UInt8], stride: Int, bounds: (Int, Int),
        x: Int, y: Int, w: Int, h: Int, title: String, scale: Int
    ) {
        fill(
            &pixels, stride: stride, bounds: bounds, x: x - scale, y: y - scale, w: w + 2 * scale, h: h + 2 * scale,
            (0x10, 0x10, 0x10))
        fill(&pixels, stride: stride, bounds: bounds, x: x, y: y, w: w, h: h, paper)
        fill(&pixels, stride: stride, bounds: bounds, x: x, y: y, w: w, h: 10 * scale, titleBar)
        drawText(
            &pixels, stride: stride, bounds: bounds, title, x: x + 3 * scale, y: y + 2 * scale, scale: scale,
            color: white, clipRight: x + w)
    }

    private static func drawText(
        _ pixels: inout [UInt8], stride: Int, bounds: (Int, Int), _ text: String,
        x: Int, y: Int, scale: Int, color: Pixel, clipRight: Int? = nil
    ) {
        let right = min(clipRight ?? bounds.0, bounds.0)
        var penX = x
        for character in text {
            if penX + BitmapFont.width * scale > right { break }
            let rows = BitmapFont.rows(for: character)
            for (row, bits) in rows.enumerated() where bits != 0 {
                // Runs of set bits become one rectangle each.
                var column = 0
                while column < BitmapFont.width {
                    guard bits & (0x10 >> UInt8(column)) != 0 else { column += 1; continue }
                    var end = column
                    while end < BitmapFont.width, bits & (0x10 >> UInt8(end)) != 0 { end += 1 }
                    fill(
                        &pixels, stride: stride, bounds: bounds, x: penX + column * scale, y: y + row * scale,
                        w: (end - column) * scale, h: scale, color)
                    column = end
                }
            }
            penX += (BitmapFont.width + 1) * scale
        }
    }

    private static func digits(_ value: UInt64, _ count: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }
}

@available(*, unavailable)
extension SyntheticScreen: Sendable {}
