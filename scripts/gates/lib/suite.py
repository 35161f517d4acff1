"""A suite's gates: which ones the command line names, what each judged, and the suite's last
line, "N passed, N failed".

A suite's arguments name some of its gates (none: all of them). A name the suite does not have is
an error: exit 2, naming the suite's gates. `--check NAME…` only checks the names (run.sh asks
every suite before it runs any). A suite in which no gate ran fails.

A peer the gate started that crashes by itself (Debian's Janus 1.1.2 died by SIGSEGV in most
fresh-clone runs until the sharer's padding stopped leaving it an RTX packet with one byte after
the header; see the README) is said with `peer_crashed()`. A gate that failed after such a crash is said as `AGAIN name: …` with the crash
and what it judged, and runs again with fresh peers, at most twice more (a fresh-clone run once
saw the same gate's Janus crash twice in a row); the last verdict is the one that counts. A gate
that failed without a peer crashing, or whose peer crashed on its third attempt too, fails. An
attempt's files (logs, stats, a scenario's folder) are copied to WORK/NAME.first-attempt/ (and
WORK/NAME.second-attempt/) before the next overwrites them."""
import os
import shutil
import sys
import time
import traceback

from .paths import WORK

results = []
# What peers that crashed during the gate running now said (peer_crashed), and that gate's
# verdicts while it runs (record holds them until the gate is over).
peer_crashes = []
_held = None


def peer_crashed(what):
    """A peer of the gate (a Janus) crashed by itself: `what` says which, how and where."""
    peer_crashes.append(what)
    print(f"  (peer crashed: {what})", flush=True)


class GateSkipped(Exception):
    """The gate could not get as far as judging: recorded as a failure with its reason."""


def record(name, ok, detail):
    """One gate's verdict, printed as `PASS name: detail` or `FAIL name: detail`."""
    ok = bool(ok)
    if _held is not None:
        _held.append((name, ok, detail))
        return
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def record_broken(name, error):
    """A gate that broke instead of judging is a failed gate, with its reason."""
    record(name, False, f"the gate itself failed: {error!r}")


# The folders an attempt's files are kept in; a gate has one attempt more than these.
ATTEMPTS = ("first-attempt", "second-attempt")


def keep_attempt(name, began, attempt):
    """Copies what the gate `name` wrote into WORK since `began` (files at the top, and the files
    of a folder one level down, such as a scenario's) to WORK/NAME.first-attempt/ (the second
    attempt's to NAME.second-attempt/); its path."""
    kept = os.path.join(WORK, f"{name}.{ATTEMPTS[attempt - 1]}")
    shutil.rmtree(kept, ignore_errors=True)
    os.makedirs(kept)
    for entry in os.scandir(WORK):
        try:
            if entry.path == kept or entry.stat().st_mtime < began:
                continue
            if entry.is_file():
                shutil.copy2(entry.path, kept)
            elif entry.is_dir() and not entry.name.endswith(ATTEMPTS):
                for inner in os.scandir(entry.path):
                    if inner.is_file() and inner.stat().st_mtime >= began and inner.stat().st_size < 64 << 20:
                        os.makedirs(os.path.join(kept, entry.name), exist_ok=True)
                        shutil.copy2(inner.path, os.path.join(kept, entry.name))
        except OSError:
            continue  # a file that went meanwhile
    return kept


def choose(suite, names, parts=None, argv=None):
    """The set of gates the command line names, all of `names` when it names none. `parts` maps a
    verdict recorded inside another gate to that gate (audio's mic-silent is judged by mic), so
    naming it runs that gate."""
    args = list(sys.argv[1:] if argv is None else argv)
    check_only = args[:1] == ["--check"]
    if check_only:
        args = args[1:]
    parts = parts or {}
    unknown = [arg for arg in args if arg not in names and arg not in parts]
    if unknown:
        within = "".join(f"; {part} is judged in {gate}" for part, gate in parts.items())
        print(f"{suite}: no gate named {', '.join(unknown)} (its gates: {', '.join(names)}{within})", file=sys.stderr,
              flush=True)
        sys.exit(2)
    if check_only:
        sys.exit(0)
    return {parts.get(arg, arg) for arg in args} or set(names)


def run_gates(gates, chosen):
    """Runs the chosen (name, function) gates in order; one that breaks is recorded as failed and
    the others still run."""
    global _held
    for name, gate in gates:
        if name not in chosen:
            continue
        for attempt in range(1, len(ATTEMPTS) + 2):
            peer_crashes.clear()
            _held = []
            began = time.time()
            try:
                gate()
            except GateSkipped as reason:
                record(name, False, str(reason))
            except Exception as error:
                record_broken(name, error)
                traceback.print_exc(file=sys.stdout)  # where it broke, for whoever reads the log
            held, _held = _held, None
            failed = [detail for _, ok, detail in held if not ok]
            if failed and peer_crashes and attempt <= len(ATTEMPTS):
                kept = keep_attempt(name, began, attempt)
                print(f"AGAIN {name}: a peer crashed ({'; '.join(peer_crashes)}), and the gate judged: "
                      f"{' | '.join(failed)}; its files are kept in {kept}; running it once more", flush=True)
                continue
            for verdict_name, ok, detail in held:
                if not ok and peer_crashes:
                    detail += f" [a peer crashed: {'; '.join(peer_crashes)}]"
                record(verdict_name, ok, detail)
            break


async def run_call_gates(suite, gates, make_call, needed):
    """A suite whose gates run in order on one call (`make_call()`, made once the names are
    checked, and closed with `await call.close()` at the end): the chosen gates and every gate
    before them. One that breaks is recorded as failed;
    the rest still run unless it was one of the first `needed`, which the later gates need."""
    chosen = choose(suite, [name for name, _ in gates])
    last = max(i for i, (n, _) in enumerate(gates) if n in chosen)
    call = make_call()
    try:
        for index, (name, gate) in enumerate(gates[:last + 1]):
            try:
                await gate(call)
            except Exception as error:  # a gate that breaks is a failed gate, with its reason
                record_broken(name, error)
                traceback.print_exc(file=sys.stdout)
                if index < needed:
                    break
    finally:
        await call.close()
    return finish()


def finish():
    """Prints the last line, "N passed, N failed", and returns the suite's exit status: 0 when
    every gate passed, 1 when one failed or none ran."""
    passed = sum(results)
    if not results:
        print("no gate ran", flush=True)
    print(f"{passed} passed, {len(results) - passed} failed", flush=True)
    return 0 if results and passed == len(results) else 1
