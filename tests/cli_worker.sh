#!/bin/sh
# cli_worker.sh — end-to-end tests of `infer --manifest` as a batch worker
# (tools/infer/worker.c; README "Run at scale"): the shards of a manifest,
# run one after the other, cover it with each item exactly once, under
# --shard and under exactly the environment AWS Batch, a Kubernetes Indexed
# Job and a Slurm array set for every index of a small array; each item's
# outputs equal a plain run on that input alone; a re-run skips finished
# items and redoes those whose input, outputs or options changed; bad and
# missing items are listed in the failures file (exit 10, 11); SIGTERM
# mid-item stops with 130 leaving no output of that item and no temporary
# file, and the retry finishes the shard; a held item lock makes a second
# worker wait and then skip.  Synthetic clips made here with FFmpeg's lavfi.
#   sh tests/cli_worker.sh BUILD_DIR
NAME=cli_worker
. "$(dirname "$0")/lib_cli.sh"

ALL="shards_union same_as_alone rerun_skips redo_changed failures_list sigterm_retry engine_env lock_wait usage"
if [ ! -x "$B/infer" ] || [ ! -x "$B/mkweights" ]; then
    skip_all "$B/infer or $B/mkweights is not built"
fi
if ! command -v ffmpeg >/dev/null 2>&1; then
    skip_all "ffmpeg not installed (sh tools/deps.sh)"
fi
W=$T/w.safetensors
if ! "$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$W" >/dev/null 2>&1; then
    skip_all "mkweights failed"
fi
M="--model $YAML --scale n --weights $W --imgsz 64 --threads 1 --device cpu --conf 0.05 --preset ultrafast"
ff() { ffmpeg -v error -nostdin -y "$@"; }
mkdir -p "$T/in"
for i in 1 2 3 4 5; do
    ff -f lavfi -i "testsrc2=size=96x64:rate=5" -t 1 -vf "hue=h=$((i * 60))" -c:v libx264 -preset ultrafast \
        "$T/in/clip$i.mp4"
done
cp "$DATA/dog.jpg" "$T/in/dog.jpg" 2>/dev/null ||
    ff -f lavfi -i testsrc=size=64x48 -frames:v 1 "$T/in/dog.jpg"
for f in clip1.mp4 clip5.mp4 dog.jpg; do
    [ -s "$T/in/$f" ] || skip_all "ffmpeg could not make $f"
done
# 6 items: plain lines and JSON Lines with an output name
{
    echo "# six items"
    echo "$T/in/clip1.mp4"
    echo "{\"input\": \"$T/in/clip2.mp4\", \"output\": \"second\"}"
    echo "$T/in/dog.jpg"
    echo ""
    echo "$T/in/clip3.mp4"
    echo "{\"input\": \"$T/in/clip4.mp4\"}"
    echo "$T/in/clip5.mp4"
} >"$T/m.txt"
NAMES="clip1 second dog clip3 clip4 clip5"

no_temps() {
    left=$(find "$1" -name '*.tmp' 2>/dev/null | head -n 3)
    [ -z "$left" ] || { fail "$2" "temporary files left: $left"; return 1; }
    return 0
}
# covered TEST DIR: every item has its record, nothing else is there
covered() {
    for n in $NAMES; do
        [ -s "$1/$n/strix-done.json" ] || { fail "$2" "$1/$n has no completion record"; return 1; }
    done
    extra=$(ls "$1" | grep -v -x -e clip1 -e second -e dog -e clip3 -e clip4 -e clip5 -e metrics.prom | head -n 3)
    [ -z "$extra" ] || { fail "$2" "unexpected entries in $1: $extra"; return 1; }
    no_temps "$1" "$2"
}
# done_sum FILES...: the sums "D A F" of "N done, N already done, N failed" over the summaries
done_sum() {
    cat "$@" | sed -n 's/.*: \([0-9]*\) done, \([0-9]*\) already done, \([0-9]*\) failed.*/\1 \2 \3/p' |
        awk '{d += $1; a += $2; f += $3} END {print d + 0, a + 0, f + 0}'
}

# shards_union: --shard i/3 for i = 0..2, one after the other
ok=1
for i in 0 1 2; do
    run shards_union 0 $M --manifest "$T/m.txt" --out "$T/s" --shard "$i/3" || { ok=0; break; }
    cat "$T/out" >"$T/sum$i"
