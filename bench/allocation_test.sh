#!/bin/sh
# mtune-bench-allocate on a two-problem job: with gain allocation every problem gets
# its warm-up trials (4) and the job spends exactly its budget; at 4 trials per
# problem both allocations have run the same seeded searches on the same points, so
# they must report the same figures; and no allocation of those searches does better
# than hindsight's.
# Usage: allocation_test.sh MTUNE_BENCH_ALLOCATE DATA_DIR
set -eu
tool=$1
data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$tool" "$data/reduce_rows_256x512_f32.csv" "$data/depthwise_2d_58x58x128_3x3_f32.csv" --algorithm random \
  --seeds 3 --trials-per-problem 4,16 --json "$dir/r.json" >"$dir/out" 2>"$dir/err"
cat "$dir/out"
python3 - "$dir/r.json" <<'PY' || fail "figures above"
import json, sys
r = json.load(open(sys.argv[1]))
first = r["budgets"][0]
assert first["trials_per_problem"] == 4 and first["equal"] == first["gain"], first
for b in r["budgets"]:
    assert b["hindsight"]["mean_best"] >= b["equal"]["mean_best"] - 1e-12, b
    assert b["hindsight"]["mean_best"] >= b["known_difficulty"]["mean_best"] - 1e-12, b
trials = list(r["gain_trials_at_largest_budget"].values())
assert len(trials) == 2 and sum(trials) == 32 and min(trials) >= 4, trials
PY
if "$tool" "$data/reduce_rows_256x512_f32.csv" >"$dir/one" 2>&1; then fail "a one-problem job was accepted"; fi
grep -q "at least two tables" "$dir/one" || fail "no reason given for refusing one table: $(cat "$dir/one")"
echo PASS
