#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a set time with cargo-fuzz on nightly,
# then prints one line per target: seconds, executions, corpus size, crashes.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]        (default 60 s, every target)
# Each target starts from its committed seeds (fuzz/corpus/<target>, never written) and
# grows its own corpus in fuzz/work/<target>, kept between runs. Crashes, timeouts and
# out-of-memory inputs land in fuzz/artifacts/<target>/; reproduce one with
#   cargo +nightly fuzz run -s none -a <target> fuzz/artifacts/<target>/<file>
# Every run is appended to fuzz/work/ledger.tsv (date, target, seconds, execs, crashes).
# fuzz/dict/<target>.dict, where present, gives libFuzzer the names and ids the seeds use.
# Builds use -s none (the code is safe Rust; no sanitizer needed) and -a (debug
# assertions, so integer overflow panics). Knobs: FUZZ_TIMEOUT (s per input, 10),
# FUZZ_RSS_MB (2048), FUZZ_MALLOC_MB (largest single allocation, 256), FUZZ_NICE (19:
# fuzzing takes only CPU nobody else wants on a shared machine), TUSK_FUZZ_TMP (where
# the NameNode targets keep their files; /dev/shm when it exists).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TOOLCHAIN=${FUZZ_TOOLCHAIN:-nightly}
TIMEOUT=${FUZZ_TIMEOUT:-10}
RSS_MB=${FUZZ_RSS_MB:-2048}
MALLOC_MB=${FUZZ_MALLOC_MB:-256}
NICE=${FUZZ_NICE:-19}

cargo "+$TOOLCHAIN" --version >/dev/null 2>&1 || { echo "no $TOOLCHAIN toolchain (rustup toolchain install $TOOLCHAIN)" >&2; exit 1; }
cargo "+$TOOLCHAIN" fuzz --version >/dev/null 2>&1 || { echo "cargo-fuzz missing (cargo install cargo-fuzz)" >&2; exit 1; }

TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || mapfile -t TARGETS < <(cd fuzz && cargo "+$TOOLCHAIN" fuzz list)
(cd fuzz && cargo "+$TOOLCHAIN" fuzz build -s none -a) >&2 || { echo "fuzz build failed" >&2; exit 1; }

mkdir -p fuzz/work
SUMMARY=$(mktemp)
trap 'rm -f "$SUMMARY"' EXIT
printf '%-26s %8s %12s %10s %8s %8s\n' target seconds execs execs/s corpus crashes >"$SUMMARY"
FAILED=0
for t in "${TARGETS[@]}"; do
    mkdir -p "fuzz/work/$t" "fuzz/artifacts/$t"
    before=$(find "fuzz/artifacts/$t" -type f | wc -l)
    log="fuzz/work/$t.log"
    dict=()
    [ ! -f "fuzz/dict/$t.dict" ] || dict=(-dict="dict/$t.dict")
    start=$(date +%s)
    # cargo-fuzz exits non-zero when libFuzzer found something; the count says what.
    (cd fuzz && nice -n "$NICE" cargo "+$TOOLCHAIN" fuzz run -s none -a "$t" "work/$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" \
        -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$MALLOC_MB" \
        -print_final_stats=1 "${dict[@]}") >"$log" 2>&1 || true
    took=$(( $(date +%s) - start ))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    execs=${execs:-0}
    corpus=$(find "fuzz/work/$t" -type f | wc -l)
    crashes=$(( $(find "fuzz/artifacts/$t" -type f | wc -l) - before ))
    [ "$crashes" -eq 0 ] || FAILED=1
    printf '%-26s %8s %12s %10s %8s %8s\n' "$t" "$took" "$execs" \
        "$(( execs / (took > 0 ? took : 1) ))" "$corpus" "$crashes" >>"$SUMMARY"
    printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$took" "$execs" "$crashes" \
        >>fuzz/work/ledger.tsv
    if [ "$crashes" -gt 0 ]; then
        echo "== $t found $crashes input(s); log: $log" >&2
        grep -m1 -A3 'panicked at\|ERROR: libFuzzer' "$log" >&2 || true
    fi
done
cat "$SUMMARY"
exit "$FAILED"
