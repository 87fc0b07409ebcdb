#!/usr/bin/env bash
# deploy/slurm/mtune-tune.sbatch on a real Slurm cluster made for this test: its own
# munge daemon and key, slurmctld and slurmd on free ports, a private slurm.conf. It
# checks that a job tunes two problems with workers started by srun over TLS and
# exports them, and that a bad problem key fails the job with the key parser's
# reason in its log. Exits 77 (skipped) without Slurm, munge or root.
#
#   tests/slurm_test.sh SOURCE_DIR BUILD_DIR WORK_DIR [NODES]
#
# NODES 1 (default): one slurmd on loopback. NODES 2: two nodes, each a slurmd in its
# own network, UTS and mount namespaces (its own address on a bridge made here, its
# own hostname, and an /etc/hosts that resolves the nodes), so that the second node's workers
# reach the coordinator on the first by name, across the bridge, as on a cluster;
# also skipped where the namespaces or the bridge cannot be made.
set -euo pipefail

[ $# -eq 3 ] || [ $# -eq 4 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
src=$1 bin=$2 work=$3 nodes=${4:-1}
[ "$nodes" = 1 ] || [ "$nodes" = 2 ] || { echo "NODES must be 1 or 2, got '$nodes'" >&2; exit 2; }
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (apt-get install slurm-wlm munge)"; exit 77; }
done
# slurmd starts job steps as the submitting user, which takes root.
[ "$(id -u)" -eq 0 ] || { echo "SKIP: a local slurmd needs root"; exit 77; }

# Nothing of an enclosing Slurm job (if ctest runs inside one) may leak into ours.
for v in $(env | grep -o '^SLURM_[A-Z_]*' || true); do unset "$v"; done
rm -rf "$work"
mkdir -p "$work"/{munge,state,spool,log,run}
work=$(cd "$work" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

pids=()
namespaces=()
bridge=
teardown() {
  SLURM_CONF=$work/slurm.conf scontrol shutdown >/dev/null 2>&1 || true
  sleep 1
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null || true
  # Deleting a namespace destroys the veth end inside it, and so the pair.
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null; done
  [ -n "$bridge" ] && ip link del "$bridge" 2>/dev/null
  true
}
trap teardown EXIT

# The nodes: names and addresses, and the address slurmctld listens on.
if [ "$nodes" = 1 ]; then
  ctld_addr=127.0.0.1
  node_names=(mtune-node)
  node_addrs=(127.0.0.1)
else
  command -v ip >/dev/null && command -v unshare >/dev/null && command -v nsenter >/dev/null ||
    { echo "SKIP: two nodes need ip (iproute2), unshare and nsenter"; exit 77; }
  net=10.243.17
  ctld_addr=$net.1
  node_names=(mtune-n1 mtune-n2)
  node_addrs=("$net.11" "$net.12")
  ip link add "mtbr$$" type bridge 2>/dev/null || { echo "SKIP: cannot make a bridge here"; exit 77; }
  bridge=mtbr$$
  ip addr add "$ctld_addr/24" dev "$bridge"
  ip link set "$bridge" up
  for i in 0 1; do
    ns=mtn$i-$$
    ip netns add "$ns" 2>/dev/null || { echo "SKIP: cannot make network namespaces here"; exit 77; }
    namespaces+=("$ns")
    ip link add "mtv$i-$$" type veth peer name eth0 netns "$ns"
    ip link set "mtv$i-$$" master "$bridge" up
    ip -n "$ns" addr add "${node_addrs[$i]}/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  # The nodes' /etc/hosts (bind-mounted in their own mount namespaces).
  { echo "127.0.0.1 localhost"
    echo "$ctld_addr $(hostname)"
    for j in 0 1; do echo "${node_addrs[$j]} ${node_names[$j]}"; done; } >"$work/hosts"
fi

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done

chmod 700 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --force --foreground --key-file="$work/munge/munge.key" --socket="$work/munge/sock" \
  --pid-file="$work/munge/pid" --log-file="$work/munge/log" --seed-file="$work/munge/seed" \
  >"$work/munge/out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge/sock" ] && break; sleep 0.1; done
[ -S "$work/munge/sock" ] || { cat "$work/munge/log"; fail "munged did not start"; }

user=$(id -un)
cat >"$work/slurm.conf" <<EOF
ClusterName=mtunetest
SlurmctldHost=$(hostname)($ctld_addr)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$work/munge/sock
CredType=cred/munge
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
for i in "${!node_names[@]}"; do
  echo "NodeName=${node_names[$i]} NodeAddr=${node_addrs[$i]} CPUs=$(nproc) RealMemory=2000 State=UNKNOWN" \
    >>"$work/slurm.conf"
  mkdir -p "$work/spool/${node_names[$i]}"
done
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
if [ "$nodes" = 1 ]; then
  slurmd -D -N mtune-node >"$work/log/slurmd.out" 2>&1 &
  pids+=($!)
else
  for i in 0 1; do
    # Its own hostname (UTS namespace), so that its workers are named after it. Not
    # `ip netns exec`: it mounts a new /sys, without the cgroup file system slurmd needs.
    nsenter --net="/run/netns/${namespaces[$i]}" unshare --uts --mount sh -c \
      "mount --bind $work/hosts /etc/hosts && hostname ${node_names[$i]} && exec slurmd -D -N ${node_names[$i]}" \
      >"$work/log/slurmd-$i.out" 2>&1 &
    pids+=($!)
  done
fi
state=
for _ in $(seq 100); do
  state=$(sinfo -h -N -o %t 2>/dev/null | sort -u | tr '\n' ' ' || true)
  [ "$state" = "idle " ] && break
  sleep 0.2
done
if [ "$state" != "idle " ]; then
  tail -n 20 "$work"/log/*
  fail "the test cluster's nodes are '$state', not idle"
fi
echo "test cluster up: $(sinfo -h -N -o '%N %c CPUs %t' | tr '\n' ' ')"

# The workers reach the coordinator by the batch node's hostname, as on a cluster.
if [ "$nodes" = 1 ] && ! getent hosts "$(hostname)" >/dev/null; then
  echo "note: $(hostname) does not resolve here: the workers use 127.0.0.1"
  export MTUNE_COORDINATOR_HOST=127.0.0.1
fi
sbatch_job() {  # sbatch_job NAME PROBLEMS: runs the recipe into $work/run/NAME{,.log}
  local name=$1
  printf '%b' "$2" >"$work/run/$name.problems"
  (cd "$work/run" && MTUNE_ROOT=$src MTUNE_BIN=$bin MTUNE_TRIALS=4 MTUNE_CONFIRM=1 \
     sbatch --wait --nodes="$nodes" --time=5 -o "$work/run/$name.log" "$src/deploy/slurm/mtune-tune.sbatch" \
     "$work/run/$name.problems" "$work/run/$name")
}

# Two problems, one commented line and a blank one: tuned, confirmed and exported.
sbatch_job good '# two small problems\ncopy_2d:m=256,n=256:f32\n\nreduce_rows_2d:m=64,n=128:f32  # row sums\n' &
job=$!
out=$work/run/good
# While it runs, a shell outside the allocation sees its tuning job with client.env
# (by the batch node's address where its name resolves only inside the cluster). Tried
# for as long as the job runs: the client submits only once a worker has calibrated
# and registered, which took 35 s on a Zen 5 VM, longer than a count of tries lasted.
followed=
while kill -0 "$job" 2>/dev/null; do
  if [ -s "$out/client.env" ]; then
    followed=$(. "$out/client.env"
               [ "$nodes" = 2 ] && MTUNE_COORDINATOR=${node_addrs[0]}:${MTUNE_COORDINATOR##*:}
               "$bin/client/mtune" jobs --coordinator "$MTUNE_COORDINATOR" 2>/dev/null) &&
      [ "$followed" != "no jobs" ] && break
    followed=
  fi
  sleep 0.1
done
wait "$job" || { cat "$work/run/good.log"; fail "the job failed"; }
[ -n "$followed" ] || fail "no 'mtune jobs' with client.env succeeded while the job ran"
echo "followed from outside the job with client.env:"
echo "$followed"
cat "$work/run/good.log"
for f in best.sqlite best.mlir mtune.sqlite; do [ -s "$out/$f" ] || fail "$out/$f is missing"; done
grep -q 'TLS with certificate' "$out/coordinator.log" || fail "the coordinator did not serve TLS"
# client.env names the coordinator the job used and this run's client credentials.
(. "$out/client.env" && grep -q "coordinator on $MTUNE_COORDINATOR (TLS)" "$work/run/good.log" &&
   [ -s "$MTUNE_TLS_CA" ] && [ -s "$MTUNE_TOKEN_FILE" ]) || fail "client.env is wrong: $(cat "$out/client.env")"
grep -q 'dashboard on' "$work/run/good.log" || fail "the job log does not give the dashboard's port"
# Every node started a worker, which registered under its node's hostname (with one
# node, this host's: that slurmd runs in no namespace of its own).
hosts=("${node_names[@]}")
[ "$nodes" = 1 ] && hosts=("$(hostname)")
for name in "${hosts[@]}"; do
  grep -q "registered as $name/cpu" "$out/workers/$name"-cpu*.log 2>/dev/null ||
    fail "no worker of $name registered: $(cat "$out/workers/launch.log"; tail -n 5 "$out"/workers/*cpu*.log)"
done
[ "$nodes" = 1 ] || echo "workers that stored results: $(sqlite3 "$out/mtune.sqlite" 'SELECT DISTINCT worker_name FROM results' | tr '\n' ' ')"
exported=$("$bin/client/mtune" export --db "$out/best.sqlite" --format json --out -)
for p in copy_2d:m=256,n=256:f32 reduce_rows_2d:m=64,n=128:f32; do
  grep -q "\"$p\"" <<<"$exported" || fail "$p is not in the exported database: $exported"
  grep -q "best strategy for $p" "$work/run/good.log" || fail "the job log shows no best strategy for $p"
done
grep -q 'reduce_rows_2d:m=64,n=128:f32' "$out/best.mlir" || fail "best.mlir has no strategy for the row sum"
[ -z "$(squeue -h -s 2>/dev/null)" ] || fail "job steps left behind: $(squeue -h -s)"

# A bad key fails the job, and the log says which key and why.
if sbatch_job bad 'matmul:m=0,n=8,k=8:f32\n'; then
  cat "$work/run/bad.log"
  fail "a job with a bad problem key succeeded"
fi
grep -q 'm=0' "$work/run/bad.log" || { cat "$work/run/bad.log"; fail "the failed job's log does not name the bad key"; }
echo "bad key rejected: $(grep -m1 'm=0' "$work/run/bad.log")"
echo PASS
