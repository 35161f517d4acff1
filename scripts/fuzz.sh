#!/usr/bin/env bash
# Builds every libFuzzer target under Fuzz/Sources and runs each for FUZZ_SECONDS (default 60),
# or until it has run FUZZ_RUNS inputs when that is set and comes first (`make fuzz-long`: ten
# million inputs or 30 minutes a target).
#
# Inputs:   Fuzz/Corpus/<target>/       seeds, kept in git (made from the tests' fixtures)
#           Fuzz/Regressions/<target>/  inputs that once failed; each is replayed before fuzzing
#           .build/corpus/<target>/     what the fuzzer adds (not in git)
# Inputs that fail are written to Fuzz/crashes/<target>/ and the script fails; keep them in
# Fuzz/Regressions/<target>/ and as test fixtures once fixed.
#
# FUZZ_TIMEOUT (seconds, default 10) is libFuzzer's wall-clock limit for one input: on a machine
# that is busy with other work a fast input can be starved past 10 s; the long run uses 60.
# FUZZ_TARGETS="FuzzSDP FuzzRTCP" runs only those. FUZZ_KNOWN_BUGS="FuzzRoom:the room sent a
# relayed" (entries separated by ";") names bugs being fixed elsewhere: a target whose failure message contains the text after
# the colon is reported as that known bug and does not fail the run (the check stays as it is).
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds=${FUZZ_SECONDS:-60}
runs_cap=()
[ -n "${FUZZ_RUNS:-}" ] && runs_cap=(-runs="$FUZZ_RUNS")
# The manifest lists Sources/Fuzz* when it runs: a cached one would miss a new target.
flags=(-c release --manifest-cache none -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
started=$SECONDS

targets=${FUZZ_TARGETS:-$(ls Sources | grep '^Fuzz' | sort)}
echo "fuzz: building $(echo $targets | wc -w) targets with libFuzzer and AddressSanitizer"
# Every target in one build (one plan, both cores busy), or only the ones asked for.
quiet() { grep -vE "prohibited flag|^\[|Planning build|Building for|complete!" || true; }
if [ -z "${FUZZ_TARGETS:-}" ]; then
    swift build "${flags[@]}" 2>&1 | quiet
else
    for t in $targets; do swift build "${flags[@]}" --target "$t" 2>&1 | quiet; done
fi
for t in $targets; do
    test -f ".build/release/$t.build/$t.swift.o" || { echo "fuzz: $t did not build"; exit 1; }
done
echo "fuzz: built in $((SECONDS - started)) s"
mkdir -p .build/bin
# The modules every target links: the wire libraries and the plain-Swift support targets.
objects=()
# current_objects MODULE SOURCE_DIR: the module's object files whose source is still in it (a file
# moved to another module leaves its old object behind in .build, which would link twice).
current_objects() {
    local o name
    for o in ".build/release/$1.build/"*.o; do
        name=$(basename "$o" .o)
        case "$name" in
            *.swift) find -L "$2" -name "$name" -print -quit | grep -q . && echo "$o" ;;
            *) echo "$o" ;;
        esac
    done
}
for m in ShareCore RTPWire SDPWire RoomProtocol; do mapfile -t -O "${#objects[@]}" objects < <(current_objects "$m" "../Sources/$m"); done
for m in PureVideoSend ScriptInput; do mapfile -t -O "${#objects[@]}" objects < <(current_objects "$m" "Sources/$m"); done

# known_bug TARGET LOG: the text of a FUZZ_KNOWN_BUGS entry for TARGET found in LOG, if any.
known_bug() {
    local entry entries
    IFS=';' read -ra entries <<< "${FUZZ_KNOWN_BUGS:-}"
    for entry in "${entries[@]}"; do
        [ "${entry%%:*}" = "$1" ] || continue
        grep -qF -- "${entry#*:}" "$2" && { echo "${entry#*:}"; return 0; }
    done
    return 1
}

