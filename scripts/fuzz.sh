#!/usr/bin/env bash
# Builds every libFuzzer target under Fuzz/Sources and runs each for FUZZ_SECONDS (default 60).
# Inputs that crash are written to Fuzz/crashes/<target>/ and the script fails; keep them as
# regression fixtures in the tests once fixed. Seeds come from Fuzz/Seeds/<target>/ when present,
# and FuzzSDP starts from the Chromium SDP the tests keep.
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds=${FUZZ_SECONDS:-60}
flags=(-c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)

targets=$(ls Sources | grep '^Fuzz' | sort)
echo "fuzz: building $(echo $targets | wc -w) targets with libFuzzer and AddressSanitizer"
for t in $targets; do
    swift build "${flags[@]}" --target "$t" 2>&1 | grep -vE "prohibited flag|^\[|Planning build|Building for|complete!" || true
    test -f ".build/release/$t.build/$t.swift.o" || { echo "fuzz: $t did not build"; exit 1; }
done
mkdir -p .build/bin
objects=()
for m in ShareCore RTPWire SDPWire; do objects+=(.build/release/$m.build/*.o); done

failed=0
for t in $targets; do
    swiftc -sanitize=fuzzer,address ".build/release/$t.build/"*.o "${objects[@]}" -o ".build/bin/$t" 2>&1 \
        | grep -v "ld.gold: warning" || true
    corpus=".build/corpus/$t"; crashes="crashes/$t"
    mkdir -p "$corpus" "$crashes"
    seeds=(); [ -d "Seeds/$t" ] && seeds=("Seeds/$t")
    [ "$t" = FuzzSDP ] && seeds+=(../Tests/SDPWireTests/Fixtures)  # Chromium's own SDP
    echo "fuzz: $t for ${seconds}s"
    if SWIFT_BACKTRACE=enable=no ".build/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" "${seeds[@]}" > ".build/$t.log" 2>&1; then
        runs=$(grep -E '^stat::number_of_executed_units' ".build/$t.log" | awk '{print $2}')
        cov=$(grep -oE 'cov: [0-9]+' ".build/$t.log" | tail -1)
        echo "fuzz: $t ok: ${runs:-?} inputs, $cov, no crash"
    else
        echo "fuzz: $t FAILED — last lines of its log:"; tail -30 ".build/$t.log"
        ls "$crashes"; failed=1
    fi
done
exit $failed
