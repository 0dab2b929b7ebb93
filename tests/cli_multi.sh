#!/bin/sh
# cli_multi.sh — end-to-end tests of `infer` on several videos at once
# (--jobs; tools/infer/pipeline.h batches the frames of all of them into one
# detect call): each input's MP4 and JSON Lines (and with --track its MOT
# file) are byte for byte those of a run on it alone, whatever --jobs and
# --batch, inputs of two frame sizes mixed, and with the detection stage in
# two halves (STRIX_CUDA_ASYNC=1: submit the next batch, then collect the
# last; on the CPU a batch completes inside submit; the frames are then the
# model's frame memory, STRIX_PINNED, plain memory on the CPU); an input that is not a video
# among good ones fails alone (exit 6, one line) and leaves the others
# whole; SIGINT mid-run leaves each output complete or absent, and no
# temporary file; --jobs refuses bad values.  Synthetic clips made here with
# FFmpeg's lavfi.
#   sh tests/cli_multi.sh BUILD_DIR
# Prints one PASS/FAIL/SKIP line per test; exits 1 if any failed.
NAME=cli_multi
. "$(dirname "$0")/lib_cli.sh"

ALL="same_as_alone jobs_batch track_stride async_path one_bad sigint bad_jobs"
if [ ! -x "$B/infer" ] || [ ! -x "$B/mkweights" ]; then
    skip_all "$B/infer or $B/mkweights is not built"
fi
if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
    skip_all "ffmpeg/ffprobe not installed (sh tools/deps.sh)"
fi
W=$T/w.safetensors
if ! "$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$W" >/dev/null 2>&1; then
    skip_all "mkweights failed"
fi
M="--model $YAML --scale n --weights $W --imgsz 64 --threads 1 --device cpu --conf 0.05 --preset ultrafast"
ff() { ffmpeg -v error -nostdin -y "$@"; }
# short clips keep the AddressSanitizer run quick: 25, 30 and 20 frames
ff -f lavfi -i testsrc2=size=160x120:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 1 \
    -c:v libx264 -preset ultrafast -c:a aac -shortest "$T/a.mp4"
ff -f lavfi -i mandelbrot=size=160x120:rate=25 -t 1.2 -c:v libx264 -preset ultrafast "$T/b.mp4"
ff -f lavfi -i testsrc=size=128x96:rate=10 -t 2 -c:v mjpeg "$T/c.avi"
printf 'this is not a video\n' >"$T/bad.mp4"
for v in a.mp4 b.mp4 c.avi; do
    [ -s "$T/$v" ] || skip_all "ffmpeg could not make $v"
done

no_temps() {
    left=$(find "$T" -name '*.tmp' 2>/dev/null | head -n 3)
    [ -z "$left" ] || { fail "$1" "temporary files left: $left"; return 1; }
    return 0
}
# same TEST DIR_A DIR_B EXT...: DIR_B's a, b, c outputs equal DIR_A's, byte for byte
same() {
    t=$1 da=$2 db=$3
    shift 3
    for ext in "$@"; do
        for s in a b c; do
            if ! cmp -s "$da/$s.$ext" "$db/$s.$ext"; then
                fail "$t" "$db/$s.$ext differs from the run on $s alone ($da/$s.$ext)"
                return 1
            fi
        done
    done
    return 0
}

# the references: each input alone
ok=1
for s in a.mp4 b.mp4 c.avi; do
    # shellcheck disable=SC2086
    run same_as_alone 0 $M --out "$T/alone" "$T/$s" || ok=0
    # shellcheck disable=SC2086
    run track_stride 0 $M --track --vid-stride 2 --no-save --out "$T/alone_track" "$T/$s" || ok=0
