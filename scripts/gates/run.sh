#!/usr/bin/env bash
# Runs the gates against real peers inside a fresh network namespace where only loopback exists
# (nothing leaves 127.0.0.0/8). `scripts/gates/run.sh [GATE...]` runs some of them.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${SHARECTL_IN_NETNS:-}" != 1 ]]; then
    exec unshare -n env SHARECTL_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up
exec python3 scripts/gates/transport.py "$@"
