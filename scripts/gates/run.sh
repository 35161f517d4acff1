#!/usr/bin/env bash
# Runs the gates against real peers inside a fresh network namespace where only loopback exists
# (nothing leaves 127.0.0.0/8). Each suite is one script, scripts/gates/SUITE.py, whose arguments
# name some of its gates and whose last line is "N passed, N failed"; what the suites share is in
# scripts/gates/lib/.
#   scripts/gates/run.sh                    every suite
#   scripts/gates/run.sh transport          one suite
#   scripts/gates/run.sh transport:aiortc-vp8 room_server:bad-token   some gates
# A suite or gate that does not exist is an error (exit 2) before anything runs. A suite passes
# when it exits 0 and its last line says at least one gate passed and none failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${SHARECTL_IN_NETNS:-}" != 1 ]]; then
    exec unshare -n env SHARECTL_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up

# The suites in the order they run; a suite adds itself here.
suites=(transport send links watchdog portal camera client room_server room_call room_reconnect room_layers audio diagnose janus janus_room kiosk scenarios)
# What runs with no arguments (make test): every suite.
default=("${suites[@]}")
(($#)) || set -- "${default[@]}"

declare -A chosen=()
declare -a order=()
for arg in "$@"; do
    suite=${arg%%:*}
    [[ " ${suites[*]} " == *" $suite "* ]] || { echo "gates: no suite '$suite' (have: ${suites[*]})" >&2; exit 2; }
    [[ "$arg" != *: ]] || { echo "gates: '$arg' names no gate" >&2; exit 2; }
    [[ -v chosen[$suite] ]] || { order+=("$suite"); chosen[$suite]=""; }
    [[ "$arg" == *:* ]] && chosen[$suite]+=" ${arg#*:}"
done
((${#order[@]})) || order=("${suites[@]}")

# Each suite knows its gates: every name is checked before any suite runs.
for suite in "${order[@]}"; do
    [[ -n "${chosen[$suite]:-}" ]] || continue
    # shellcheck disable=SC2086
    python3 "scripts/gates/$suite.py" --check ${chosen[$suite]:-} || exit 2
done

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failed=()
declare -a took=()
for suite in "${order[@]}"; do
    echo "== gates: $suite"
    began=$SECONDS
    status=0
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 python3 "scripts/gates/$suite.py" ${chosen[$suite]:-} 2>&1 | tee "$logs/$suite" || status=$?
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/$suite" | tail -n 1 || true)
    if ((status != 0)); then
        failed+=("$suite")
    elif [[ ! "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] || ((BASH_REMATCH[1] == 0 || BASH_REMATCH[2] != 0)); then
        echo "gates: $suite ran no gate that passed (its last line: '$summary')"
        failed+=("$suite")
    fi
    took+=("$suite $((SECONDS - began)) s")
done
# What each suite took, for keeping `make test` inside its time.
echo "gates: time per suite: $(IFS=,; echo "${took[*]}" | sed 's/,/, /g') (all: ${SECONDS} s)"
if ((${#failed[@]})); then
    # Said again at the end, where a log cut to its tail still shows it: each failed gate's line,
    # or the suite's last lines when it stopped without judging (a traceback, a missing tool).
    for suite in "${failed[@]}"; do
        echo "== gates: what failed in $suite"
        grep -E '^FAIL ' "$logs/$suite" || tail -n 15 "$logs/$suite"
    done
    echo "gates: failed in ${failed[*]}"
    exit 1
fi
echo "gates: every suite passed (${order[*]})"
