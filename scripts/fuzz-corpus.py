#!/usr/bin/env python3
"""scripts/fuzz-corpus.py: writes Fuzz/Corpus/<target>/ from the project's own fixtures: the files under Tests/*/Fixtures,
the byte tables and string literals of the tests, and a few scripts of the cases the receive
tests cover. Run from anywhere; it replaces Fuzz/Corpus. Each file is named after where it came
from; the corpus stays small (at most MAX_PER_TARGET files a target, each under MAX_BYTES)."""
import hashlib
import os
import re
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")
MAX_PER_TARGET = 40
MAX_BYTES = 16384
corpus = {}


def add(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    if not data or len(data) > MAX_BYTES:
        return
    files = corpus.setdefault(target, {})
    if data in files.values() or len(files) >= MAX_PER_TARGET:
        return
    # Named by kind and content (no running number), so that a new test literal adds a file and
    # renames none.
    name = re.sub(r"-\d+$", "", re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:60]) + "-" + hashlib.sha1(data).hexdigest()[:8]
    files[name] = data


def read(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def swift(path):
    return read(path).decode()


def byte_tables(text):
    """`[UInt8] = [ 0x80, … ]` tables (comments dropped)."""
    for match in re.finditer(r"\[UInt8\]\s*=\s*\[(.*?)\]", text, re.S):
        body = re.sub(r"//[^\n]*", "", match.group(1))
        values = re.findall(r"0x([0-9A-Fa-f]{1,2})\b|\b(\d{1,3})\b", body)
        data = bytes(int(h, 16) if h else int(d) & 0xFF for h, d in values)
        if len(data) >= 4:
            yield data


def string_literals(text):
    """Swift string literals: raw `#"…"#` and plain `"…"` with the common escapes."""
    for match in re.finditer(r'#"(.*?)"#', text):
        yield match.group(1)
    for match in re.finditer(r'(?<!#)"((?:[^"\\\n]|\\.)*)"', text):
        value = match.group(1)
        for escape, char in (("\\r", "\r"), ("\\n", "\n"), ("\\t", "\t"), ('\\"', '"'), ("\\\\", "\\")):
            value = value.replace(escape, char)
        yield value


def sdp_fixtures():
    folder = "Tests/SDPWireTests/Fixtures"
    return {name: swift(os.path.join(folder, name)) for name in sorted(os.listdir(os.path.join(ROOT, folder)))
            if name.endswith(".sdp")}


# Wire targets: the byte tables of the RTP/RTCP tests and the RTP fixtures.
rtp_tests = "Tests/RTPWireTests"
for name in sorted(os.listdir(os.path.join(ROOT, rtp_tests))):
    if not name.endswith(".swift"):
        continue
    text = swift(os.path.join(rtp_tests, name))
    for index, data in enumerate(byte_tables(text)):
        tag = f"{name[:-6]}-{index}"
        add("FuzzByteReader", tag, data)
        if name.startswith("RTCP"):
            add("FuzzRTCP", tag, data)
            # RTCPReceiver's script: wait 100 ms, then the compound.
            if len(data) < 256:
                add("FuzzRTCPReceiver", tag, struct.pack(">HB", 100, len(data)) + data)
        elif name.startswith(("RTP", "RTX")):
            add("FuzzRTP", tag, data)
        elif name.startswith(("H264", "VP8", "Opus")):
            codec = {"H264": 0, "VP8": 1, "Opus": 2}[re.match(r"H264|VP8|Opus", name).group(0)]
            # FuzzDepayloaders: codec byte, then one packet (marker, +1) with the table as payload.
            add("FuzzDepayloaders", tag, bytes([codec, 0x01]) + struct.pack(">H", len(data)) + data)
for name in sorted(os.listdir(os.path.join(ROOT, "Tests/RTPWireTests/Fixtures/fuzz-rtp"))):
    add("FuzzRTP", name, read(f"Tests/RTPWireTests/Fixtures/fuzz-rtp/{name}"))

# SDP: Chromium's descriptions, the trickle candidates, the SDP fuzz regressions.
for name, text in sdp_fixtures().items():
    add("FuzzSDP", name, text)
for name in sorted(os.listdir(os.path.join(ROOT, "Tests/SDPWireTests/Fixtures/fuzz"))):
    add("FuzzSDP", name, read(f"Tests/SDPWireTests/Fixtures/fuzz/{name}"))
trickle = swift("Tests/SDPWireTests/Fixtures/chromium-trickle-candidates.txt")
add("FuzzSDP", "chromium-trickle-candidates", trickle)

# ICE candidate lines: Chromium's, the SDP fixtures', and the ICE tests' own.
candidates = [line.strip() for line in trickle.splitlines() if "candidate:" in line]
for text in sdp_fixtures().values():
    candidates += [line.strip() for line in text.splitlines() if line.startswith("a=candidate:")]
for path in ("Tests/CallsClientTests/ICEParsingTests.swift", "Tests/CallsClientTests/ICEAgentTests.swift",
             "Tests/SDPWireTests/AttributeTableTests.swift", "Tests/SDPWireTests/MalformedInputTests.swift"):
    candidates += [s for s in string_literals(swift(path)) if "candidate:" in s or " typ " in s]
for index, line in enumerate(candidates):
    add("FuzzICECandidate", f"candidate-{index}", line)

# Signalling (mode byte first): fragments, Link values, Retry-After values, Location/base pairs.
signalling = [swift(p) for p in ("Tests/CallsClientTests/WHIPWireTests.swift", "Tests/CallsClientTests/WHIPClientTests.swift",
                                 "Tests/CallsClientTests/WHIPShareICEServersTests.swift")]
literals = [s for text in signalling for s in string_literals(text)]
fragment_lines = [s for s in literals if s.startswith(("a=ice-ufrag", "a=ice-pwd", "m=", "a=mid", "a=candidate", "a=end-of"))]
for index, literal in enumerate(s for s in literals if "a=ice-ufrag" in s and "\n" in s):
    add("FuzzSignalling", f"fragment-{index}", b"\x00" + literal.encode())
if fragment_lines:
    add("FuzzSignalling", "fragment-lines", b"\x00" + "\r\n".join(fragment_lines).encode() + b"\r\n")
for index, literal in enumerate(s for s in literals if s.lstrip().startswith("<") and ">" in s):
    add("FuzzSignalling", f"link-{index}", b"\x01" + literal.encode())
for index, literal in enumerate(s for s in literals if re.fullmatch(r"\s*\d+\s*|\w{3,9}, .*GMT|\w{3} \w{3} .*\d{4}", s)):
    add("FuzzSignalling", f"retry-after-{index}", b"\x02" + literal.encode())
for index, (location, base) in enumerate(re.findall(r'HTTPURL\.resolve\("([^"]*)", against: (?:base|"([^"]*)")', signalling[0])):
    add("FuzzSignalling", f"location-{index}", b"\x03" + location.encode() + b"\nhttp://127.0.0.1:8080/app/endpoint")

# Room protocol: the JSON the server and client tests send; FuzzRoom takes them as one script.
room_json = []
for path in ("Tests/CallsServerTests/ClientMessageTests.swift", "Tests/CallsServerTests/RoomTests.swift",
             "Tests/CallsClientTests/RoomCallPartsTests.swift", "Tests/CallsClientTests/CallSessionTests.swift"):
    room_json += [s for s in string_literals(swift(path)) if s.startswith("{") and '"type"' in s]
for index, message in enumerate(room_json):
    add("FuzzRoomMessage", f"room-{index}", message)
for name in sorted(os.listdir(os.path.join(ROOT, "Fuzz/Corpus/FuzzRoom"))) if os.path.isdir(os.path.join(ROOT, "Fuzz/Corpus/FuzzRoom")) else []:
    if name.startswith("script"):
        add("FuzzRoom", re.sub(r"(-[0-9a-f]{8})+$", "", name), read(f"Fuzz/Corpus/FuzzRoom/{name}"))
for index in range(0, len(room_json), 6):
    add("FuzzRoom", f"tests-{index}", "\n".join(room_json[index:index + 6]))

# Negotiation (mode byte first): fingerprints, and Chromium's offers with answers.
fixtures = sdp_fixtures()
for name, text in fixtures.items():
    for line in text.splitlines():
        if line.startswith("a=fingerprint:"):
            add("FuzzNegotiation", f"fingerprint-{name}", b"\x00" + line[len("a=fingerprint:"):].strip().encode())
offers = [t for n, t in fixtures.items() if "offer" in n]
answers = [t for n, t in fixtures.items() if "answer" in n]
for i, offer in enumerate(offers):
    for j, answer in enumerate(answers):
        for mode in (1, 2):
            add("FuzzNegotiation", f"offer{i}-answer{j}-mode{mode}", bytes([mode]) + (offer + "\n--\n" + answer).encode())


# The receive scripts (see the targets' headers): the cases the unit tests cover.
def video_packet(delta, ms, start=False, key=False, marker=False, switch=False, new_ts=False):
    op = (0x04 if start else 0) | (0x08 if key else 0) | (0x10 if marker else 0) | (0x40 if switch else 0) | (0x80 if new_ts else 0)
    return bytes([op, delta & 0xFF, ms])


def video_frame(first_delta, key, ms=33, packets=3, order=None, switch=False):
    steps = []
    for i in range(packets):
        steps.append(video_packet(first_delta if i == 0 else 1, ms if i == 0 else 1, start=i == 0, key=key and i == 0,
                                  marker=i == packets - 1, switch=switch and i == 0, new_ts=i == 0))
    if order:
        steps = [steps[i] for i in order]
    return b"".join(steps)


release = bytes([0x02, 0x00, 5])
in_order = video_frame(1, True) + release + b"".join(video_frame(1, False) + release for _ in range(8))
add("FuzzVideoReceive", "in-order", in_order)
add("FuzzVideoReceive", "reordered", video_frame(1, True) + release + video_frame(1, False, order=[0, 2, 1]) + release * 3)
add("FuzzVideoReceive", "lost-then-keyframe", video_frame(1, True) + release + video_frame(2, False) + release * 40
    + video_frame(1, False) + release + video_frame(1, True) + release)
add("FuzzVideoReceive", "nack-retransmitted", video_frame(1, True) + release + video_packet(3, 5, start=True, new_ts=True)
    + release + video_packet(-2 & 0xFF, 20) + video_packet(1, 1, marker=True) + release)
add("FuzzVideoReceive", "ssrc-switch", video_frame(1, True) + release + video_frame(1, False) + video_frame(100, True, switch=True)
    + release + video_frame(1, False) + release)
add("FuzzVideoReceive", "restart-jump", video_frame(1, True) + release + video_frame(0x7F, True) * 12 + release)
add("FuzzVideoReceive", "rtt-change", bytes([0x03, 200, 0]) + video_frame(1, True) + video_frame(3, False) + release * 20)


def stream_packet(delta, ms, choice=0, twcc=1, mid=None, jump=False):
    op = (choice << 4) | (0x04 if jump else 0) | (0x80 if mid is not None else 0)
    b3 = (twcc & 7) | ((mid or 0) << 4)
    return bytes([op, delta & 0xFF, ms, b3])


tick = bytes([0x03, 0x00, 8 * 6, 0x00])
add("FuzzStreamReceive", "audio-in-order", b"\x09" + b"".join(stream_packet(1, 20) for _ in range(10)) + tick * 4)
add("FuzzStreamReceive", "audio-reorder-loss", b"\x08" + b"".join(stream_packet(d, 20) for d in (1, 2, -1, 3, 1, 1, -4, 5)) + tick * 3)
add("FuzzStreamReceive", "mid-routing", b"\x0A" + b"".join(stream_packet(1, 5, choice=c, mid=c % 3) for c in range(8)) + tick)
add("FuzzStreamReceive", "renegotiated", b"\x1F" + b"".join(stream_packet(1, 5, choice=c) for c in range(8)) + tick)
add("FuzzStreamReceive", "twcc-gaps", b"\x00" + b"".join(stream_packet(1, 3, twcc=t) for t in (1, 1, 5, 0, 7, 1)) + tick * 2
    + bytes([0x00, 1, 250, 0x08]) + tick)
add("FuzzStreamReceive", "underrun", b"\x01" + b"".join(stream_packet(1, 20) for _ in range(4)) + bytes([0x03, 0, 255, 0])
    + b"".join(stream_packet(1, 20) for _ in range(6)) + tick * 2)

# RTCPReceiver: the feedback it acts on, addressed to the sender the target sets up (video SSRC
# 0x1234, RTX 0x5678, audio 0xA0; a sender report sent with compact NTP 0x00010000), in the
# layouts of the RTCP tests' tables.
def rtcp(first, pt, body):
    return bytes([first, pt]) + struct.pack(">H", len(body) // 4) + body


def step(ms, *packets):
    data = b"".join(packets)
    return struct.pack(">HB", ms, len(data)) + data


pli = rtcp(0x81, 206, struct.pack(">II", 1, 0x1234))
fir = rtcp(0x84, 206, struct.pack(">II", 1, 0) + struct.pack(">IB3x", 0x1234, 7))
nack = rtcp(0x81, 205, struct.pack(">IIHH", 1, 0x1234, 0xFF10, 0xFFFF))
rr = rtcp(0x81, 201, struct.pack(">I", 1) + struct.pack(">IIIIII", 0x1234, 0x10 << 24 | 5, 0x1_FF40, 30, 0x0001_0000, 6554))
remb = rtcp(0x8F, 206, struct.pack(">II", 1, 0) + b"REMB" + bytes([1, 0x0B, 0xD0, 0x00]) + struct.pack(">I", 0x1234))
add("FuzzRTCPReceiver", "pli-fir-spacing", step(0, pli) + step(100, pli) + step(250, fir) + step(0, fir) + step(400, pli))
add("FuzzRTCPReceiver", "nack-answered", step(10, nack) + step(10, nack))
add("FuzzRTCPReceiver", "rr-rtt-remb", step(20, rr) + step(20, rr, remb))
add("FuzzRTCPReceiver", "compound", step(5, rr, pli, nack) + step(300, rr, fir))

if __name__ == "__main__":
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    for target, files in sorted(corpus.items()):
        os.makedirs(os.path.join(CORPUS, target))
        for name, data in files.items():
            with open(os.path.join(CORPUS, target, name), "wb") as f:
                f.write(data)
        print(f"{target}: {len(files)} files, {sum(map(len, files.values()))} bytes")
