#!/usr/bin/env bash
# The main job on an embedded default: a local coordinator and one pinned worker on
# loopback with a SQLite file, tuning one problem with a small budget, then printing
# the best strategy, its GFLOP/s and its fraction of roofline.
#
#   PROBLEM   problem key            (default matmul:m=512,n=512,k=512:f32)
#   TRIALS    candidates to measure  (default 16)
#   SEARCH    exhaustive | random    (default random)
#   CONFIRM   best candidates measured once more after the search (default 3)
#   CPU       core the worker pins   (default: the last core)
#   WORKDIR   where the SQLite file and logs go (default ./out/local)
#   HTTP      host:port of the dashboard while it runs (default 127.0.0.1:0, a free port)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build
problem=${PROBLEM:-matmul:m=512,n=512,k=512:f32}
trials=${TRIALS:-16}
search=${SEARCH:-random}
confirm=${CONFIRM:-3}
cpu=${CPU:-$(( $(nproc) - 1 ))}
workdir=${WORKDIR:-out/local}
http=${HTTP:-127.0.0.1:0}
mkdir -p "$workdir"
for b in "$bin/server/mtune-coordinator" "$bin/worker/mtune-worker" "$bin/client/mtune"; do
  [ -x "$b" ] || { echo "run-local.sh: $b is missing: run ./deploy/build.sh first" >&2; exit 1; }
done

rm -f "$workdir/port" "$workdir/http-port"
"$bin/server/mtune-coordinator" --listen 127.0.0.1:0 --port-file "$workdir/port" \
  --http "$http" --http-port-file "$workdir/http-port" \
  --db "$workdir/mtune.sqlite" >"$workdir/coordinator.log" 2>&1 &
coordinator=$!
worker=
cleanup() {
  [ -n "$worker" ] && kill "$worker" 2>/dev/null || true
  kill "$coordinator" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$workdir/port" ] && [ -s "$workdir/http-port" ] && break; sleep 0.1; done
[ -s "$workdir/port" ] && [ -s "$workdir/http-port" ] || { cat "$workdir/coordinator.log" >&2; exit 1; }
address=127.0.0.1:$(cat "$workdir/port")
echo "coordinator on $address, database $workdir/mtune.sqlite; worker pinned to cpu $cpu"
echo "dashboard on http://${http%:*}:$(cat "$workdir/http-port")/ while the job runs"

"$bin/worker/mtune-worker" --coordinator "$address" --cpu "$cpu" --give-up-after 30 \
  >"$workdir/worker.log" 2>&1 &
worker=$!

# --wait shows a progress bar, then the best strategy with its GFLOP/s and roofline
# fraction; --confirm first measures the best few once more (a second, short job), so
# that the strategy printed is not one lucky timing.
# --workers 1: the job is planned once the worker has registered, for its CPU (the
# template, and register tiles that fit its vector registers).
"$bin/client/mtune" submit --coordinator "$address" --problem "$problem" --workers 1 \
  --search "$search" --trials "$trials" --confirm "$confirm" --wait
