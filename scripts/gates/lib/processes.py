"""Processes the gates start: each in a session of its own, so stopping it stops its children."""
import contextlib
import os
import signal
import subprocess

from .paths import ROOT


def start(args, log, **options):
    """Starts `args` in ROOT (or `cwd`), in a session of its own, stdout and stderr into the file
    `log`."""
    cwd = options.pop("cwd", ROOT)
    return subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True,
                            **options)


def stop(process, sig=signal.SIGTERM, grace=5.0):
    """Sends `sig` to the process's group, then SIGKILL if it has not gone within `grace` seconds.
    Nothing happens to a process that is None or has ended."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
        process.wait(timeout=grace)
        return
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
