#!/usr/bin/env bash
# deploy/slurm/mtune-tune.sbatch on a real Slurm cluster of one node, made for this
# test: its own munge daemon and key, slurmctld and slurmd on free loopback ports, a
# private slurm.conf. It checks that a job tunes two problems with workers started by
# srun over TLS and exports them, and that a bad problem key fails the job with the
# coordinator's reason in its log. Exits 77 (skipped) without Slurm, munge or root.
#
#   tests/slurm_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail

[ $# -eq 3 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
src=$1 bin=$2 work=$3
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
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done

pids=()
teardown() {
  SLURM_CONF=$work/slurm.conf scontrol shutdown >/dev/null 2>&1 || true
  sleep 1
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null || true
}
trap teardown EXIT

chmod 700 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --force --foreground --key-file="$work/munge/munge.key" --socket="$work/munge/sock" \
  --pid-file="$work/munge/pid" --log-file="$work/munge/log" --seed-file="$work/munge/seed" \
  >"$work/munge/out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge/sock" ] && break; sleep 0.1; done
[ -S "$work/munge/sock" ] || { echo "FAIL: munged did not start"; cat "$work/munge/log"; exit 1; }

user=$(id -un)
cat >"$work/slurm.conf" <<EOF
ClusterName=mtunetest
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$work/munge/sock
CredType=cred/munge
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=mtune-node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=2000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N mtune-node >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 100); do
  state=$(sinfo -h -N -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
if [ "$state" != idle ]; then
  echo "FAIL: the test cluster's node is '$state', not idle"
  tail -n 20 "$work"/log/*.log
  exit 1
fi
echo "test cluster up: $(sinfo -h -N -o '%N %c CPUs %t')"

# The workers reach the coordinator by the batch node's hostname, as on a cluster.
if ! getent hosts "$(hostname)" >/dev/null; then
  echo "note: $(hostname) does not resolve here: the workers use 127.0.0.1"
  export MTUNE_COORDINATOR_HOST=127.0.0.1
fi
fail() { echo "FAIL: $*"; exit 1; }
sbatch_job() {  # sbatch_job NAME PROBLEMS: runs the recipe, leaves $work/run/NAME.log and $work/run/NAME
  local name=$1
  printf '%b' "$2" >"$work/run/$name.problems"
  (cd "$work/run" && MTUNE_ROOT=$src MTUNE_BIN=$bin MTUNE_TRIALS=4 MTUNE_CONFIRM=1 \
     sbatch --wait --nodes=1 --time=5 -o "$work/run/$name.log" "$src/deploy/slurm/mtune-tune.sbatch" \
     "$work/run/$name.problems" "$work/run/$name")
}

# Two problems, one commented line and a blank one: tuned, confirmed and exported.
sbatch_job good '# two small problems\ncopy_2d:m=256,n=256:f32\n\nreduce_rows_2d:m=64,n=128:f32  # row sums\n' \
  || { cat "$work/run/good.log"; fail "the job failed"; }
out=$work/run/good
cat "$work/run/good.log"
for f in best.sqlite best.mlir mtune.sqlite; do [ -s "$out/$f" ] || fail "$out/$f is missing"; done
grep -q 'TLS with certificate' "$out/coordinator.log" || fail "the coordinator did not serve TLS"
grep -q 'worker times on cpu' "$out/workers/launch.log" || fail "no worker was started: $(cat "$out/workers/launch.log")"
exported=$("$bin/client/mtune" export --db "$out/best.sqlite" --format json --out -)
for p in copy_2d:m=256,n=256:f32 reduce_rows_2d:m=64,n=128:f32; do
  grep -q "\"$p\"" <<<"$exported" || fail "$p is not in the exported database: $exported"
  grep -q "best strategy for $p" "$work/run/good.log" || fail "the job log shows no best strategy for $p"
done
grep -q 'reduce_rows_2d:m=64,n=128:f32' "$out/best.mlir" || fail "best.mlir has no strategy for the row sum"
[ -z "$(squeue -h -s 2>/dev/null)" ] || fail "job steps left behind: $(squeue -h -s)"

# A bad key fails the job, and the log says which key and why.
if sbatch_job bad 'matmul:m=0,n=8,k=8:f32\n'; then
  cat "$work/run/bad.log"; fail "a job with a bad problem key succeeded"
fi
grep -q 'm=0' "$work/run/bad.log" || { cat "$work/run/bad.log"; fail "the failed job's log does not name the bad key"; }
echo "bad key rejected: $(grep -m1 'm=0' "$work/run/bad.log")"
echo PASS