done
if [ $ok -eq 1 ]; then
    # shellcheck disable=SC2086
    run same_as_alone 0 $M --out "$T/o1" "$T/a.mp4" "$T/b.mp4" "$T/c.avi" &&
        same same_as_alone "$T/alone" "$T/o1" jsonl mp4 && no_temps same_as_alone && pass same_as_alone
    # shellcheck disable=SC2086
    run jobs_batch 0 $M --jobs 2 --batch 3 --out "$T/o2" "$T/a.mp4" "$T/b.mp4" "$T/c.avi" &&
        same jobs_batch "$T/alone" "$T/o2" jsonl mp4 && pass jobs_batch
    # shellcheck disable=SC2086
    run track_stride 0 $M --track --vid-stride 2 --batch 4 --no-save --out "$T/o3" "$T/a.mp4" "$T/b.mp4" "$T/c.avi" &&
        same track_stride "$T/alone_track" "$T/o3" jsonl mot.txt tracks.json && pass track_stride
    # shellcheck disable=SC2086
    STRIX_CUDA_ASYNC=1 run async_path 0 $M --batch 2 --out "$T/o6" "$T/a.mp4" "$T/b.mp4" "$T/c.avi" &&
        same async_path "$T/alone" "$T/o6" jsonl mp4 && pass async_path

    # shellcheck disable=SC2086
    if run one_bad 6 $M --batch 2 --out "$T/o4" "$T/a.mp4" "$T/bad.mp4" "$T/b.mp4" "$T/c.avi"; then
        if [ "$(grep -c 'bad.mp4' "$T/err")" -ne 1 ]; then fail one_bad "stderr: $(head -c 400 "$T/err")"
        elif [ -e "$T/o4/bad.mp4" ] || [ -e "$T/o4/bad.jsonl" ]; then fail one_bad "outputs for the bad input"
        elif same one_bad "$T/alone" "$T/o4" jsonl mp4 && no_temps one_bad; then pass one_bad; fi
    fi
else
    for t in same_as_alone jobs_batch track_stride async_path one_bad; do fail "$t" "a run on one input failed"; done
fi

# SIGINT while two long inputs run: exit 130, each output either complete
# (its JSON Lines header counts the frames the MP4 holds) or absent, no
# temporary file
ff -f lavfi -i testsrc2=size=160x120:rate=25 -t 20 -c:v libx264 -preset ultrafast "$T/l1.mp4"
ff -f lavfi -i mandelbrot=size=160x120:rate=25 -t 20 -c:v libx264 -preset ultrafast "$T/l2.mp4"
# shellcheck disable=SC2086
"$B/infer" $M --out "$T/o5" "$T/l1.mp4" "$T/l2.mp4" >"$T/out" 2>"$T/err" &
pid=$!
i=0
while [ $i -lt 600 ] && ! cat "$T"/o5/.l2.jsonl.*.tmp 2>/dev/null | grep -q '"frame": 3'; do
    sleep 0.1
    i=$((i + 1))
done
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
why=""
for s in l1 l2; do
    j=$T/o5/$s.jsonl
    [ -e "$j" ] || [ -e "$T/o5/$s.mp4" ] || continue
    [ -e "$j" ] && [ -e "$T/o5/$s.mp4" ] || { why="$s: only one of its MP4 and JSON Lines"; break; }
    hdr=$(head -n 1 "$j" | sed -n 's/.*"frames": \([0-9]*\).*/\1/p')
    lines=$(($(wc -l <"$j") - 1))
    n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 \
        "$T/o5/$s.mp4" | head -n 1)
    if [ -z "$hdr" ] || [ "$hdr" != "$lines" ] || [ "$n" != "$lines" ] || [ "$n" -ge 500 ]; then
        why="$s: header $hdr frames, $lines records, $n frames in the MP4"
        break
    fi
done
if [ "$rc" -ne 130 ]; then fail sigint "exit status $rc, want 130: $(head -c 300 "$T/err")"
elif [ -n "$why" ]; then fail sigint "$why"
else no_temps sigint && pass sigint; fi

# shellcheck disable=SC2086
if run bad_jobs 2 $M --jobs 0 "$T/a.mp4"; then
    if [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q -- '--jobs' "$T/err"; then fail bad_jobs "$(cat "$T/err")"
    else pass bad_jobs; fi
fi

[ $FAILED -eq 0 ]