done
if [ $ok = 1 ]; then
    s=$(done_sum "$T/sum0" "$T/sum1" "$T/sum2")
    if [ "$s" != "6 0 0" ]; then fail shards_union "done/already/failed over the shards: $s, want 6 0 0"
    elif ! grep -q "shard 1 of 3 (--shard): 2 of 6 items" "$T/sum1"; then fail shards_union "summary: $(cat "$T/sum1")"
    elif covered "$T/s" shards_union; then pass shards_union; fi
fi

# same_as_alone: an item's outputs are a plain run's on that input
if run same_as_alone 0 $M --out "$T/alone" "$T/in/clip2.mp4" "$T/in/dog.jpg"; then
    if ! cmp -s "$T/alone/clip2.mp4" "$T/s/second/clip2.mp4" || ! cmp -s "$T/alone/clip2.jsonl" "$T/s/second/clip2.jsonl"; then
        fail same_as_alone "$T/s/second differs from a plain run on clip2.mp4"
    elif ! cmp -s "$T/alone/dog.jpg" "$T/s/dog/dog.jpg"; then fail same_as_alone "dog.jpg differs from a plain run"
    else pass same_as_alone; fi
fi

# rerun_skips: everything is done: nothing runs again, no file changes
ls -lR --time-style=full-iso "$T/s" >"$T/before"
if run rerun_skips 0 $M --manifest "$T/m.txt" --out "$T/s"; then
    ls -lR --time-style=full-iso "$T/s" >"$T/after"
    if ! grep -q "0 done, 6 already done, 0 failed" "$T/out"; then fail rerun_skips "summary: $(tail -n 1 "$T/out")"
    elif ! cmp -s "$T/before" "$T/after"; then fail rerun_skips "files changed on a re-run that had nothing to do"
    else pass rerun_skips; fi
fi

# redo_changed: a touched input, a deleted output, then other options
redo_changed() {
    touch -d '2001-01-01' "$T/in/clip3.mp4"
    rm "$T/s/clip5/clip5.jsonl"
    run redo_changed 0 $M --manifest "$T/m.txt" --out "$T/s" || return
    grep -q "2 done, 4 already done, 0 failed" "$T/out" ||
        { fail redo_changed "after a touch and a delete: $(tail -n 1 "$T/out")"; return; }
    [ -s "$T/s/clip5/clip5.jsonl" ] || { fail redo_changed "the deleted output was not made again"; return; }
    run redo_changed 0 $M --conf 0.5 --manifest "$T/m.txt" --out "$T/s" || return
    grep -q "6 done, 0 already done, 0 failed" "$T/out" ||
        { fail redo_changed "after --conf 0.5: $(tail -n 1 "$T/out")"; return; }
    covered "$T/s" redo_changed && pass redo_changed
}
redo_changed

# failures_list: an undecodable item (exit 10), then a missing one too (exit 11)
failures_list() {
    printf 'not a video\n' >"$T/in/bad.mp4"
    { cat "$T/m.txt"; echo "$T/in/bad.mp4"; } >"$T/m2.txt"
    { cat "$T/m2.txt"; echo "$T/in/missing.mp4"; } >"$T/m3.txt"
    run failures_list 10 $M --manifest "$T/m2.txt" --out "$T/f" || return
    run failures_list 11 $M --manifest "$T/m3.txt" --out "$T/f" || return
    fl=$T/f/failures-0-of-1.jsonl
    [ "$(wc -l <"$fl")" -eq 2 ] || { fail failures_list "$fl: $(cat "$fl")"; return; }
    if ! grep -q '"output": "bad", "line": 9, "exit": 6,' "$fl" ||
        ! grep -q '"output": "missing", "line": 10, "exit": 3,' "$fl"; then
        fail failures_list "$fl does not name both with their line and exit code: $(cat "$fl")"
        return
    fi
    [ -z "$(find "$T/f/bad" "$T/f/missing" ! -name '.*' ! -type d)" ] || { fail failures_list "a failed item left outputs"; return; }
    grep -q "6 already done, 2 failed" "$T/err" || { fail failures_list "summary: $(tail -n 1 "$T/err")"; return; }
    run failures_list 0 $M --manifest "$T/m.txt" --out "$T/f" || return
    [ ! -e "$fl" ] || { fail failures_list "a run without failures left the old failures list"; return; }
    pass failures_list
}
failures_list

