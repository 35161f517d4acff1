"""`sharectl share --source synthetic --whip …` as the gates run it, with its --stats-json read
through lib.stats (each line checked against the schema)."""
import os
import subprocess

from .paths import ROOT, SHARECTL, WORK
from .stats import last_stats, read_stats


def share(endpoint, name, codec="h264", duration=10, extra=()):
    """Shares the synthetic 1280x720 screen at 30 fps to `endpoint` for `duration` seconds and
    waits for the end. Returns (exit code, the last stats line or None, the output). Its files in
    WORK start with `name`."""
    stats = os.path.join(WORK, f"{name}.share.jsonl")
    log = os.path.join(WORK, f"{name}.share.log")
    args = [SHARECTL, "share", "--source", "synthetic", "--whip", endpoint, "--codec", codec,
            "--size", "1280x720", "--fps", "30", "--duration", str(duration), "--stats-json", stats, *extra]
    with open(log, "w") as out:
        code = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, timeout=duration + 60).returncode
    lines = read_stats(stats, "share") if os.path.exists(stats) else []
    with open(log) as f:
        return code, (lines[-1] if lines else None), f.read()


class Share:
    """`sharectl share` of the synthetic screen to `endpoint`, running, with a pipe to type
    commands on its stdin (`policy detail`, `fault capture-stall`, `stop`)."""

    def __init__(self, name, endpoint, policy, size="1920x1080", duration=60, codec="h264", extra=(),
                 source="synthetic"):
        self.stats_path = os.path.join(WORK, f"{name}.share.jsonl")
        self.log_path = os.path.join(WORK, f"{name}.share.log")
        args = [SHARECTL, "share", "--source", source, "--whip", endpoint, "--codec", codec, "--size", size,
                "--fps", "30", "--policy", policy, "--duration", str(duration), "--stats-json", self.stats_path, *extra]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=open(self.log_path, "w"),
                                        stderr=subprocess.STDOUT, cwd=ROOT, text=True)

    def type(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def lines(self):
        """Every stats line written so far (a last line still being written is left out)."""
        try:
            return read_stats(self.stats_path, "share", skip_broken=True)
        except OSError:
            return []

    def last(self):
        return last_stats(self.stats_path, "share")

    def finish(self):
        """Types `stop` if it still runs and returns its exit code (killed after 30 s)."""
        if self.process.poll() is None:
            self.type("stop")
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        return code

    def log(self):
        with open(self.log_path) as f:
            return f.read()
