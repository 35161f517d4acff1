#!/usr/bin/env python3
"""The send pipeline against GStreamer, for `make bench` (figures, not a gate).

`sharectl bench-pipeline` times convert -> encode -> packetize -> SRTP protect on pre-drawn
1920x1080 synthetic frames and writes them to a raw BGRx file; GStreamer's gst-launch-1.0 then
does the same work on the same file with the same encoder libraries (videoconvert, x264enc or
vp8enc, rtph264pay or rtpvp8pay, srtpenc), set up as close to ours as its elements allow. The
rounds alternate ours and GStreamer's so that a busy machine slows both alike; each side's median
round is printed, and every round below it.

GStreamer's time is taken from os.wait4 (wall clock around the process, its rusage for CPU), run
once on all frames and once on the first frame only; the difference is the work on the other
frames, without the process's start, plugin loading and encoder set-up (which ours leaves out of
its timed part too).

    python3 scripts/bench_pipeline.py WORKDIR [--frames 180] [--rounds 5] [--bitrate 2500]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARECTL = os.environ.get("SHARECTL", os.path.join(ROOT, ".build/release/sharectl"))


def run_ours(frames_file, frames, bitrate, codec, write, content="screen"):
    args = [SHARECTL, "bench-pipeline", frames_file, "--frames", str(frames), "--bitrate", str(bitrate), "--codec", codec,
            "--content", content]
    if not write:
        args.append("--no-write")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def gst_pipeline(codec, ours, settings, frames_file, count):
    """The gst-launch-1.0 arguments for `count` frames, and the settings that differ from ours."""
    width, height, fps = settings["width"], settings["height"], settings["frameRate"]
    frame_bytes = width * height * 4
    kbps = settings["bitrateKbps"]
    source = ["filesrc", f"location={frames_file}", f"blocksize={frame_bytes}", f"num-buffers={count}", "!",
              "rawvideoparse", "format=bgrx", f"width={width}", f"height={height}", f"framerate={fps}/1", "!",
              "videoconvert", "!", "video/x-raw,format=I420", "!"]
    # rtp*pay's mtu counts the 12-byte RTP header; ours counts payload bytes only.
    mtu = settings["maxPayloadSize"] + 12
    srtp = ["srtpenc", f"key={settings['srtpKeyHex']}", "rtp-cipher=aes-128-icm", "rtp-auth=hmac-sha1-80",
            "rtcp-cipher=aes-128-icm", "rtcp-auth=hmac-sha1-80", "!", "fakesink", "sync=false"]
    if codec == "H264":
        encoder = ["x264enc", "speed-preset=veryfast", "tune=zerolatency", "pass=cbr", f"bitrate={kbps}",
                   "vbv-buf-capacity=500", f"key-int-max={ours['keyframeInterval']}", "bframes=0",
                   f"threads={ours['threads']}", "sliced-threads=true", "byte-stream=true", "aud=false", "!",
                   "video/x-h264,profile=constrained-baseline", "!",
                   "rtph264pay", f"mtu={mtu}", "config-interval=0", "aggregate-mode=zero-latency", "!"]
        differs = ["ours keeps every packet for NACK (the retransmission history); GStreamer keeps none"]
    else:
        encoder = ["vp8enc", "deadline=1", "end-usage=cbr", f"target-bitrate={kbps * 1000}",
                   f"cpu-used=-{ours['vp8Speed']}", f"threads={ours['threads']}", "error-resilient=default",
                   "lag-in-frames=0", "dropframe-threshold=0", "min-quantizer=2", "max-quantizer=56",
                   "undershoot=100", "overshoot=15", "buffer-initial-size=500", "buffer-optimal-size=600",
                   "buffer-size=1000", "keyframe-mode=auto", f"keyframe-max-dist={ours['keyframeInterval']}",
                   "noise-sensitivity=0", "static-threshold=1", "token-partitions=1", "max-intra-bitrate=900", "!",
                   "rtpvp8pay", f"mtu={mtu}", "picture-id-mode=15-bit", "!"]
        differs = ["vp8enc has no screen-content mode (ours sets VP8E_SET_SCREEN_CONTENT_MODE 1)",
                   "vp8enc's time base is the frame rate (1/30); ours is 90 kHz",
                   "ours keeps every packet for NACK (the retransmission history); GStreamer keeps none"]
    return ["gst-launch-1.0", "-q", *source, *encoder, *srtp], differs


def run_timed(args):
    start = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    error = process.stderr.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"bench: gst-launch-1.0 failed ({code}): {' '.join(args)}\n{error}")
    return wall, usage.ru_utime + usage.ru_stime


def run_gstreamer(codec, ours, settings, frames_file):
    frames = settings["frames"]
    full, differs = gst_pipeline(codec, ours, settings, frames_file, frames)
    one, _ = gst_pipeline(codec, ours, settings, frames_file, 1)
    wall_n, cpu_n = run_timed(full)
    wall_1, cpu_1 = run_timed(one)
    n = frames - 1
    return {"framesPerSecond": n / max(1e-9, wall_n - wall_1), "cpuMillisPerFrame": max(0.0, cpu_n - cpu_1) * 1000 / n,
            "rawFramesPerSecond": frames / wall_n, "rawCpuMillisPerFrame": cpu_n * 1000 / frames,
            "command": " ".join(full), "differs": differs}


def median_by(rows, key):
    ordered = sorted(rows, key=lambda r: r[key])
    return ordered[len(ordered) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("--frames", type=int, default=180)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bitrate", type=int, default=2500)
    args = parser.parse_args()
    frames_file = os.path.join(args.work, "frames.bgrx")

    ours_rows = {"H264": [], "VP8": []}
    gst_rows = {"H264": [], "VP8": []}
    settings = None
    written = False
    for round_number in range(args.rounds):
        for codec in ("H264", "VP8"):
            report = run_ours(frames_file, args.frames, args.bitrate, codec.lower(), write=not written)
            written = True
            settings = report
            ours = report["results"][0]
            ours_rows[codec].append(ours)
            gst_rows[codec].append(run_gstreamer(codec, ours, settings, frames_file))

    print(f"send pipeline, {settings['width']}x{settings['height']} synthetic screen, {settings['frames']} frames, "
          f"{settings['bitrateKbps']} kbit/s, {args.rounds} rounds alternating, each side's median round, as fast as it goes")
    header = f"{'workload':34} {'sharectl fps':>12} {'GStreamer fps':>13} {'ratio':>6}   {'CPU ms/frame: sharectl':>22} {'GStreamer':>9} {'ratio':>6}"
    print(header)
    summary = {}
    for codec, label in (("H264", "x264 veryfast/zerolatency"), ("VP8", "libvpx VP8 realtime")):
        ours = median_by(ours_rows[codec], "framesPerSecond")
        gst = median_by(gst_rows[codec], "framesPerSecond")
        ours_cpu = statistics.median(r["cpuMillisPerFrame"] for r in ours_rows[codec])
        gst_cpu = statistics.median(r["cpuMillisPerFrame"] for r in gst_rows[codec])
        fps_ratio = ours["framesPerSecond"] / gst["framesPerSecond"]
        cpu_ratio = gst_cpu / ours_cpu if ours_cpu else float("nan")
        print(f"{label + ' → SRTP':34} {ours['framesPerSecond']:12.1f} {gst['framesPerSecond']:13.1f} {fps_ratio:5.2f}x"
              f"   {ours_cpu:22.1f} {gst_cpu:9.1f} {cpu_ratio:5.2f}x")
        summary[codec] = {"ours": ours, "gst": gst, "oursCpu": ours_cpu, "gstCpu": gst_cpu}
    print("ratios: fps is ours over GStreamer's; CPU is GStreamer's ms/frame over ours (above 1: ours is ahead on both).")
    print("all rounds (fps ours/GStreamer, CPU ms/frame ours/GStreamer):")
    for codec in ("H264", "VP8"):
        cells = [f"{o['framesPerSecond']:.1f}/{g['framesPerSecond']:.1f} fps {o['cpuMillisPerFrame']:.1f}/{g['cpuMillisPerFrame']:.1f} ms"
                 for o, g in zip(ours_rows[codec], gst_rows[codec])]
        print(f"  {codec:5} " + "; ".join(cells))
    print("sharectl's wall time per frame by stage (median round):")
    for codec in ("H264", "VP8"):
        ours = summary[codec]["ours"]
        split = ours["splitMillisPerFrame"]
        print(f"  {codec:5} convert {split['convert']:.2f} ms, encode {split['encode']:.2f} ms, packetize + RTP "
              f"{split['packetize']:.3f} ms, SRTP protect {split['protect']:.3f} ms; {ours['encodedBytes'] / settings['frames'] / 1000:.1f} kB/frame encoded, "
              f"{ours['packets']} packets, {ours['keyframes']} keyframes, {ours['threads']} encoder threads")
    # VP8's screen-content mode is the one encoder setting vp8enc cannot match: ours with and without
    # it, back to back, twice (a third of the frames each).
    print("  VP8 with and without screen-content mode (as for a camera, as vp8enc runs), back to back:")
    for _ in range(2):
        cells = []
        for content in ("screen", "camera"):
            r = run_ours(frames_file, max(10, args.frames // 3), args.bitrate, "vp8", write=False, content=content)["results"][0]
            cells.append(f"{content} {r['framesPerSecond']:.1f} fps, {r['cpuMillisPerFrame']:.1f} CPU ms/frame")
        print("    " + "; ".join(cells))
    print("settings that differ between the two (as close as the GStreamer elements allow otherwise):")
    for codec in ("H264", "VP8"):
        for line in summary[codec]["gst"]["differs"]:
            print(f"  {codec:5} {line}")
    print("GStreamer commands (timed as all frames minus first frame only, to leave out start-up):")
    for codec in ("H264", "VP8"):
        print(f"  {summary[codec]['gst']['command']}")


if __name__ == "__main__":
    sys.exit(main())
