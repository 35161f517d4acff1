import Foundation
import RTPWire

/// `sharectl bench-wire DIR`: sharectl's rates on the workload `scripts/bench_peer.py generate`
/// wrote into DIR (the same bytes the peer is timed on), printed as one JSON object.
enum BenchCommand {
    static func run(_ arguments: Arguments) throws {
        guard let directory = arguments.positional.first else {
            throw Arguments.UsageError(description: "bench-wire needs the workload folder (scripts/bench.sh makes it)")
        }
        let packets = try records(directory + "/rtp.bin")
        let compounds = try records(directory + "/rtcp.bin")
        let units = try records(directory + "/h264.bin")
        // Check once that everything parses, so the timing measures work that succeeds.
        for packet in packets { _ = try RTPPacket.parse(packet) }
        for compound in compounds { _ = try RTCPCompound.parse(compound) }

        let map = HeaderExtensionMap([
            1: HeaderExtensionURI.mid, 2: HeaderExtensionURI.absSendTime,
            3: HeaderExtensionURI.transportWideSequenceNumber
        ])
        var sink = 0
        let rtp = rate(items: packets.count) {
            for bytes in packets {
                if let packet = try? RTPPacket.parse(bytes),
                    let sequence = try? packet.headerExtensionValue(TransportSequenceNumber.self, map: map)
                {
                    sink &+= Int(sequence.value)
                }
            }
        }
        let rtcp = rate(items: compounds.count) {
            for bytes in compounds { sink &+= (try? RTCPCompound.parse(bytes))?.count ?? 0 }
        }
        // The peer is handed NAL units already split out of the Annex-B stream; so is ours.
        let nalUnits = try units.map { try H264AnnexB.nalUnits(in: $0) }
        let h264 = rate(items: units.count) {
            var payloader = H264Payloader(maxPayloadSize: 1200)
            for nals in nalUnits { sink &+= (try? payloader.payload(nalUnits: nals))?.count ?? 0 }
        }
        let result: [String: Any] = [
            "implementation": "sharectl",
            "rtpParsePerSecond": rtp,
            "rtcpParsePerSecond": rtcp,
            "h264PacketizeFramesPerSecond": h264,
            "checksum": sink & 0xFFFF
        ]
        let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        say(String(decoding: data, as: UTF8.self))
    }

    /// Items per second of `work`, repeated until at least a second has passed.
    private static func rate(items: Int, _ work: () -> Void) -> Double {
        let clock = ContinuousClock()
        var rounds = 0
        let start = clock.now
        while true {
            work()
            rounds += 1
            let elapsed = clock.now - start
            if elapsed >= .seconds(1) {
                let seconds = elapsed.inSeconds
                return Double(rounds * items) / seconds
            }
        }
    }

    private static func records(_ path: String) throws -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Arguments.UsageError(description: "cannot read \(path)")
        }
        let bytes = [UInt8](data)
        var out: [[UInt8]] = []
        var offset = 0
        while offset + 4 <= bytes.count {
            let length =
                Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            guard offset + 4 + length <= bytes.count else {
                throw Arguments.UsageError(description: "\(path): truncated record")
            }
            out.append(Array(bytes[offset + 4..<offset + 4 + length]))
            offset += 4 + length
        }
        return out
    }
}
