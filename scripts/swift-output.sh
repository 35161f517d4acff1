#!/usr/bin/env bash
# Filters `swift build` output: passes compiler diagnostics and the summary through, drops progress
# lines and SwiftPM's note about pkg-config flags it does not forward (-pthread, -D_REENTRANT from
# GLib and PipeWire; -DX264_API_IMPORTS, which only matters on Windows) and gold's notes on the
# AddressSanitizer runtime's local symbols. The Makefile runs with
# pipefail, so a failed build fails the recipe; this script also fails when the compiler warned:
# the project builds without warnings.
set -uo pipefail
status=0; warned=0
while IFS= read -r line; do
    # SwiftPM's note that another build holds the lock has no newline after it.
    line=${line#Another instance of SwiftPM*finished execution...}
    case "$line" in
        "warning: prohibited flag(s):"*) continue ;;
        # gold linking the AddressSanitizer runtime's own assembly helpers (make sanitize).
        *"ld.gold: warning: Cannot export local symbol '__asan_"*) continue ;;
        "["[0-9]*"/"[0-9]*"]"*) continue ;;
        *"warning:"*) warned=1; echo "$line" ;;
        *"error:"*) status=1; echo "$line" ;;
        *) echo "$line" ;;
    esac
done

if ((warned)); then echo "build: the compiler warned; sharectl builds without warnings" >&2; status=1; fi
exit $status
