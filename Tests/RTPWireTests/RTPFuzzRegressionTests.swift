import Foundation
import RTPWire
import ShareCore
import Testing

/// Inputs the fuzz targets once found troublesome. Each must parse or throw, never crash, and
/// whatever parses must survive a round trip.
@Suite struct RTPFuzzRegressionTests {
    static func fixtures(_ folder: String) throws -> [URL] {
        guard let directory = Bundle.module.url(forResource: "Fixtures/\(folder)", withExtension: nil) else {
            return []
        }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "bin" }
    }

    @Test func rtpInputs() throws {
        let files = try Self.fixtures("fuzz-rtp")
        #expect(!files.isEmpty)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let packet = try? RTPPacket.parse(bytes) else { continue }
            #expect(try RTPPacket.parse(packet.serialize()) == packet, "\(file.lastPathComponent)")
            _ = try? packet.headerExtensionElements()
        }
    }

    @Test func rtcpInputs() throws {
        for file in try Self.fixtures("fuzz-rtcp") {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let packets = try? RTCPCompound.parse(bytes) else { continue }
            let wire = try RTCPCompound.serialize(packets)
            #expect(try RTCPCompound.serialize(RTCPCompound.parse(wire)) == wire, "\(file.lastPathComponent)")
        }
    }

    /// The first FuzzRTP find: padding bytes that are not zero. The packet is valid; only the
    /// fuzz target's expectation (byte-exact re-serialization) was wrong, as padding is zeroed.
    @Test func nonZeroPaddingParses() throws {
        let bytes: [UInt8] = [
            0xA0, 0x00, 0x0E, 0x00,  // V=2 P=1, PT=0, seq=3584
            0xAB, 0xAB, 0xAB, 0xAB,  // timestamp
            0xAB, 0xAB, 0xAB, 0xAB,  // SSRC
            0x2E, 0x00, 0x3D, 0xFF, 0xFF, 0xFF, 0x10, 0x01, 0x00,  // padding (non-zero)
            0x0A
        ]  // padding count 10
        let packet = try RTPPacket.parse(bytes)
        #expect(packet.payload.isEmpty)
        #expect(packet.paddingSize == 10)
        #expect(try packet.serialize() == Array(bytes[0..<12]) + Array(repeating: 0, count: 9) + [0x0A])
    }
}
