#!/usr/bin/env bash
# Checks every Swift file git tracks against .swift-format (the toolchain's swift-format: 4-space
# indents, 120 columns). `scripts/format-check.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' | while read -r f; do [ -L "$f" ] || echo "$f"; done)
if [ "${1:-}" = "--fix" ]; then
    swift format format -i --configuration .swift-format "${files[@]}"
    exit 0
fi
if ! swift format lint --strict --configuration .swift-format "${files[@]}"; then
    echo "format: the lines above differ from .swift-format; scripts/format-check.sh --fix rewrites them" >&2
    exit 1
fi
echo "format: ${#files[@]} Swift files match .swift-format"
