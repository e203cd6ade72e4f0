#!/usr/bin/env bash
# A pack on a real job scheduler: starts a single-node Slurm here (munged,
# slurmctld and slurmd with a minimal slurm.conf, all under a temporary
# folder, as root), submits `wobble-run pack --slice auto` as a job array
# (`sbatch --array=0-3`), waits for it, and checks every output byte for
# byte against one local run of the same pack. Stops what it started.
#
# No cgroups are needed: processes are tracked through /proc
# (ProctrackType=proctrack/linuxproc) and tasks are not confined
# (TaskPlugin=task/none).
#
# Usage: Scripts/slurm-pack.sh            (the debug build, or $WOBBLE_RUN)
# Env:   ROWS (default 20), TASKS (array size, default 4), WOBBLE_RUN.
# Exit:  0 the outputs match; 1 they do not, or the job failed; 77 this
#        machine cannot run it (not root, Slurm or munge not installed: see
#        Scripts/install-deps.sh --bench, or the daemons do not start) —
#        the reason is the last line on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-20}
tasks=${TASKS:-4}
skip() { echo "slurm-pack: skipped: $*" >&2; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "not root (the Slurm daemons run as root here)"
for tool in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$tool" >/dev/null || skip "no $tool (install slurm-wlm and munge: Scripts/install-deps.sh --bench)"
done
command -v ffmpeg >/dev/null || skip "no ffmpeg (it makes the test photos)"
bin=${WOBBLE_RUN:-.build/debug/wobble-run}
[[ -x "$bin" ]] || skip "no wobble-run at $bin (swift build first, or set WOBBLE_RUN)"
bin=$(realpath "$bin")

work=$(mktemp -d /tmp/wobble-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n "${KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT

# munge: a fresh key, its own socket.
mkdir -p "$work/munge"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" \
  >"$work/munge/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S "$work/munge/munge.socket" ]] && break; sleep 0.1; done
[[ -S "$work/munge/munge.socket" ]] || skip "munged did not start: $(tail -1 "$work/munge/munged.log" 2>/dev/null)"

# slurm.conf: one node (this machine), one partition; free ports.
host=$(hostname -s)
cpus=$(nproc)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mkdir -p "$work/state" "$work/spool" "$work/log"
cat > "$work/slurm.conf" <<CONF
ClusterName=wobble
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(port)
SlurmdPort=$(port)
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:$tasks
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 150); do
  if sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then up=1; break; fi
  sleep 0.2
done
if [[ -z "$up" ]]; then
  tail -3 "$work/log/slurmctld.log" "$work/log/slurmd.log" "$work/log/"*.out >&2 2>/dev/null || true
  skip "the Slurm daemons did not come up ($(sinfo -h -o '%t' 2>&1 | head -1))"
fi

# The pack: made once, copied for the local run and the array.
source Scripts/bench/make-pack.sh
make_pack "$work/local" "$rows"
cp -r "$work/local" "$work/array"
start=$(date +%s.%N)
"$bin" pack "$work/local/pack.csv" -q 2>"$work/log/local.err" || { cat "$work/log/local.err" >&2; exit 1; }
local_s=$(echo "$(date +%s.%N) - $start" | bc)

cat > "$work/job.sh" <<JOB
#!/bin/sh
exec "$bin" pack "$work/array/pack.csv" --slice auto -q --jobs 1
JOB
chmod 755 "$work/job.sh"
start=$(date +%s.%N)
job=$(sbatch --parsable --array=0-$((tasks - 1)) --ntasks=1 --cpus-per-task=1 \
  --output="$work/log/task-%a.out" --chdir="$work" "$work/job.sh")
while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 0.2; done
array_s=$(echo "$(date +%s.%N) - $start" | bc)

failed=0
n=0
for f in "$work/local/out/"*.gif; do
  name=$(basename "$f")
  if ! cmp -s "$f" "$work/array/out/$name"; then echo "slurm-pack: $name differs (or is missing) in the array's outputs" >&2; failed=1; fi
  n=$((n + 1))
done
[[ $n -eq $rows ]] || { echo "slurm-pack: the local run wrote $n of $rows clips" >&2; failed=1; }
if [[ $failed -ne 0 ]]; then
  for t in $(seq 0 $((tasks - 1))); do echo "slurm-pack: task $t said:" >&2; grep -v 'warning:' "$work/log/task-$t.out" >&2 || true; done
fi
printf 'slurm-pack: %d clips, local run (one process, --jobs %d) %.1f s; Slurm array of %d tasks (--jobs 1 each) %.1f s from sbatch to the last task; outputs %s\n' \
  "$rows" "$cpus" "$local_s" "$tasks" "$array_s" "$([[ $failed -eq 0 ]] && echo "byte-identical" || echo "DIFFER")"
exit $failed
