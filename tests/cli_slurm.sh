#!/bin/sh
# cli_slurm.sh — strix under a real Slurm (Debian's slurm-wlm, installed by
# tools/deps.sh): the test starts slurmctld and slurmd on localhost with a
# configuration generated in a temporary directory (auth/none: one host, no
# munge needed), submits deploy/slurm/strix-array.sbatch as an array of 4
# tasks over 8 synthetic clips (FFmpeg lavfi), requeues task 1 while it is
# in the middle of its long item (`scontrol requeue`: SIGTERM, then the task
# runs again), and checks that afterwards every item's outputs exist exactly
# once, no temporary file is left, and the outputs equal a single-process
# run's byte for byte.  SKIPs, with the reason, where Slurm is not installed
# or cannot start here; never fakes a pass.
#   sh tests/cli_slurm.sh BUILD_DIR
NAME=cli_slurm
. "$(dirname "$0")/lib_cli.sh"

t=array_requeue
SD=$T/slurm
B=$(cd "$B" 2>/dev/null && pwd) || B=/nonexistent # the jobs run in $T
cleanup() {
    if [ -n "${job:-}" ]; then # no job step may outlive the daemons
        scancel --full "$job" 2>/dev/null
        n=0
        while [ $n -lt 50 ] && [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do sleep 0.2; n=$((n + 1)); done
    fi
    for p in "$SD/slurmd.pid" "$SD/slurmctld.pid"; do
        [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
    done
    sleep 0.5
    rm -rf "$T"
}
trap cleanup EXIT

for c in slurmctld slurmd sbatch scontrol squeue; do
    command -v $c >/dev/null 2>&1 || { skip $t "$c not installed (sh tools/deps.sh installs slurm-wlm)"; exit 0; }
done
[ "$(id -u)" = 0 ] || { skip $t "slurmd must run as root to start jobs (running as uid $(id -u))"; exit 0; }
[ -x "$B/infer" ] && [ -x "$B/mkweights" ] || { skip $t "$B/infer or $B/mkweights is not built"; exit 0; }
command -v ffmpeg >/dev/null 2>&1 || { skip $t "ffmpeg not installed (sh tools/deps.sh)"; exit 0; }

W=$T/w.safetensors
"$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$W" >/dev/null 2>&1 || { skip $t "mkweights failed"; exit 0; }
ARGS="--scale n --imgsz 64 --threads 1 --device cpu --conf 0.05 --preset ultrafast"
mkdir -p "$T/in"
: >"$T/m.txt"
for i in 0 1 2 3 4 5 6 7; do # item 5 (task 1's second) is the long one
    d=1
    [ $i = 5 ] && d=12
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=128x96:rate=10" -t $d -vf "hue=h=$((i * 45))" \
        -c:v libx264 -preset ultrafast "$T/in/c$i.mp4" || { skip $t "ffmpeg could not make the clips"; exit 0; }
    echo "$T/in/c$i.mp4" >>"$T/m.txt"
done

# the cluster: one node, this host; ports picked at random (another run may hold some)
H=$(hostname -s)
CPUS=$(nproc)
mkdir -p "$SD/state" "$SD/spool"
started=0
for try in 1 2 3; do
    port=$((20000 + ($$ * 31 + $(date +%s) * 7 + try * 101) % 40000))
    cat >"$SD/slurm.conf" <<EOF
ClusterName=strixtest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$SD/state
SlurmdSpoolDir=$SD/spool
SlurmctldPidFile=$SD/slurmctld.pid
SlurmdPidFile=$SD/slurmd.pid
SlurmctldLogFile=$SD/slurmctld.log
SlurmdLogFile=$SD/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobRequeue=1
KillWait=10
NodeName=$H NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=strixtest Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$SD/slurm.conf
    slurmctld -f "$SLURM_CONF" -i >/dev/null 2>&1 && slurmd -f "$SLURM_CONF" -N "$H" >/dev/null 2>&1 || continue
    n=0
    while [ $n -lt 50 ] && ! sinfo -h -o %t 2>/dev/null | grep -q idle; do sleep 0.2; n=$((n + 1)); done
    if [ $n -lt 50 ]; then
        started=1
        break
    fi
    for p in "$SD/slurmd.pid" "$SD/slurmctld.pid"; do [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
    sleep 1
done
if [ $started = 0 ]; then
    skip $t "slurmctld/slurmd did not bring the node up here: $(tail -n 2 "$SD/slurmctld.log" "$SD/slurmd.log" 2>/dev/null | tr '\n' ' ' | head -c 400)"
    exit 0
fi

# the array, as deploy/slurm/strix-array.sbatch runs it (the environment
# carries its settings; --gres=none and --cpus-per-task=1 override its --gres=gpu:1 and
# --cpus-per-task=8 on this small GPU-less node)
export MANIFEST="$T/m.txt" OUT="$T/out" MODEL="$YAML" WEIGHTS="$W" INFER="$B/infer" STRIX_ARGS="$ARGS"
job=$(sbatch --parsable --array=0-3 -D "$T" --output="$T/log-%a.txt" --gres=none --cpus-per-task=1 "$ROOT/deploy/slurm/strix-array.sbatch" 2>"$T/err")
if [ -z "$job" ]; then
    fail $t "sbatch refused the array: $(cat "$T/err")"
    exit 1
fi
# task 1 in the middle of its long item (its temporary video exists): requeue it
n=0
while [ $n -lt 600 ] && [ -z "$(find "$T/out/c5" -name '*.tmp' 2>/dev/null)" ]; do
    [ -n "$(squeue -h -j "$job" 2>/dev/null)" ] || n=600 # the array ended without it
    sleep 0.1
    n=$((n + 1))
done
if [ $n -ge 600 ]; then
    fail $t "task 1 never started its long item; jobs: $(squeue -h -j "$job" -o '%i %t %r' | tr '\n' ' '); logs: $(cat "$T"/log-*.txt 2>/dev/null | head -c 300); slurmd: $(tail -n 3 "$SD/slurmd.log" | tr '\n' ' ')"
    exit 1
fi
scontrol requeue "${job}_1" 2>"$T/err" || { fail $t "scontrol requeue failed: $(cat "$T/err")"; exit 1; }
# a requeued job waits (BeginTime): let it start again at once, then wait for the array to finish
n=0
while [ $n -lt 900 ] && [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do
    squeue -h -j "${job}_1" -o %r 2>/dev/null | grep -q BeginTime && scontrol update jobid="${job}_1" StartTime=now 2>/dev/null
    sleep 0.2
    n=$((n + 1))
done
[ $n -lt 900 ] || { fail $t "the array did not finish in 180 s: $(squeue -h -j "$job")"; exit 1; }
restarts=$(scontrol show job "${job}_1" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
starts=$(grep -c "shard 1 of 4 (SLURM_ARRAY_TASK_ID)" "$T/log-1.txt" 2>/dev/null)

# the same manifest in one process, no Slurm
"$B/infer" --model "$YAML" --weights "$W" $ARGS --manifest "$T/m.txt" --out "$T/single" >/dev/null 2>"$T/err" ||
    { fail $t "the single-process run failed: $(cat "$T/err")"; exit 1; }

left=$(find "$T/out" -name '*.tmp' | head -n 3)
if [ "${restarts:-0}" -lt 1 ] || [ "${starts:-0}" -lt 2 ]; then
    fail $t "task 1 was not requeued and run again (Restarts=$restarts, $starts starts in its log)"
elif [ -n "$left" ]; then fail $t "temporary files left: $left"
elif ! diff -r -x '.*' "$T/single" "$T/out" >"$T/diff" 2>&1; then
    fail $t "the array's outputs differ from the single-process run: $(head -c 400 "$T/diff")"
elif [ "$(ls "$T/out" | wc -l)" -ne 8 ] || [ "$(find "$T/out" -name strix-done.json | wc -l)" -ne 8 ]; then
    fail $t "not 8 items with a record: $(ls "$T/out" | tr '\n' ' ')"
elif ! grep -q "1 done, 1 already done, 0 failed" "$T/log-1.txt"; then
    fail $t "task 1's second run did not skip its finished item: $(grep 'done,' "$T/log-1.txt" | tr '\n' ' ')"
else pass $t; fi
exit $FAILED
