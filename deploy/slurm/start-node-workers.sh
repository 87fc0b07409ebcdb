#!/usr/bin/env bash
# Starts this node's mtune workers (one srun task per node runs it; see
# mtune-tune.sbatch) and stops them when it gets USR1, TERM or INT.
#
#   start-node-workers.sh COORDINATOR_ADDRESS CREDS_DIR LOG_DIR
#
# The cores this task may use are paired: worker i times candidates on the first core
# of pair i and compiles the next ones on the second, so no worker's compilation runs
# on another's timing core. MTUNE_WORKERS_PER_NODE caps the pairs (default: all of
# them); a node with a single core runs one worker that compiles and times on it.
set -euo pipefail

if [ $# -ne 3 ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
address=$1 creds=$2 logs=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
worker_bin=${MTUNE_BIN:-$root/build}/worker/mtune-worker
[ -x "$worker_bin" ] || { echo "start-node-workers.sh: $worker_bin is missing on $(hostname)" >&2; exit 1; }
mkdir -p "$logs"

# The cores this process may run on (Slurm's binding, cgroup or taskset), e.g. "0-3,8".
cpus=()
allowed=$(taskset -cp $$ | sed 's/.*: *//')
IFS=, read -ra ranges <<<"$allowed"
for range in "${ranges[@]}"; do
  if [[ $range == *-* ]]; then
    for ((c = ${range%-*}; c <= ${range#*-}; c++)); do cpus+=("$c"); done
  else
    cpus+=("$range")
  fi
done
pairs=$(( ${#cpus[@]} / 2 ))
wanted=${MTUNE_WORKERS_PER_NODE:-$pairs}
[[ $wanted =~ ^[1-9][0-9]*$ ]] || { echo "start-node-workers.sh: MTUNE_WORKERS_PER_NODE must be a positive number, got '$wanted'" >&2; exit 2; }

common=(--coordinator "$address" --tls-ca "$creds/ca.pem" --tls-cert "$creds/worker.pem"
        --tls-key "$creds/worker.key" --token-file "$creds/worker.token" --give-up-after 60)
node=$(hostname)
pids=()
stop() {
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  wait
  exit 0
}
trap stop USR1 TERM INT
if [ "$pairs" -eq 0 ]; then
  echo "start-node-workers.sh: $node: one core (${cpus[*]}): one worker compiling and timing on it"
  "$worker_bin" "${common[@]}" --cpu "${cpus[0]}" --no-overlap >"$logs/$node-cpu${cpus[0]}.log" 2>&1 &
  pids+=($!)
else
  [ "$wanted" -gt "$pairs" ] && echo "start-node-workers.sh: $node: $wanted workers asked for, $pairs core pairs here" >&2
  for ((i = 0; i < pairs && i < wanted; i++)); do
    timing=${cpus[2 * i]} compiling=${cpus[2 * i + 1]}
    echo "start-node-workers.sh: $node: worker times on cpu $timing, compiles on cpu $compiling"
    "$worker_bin" "${common[@]}" --cpu "$timing" --compile-cpus "$compiling" \
      >"$logs/$node-cpu$timing.log" 2>&1 &
    pids+=($!)
  done
fi
# Until stopped, or until every worker has exited (e.g. the coordinator went away).
wait
