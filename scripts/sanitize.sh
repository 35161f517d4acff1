#!/usr/bin/env bash
# Builds sharectl and its tests under a sanitizer, each in a build folder of its own, and runs the
# Swift tests on it; on the AddressSanitizer build also the transport and room gates (real peers).
#   scripts/sanitize.sh              address, then thread
#   scripts/sanitize.sh address      one of them
# Any report fails the run: ASan and TSan stop the process at the first one (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
(($#)) || set -- address thread
# GLib, PipeWire and libnice keep process-lifetime allocations (type registrations, the main
# context), so leak reports at exit say nothing about sharectl: leak checking is off.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:abort_on_error=0:${ASAN_OPTIONS:-}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"
failed=()
for sanitizer in "$@"; do
    scratch=.build/sanitize-$sanitizer
    echo "sanitize: building with --sanitize=$sanitizer in $scratch"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | scripts/swift-output.sh
    echo "sanitize: swift test under $sanitizer"
    if ! swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" > "$scratch/test.log" 2>&1; then
        echo "sanitize: swift test under $sanitizer FAILED — the report:"
        grep -m1 -A40 -E 'ERROR: (Address|Thread)Sanitizer|WARNING: ThreadSanitizer|✘' "$scratch/test.log" || tail -40 "$scratch/test.log"
        failed+=("$sanitizer:tests"); continue
    fi
    grep -E 'Test run with' "$scratch/test.log" | tail -1
    if [[ "$sanitizer" == address ]]; then
        echo "sanitize: transport and room gates on the AddressSanitizer build"
        if ! SHARECTL="$PWD/$scratch/debug/sharectl" scripts/gates/run.sh transport room_server room_call; then
            failed+=("$sanitizer:gates")
        fi
    fi
done
if ((${#failed[@]})); then echo "sanitize: failed in ${failed[*]}"; exit 1; fi
echo "sanitize: clean ($*)"
