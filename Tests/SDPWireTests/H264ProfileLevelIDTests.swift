import RTPWire
@testable import SDPWire
import Testing

@Suite struct H264ProfileLevelIDTests {
    @Test func profiles() {
        let table: [(hex: String, profile: H264Profile)] = [
            ("42e01f", .constrainedBaseline),  // 0x42 Baseline, set0+set1+set2: Chromium's CB 3.1
            ("42c01f", .constrainedBaseline),  // set0+set1
            ("42401f", .constrainedBaseline),  // set1 alone is enough
            ("42001f", .baseline),  // no set1: plain Baseline
            ("4d001f", .main),  // 0x4d Main
            ("4d801f", .constrainedBaseline),  // Main with set0: also Baseline-conformant
            ("58c01f", .constrainedBaseline),  // Extended with set0+set1
            ("58801f", .baseline),
            ("58001f", .extended),
            ("640c1f", .constrainedHigh),  // High with set4+set5
            ("64001f", .high),  // never chosen
            ("f4001f", .other(profileIDC: 0xF4))  // High 4:4:4 Predictive (Chromium's receive side)
        ]
        for row in table {
            let id = H264ProfileLevelID(hex: row.hex)
            #expect(id?.profile == row.profile, "\(row.hex)")
            #expect(id?.hex == row.hex)
            #expect(id?.levelIDC == 0x1F)
        }
        #expect(H264ProfileLevelID(hex: "42E01F") == .constrainedBaseline31)
        for bad in ["", "42e01", "42e01f0", "42e0zz", "+2e01f", "４２e01f"] {
            #expect(H264ProfileLevelID(hex: bad) == nil, "\(bad)")
        }
        #expect(H264ProfileLevelID.absent.profile == .baseline)
    }

    @Test func codecMatchRules() {
        let caps = CodecCapabilities.sharectl
        func h264(_ fmtp: String?) -> PayloadFormat {
            PayloadFormat(
                payloadType: 100, rtpMap: RTPMap(encodingName: "H264", clockRate: 90_000),
                parameters: fmtp.map { FormatParameter.parseList(Substring($0)) })
        }
        let table: [(payload: PayloadFormat, codec: MediaCodec?)] = [
            (h264("level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"), .h264),
            (h264("packetization-mode=1;profile-level-id=42c01f"), .h264),
            (h264("packetization-mode=1;profile-level-id=4d001f"), .h264),  // Main is taken
            (h264("packetization-mode=0;profile-level-id=42e01f"), nil),  // single NAL mode only
            (h264("profile-level-id=42e01f"), nil),  // absent mode means 0
            (h264("packetization-mode=1;profile-level-id=42001f"), nil),  // plain Baseline
            (h264("packetization-mode=1;profile-level-id=64001f"), nil),  // never High
            (h264("packetization-mode=1;profile-level-id=f4001f"), nil),
            (h264("packetization-mode=1"), nil),  // absent id: Baseline 1.0
            (h264("packetization-mode=1;profile-level-id=xyz"), nil),
            (PayloadFormat(payloadType: 96, rtpMap: RTPMap(encodingName: "VP8", clockRate: 90_000)), .vp8),
            (PayloadFormat(payloadType: 96, rtpMap: RTPMap(encodingName: "vp8", clockRate: 90_000)), .vp8),
            (PayloadFormat(payloadType: 98, rtpMap: RTPMap(encodingName: "VP9", clockRate: 90_000)), nil),
            (
                PayloadFormat(payloadType: 111, rtpMap: RTPMap(encodingName: "opus", clockRate: 48_000, channels: 2)),
                .opus
            ),
            (PayloadFormat(payloadType: 111, rtpMap: RTPMap(encodingName: "opus", clockRate: 48_000)), nil),
            (PayloadFormat(payloadType: 0, rtpMap: RTPMap(encodingName: "PCMU", clockRate: 8_000)), nil),
            (PayloadFormat(payloadType: 0), nil)
        ]
        for row in table {
            #expect(caps.codec(of: row.payload) == row.codec, "\(row.payload)")
        }
        // Constrained Baseline ranks before Main, H.264 before VP8.
        let cb = caps.rank(of: table[0].payload), main = caps.rank(of: table[2].payload),
            vp8 = caps.rank(of: table[10].payload)
        #expect(cb != nil && main != nil && vp8 != nil)
        #expect(cb! < main! && main! < vp8!)
        var vp8First = caps
        vp8First.videoCodecs = [.vp8, .h264]
        #expect(vp8First.rank(of: table[10].payload)! < vp8First.rank(of: table[0].payload)!)
        // A receiver takes plain Baseline too (Janus offers it for Chromium's OpenH264), ranked
        // after the profiles a sender takes; High stays out.
        let receiving = CodecCapabilities.receiving
        let baseline = receiving.rank(of: table[5].payload)
        #expect(receiving.codec(of: table[5].payload) == .h264)
        #expect(baseline != nil && receiving.rank(of: table[2].payload)! < baseline!)
        #expect(receiving.codec(of: table[6].payload) == nil)
        #expect(caps.codec(of: table[5].payload) == nil)
    }
}
