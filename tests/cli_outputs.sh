#!/bin/sh
# cli_outputs.sh — what the tools write, and what they must never write
# over.  No output replaces a file the same run reads (weights, model YAML,
# names, an image-sequence frame, a replayed detections file), whatever the
# spelling or link and with --overwrite; two outputs of one run are never one
# file; mkweights never replaces its model YAML.  Exit codes and messages of
# bad outputs and inputs (--json DIR, --model DIR, --highlights NAME, a 0x0
# PNG, a tracker refusing a replayed box).  Temporary files a SIGKILLed run
# left are removed by the next run into the same directory, once and with one
# line, while a live process's and another host's stay.
#   sh tests/cli_outputs.sh BUILD_DIR
NAME=cli_outputs
. "$(dirname "$0")/lib_cli.sh"

if [ ! -x "$B/infer" ] || [ ! -x "$B/mkweights" ]; then
    skip all "the tools are not built in $B"
    exit 0
fi

# intact NAME FILE SUM: FILE still has checksum SUM
sum() { cksum <"$1"; }
intact() {
    [ "$(sum "$2")" = "$3" ] && return 0
    fail "$1" "$2 was changed"
    return 1
}
# says NAME TEXT: stderr has TEXT (else the test fails, showing stderr)
says() {
    grep -q -- "$2" "$T/err" && return 0
    fail "$1" "stderr lacks '$2': $(head -c 400 "$T/err")"
    return 1
}

mkdir -p "$T/m" "$T/seq" "$T/o"
sed '/^names:/,$d' "$YAML" >"$T/m/model.yaml"
"$B/mkweights" --model "$T/m/model.yaml" --scale n --out "$T/m/w.st" 2>"$T/err" || {
    skip all "mkweights failed: $(head -c 200 "$T/err")"
    exit 0
}
printf 'P6\n8 8\n255\n' >"$T/img.ppm"
head -c 192 /dev/zero | tr '\0' '\100' >>"$T/img.ppm"
M="--device cpu --model $T/m/model.yaml --scale n --weights $T/m/w.st --imgsz 64"
W=$(sum "$T/m/w.st")
Y=$(sum "$T/m/model.yaml")

# ------------------------------------------- outputs over the run's inputs
# shellcheck disable=SC2086
if run json_over_weights 7 $M --overwrite --out "$T/o" --json "$T/m/w.st" "$T/img.ppm" &&
    says json_over_weights "would write over $T/m/w.st, which this run reads" &&
    intact json_over_weights "$T/m/w.st" "$W"; then pass json_over_weights; fi

# another spelling of the YAML's path
# shellcheck disable=SC2086
if run json_over_yaml 7 $M --overwrite --out "$T/o" --json "$T/m/../m/./model.yaml" "$T/img.ppm" &&
    says json_over_yaml "which this run reads" && intact json_over_yaml "$T/m/model.yaml" "$Y"; then
    pass json_over_yaml
fi

seq 0 79 | sed 's/^/n/' >"$T/m/names.txt"
N=$(sum "$T/m/names.txt")
ln -s "$T/m/names.txt" "$T/names_link.json"
# shellcheck disable=SC2086
if run json_over_names 7 $M --names "$T/m/names.txt" --overwrite --out "$T/o" --json "$T/names_link.json" \
    "$T/img.ppm" && intact json_over_names "$T/m/names.txt" "$N"; then pass json_over_names; fi

# mkweights: --out the model YAML, by its name and by a hard link
"$B/mkweights" --model "$T/m/model.yaml" --scale n --overwrite --out "$T/m/model.yaml" >"$T/out" 2>"$T/err"
rc=$?
ln "$T/m/model.yaml" "$T/hard.yaml"
"$B/mkweights" --model "$T/m/model.yaml" --scale n --overwrite --out "$T/hard.yaml" >>"$T/out" 2>>"$T/err"
rc2=$?
if [ $rc -eq 7 ] && [ $rc2 -eq 7 ] && says mkweights_over_yaml "mkweights: .* would write over" &&
    intact mkweights_over_yaml "$T/m/model.yaml" "$Y"; then pass mkweights_over_yaml
elif [ $rc -ne 7 ] || [ $rc2 -ne 7 ]; then fail mkweights_over_yaml "exit $rc and $rc2, want 7"; fi

VIDEO=
if command -v ffmpeg >/dev/null 2>&1 &&
    ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=10:duration=1 -c:v libx264 -preset ultrafast \
        -pix_fmt yuv420p "$T/clip.mp4" 2>/dev/null &&
    ffmpeg -v error -y -i "$T/clip.mp4" "$T/seq/%03d.png" 2>/dev/null; then
    VIDEO=$T/clip.mp4
fi
if [ -z "$VIDEO" ]; then
    for t in seq_frame two_outputs frame_label detections_over_tracks tracker_code sigkill_temps; do
        skip $t "ffmpeg is not installed or cannot make the test clip"
    done
