"""Where things are: the checkout, the sharectl binary under test, the project's virtualenv, and
the gates' work directory (GATE_WORK, /tmp/sharectl-gates unless set), made on import."""
import importlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SHARECTL = os.environ.get("SHARECTL", os.path.join(ROOT, ".build/debug/sharectl"))
VENV_PY = os.path.join(ROOT, ".venv/bin/python")
WORK = os.environ.get("GATE_WORK", "/tmp/sharectl-gates")
os.makedirs(WORK, exist_ok=True)


def read_json(path):
    """The JSON document in `path`, or None while it is missing or half written."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rerun_in_venv_without(module):
    """Runs this script again with the project's .venv python when `module` cannot be imported
    here: run.sh uses the system python, and aiohttp lives in the virtualenv."""
    try:
        importlib.import_module(module)
    except ImportError:
        if os.path.exists(VENV_PY) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(ROOT, ".venv")):
            os.execv(VENV_PY, [VENV_PY, *sys.argv])
        raise
