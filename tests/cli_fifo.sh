#!/bin/sh
# cli_fifo.sh — infer on FIFOs (mkfifo, a shell's <(...)): a video FIFO no
# one writes, or whose writer writes nothing, stops on SIGTERM and on SIGINT
# within a few seconds with exit 130, one line, and no output left (it hung
# in open(2) before, SIGTERM or not); a clip written into a FIFO gives the
# detections of the same clip read from its file; an image or weights file
# that is a FIFO is refused at once (exit 3), not waited on.
#   sh tests/cli_fifo.sh BUILD_DIR      (from the repository root)
NAME=cli_fifo
. "$(dirname "$0")/lib_cli.sh"
M="--weights $ROOT/tests/loaders/v8_f16.pt --imgsz 64 --threads 1 --device cpu"

# stops NAME SIGNAL OUT ARGS...: infer ARGS in the background, SIGNAL after
# 1 s; exit 130 within 5 s of it, one stderr line, OUT not there
stops() {
    name=$1 sig=$2 out=$3
    shift 3
    # shellcheck disable=SC2086
    "$B/infer" $M --out "$out" "$@" >"$T/out" 2>"$T/err" &
    pid=$!
    sleep 1
    kill -"$sig" $pid 2>/dev/null
    i=0
    while [ $i -lt 50 ] && kill -0 $pid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 $pid 2>/dev/null; then
        kill -KILL $pid 2>/dev/null
        wait $pid
        fail "$name" "still running 5 s after SIG$sig"
        return
    fi
    wait $pid
    rc=$?
    lines=$(wc -l <"$T/err")
    if [ $rc -ne 130 ]; then fail "$name" "exit $rc, want 130: $(head -c 300 "$T/err")"
    elif [ "$lines" -ne 1 ]; then fail "$name" "want one stderr line, got $lines: $(head -c 300 "$T/err")"
    elif ! grep -q "interrupted while opening" "$T/err"; then fail "$name" "$(cat "$T/err")"
    elif [ -e "$out" ]; then fail "$name" "output left behind: $(ls -A "$out")"
    else pass "$name"; fi
}

mkfifo "$T/nobody.mp4" || { skip setup "mkfifo failed"; exit 0; }
stops no_writer_sigterm TERM "$T/o1" "$T/nobody.mp4"
stops no_writer_sigint INT "$T/o2" "$T/nobody.mp4"
# a writer that opens the FIFO and writes nothing
mkfifo "$T/silent.mp4"
(exec 3>"$T/silent.mp4"; sleep 8) &
writer=$!
stops silent_writer_sigterm TERM "$T/o3" "$T/silent.mp4"
kill $writer 2>/dev/null
wait $writer 2>/dev/null

# a clip through a FIFO: the frames and boxes of the file itself
if ! command -v ffmpeg >/dev/null 2>&1; then
    skip clip_through_fifo "ffmpeg not installed (sh tools/deps.sh)"
elif ! ffmpeg -v error -nostdin -y -f lavfi -i testsrc=size=160x120:rate=10 -t 2 -c:v libx264 -pix_fmt yuv420p \
    -movflags +faststart "$T/clip.mp4" 2>"$T/err"; then
    skip clip_through_fifo "ffmpeg could not make the clip: $(head -c 200 "$T/err")"
else
    mkfifo "$T/fed.mp4"
    cat "$T/clip.mp4" >"$T/fed.mp4" &
    # shellcheck disable=SC2086
    if run clip_through_fifo 0 $M --no-save --out "$T/o4" "$T/fed.mp4" &&
        run clip_through_fifo 0 $M --no-save --out "$T/o5" "$T/clip.mp4"; then
        tail -n +2 "$T/o4/fed.jsonl" >"$T/a"
        tail -n +2 "$T/o5/clip.jsonl" >"$T/b"
        [ "$(grep -c '"frame"' "$T/a")" -eq 20 ] && cmp -s "$T/a" "$T/b" && pass clip_through_fifo ||
            fail clip_through_fifo "frames or boxes differ from the file's: $(diff "$T/a" "$T/b" | head -c 300)"
    fi
    wait
fi

# an image or weights FIFO: refused at once (before, open(2) waited for a writer)
mkfifo "$T/photo.jpg" "$T/w.safetensors"
printf 'P6\n1 1\n255\n\0\0\0' >"$T/one.ppm"
refused() { # NAME MESSAGE ARGS...
    name=$1 msg=$2
    shift 2
    start=$(date +%s)
    timeout -k 2 20 "$B/infer" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -ne 3 ]; then fail "$name" "exit $rc, want 3: $(head -c 300 "$T/err")"
    elif [ $(($(date +%s) - start)) -gt 5 ]; then fail "$name" "took over 5 s"
    elif ! grep -q "$msg" "$T/err"; then fail "$name" "$(cat "$T/err")"
    else pass "$name"; fi
}
# shellcheck disable=SC2086
refused image_fifo "photo.jpg: is not a regular file (give an image file)" $M --out "$T/o6" "$T/photo.jpg"
refused weights_fifo "w.safetensors: not a regular file" --model "$YAML" --scale n --weights "$T/w.safetensors" \
    --device cpu --out "$T/o7" "$T/one.ppm"
exit $FAILED
