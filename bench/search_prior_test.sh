#!/bin/sh
# mtune-bench-search with a prior table of an older version of the template: the
# znver4 reduce_rows table's reduce_tiled has two knobs (bands, prefetch_ahead) the
# Intel 1024x1024 table's lacks. Its 300 rows must reach the model, laid out by
# feature name with the two missing, and steer its first batch: every seed reaches
# 95% of the best within it (random's exact median there is 5 trials; before rows
# were laid out by name they were dropped and the model began at random).
# Usage: search_prior_test.sh MTUNE_BENCH_SEARCH DATA_DIR
set -eu
tool=$1
data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$tool" "$data/reduce_rows_256x512_f32_znver4.csv" --prior "$data/reduce_rows_1024x1024_f32.csv" \
  --algorithms model --seeds 10 --max-fraction 0.05 --json "$dir/r.json" >"$dir/out"
cat "$dir/out"
grep -q '(300 rows; missing there: knob:bands knob:prefetch_ahead)' "$dir/out" || fail "prior rows not reported"
tr -d ' \n' <"$dir/r.json" >"$dir/flat.json"
grep -q '"prior_rows":300' "$dir/flat.json" || fail "JSON prior_rows is not 300"
trials=$(grep -o '"trials_to_95":\[[^]]*\]' "$dir/flat.json" | sed 's/.*\[//; s/\]//' | tr ',' '\n')
[ "$(echo "$trials" | wc -l)" = 10 ] || fail "expected 10 seeds: $trials"
for t in $trials; do
  awk -v t="$t" 'BEGIN { exit !(t <= 4) }' || fail "a seed took $t trials to 95% (more than the first batch)"
done
echo PASS
