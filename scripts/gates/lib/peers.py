"""The aiortc WHIP endpoint (scripts/peers/aiortc_whip.py) as a peer, and its stats file: one
JSON document with a `sessions` list, what it decoded of each WHIP session."""
import os

from .paths import VENV_PY, WORK, read_json
from .ports import free_port
from .processes import start


def start_aiortc(name, *extra):
    """The aiortc WHIP endpoint on a free port; returns (process, port, stats path). Its files in
    WORK start with `name`."""
    port = free_port()
    stats_path = os.path.join(WORK, f"{name}.endpoint.json")
    process = start([VENV_PY, "scripts/peers/aiortc_whip.py", "--port", str(port), "--stats", stats_path, *extra],
                    os.path.join(WORK, f"{name}.endpoint.log"))
    return process, port, stats_path


def sessions(stats_path):
    """Every WHIP session the endpoint has seen ([] before it wrote any)."""
    return (read_json(stats_path) or {}).get("sessions") or []


def last_session(stats_path):
    """The endpoint's last WHIP session ({} before there is one)."""
    return (sessions(stats_path) or [{}])[-1]
