import Foundation
import ScreenCapture
import ShareCore
import Testing

@Suite struct SnapshotTests {
    /// The PNG is checked by Python's own zlib and PNG reading (a reader we did not write).
    @Test func syntheticFrameBecomesAPNGThatAnotherReaderAccepts() throws {
        let screen = SyntheticScreen(width: 640, height: 360)
        let frame = try FrameConverter.toI420(screen.render(frame: 3, wallClockMillis: 0, captureMicros: 0))
        let png = PNGWriter.encode(i420: frame)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sharectl-snapshot-\(getpid()).png")
        try Data(png).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let check = """
            import struct, sys, zlib
            data = open(sys.argv[1], 'rb').read()
            assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n'
            pos, idat, size = 8, b'', None
            while pos < len(data):
                n, kind = struct.unpack('>I4s', data[pos:pos+8]); body = data[pos+8:pos+8+n]
                assert zlib.crc32(kind + body) == struct.unpack('>I', data[pos+8+n:pos+12+n])[0], kind
                if kind == b'IHDR': size = struct.unpack('>II', body[:8])
                if kind == b'IDAT': idat += body
                pos += 12 + n
            raw = zlib.decompress(idat)
            print(size[0], size[1], len(raw))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", check, path.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "640 360 \(360 * (640 * 3 + 1))")
    }
}