# judge TARGET LOG WHAT: reports a failure; returns 0 when it is a known bug.
judge() {
    local bug
    if bug=$(known_bug "$1" "$2"); then
        echo "fuzz: $1 $3 failed with the known bug \"$bug\" (FUZZ_KNOWN_BUGS); not counted"
        return 0
    fi
    echo "fuzz: $1 $3 FAILED — last lines of its log:"; tail -30 "$2"
    return 1
}

# fuzz_one TARGET: links it, replays its regression inputs, fuzzes it; says all on standard output
# and returns 1 on a failure that is not a known bug.
fuzz_one() {
    local t=$1 failed=0 own corpus crashes run passed known input seeds t_started runs rate cov
    mapfile -t own < <(current_objects "$t" "Sources/$t")
    swiftc -sanitize=fuzzer,address "${own[@]}" "${objects[@]}" -o ".build/bin/$t" 2>&1 \
        | grep -v "ld.gold: warning" || true
    corpus=".build/corpus/$t"; crashes="crashes/$t"
    mkdir -p "$corpus" "$crashes"
    run=(env SWIFT_BACKTRACE=enable=no ".build/bin/$t" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -artifact_prefix="$crashes/")

    # Each regression input alone, so that one failing does not hide another.
    if [ -d "Regressions/$t" ] && [ -n "$(ls "Regressions/$t")" ]; then
        passed=0; known=0
        for input in Regressions/$t/*; do
            if "${run[@]}" "$input" > ".build/$t.regression.log" 2>&1; then
                passed=$((passed + 1))
            else
                if judge "$t" ".build/$t.regression.log" "regression ${input##*/}"; then known=1; else failed=1; fi
            fi
        done
        echo "fuzz: $t replayed $(ls "Regressions/$t" | wc -l) regression inputs: $passed pass"
        if [ $known = 0 ]; then
            case ";${FUZZ_KNOWN_BUGS:-};" in *";$t:"*)
                echo "fuzz: $t: no known bug showed; drop its FUZZ_KNOWN_BUGS entry once the fix has landed";;
            esac
        fi
    fi

    seeds=(); [ -d "Corpus/$t" ] && seeds=("Corpus/$t")
    echo "fuzz: $t for ${seconds}s${FUZZ_RUNS:+ or $FUZZ_RUNS inputs, whichever comes first}"
    t_started=$SECONDS
    if "${run[@]}" -max_total_time="$seconds" "${runs_cap[@]}" -print_final_stats=1 "$corpus" "${seeds[@]}" > ".build/$t.log" 2>&1; then
        runs=$(grep -E '^stat::number_of_executed_units' ".build/$t.log" | awk '{print $2}')
        rate=$(grep -E '^stat::average_exec_per_sec' ".build/$t.log" | awk '{print $2}')
        cov=$(grep -oE 'cov: [0-9]+' ".build/$t.log" | tail -1)
        echo "fuzz: $t ok: ${runs:-?} inputs in $((SECONDS - t_started)) s, ${rate:-?} exec/s, ${cov:-cov: ?}, no crash"
    else
        judge "$t" ".build/$t.log" "fuzzing" || { ls "$crashes"; failed=1; }
    fi
    return $failed
}

# Targets run side by side, one per core (FUZZ_JOBS), each for its full time; each one's lines
# are printed together, in order, once all have run.
jobs_max=${FUZZ_JOBS:-$(nproc)}
echo "fuzz: running $(echo $targets | wc -w) targets, $jobs_max at a time"
for t in $targets; do
    while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
    (fuzz_one "$t" > ".build/$t.out" 2>&1; echo $? > ".build/$t.rc") &
done
wait
failed=0
for t in $targets; do
    cat ".build/$t.out"
    [ "$(cat ".build/$t.rc" 2>/dev/null)" = 0 ] || failed=1
done
echo "fuzz: done in $((SECONDS - started)) s"
exit $failed
