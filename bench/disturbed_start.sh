#!/usr/bin/env bash
# A worker whose start-up calibration shares its core with a busy loop: the loop stops
# once the worker has calibrated, then a random search of one problem runs, and each
# result's roofline fraction is printed. With the peaks timed again (the default),
# fractions stay at most about 1; with --peak-max-age 0 they are held against the
# disturbed start-up peak (session 56: up to 1.85).
#
# Usage: bench/disturbed_start.sh [--peak-max-age 0 | other mtune-worker flags]
#   CPU      core the worker and the busy loop share (default: the last core)
#   PROBLEM  default matmul:m=512,n=512,k=512:f32;  TRIALS default 40;  SEED default 3
#   BUILD    build folder (default ./build);  WORKDIR default: a fresh temporary folder
set -u
case "${1:-}" in -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
cd "$(dirname "$0")/.."
build=${BUILD:-build}
cpu=${CPU:-$(( $(nproc) - 1 ))}
work=${WORKDIR:-$(mktemp -d)}
mkdir -p "$work"
hog= coordinator= worker=
cleanup() { kill $hog $worker $coordinator 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
taskset -c "$cpu" sh -c 'while :; do :; done' & hog=$!
"$build/server/mtune-coordinator" --listen 127.0.0.1:0 --port-file "$work/port" \
  --db "$work/mtune.sqlite" >"$work/coordinator.log" 2>&1 & coordinator=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "disturbed_start.sh: the coordinator did not start: $work/coordinator.log" >&2; exit 1; }
address=127.0.0.1:$(cat "$work/port")
"$build/worker/mtune-worker" --coordinator "$address" --cpu "$cpu" --give-up-after 30 "$@" \
  >"$work/worker.log" 2>&1 & worker=$!
for _ in $(seq 300); do grep -q calibrated "$work/worker.log" && break; sleep 0.1; done
kill $hog; hog=
grep calibrated "$work/worker.log" || { echo "disturbed_start.sh: the worker did not calibrate: $work/worker.log" >&2; exit 1; }
"$build/client/mtune" submit --coordinator "$address" --problem "${PROBLEM:-matmul:m=512,n=512,k=512:f32}" \
  --workers 1 --search random --trials "${TRIALS:-40}" --seed "${SEED:-3}" --wait >"$work/submit.log" 2>&1
grep -o "RESULT_STATUS_OK.*" "$work/worker.log" | sed 's/ (compiled while.*//' | awk '{print NR ": " $0}'
fractions=$(grep -o "[0-9.]* of roofline" "$work/worker.log" | awk '{print $1}')
echo "results above 1 of roofline: $(echo "$fractions" | awk '$1 > 1' | wc -l) of $(echo "$fractions" | wc -l)," \
  "highest $(echo "$fractions" | sort -n | tail -1); logs in $work"
