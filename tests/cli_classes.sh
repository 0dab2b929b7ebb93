#!/bin/sh
# cli_classes.sh — class names of models that bring none, and the class-count
# limit.  For nc = 1, 3, 80 and 1000 (synthetic weights, no `names` in the
# YAML) every path that prints or parses a class name: the JSON report, the
# --txt labels and the labelled annotated image, --classes NAME, the video's
# JSON Lines, --track's MOT and tracks.json, --highlights NAME, and inspect.
# Unnamed classes are "class0", "class1", ... (Ultralytics' default names);
# an 80-class model without names gets COCO's.  Then nc past
# STRIX_MAX_CLASSES (4096) is refused by every tool with one line.
#   sh tests/cli_classes.sh BUILD_DIR
NAME=cli_classes
. "$(dirname "$0")/lib_cli.sh"

if [ ! -x "$B/infer" ] || [ ! -x "$B/mkweights" ] || [ ! -x "$B/inspect" ]; then
    skip all "the tools are not built in $B"
    exit 0
fi

# A 64x48 PPM, written byte by byte (a gradient, so the model sees something).
{
    printf 'P6\n64 48\n255\n'
    i=0
    while [ $i -lt 3072 ]; do
        printf "\\$(printf '%03o' $((i % 200)))\\100\\040"
        i=$((i + 1))
    done
} >"$T/img.ppm"
VIDEO=
if command -v ffmpeg >/dev/null 2>&1 &&
    ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=10:duration=1 -c:v libx264 -preset ultrafast \
        -pix_fmt yuv420p "$T/clip.mp4" 2>/dev/null; then
    VIDEO=$T/clip.mp4
fi

# the first class_name in FILE
first_name() { sed -n 's/.*"class_name": "\([^"]*\)".*/\1/p' "$1" | head -n 1; }