# sigterm_retry: SIGTERM while a long item runs: 130, that item has nothing, the retry finishes
sigterm_retry() {
    ff -f lavfi -i "testsrc2=size=160x120:rate=25" -t 30 -c:v libx264 -preset ultrafast "$T/in/long.mp4"
    { echo "$T/in/clip1.mp4"; echo "$T/in/long.mp4"; echo "$T/in/clip2.mp4"; } >"$T/ml.txt"
    "$B/infer" $M --manifest "$T/ml.txt" --out "$T/t" >"$T/out" 2>"$T/err" &
    pid=$!
    n=0 # wait until long.mp4 is under way: its temporary video exists
    while [ $n -lt 300 ] && [ -z "$(find "$T/t/long" -name '*.tmp' 2>/dev/null)" ]; do sleep 0.1; n=$((n + 1)); done
    kill -TERM $pid 2>/dev/null
    t0=$(date +%s)
    wait $pid
    rc=$?
    took=$(($(date +%s) - t0))
    [ $n -lt 300 ] || { fail sigterm_retry "long.mp4 never started; stderr: $(head -c 300 "$T/err")"; return; }
    [ $rc -eq 130 ] || { fail sigterm_retry "exit status $rc after SIGTERM, want 130; stderr: $(tail -n 3 "$T/err")"; return; }
    [ $took -le 10 ] || { fail sigterm_retry "took $took s to stop after SIGTERM"; return; }
    [ -z "$(ls "$T/t/long")" ] || { fail sigterm_retry "the interrupted item kept outputs: $(ls "$T/t/long")"; return; }
    no_temps "$T/t" sigterm_retry || return
    [ -s "$T/t/clip1/strix-done.json" ] || { fail sigterm_retry "the item before lost its record"; return; }
    grep -q '"output": "long", "line": 2, "exit": 130' "$T/t/failures-0-of-1.jsonl" 2>/dev/null ||
        { fail sigterm_retry "the failures list does not name the interrupted item"; return; }
    rm -f "$T/in/long.mp4"
    ff -f lavfi -i "testsrc2=size=160x120:rate=25" -t 1 -c:v libx264 -preset ultrafast "$T/in/long.mp4"
    run sigterm_retry 0 $M --manifest "$T/ml.txt" --out "$T/t" || return
    grep -q "2 done, 1 already done, 0 failed" "$T/out" || { fail sigterm_retry "retry: $(tail -n 1 "$T/out")"; return; }
    [ ! -e "$T/t/failures-0-of-1.jsonl" ] || { fail sigterm_retry "the retry left the failures list"; return; }
    pass sigterm_retry
}
sigterm_retry

# engine_env: each engine's environment, every index of a 3-task array
# (env -i: only what the engine sets, plus PATH and HOME)
engine() { # TEST OUTDIR INDEX VAR=VALUE...
    t=$1 d=$2 i=$3
    shift 3
    env -i PATH="$PATH" HOME="$T" "$@" "$B/infer" $M --manifest "$T/m.txt" --out "$d" $SHARDS >"$T/out$i" 2>"$T/err"
    rc=$?
    [ $rc -eq 0 ] || { fail "$t" "index $i: exit status $rc; stderr: $(head -c 300 "$T/err")"; return 1; }
}
ok=1
for i in 0 1 2; do
    SHARDS="--shards 3"
    engine engine_env "$T/aws" $i AWS_BATCH_JOB_ID="0f1e-$i:$i" AWS_BATCH_JOB_ARRAY_INDEX=$i AWS_BATCH_JOB_ATTEMPT=1 \
        AWS_BATCH_CE_NAME=gpu-ce AWS_BATCH_JQ_NAME=gpu-queue || { ok=0; break; }
