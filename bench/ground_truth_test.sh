#!/bin/sh
# mtune-ground-truth on a two-candidate space of matmul_packed: the table's space is
# the free knobs (no peel_m2 / copy_back_c), each row's candidate carries its derived
# knobs as the constraints solve them, and restricting a derived knob is refused.
# Usage: ground_truth_test.sh MTUNE_GROUND_TRUTH
set -eu
tool=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
problem=matmul:m=24,n=32,k=16:f32
if "$tool" --problem $problem --restrict peel_m2=0 --out "$dir/x.csv" 2>"$dir/err"; then
  fail "restricting a derived knob was accepted"
fi
grep -q "knob peel_m2 is derived" "$dir/err" || fail "unexpected message: $(cat "$dir/err")"
[ ! -e "$dir/x.csv" ] || fail "a refused run wrote a table"

# 32-row m blocks with a register tile of 4 rows (divides m1: nothing to peel) or 6
# (does not: its partial tile is peeled); both fit AVX2's 16 registers and AVX-512's
# 32, for which the tool sizes register tiles on this host.
"$tool" --problem $problem --restrict tile_m1=32 --restrict tile_n1=32 --restrict tile_k1=16 \
  --restrict tile_m2=4,6 --restrict tile_n2=16 --restrict tile_k2=8 --restrict loop_order=mnk \
  --restrict pack_a=yes --restrict contraction_lowering=outerproduct --no-calibrate \
  --min-time 0.01 --cpu -1 --out "$dir/t.csv"
cat "$dir/t.csv"
grep -q '^# derived_knobs: peel_m2 copy_back_c peel_n2$' "$dir/t.csv" || fail "no derived_knobs header"
grep '^# knobs:' "$dir/t.csv" | grep -q peel_m2 && fail "a derived knob is in the space"
[ "$(grep -c ',OK,' "$dir/t.csv")" = 2 ] || fail "expected two OK rows"
grep -q '""peel_m2"":0,.*""tile_m2"":4,' "$dir/t.csv" || fail "m2 = 4 should not peel"
grep -q '""peel_m2"":1,.*""tile_m2"":6,' "$dir/t.csv" || fail "m2 = 6 should peel"
echo PASS