for nc in 1 3 80 1000; do
    sed "s/^nc: 80.*/nc: $nc/" "$YAML" >"$T/m$nc.yaml"
    sed -i '/^names:/,$d' "$T/m$nc.yaml"
    if ! "$B/mkweights" --model "$T/m$nc.yaml" --scale n --out "$T/w$nc.st" 2>"$T/err"; then
        fail "nc${nc}_weights" "mkweights: $(head -c 300 "$T/err")"
        continue
    fi
    M="--model $T/m$nc.yaml --scale n --weights $T/w$nc.st --device cpu --imgsz 64 --conf 0.001 --max-det 20"
    last=$((nc - 1))
    if [ "$nc" -eq 80 ]; then want0=person; wantl=toothbrush; else want0=class0; wantl=class$last; fi
    O=$T/o$nc

    # images: JSON report, labels, annotated output
    # shellcheck disable=SC2086
    if run "nc${nc}_images" 0 $M --txt --out "$O" "$T/img.ppm"; then
        names=$(sed -n 's/.*"class_name": "\([^"]*\)".*/\1/p' "$O/detections.json" | sort -u)
        bad=$(echo "$names" | grep -v -x -e "$want0" -e 'class[0-9]*' | head -n 1)
        [ "$nc" -eq 80 ] && bad=$(echo "$names" | grep -x 'class[0-9]*' | head -n 1)
        if [ -z "$names" ]; then fail "nc${nc}_images" "no detections to name"
        elif [ -n "$bad" ]; then fail "nc${nc}_images" "class name '$bad' in $O/detections.json"
        elif [ ! -s "$O/img.jpg" ] || [ ! -f "$O/labels/img.txt" ]; then
            fail "nc${nc}_images" "annotated image or labels missing"
        else pass "nc${nc}_images"; fi
    fi

    # --classes by name: the first and the last class
    # shellcheck disable=SC2086
    if run "nc${nc}_classes" 0 $M --classes "$want0,$wantl" --no-save --out "$O/c" "$T/img.ppm"; then
        other=$(sed -n 's/.*"class_name": "\([^"]*\)".*/\1/p' "$O/c/detections.json" |
            grep -v -x -e "$want0" -e "$wantl" | head -n 1)
        if [ -n "$other" ]; then fail "nc${nc}_classes" "--classes $want0,$wantl kept '$other'"
        else pass "nc${nc}_classes"; fi
    fi
    # shellcheck disable=SC2086
    if run "nc${nc}_classes_unknown" 2 $M --classes unicorn --no-save --out "$O/u" "$T/img.ppm"; then
        if grep -q "'unicorn' is not a class of this model (its classes: $want0" "$T/err"; then
            pass "nc${nc}_classes_unknown"
        else fail "nc${nc}_classes_unknown" "message: $(cat "$T/err")"; fi
    fi

    # inspect reports the class count
    if "$B/inspect" --model "$T/m$nc.yaml" --scale n --summary --device cpu >"$T/out" 2>"$T/err" &&
        grep -q ", $nc classes," "$T/out"; then pass "nc${nc}_inspect"
    else fail "nc${nc}_inspect" "$(head -c 300 "$T/out" "$T/err")"; fi

    # video: JSON Lines, --track (MOT, tracks.json) and --highlights by name
    if [ -z "$VIDEO" ]; then
        skip "nc${nc}_video" "ffmpeg is not installed or cannot make a test clip"
        continue
    fi
    # shellcheck disable=SC2086
    if run "nc${nc}_video" 0 $M --track --highlights "$want0,$wantl" --hl-score 0.001 --out "$O/v" "$VIDEO"; then
        jl=$(first_name "$O/v/clip.jsonl")
        tj=$(first_name "$O/v/clip.tracks.json")
        if [ -z "$jl" ] || [ -z "$tj" ]; then fail "nc${nc}_video" "no named detections or tracks"
        elif [ "$nc" -ne 80 ] && ! echo "$jl $tj" | grep -q -x 'class[0-9]* class[0-9]*'; then
            fail "nc${nc}_video" "names '$jl' '$tj'"
        elif [ ! -s "$O/v/clip.mot.txt" ] || [ ! -s "$O/v/clip.highlights.json" ]; then
            fail "nc${nc}_video" "MOT file or highlights missing"
        else pass "nc${nc}_video"; fi
    fi
done

# nc past STRIX_MAX_CLASSES: refused with one line, before any planning
sed 's/^nc: 80.*/nc: 100000/' "$YAML" >"$T/big.yaml"
if run nc_limit_yaml 4 --device cpu --model "$T/big.yaml" --scale n --weights "$T/w3.st" --out "$T/big" "$T/img.ppm"; then
    if grep -q "big.yaml:.*nc 100000 is out of range: strix supports 1 to 4096 classes" "$T/err" &&
        [ "$(wc -l <"$T/err")" -eq 1 ]; then pass nc_limit_yaml
    else fail nc_limit_yaml "message: $(cat "$T/err")"; fi
fi
if run nc_limit_option 2 --model "$YAML" --scale n --weights "$T/w3.st" --nc 100000 --out "$T/big" "$T/img.ppm"; then
    if grep -q -- "--nc: '100000' is not an integer in 1..4096" "$T/err"; then pass nc_limit_option
    else fail nc_limit_option "message: $(cat "$T/err")"; fi
fi
"$B/inspect" --model "$YAML" --scale n --nc 100000 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "out of range: strix supports 1 to 4096 classes" "$T/err"; then pass nc_limit_inspect
else fail nc_limit_inspect "exit $rc: $(cat "$T/err")"; fi
# 4294967297 wrapped to nc 1 through an int cast once
for big in 100000 4294967297; do
    "$B/mkweights" --model "$YAML" --scale n --nc $big --out "$T/big.st" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q -- "--nc $big: not a class count in 1..4096" "$T/err" && [ ! -e "$T/big.st" ]; then
        pass nc_limit_mkweights_$big
    else fail nc_limit_mkweights_$big "exit $rc: $(cat "$T/err")"; fi
done
exit $FAILED
