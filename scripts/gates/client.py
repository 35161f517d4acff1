#!/usr/bin/env python3
"""Browser-client gates: the browser's own modules, tested in headless Chromium. The last line is
"N passed, N failed".

  ladder   The browser sharer's receiver-driven ladder (Sources/CallsServer/Client/ladder.js) on
           the marble cases the Swift ladder is held to (Tests/Ladder/receiver-ladder-cases.json):
           every run's steps with their reasons, notices, marbles and final rungs must match. A
           copy of the module whose rebuild comes after 5 s instead of 6 must fail the same cases
           (the test can tell a ladder that differs).
  audio-paths  The browser's who-hears-whom rules and speaking indicator
           (Sources/CallsServer/Client/audiopaths.js) on the cases sharectl's AudioPathRules and
           SpeakingIndicator are held to (Tests/Ladder/audio-path-cases.json): every marble must
           match. A copy whose "No sound from" comes after 4 s instead of 5 must fail some.
  layer-rule  The layer choice of the browser client in a room on Janus
           (Sources/CallsServer/Client/layerrule.js) on the marble cases sharectl's
           SubscriberLayerRule is held to (Tests/Ladder/subscriber-layer-cases.json): the layer
           asked for after every second must match. A copy whose step up comes after 6 s instead of
           8 must fail some.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from lib.paths import ROOT, WORK
from lib.suite import choose, finish, record, run_gates

LADDER = os.path.join(ROOT, "Sources", "CallsServer", "Client", "ladder.js")
CASES = os.path.join(ROOT, "Tests", "Ladder", "receiver-ladder-cases.json")
TEST = os.path.join(ROOT, "Tests", "Ladder", "ladder-test.js")


AUDIO_PATHS = os.path.join(ROOT, "Sources", "CallsServer", "Client", "audiopaths.js")
AUDIO_CASES = os.path.join(ROOT, "Tests", "Ladder", "audio-path-cases.json")
AUDIO_TEST = os.path.join(ROOT, "Tests", "Ladder", "audio-paths-test.js")


def run_in_chromium(ladder_source, cases_path=CASES, test_path=TEST, runner="runLadderCases"):
    """Runs the cases on the module `ladder_source` in headless Chromium; the page's verdict as a dict."""
    with open(cases_path) as f:
        cases = f.read()
    with open(test_path) as f:
        test = f.read()
    # </script> cannot occur in the cases; the JSON goes in as a script of its own type.
    page = ("<!doctype html><meta charset=utf-8><pre id=result>not run</pre>"
            f"<script type=application/json id=cases>{cases}</script>"
            f"<script>{ladder_source}</script><script>{test}</script>"
            "<script>try { document.getElementById('result').textContent = JSON.stringify("
            f"{runner}(JSON.parse(document.getElementById('cases').textContent))); }}"
            " catch (e) { document.getElementById('result').textContent = JSON.stringify({error: String(e)}); }"
            "</script>")
    directory = tempfile.mkdtemp(prefix="client-ladder.", dir=WORK)
    path = os.path.join(directory, "ladder.html")
    with open(path, "w") as f:
        f.write(page)
    result = subprocess.run(
        ["chromium", "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu",
         f"--user-data-dir={os.path.join(directory, 'profile')}", "--dump-dom", f"file://{path}"],
        capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="result">(.*?)</pre>', result.stdout, re.S)
    if not found:
        return {"error": f"no result in the page (chromium exit {result.returncode}): {result.stderr[-500:]}"}
    text = found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    try:
        return json.loads(text)
    except ValueError:
        return {"error": f"the page said: {text[:300]}"}


def held_to_cases(module_path, run, constant, changed, min_cases, min_broken):
    """Runs the cases on the module at `module_path` in Chromium, and on a copy with `constant`
    replaced by `changed` (the test must tell that copy apart: at least `min_broken` runs fail).
    (ok, verdict, the copy's verdict)."""
    with open(module_path) as f:
        source = f.read()
    verdict = run_in_chromium(source, **run)
    mutated = source.replace(constant, changed)
    broken = run_in_chromium(mutated, **run) if mutated != source else {"error": "the constant to change was not found"}
    ok = ("error" not in verdict and verdict.get("cases", 0) >= min_cases
          and verdict.get("runs") == verdict.get("passed") and not verdict.get("failed", [])
          and "error" not in broken and len(broken.get("failed", [])) >= min_broken)
    return ok, verdict, broken


def said(result):
    return f"; {result['error']}" if "error" in result else ""


def ladder():
    ok, verdict, broken = held_to_cases(LADDER, {}, "const REBUILD_AFTER_MS = 6000;",
                                        "const REBUILD_AFTER_MS = 5000;", 15, 5)
    record("ladder", ok,
           f"{verdict.get('passed')} of {verdict.get('runs')} runs of {verdict.get('cases')} cases match the "
           f"Swift ladder in Chromium{said(verdict)}; with the rebuild after 5 s, "
           f"{len(broken.get('failed', []))} runs differ{said(broken)}")
    for failure in verdict.get("failed", [])[:3]:
        print("  ", json.dumps(failure)[:1500])


def audio_paths():
    run = dict(cases_path=AUDIO_CASES, test_path=AUDIO_TEST, runner="runAudioPathCases")
    ok, verdict, broken = held_to_cases(AUDIO_PATHS, run, "const NO_SOUND_AFTER_MS = 5000;",
                                        "const NO_SOUND_AFTER_MS = 4000;", 20, 2)
    record("audio-paths", ok,
           f"{verdict.get('passed')} of {verdict.get('cases')} cases match sharectl's rules in Chromium"
           f"{said(verdict)}; with 'No sound from' after 4 s, {len(broken.get('failed', []))} differ{said(broken)}")
    for failure in verdict.get("failed", [])[:3]:
        print("  ", json.dumps(failure)[:800])


LAYER_RULE = os.path.join(ROOT, "Sources", "CallsServer", "Client", "layerrule.js")
LAYER_CASES = os.path.join(ROOT, "Tests", "Ladder", "subscriber-layer-cases.json")
LAYER_TEST = os.path.join(ROOT, "Tests", "Ladder", "layer-rule-test.js")


def layer_rule():
    run = dict(cases_path=LAYER_CASES, test_path=LAYER_TEST, runner="runLayerCases")
    ok, verdict, broken = held_to_cases(LAYER_RULE, run, "const LAYER_FIRST_UP_HOLD_MS = 8000;",
                                        "const LAYER_FIRST_UP_HOLD_MS = 6000;", 12, 2)
    record("layer-rule", ok,
           f"{verdict.get('passed')} of {verdict.get('cases')} cases match SubscriberLayerRule in Chromium"
           f"{said(verdict)}; with the step up after 6 s, {len(broken.get('failed', []))} differ{said(broken)}")
    for failure in verdict.get("failed", [])[:3]:
        print("  ", json.dumps(failure)[:800])


GATES = [("ladder", ladder), ("audio-paths", audio_paths), ("layer-rule", layer_rule)]


def main():
    chosen = choose("client", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
