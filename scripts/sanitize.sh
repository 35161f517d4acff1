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
    echo "sanitize: the Swift tests under $sanitizer"
    # The test bundle is run directly, not through `swift test`, whose relay of the output can lose
    # its end (the summary, a crash message) when the bundle exits.
    bundle="$scratch/debug/sharectlPackageTests.xctest"
    status=0
    "$bundle" --testing-library swift-testing > "$scratch/test.log" 2>&1 || status=$?
    reports=$(grep -cE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: CHECK failed|Fatal error' \
        "$scratch/test.log" || true)
    grep -E 'Test run with' "$scratch/test.log" | tail -1 || true
    if ((reports > 0)); then
        echo "sanitize: $sanitizer reported $reports problem(s) — the first:"
        grep -m1 -A40 -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: CHECK failed|Fatal error' \
            "$scratch/test.log"
        failed+=("$sanitizer:tests"); continue
    fi
    if ((status != 0)); then
        if [[ "$sanitizer" == thread ]]; then
            # ThreadSanitizer runs the media pipeline ten to twenty times slower: tests that judge
            # real-time rates (frames decoded within a minute, an encoder kept up) fail on time, not
            # on a race. Its verdict is its reports; those tests are judged by `make test` and ASan.
            echo "sanitize: no ThreadSanitizer report; these tests missed their real-time marks under its slowdown:"
            grep -E '^✘ Test .*(failed after|recorded an issue)' "$scratch/test.log" | cut -c1-200
        else
            echo "sanitize: the Swift tests under $sanitizer FAILED:"
            grep -E '^✘' "$scratch/test.log" | cut -c1-300 | head -40
            failed+=("$sanitizer:tests"); continue
        fi
    fi
    if [[ "$sanitizer" == address ]]; then
        echo "sanitize: transport and room gates on the AddressSanitizer build"
        if ! SHARECTL="$PWD/$scratch/debug/sharectl" scripts/gates/run.sh transport room_server room_call; then
            failed+=("$sanitizer:gates")
        fi
    fi
done
if ((${#failed[@]})); then echo "sanitize: failed in ${failed[*]}"; exit 1; fi
echo "sanitize: clean ($*)"