else
    F=$(sum "$T/seq/002.png")
    # shellcheck disable=SC2086
    if run seq_frame 7 $M --overwrite --no-save --json "$T/seq/002.png" "$T/seq/%03d.png" &&
        says seq_frame "which this run reads" && intact seq_frame "$T/seq/002.png" "$F"; then pass seq_frame; fi

    # shellcheck disable=SC2086
    if run two_outputs 7 $M --out "$T/o" --json "$T/o/clip.mp4" "$VIDEO" &&
        says two_outputs "two outputs of this run would write it" && [ ! -e "$T/o/clip.mp4" ]; then
        pass two_outputs
    fi

    # --names where --txt writes the labels of frame 3
    mkdir -p "$T/l/labels"
    cp "$T/m/names.txt" "$T/l/labels/clip_3.txt"
    # shellcheck disable=SC2086
    if run frame_label 7 $M --names "$T/l/labels/clip_3.txt" --txt --overwrite --no-save --out "$T/l" "$VIDEO" &&
        says frame_label "--txt would write over" && intact frame_label "$T/l/labels/clip_3.txt" "$N"; then
        pass frame_label
    fi

    # a replayed detections file where --track writes its tracks.json
    # shellcheck disable=SC2086
    if run make_dets 0 $M --no-save --conf 0.001 --out "$T/d" "$VIDEO"; then
        cp "$T/d/clip.jsonl" "$T/d/clip.tracks.json"
        D=$(sum "$T/d/clip.tracks.json")
        if run detections_over_tracks 7 --detections "$T/d/clip.tracks.json" --track --overwrite --no-save \
            --out "$T/d" "$VIDEO" && intact detections_over_tracks "$T/d/clip.tracks.json" "$D"; then
            pass detections_over_tracks
        fi
    fi

    # a replayed box with no area: ignored (exit 0) or refused as a bad input
    # (exit 3), never an output error (7)
    awk 'BEGIN { for (f = 0; f < 10; f++)
        printf("{\"frame\": %d, \"pts\": %g, \"inferred\": true, \"detections\": [{\"class_id\": 0, " \
               "\"class_name\": \"a\", \"score\": 0.9, \"box\": [10, 10, %d, 20]}]}\n", f, f / 10, f < 5 ? 30 : 10) }' \
        >"$T/flat.jsonl"
    "$B/infer" --detections "$T/flat.jsonl" --track --no-save --out "$T/flat" "$VIDEO" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 3 ]; then pass tracker_code
    else fail tracker_code "exit $rc, want 0 or 3: $(head -c 300 "$T/err")"; fi
fi

# ------------------------------------------------- codes and messages
mkdir -p "$T/jdir"
# shellcheck disable=SC2086
if run json_dir 7 $M --overwrite --out "$T/o" --json "$T/jdir" "$T/img.ppm" && says json_dir "is a directory"; then
    if grep -q -- "--overwrite" "$T/err"; then fail json_dir "suggests --overwrite: $(cat "$T/err")"
    else pass json_dir; fi
fi
if run model_dir 3 --device cpu --model "$T/m" --weights "$T/m/w.st" --out "$T/md" "$T/img.ppm" &&
    says model_dir "$T/m: is a directory, not a model file"; then pass model_dir; fi
# shellcheck disable=SC2086
if [ -n "$VIDEO" ] && run highlights_unknown 2 $M --highlights unicorn --no-save --out "$T/h" "$VIDEO" &&
    says highlights_unknown "infer: --highlights: 'unicorn' is not a class of this model (its classes: person, bicycle, ...)"; then
    pass highlights_unknown
fi
printf '\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\0\0\0\0\0\0\010\002\0\0\0\0\0\0\0\0\0\0\0IEND\256B`\202' >"$T/zero.png"
# shellcheck disable=SC2086
if run zero_png 6 $M --out "$T/z" "$T/zero.png" && says zero_png "zero.png: PNG header gives a size of 0x0"; then
    pass zero_png
fi

# ------------------------------------------- temporary files after SIGKILL
if [ -n "$VIDEO" ]; then
    ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25:duration=30 -c:v libx264 -preset ultrafast \
        -pix_fmt yuv420p "$T/long.mp4" 2>/dev/null
    HOST=$(uname -n)
    O=$T/k
    # shellcheck disable=SC2086
    "$B/infer" $M --imgsz 320 --threads 1 --quiet --out "$O" "$T/long.mp4" >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    while [ $i -lt 200 ] && [ "$(find "$O" -name '*.tmp' 2>/dev/null | wc -l)" -lt 2 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    sleep 0.5
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    n=$(find "$O" -name ".*.$HOST.$pid.*.tmp" | wc -l)
    # a live process's temporary file, another host's, and one that is no temporary name
    sleep 30 &
    live=$!
    : >"$O/.x.mp4.$HOST.$live.0.tmp"
    : >"$O/.x.mp4.otherhost.$pid.0.tmp"
    : >"$O/.notes.$HOST.tmp"
    # shellcheck disable=SC2086
    "$B/infer" $M --out "$O" "$VIDEO" >"$T/out" 2>"$T/err"
    rc=$?
    left=$(find "$O" -name ".*.$HOST.$pid.*.tmp" | wc -l)
    lines=$(grep -c "stale temporary" "$T/err")
    if [ "$n" -lt 2 ]; then fail sigkill_temps "the killed run left $n temporary files named .NAME.$HOST.$pid.N.tmp"
    elif [ $rc -ne 0 ]; then fail sigkill_temps "the next run exited $rc: $(head -c 300 "$T/err")"
    elif [ "$left" -ne 0 ]; then fail sigkill_temps "$left of the killed run's $n temporary files left"
    elif [ "$lines" -ne 1 ] || ! grep -q "removed $n stale temporary files of killed runs from $O" "$T/err"; then
        fail sigkill_temps "stderr: $(cat "$T/err")"
    elif [ ! -e "$O/.x.mp4.$HOST.$live.0.tmp" ] || [ ! -e "$O/.x.mp4.otherhost.$pid.0.tmp" ] ||
        [ ! -e "$O/.notes.$HOST.tmp" ]; then fail sigkill_temps "removed a file that is not a dead run's"
    else pass sigkill_temps; fi
    kill $live 2>/dev/null
fi
exit $FAILED
