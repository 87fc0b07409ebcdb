#!/bin/sh
# mtune-bench-estimate on the znver4 transpose table: the transpose estimate rates
# 16 x 16 tiles by the shuffle_16x16 network best (the measured best among them) and
# at least half of that top set (12 of 24 at 7d0f863) measured within 95% of the best;
# a missing table is refused with its name.
# Usage: estimate_test.sh MTUNE_BENCH_ESTIMATE DATA_DIR
set -eu
tool=$1
data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$tool" "$data/transpose_512x256_f32.csv" --show 3 >"$dir/out" 2>&1 || fail "exit status $?: $(cat "$dir/out")"
cat "$dir/out"
python3 - "$dir/out" <<'PY' || fail "figures above"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"rated within 1% of the best rating: (\d+), of which (\d+) within 95%", text)
assert m, "no top-set line"
size, good = int(m.group(1)), int(m.group(2))
assert size > 0 and 2 * good >= size, (size, good)
assert "rank 1\n" in text, "the best measured candidate is not among the best rated"
listed = [l for l in text.splitlines() if "tile_r=" in l]
assert len(listed) == 3, listed
for l in listed:
    assert "tile_r=16" in l and "tile_c=16" in l and "transpose_lowering=shuffle_16x16" in l, l
PY
if "$tool" "$data/no_such_table.csv" >"$dir/missing" 2>&1; then fail "a missing table was accepted"; fi
grep -q "no_such_table.csv" "$dir/missing" || fail "the refusal does not name the table: $(cat "$dir/missing")"
echo PASS
