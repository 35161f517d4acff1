#!/usr/bin/env python3
"""The peer half of `make bench`: writes the shared workload and times aiortc on it.

    .venv/bin/python scripts/bench_peer.py generate DIR     # rtp.bin, rtcp.bin, h264.bin into DIR
    .venv/bin/python scripts/bench_peer.py measure DIR      # aiortc's rates on them, as JSON

Files are sequences of records, each a 4-byte big-endian length and that many bytes: RTP packets
with one-byte header extensions (abs-send-time, transport-wide sequence, mid) and 1,100-byte
payloads; RTCP compounds (SR + SDES, and RR + NACK + PLI); H.264 access units (Annex B, constrained
baseline, 1280×720) encoded by PyAV's libx264 from a moving test picture with a patch of noise.
"""
import json
import os
import random
import struct
import sys
import time

from aiortc import rtp
from aiortc.codecs.h264 import H264Encoder
from aiortc.rtcrtpparameters import RTCRtpHeaderExtensionParameters, RTCRtpParameters

URIS = [
    (1, "urn:ietf:params:rtp-hdrext:sdes:mid"),
    (2, "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"),
    (3, "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"),
]


def extensions_map():
    m = rtp.HeaderExtensionsMap()
    m.configure(RTCRtpParameters(headerExtensions=[RTCRtpHeaderExtensionParameters(id=i, uri=u) for i, u in URIS]))
    return m


def write_records(path, records):
    with open(path, "wb") as f:
        for r in records:
            f.write(struct.pack(">I", len(r)))
            f.write(r)


def read_records(path):
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def generate(directory):
    os.makedirs(directory, exist_ok=True)
    m = extensions_map()
    packets = []
    for i in range(10000):
        p = rtp.RtpPacket(payload_type=96, marker=int(i % 10 == 9), sequence_number=i & 0xFFFF,
                          timestamp=(i // 10) * 3000, ssrc=0x1234ABCD, payload=bytes((i + j) & 0xFF for j in range(1100)))
        p.extensions.mid = "0"
        p.extensions.abs_send_time = (i * 37) & 0xFFFFFF
        p.extensions.transport_sequence_number = i & 0xFFFF
        packets.append(p.serialize(m))
    write_records(os.path.join(directory, "rtp.bin"), packets)

    compounds = []
    for i in range(10000):
        sr = rtp.RtcpSrPacket(ssrc=0x1234ABCD, sender_info=rtp.RtcpSenderInfo(
            ntp_timestamp=(3_900_000_000 + i) << 32, rtp_timestamp=i * 3000, packet_count=i, octet_count=i * 1100))
        sr.reports.append(rtp.RtcpReceiverInfo(ssrc=0x55667788, fraction_lost=3, packets_lost=i, highest_sequence=i,
                                               jitter=12, lsr=i, dlsr=100))
        sdes = rtp.RtcpSdesPacket(chunks=[rtp.RtcpSourceInfo(ssrc=0x1234ABCD, items=[(1, b"sharectl-bench")])])
        rr = rtp.RtcpRrPacket(ssrc=0x55667788, reports=[rtp.RtcpReceiverInfo(
            ssrc=0x1234ABCD, fraction_lost=0, packets_lost=0, highest_sequence=i, jitter=5, lsr=0, dlsr=0)])
        nack = rtp.RtcpRtpfbPacket(fmt=rtp.RTCP_RTPFB_NACK, ssrc=0x55667788, media_ssrc=0x1234ABCD)
        nack.lost = [i & 0xFFFF, (i + 2) & 0xFFFF, (i + 5) & 0xFFFF]
        pli = rtp.RtcpPsfbPacket(fmt=rtp.RTCP_PSFB_PLI, ssrc=0x55667788, media_ssrc=0x1234ABCD)
        compounds.append(bytes(sr) + bytes(sdes) if i % 2 == 0 else bytes(rr) + bytes(nack) + bytes(pli))
    write_records(os.path.join(directory, "rtcp.bin"), compounds)

    import av
    codec = av.CodecContext.create("libx264", "w")
    codec.width, codec.height, codec.pix_fmt = 1280, 720, "yuv420p"
    codec.framerate = 30
    codec.options = {"profile": "baseline", "tune": "zerolatency", "preset": "veryfast", "g": "60"}
    units = []
    for i in range(120):
        frame = av.VideoFrame(1280, 720, "yuv420p")
        row = bytes((x + i * 8) % 256 for x in range(frame.planes[0].line_size))
        bar = (i * 5) % 700
        noise = random.Random(i)  # a moving patch of detail, so frames need FU-A fragments
        frame.planes[0].update(b"".join(
            row[:bar] + noise.randbytes(256) + row[bar + 256:] if 200 <= r < 456 else row for r in range(720)))
        for plane in frame.planes[1:]:
            plane.update(b"\x80" * plane.buffer_size)
        frame.pts = i
        for packet in codec.encode(frame):
            units.append(bytes(packet))
    for packet in codec.encode(None):
        units.append(bytes(packet))
    write_records(os.path.join(directory, "h264.bin"), units)
    print(f"bench: workload in {directory}: {len(packets)} RTP packets, {len(compounds)} RTCP compounds, "
          f"{len(units)} H.264 access units", file=sys.stderr)


def rate(work, items, minimum=1.0):
    """Items per second of work(), repeated until at least `minimum` seconds have passed."""
    rounds, start = 0, time.perf_counter()
    while True:
        work()
        rounds += 1
        elapsed = time.perf_counter() - start
        if elapsed >= minimum:
            return rounds * items / elapsed


def split_nal_units(unit):
    nals, i, n = [], 0, len(unit)
    starts = []
    while i + 3 <= n:
        if unit[i] == 0 and unit[i + 1] == 0 and unit[i + 2] == 1:
            starts.append(i + 3)
            i += 3
        else:
            i += 1
    for k, s in enumerate(starts):
        end = starts[k + 1] - 3 if k + 1 < len(starts) else n
        while end > s and unit[end - 1] == 0:
            end -= 1
        nals.append(unit[s:end])
    return nals


def measure(directory):
    m = extensions_map()
    packets = read_records(os.path.join(directory, "rtp.bin"))
    compounds = read_records(os.path.join(directory, "rtcp.bin"))
    units = read_records(os.path.join(directory, "h264.bin"))
    nal_lists = [split_nal_units(u) for u in units]

    def parse_rtp():
        for p in packets:
            rtp.RtpPacket.parse(p, m)

    def parse_rtcp():
        for c in compounds:
            rtp.RtcpPacket.parse(c)

    def packetize_h264():
        for nals in nal_lists:
            H264Encoder._packetize(iter(nals))

    print(json.dumps({
        "implementation": "aiortc " + __import__("aiortc").__version__,
        "rtpParsePerSecond": rate(parse_rtp, len(packets)),
        "rtcpParsePerSecond": rate(parse_rtcp, len(compounds)),
        "h264PacketizeFramesPerSecond": rate(packetize_h264, len(units)),
    }))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("generate", "measure"):
        sys.exit(__doc__)
    (generate if sys.argv[1] == "generate" else measure)(sys.argv[2])
