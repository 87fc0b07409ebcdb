#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded number of executions on its committed seed
# corpus, as ctest does: a crash, sanitizer report, leak or hang (an input running
# longer than -timeout) fails the test. New inputs go to a scratch corpus in the
# build tree, never into the repository; the inputs that failed are kept beside it.
# Usage: run_fuzzer.sh FUZZER SEED_DIR WORK_DIR RUNS MAX_TOTAL_TIME_S [libFuzzer flags...]
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 FUZZER SEED_DIR WORK_DIR RUNS MAX_TOTAL_TIME_S [libFuzzer flags...]" >&2
  exit 2
fi
fuzzer=$1 seeds=$2 work=$3 runs=$4 max_time=$5
shift 5
[ -x "$fuzzer" ] || { echo "run_fuzzer.sh: no fuzzer at $fuzzer (build the main project first)" >&2; exit 2; }
[ -d "$seeds" ] && [ -n "$(ls -A "$seeds")" ] || { echo "run_fuzzer.sh: empty seed corpus $seeds" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
suppressions="$(dirname "$0")/lsan.supp"
[ -f "$suppressions" ] && export LSAN_OPTIONS="suppressions=$suppressions${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# -seed fixes the mutation sequence, but the corpus grows by coverage, and runs with
# one seed do not all see the same inputs (session 28: two read-back failures in 11
# runs, then none in 82 more): a failing input may not come back. So a failure prints its inputs (base64, up to 256 KiB each) into the
# log, where CI keeps them; `base64 -d` and run the fuzzer on the file to reproduce.
status=0
"$fuzzer" -runs="$runs" -max_total_time="$max_time" -seed=1 -timeout=30 \
  -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" \
  "$work/corpus" "$seeds" || status=$?
if [ "$status" -ne 0 ]; then
  for input in "$work"/artifacts/*; do
    [ -f "$input" ] || continue
    echo "run_fuzzer.sh: failing input $input ($(stat -c %s "$input") bytes), base64:"
    head -c 262144 "$input" | base64 -w 0
    echo
  done
fi
exit "$status"