done
[ $ok = 1 ] && s=$(done_sum "$T/out0" "$T/out1" "$T/out2") && [ "$s" != "6 0 0" ] && { fail engine_env "AWS Batch: $s"; ok=0; }
[ $ok = 1 ] && ! grep -q "(AWS_BATCH_JOB_ARRAY_INDEX): 2 of 6" "$T/out2" && { fail engine_env "AWS Batch: $(cat "$T/out2")"; ok=0; }
[ $ok = 1 ] && ! covered "$T/aws" engine_env && ok=0
for i in 0 1 2; do
    [ $ok = 1 ] || break
    SHARDS="--shards 3"
    engine engine_env "$T/k8s" $i JOB_COMPLETION_INDEX=$i HOSTNAME="strix-$i-abcde" \
        KUBERNETES_SERVICE_HOST=10.0.0.1 || ok=0
done
[ $ok = 1 ] && s=$(done_sum "$T/out0" "$T/out1" "$T/out2") && [ "$s" != "6 0 0" ] && { fail engine_env "Kubernetes: $s"; ok=0; }
[ $ok = 1 ] && ! covered "$T/k8s" engine_env && ok=0
for i in 1 2 3; do # sbatch --array=1-3
    [ $ok = 1 ] || break
    SHARDS=""
    engine engine_env "$T/slurm" $i SLURM_JOB_ID=$((100 + i)) SLURM_ARRAY_JOB_ID=100 SLURM_ARRAY_TASK_ID=$i \
        SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_STEP=1 || ok=0
done
[ $ok = 1 ] && s=$(done_sum "$T/out1" "$T/out2" "$T/out3") && [ "$s" != "6 0 0" ] && { fail engine_env "Slurm: $s"; ok=0; }
[ $ok = 1 ] && ! grep -q "shard 0 of 3 (SLURM_ARRAY_TASK_ID)" "$T/out1" && { fail engine_env "Slurm: $(cat "$T/out1")"; ok=0; }
[ $ok = 1 ] && covered "$T/slurm" engine_env && pass engine_env

# lock_wait: a worker whose first item is locked by someone else does the
# others first, waits, then skips the item the holder finished
if command -v flock >/dev/null 2>&1; then
    mkdir -p "$T/l/clip1"
    cp -r "$T/s/clip1" "$T/l/" # a finished item: the holder "finishes" it while we wait
    rm "$T/l/clip1/strix-done.json"
    flock "$T/l/clip1/.strix-lock" sh -c "sleep 2; cp '$T/s/clip1/strix-done.json' '$T/l/clip1/'" &
    hold=$!
    sleep 0.5
    if run lock_wait 0 $M --conf 0.5 --manifest "$T/m.txt" --out "$T/l"; then
        if ! grep -q "5 done, 1 already done, 0 failed" "$T/out"; then fail lock_wait "summary: $(tail -n 1 "$T/out")"
        else pass lock_wait; fi
    fi
    wait $hold
else
    skip lock_wait "flock(1) not installed (util-linux)"
fi

# usage: bad combinations and a malformed manifest, one line each
usage() {
    printf '%s\n{"input": "a.mp4", "output": "x/y"}\n' "$T/in/clip1.mp4" >"$T/bad.txt"
    run usage 2 $M --manifest "$T/bad.txt" --out "$T/u" || return
    grep -q "bad.txt:2: \"output\" \"x/y\" holds a '/'" "$T/err" || { fail usage "malformed manifest: $(cat "$T/err")"; return; }
    run usage 2 $M --manifest "$T/m.txt" "$T/in/clip1.mp4" || return
    grep -q "give no INPUT" "$T/err" || { fail usage "--manifest with an INPUT: $(cat "$T/err")"; return; }
    run usage 2 $M --shard 1/2 "$T/in/clip1.mp4" || return
    grep -q "work with --manifest" "$T/err" || { fail usage "--shard without --manifest: $(cat "$T/err")"; return; }
    JOB_COMPLETION_INDEX=1
    export JOB_COMPLETION_INDEX
    run usage 2 $M --manifest "$T/m.txt" --out "$T/u"
    rc=$?
    unset JOB_COMPLETION_INDEX
    [ $rc -eq 0 ] || return
    grep -q "JOB_COMPLETION_INDEX is set but the shard count is not: pass --shards N" "$T/err" ||
        { fail usage "JOB_COMPLETION_INDEX without --shards: $(cat "$T/err")"; return; }
    [ ! -e "$T/u" ] || { fail usage "a refused run created $T/u"; return; }
    pass usage
}
usage
exit $FAILED
