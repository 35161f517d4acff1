#!/usr/bin/env bash
# Runs the gates against real peers inside a fresh network namespace where only loopback exists
# (nothing leaves 127.0.0.0/8). Each suite is one script, scripts/gates/SUITE.py, whose arguments
# name some of its gates and whose last line is "N passed, N failed".
#   scripts/gates/run.sh                    every suite
#   scripts/gates/run.sh transport          one suite
#   scripts/gates/run.sh transport:aiortc-vp8 room:bad-token   some gates
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${SHARECTL_IN_NETNS:-}" != 1 ]]; then
    exec unshare -n env SHARECTL_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up

# The suites in the order they run; a suite adds itself here.
suites=(transport send watchdog portal camera room_server room_call audio diagnose scenarios)

declare -A chosen=()
declare -a order=()
for arg in "$@"; do
    suite=${arg%%:*}
    [[ -f scripts/gates/$suite.py ]] || { echo "gates: no suite '$suite' (have: ${suites[*]})" >&2; exit 2; }
    [[ -v chosen[$suite] ]] || { order+=("$suite"); chosen[$suite]=""; }
    [[ "$arg" == *:* ]] && chosen[$suite]+=" ${arg#*:}"
done
((${#order[@]})) || order=("${suites[@]}")

failed=()
for suite in "${order[@]}"; do
    echo "== gates: $suite"
    # shellcheck disable=SC2086
    if ! python3 "scripts/gates/$suite.py" ${chosen[$suite]:-}; then failed+=("$suite"); fi
done
if ((${#failed[@]})); then
    echo "gates: failed in ${failed[*]}"
    exit 1
fi
echo "gates: every suite passed (${order[*]})"
