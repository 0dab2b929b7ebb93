#!/bin/sh
# cli_infer.sh — end-to-end tests of the infer tool: exit codes for every
# bad-input case, outputs and their JSON, --txt labels, refusing to
# overwrite, and no temporary files left behind.
#   sh tests/cli_infer.sh BUILD_DIR
# Prints one PASS/FAIL/SKIP line per test, like the C tests; exits 1 if any
# failed.  Weights come from BUILD_DIR/mkweights (synthetic, seed 1); the
# sample JPEGs from $STRIX_DATA or ../shared/data (skipped when absent).
# Images of its own are written with printf (a PPM, a tiny PNG), so no
# Python or image tools are needed.
NAME=cli_infer
. "$(dirname "$0")/lib_cli.sh"


count() { # count PATTERN FILE: lines matching
    grep -c -- "$1" "$2" 2>/dev/null || true
}

# no_temps NAME DIR: nothing named *.tmp left anywhere under DIR
no_temps() {
    left=$(find "$2" -name '*.tmp' 2>/dev/null | head -n 3)
    [ -z "$left" ] || { fail "$1" "temporary files left: $left"; return 1; }
    return 0
}

# json_ok FILE IMAGES ERRORS: the report parses as far as grep can tell
json_ok() {
    f=$1
    [ -s "$f" ] || { echo "no JSON"; return 1; }
    [ "$(head -c 1 "$f")" = "{" ] || { echo "does not start with {"; return 1; }
    [ "$(tail -n 1 "$f")" = "}" ] || { echo "does not end with }"; return 1; }
    ob=$(tr -cd '{' <"$f" | wc -c)
    cb=$(tr -cd '}' <"$f" | wc -c)
    os=$(tr -cd '[' <"$f" | wc -c)
    cs=$(tr -cd ']' <"$f" | wc -c)
    [ "$ob" -eq "$cb" ] && [ "$os" -eq "$cs" ] || { echo "unbalanced brackets"; return 1; }
    for k in strix_version model weights imgsz conf iou images errors; do
        grep -q "\"$k\": " "$f" || { echo "key $k missing"; return 1; }
    done
    n=$(count '{"image": ' "$f")
    [ "$n" -eq $(($2 + $3)) ] || { echo "$n image entries, want $2 + $3"; return 1; }
    e=$(count '"error": ' "$f")
    [ "$e" -eq "$3" ] || { echo "$e error entries, want $3"; return 1; }
    return 0
}

if [ ! -x "$B/infer" ]; then
    skip all "$B/infer is not built"
    exit 0
fi

# ---------------------------------------------------------------- images
# A 16x12 PPM (stb reads PNM) and a 4x3 PNG, written byte by byte.
ppm() { # ppm FILE W H
    printf 'P6\n%d %d\n255\n' "$2" "$3" >"$1"
    i=0
    while [ $i -lt $(($2 * $3)) ]; do
        printf '\200\100\040' >>"$1"
        i=$((i + 1))
    done
}
mkdir -p "$T/in" "$T/dir" "$T/a" "$T/b"
ppm "$T/in/small.ppm" 16 12
ppm "$T/in/wide.ppm" 40 8
printf '\211\120\116\107\015\012\032\012\000\000\000\015\111\110\104\122\000\000\000\004\000\000\000\003\010\002\000\000\000\073\226\071\221\000\000\000\060\111\104\101\124\170\332\143\140\070\301\140\263\212\241\242\207\141\113\036\003\203\310\211\200\200\125\001\075\075\001\047\362\002\030\064\116\054\110\131\265\140\101\317\202\073\171\013\000\017\022\020\055\130\355\227\141\000\000\000\000\111\105\116\104\256\102\140\202' >"$T/in/tiny.png"
: >"$T/empty.jpg"
# a JPEG that ends right after its header: start of image, then nothing usable
printf '\377\330\377\340\000\020JFIF\000\001\001\000\000\001\000\001\000\000\377\333\000' >"$T/corrupt.jpg"
cp "$T/in/small.ppm" "$T/dir/b.ppm"
cp "$T/in/tiny.png" "$T/dir/a.png"
echo "not an image" >"$T/dir/readme.txt"
cp "$T/in/small.ppm" "$T/a/x.ppm"
cp "$T/in/wide.ppm" "$T/b/x.ppm"
echo plain >"$T/afile"

# ------------------------------------------------- tests without weights
if run help 0 --help && grep -q "usage: infer" "$T/out" && grep -q "Exit status" "$T/out"; then
    pass help
elif [ "$rc" -eq 0 ]; then fail help "no usage text"; fi
if run version 0 --version && grep -q "strix" "$T/out"; then pass version
elif [ "$rc" -eq 0 ]; then fail version "no version"; fi

W=$T/w.safetensors # may not exist yet: usage and input errors come first
ok=1
for args in "" "--weights $W $T/in/small.ppm" "--model $YAML $T/in/small.ppm" \
    "--model $YAML --weights $W" "--model $YAML --weights $W --conf 2 $T/in/small.ppm" \
    "--model $YAML --weights $W --conf abc $T/in/small.ppm" "--model $YAML --weights $W --iou=-1 $T/in/small.ppm" \
    "--model $YAML --weights $W --batch 0 $T/in/small.ppm" "--model $YAML --weights $W --bogus $T/in/small.ppm" \
    "--model $YAML --weights $W --scale q $T/in/small.ppm" "--model $YAML --weights $W --save-conf $T/in/small.ppm" \
    "--model $YAML --weights $W --imgsz 12x $T/in/small.ppm" "--model $YAML --weights $W --out"; do
    # shellcheck disable=SC2086
    run usage 2 $args || { ok=0; break; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { fail usage "not one line on stderr for '$args'"; ok=0; break; }
done
[ $ok -eq 1 ] && pass usage

if run missing_input 3 --model "$YAML" --weights "$W" --out "$T/o_missing" "$T/in/small.ppm" "$T/nope.jpg"; then
    if [ -e "$T/o_missing" ]; then fail missing_input "created the output directory"
    elif ! grep -q "nope.jpg" "$T/err"; then fail missing_input "stderr does not name the file"
    else pass missing_input; fi
fi
run glob_nomatch 3 --model "$YAML" --weights "$W" --out "$T/o_glob" "$T/in/*.gif" && pass glob_nomatch
mkdir -p "$T/emptydir"
run empty_dir 3 --model "$YAML" --weights "$W" --out "$T/o_ed" "$T/emptydir" && pass empty_dir
run missing_yaml 3 --model "$T/nope.yaml" --weights "$W" --out "$T/o_y" "$T/in/small.ppm" && pass missing_yaml
# an output directory under a regular file (chmod would not stop root)
run unwritable_out 7 --model "$YAML" --weights "$W" --out "$T/afile/sub" "$T/in/small.ppm" && pass unwritable_out
run clashing_names 2 --model "$YAML" --weights "$W" --out "$T/o_clash" "$T/a/x.ppm" "$T/b/x.ppm" && pass clashing_names
run json_dir_missing 7 --model "$YAML" --weights "$W" --out "$T/o_jd" --json "$T/no/such/dir/r.json" \
    "$T/in/small.ppm" && pass json_dir_missing

# ------------------------------------------------------- with weights
if [ ! -x "$B/mkweights" ] || ! "$B/mkweights" --model "$YAML" --scale n --seed 1 --out "$W" >/dev/null 2>&1; then
    for t in bad_yaml bad_weights precision_usage precision_unsupported int8_calibrate_missing int8 run_samples \
        refuse_overwrite overwrite bad_images labels dir_and_glob no_save batch mixed_batch png_out temps; do
        skip $t "no weights ($B/mkweights missing or failed)"
    done
    [ $FAILED -eq 0 ]
    exit $?
fi
# small inputs and one thread keep the script quick (also under AddressSanitizer)
M="--model $YAML --scale n --weights $W --imgsz 64 --threads 1"

printf 'backbone: [oops\n' >"$T/bad.yaml"
run bad_yaml 4 --model "$T/bad.yaml" --weights "$W" --out "$T/o_by" "$T/in/small.ppm" && pass bad_yaml
echo "not safetensors" >"$T/bad.safetensors"
run bad_weights 5 --model "$YAML" --scale n --weights "$T/bad.safetensors" --out "$T/o_bw" "$T/in/small.ppm" &&
    pass bad_weights

# --precision: its usage errors (exit 2, one line), a precision this CPU
# cannot run (exit 9, one line naming what is missing), int8's calibration
# source that does not exist, and an int8 run calibrated on a directory
# whose JSON is complete
ok=1
for args in "$M --precision int9 $T/in/small.ppm" "$M --precision int8 $T/in/small.ppm" \
    "$M --calibrate $T/in $T/in/small.ppm" "$M --precision bf16 --calibrate $T/in $T/in/small.ppm"; do
    # shellcheck disable=SC2086
    run precision_usage 2 $args || { ok=0; break; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { fail precision_usage "not one line on stderr for '$args'"; ok=0; break; }
done
[ $ok -eq 1 ] && pass precision_usage
# fp16 has no CPU path anywhere; bf16 none on x86-64
unsup=fp16
[ "$(uname -m)" = x86_64 ] && unsup="fp16 bf16"
ok=1
for p in $unsup; do
    case $p in fp16) why="runs on CUDA devices only" ;; *) why="needs bf16 dot products" ;; esac
    # shellcheck disable=SC2086
    run precision_unsupported 9 $M --device cpu --precision "$p" --out "$T/o_pu" "$T/in/small.ppm" || { ok=0; break; }
    if [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q "precision $p $why" "$T/err"; then
        fail precision_unsupported "--precision $p: want one line saying '$why', got: $(cat "$T/err")"
        ok=0
        break
    fi
done
[ $ok -eq 1 ] && pass "precision_unsupported ($unsup)"
# shellcheck disable=SC2086
run int8_calibrate_missing 3 $M --precision int8 --calibrate "$T/nope" --out "$T/o_i8m" "$T/in/small.ppm" &&
    pass int8_calibrate_missing
# shellcheck disable=SC2086
if run int8 0 $M --precision int8 --calibrate "$T/in" --out "$T/o_i8" --no-save --quiet "$T/in/small.ppm" \
    "$T/in/wide.ppm"; then
    if why=$(json_ok "$T/o_i8/detections.json" 2 0); then pass int8; else fail int8 "$why"; fi
fi

set -- "$DATA"/*.jpg
if [ -f "$1" ]; then
    n=$#
    # shellcheck disable=SC2086
    if run run_samples 0 $M --imgsz 320 --out "$T/o_s" "$@"; then
        why=$(json_ok "$T/o_s/detections.json" "$n" 0) || fail run_samples "JSON: $why"
        if [ -z "$why" ]; then
            missing=""
            for f in "$@"; do [ -s "$T/o_s/$(basename "$f")" ] || missing="$missing $(basename "$f")"; done
            if [ -n "$missing" ]; then fail run_samples "no annotated image for:$missing"
            elif ! grep -q "^infer: $n images, [0-9]* detections\{0,1\} in " "$T/out"; then
                fail run_samples "no summary line"
            else pass run_samples; fi
        fi
    fi
else
    skip run_samples "no sample JPEGs in $DATA"
fi

# a first run, then the same outputs again
# shellcheck disable=SC2086
run refuse_overwrite 0 $M --out "$T/o_ow" "$T/in/small.ppm" && {
    sum=$(cksum <"$T/o_ow/detections.json")
    # shellcheck disable=SC2086
    if run refuse_overwrite 7 $M --out "$T/o_ow" "$T/in/small.ppm"; then
        if [ "$(cksum <"$T/o_ow/detections.json")" != "$sum" ]; then fail refuse_overwrite "JSON was changed"
        elif ! grep -q "overwrite" "$T/err"; then fail refuse_overwrite "message does not mention --overwrite"
        else pass refuse_overwrite; fi
    fi
    # shellcheck disable=SC2086
    run overwrite 0 $M --out "$T/o_ow" --overwrite "$T/in/small.ppm" && pass overwrite
}

# one good image among bad ones: processed, the others reported, status 6
cut_dog=""
if [ -f "$DATA/dog.jpg" ]; then
    head -c 60000 "$DATA/dog.jpg" >"$T/dog_cut.jpg"
    cut_dog="$T/dog_cut.jpg"
fi
# shellcheck disable=SC2086
if run bad_images 6 $M --out "$T/o_bad" "$T/empty.jpg" "$T/in/small.ppm" "$T/corrupt.jpg" $cut_dog; then
    nbad=2
    [ -n "$cut_dog" ] && nbad=3
    why=$(json_ok "$T/o_bad/detections.json" 1 $nbad) || fail bad_images "JSON: $why"
    if [ -z "$why" ]; then
        if [ ! -s "$T/o_bad/small.jpg" ]; then fail bad_images "no output for the good image"
        elif [ -e "$T/o_bad/empty.jpg" ] || [ -e "$T/o_bad/corrupt.jpg" ] || [ -e "$T/o_bad/dog_cut.jpg" ]; then
            fail bad_images "output written for a bad image"
        elif [ "$(count 'empty.jpg' "$T/err")" -lt 1 ] || [ "$(count 'corrupt.jpg' "$T/err")" -lt 1 ]; then
            fail bad_images "stderr does not name the bad images"
        elif ! grep -q "failed" "$T/err"; then fail bad_images "summary does not say images failed"
        else pass bad_images; fi
    fi
fi

# shellcheck disable=SC2086
if run labels 0 $M --imgsz 160 --out "$T/o_txt" --txt --save-conf "$T/in/small.ppm" "$T/in/tiny.png"; then
    l=$T/o_txt/labels
    if [ ! -f "$l/small.txt" ] || [ ! -f "$l/tiny.txt" ]; then fail labels "label files missing"
    elif [ "$(cat "$l/small.txt" "$l/tiny.txt" | wc -l)" -ne "$(count '"class_id": ' "$T/o_txt/detections.json")" ]; then
        fail labels "not one line per detection"
    elif [ ! -s "$l/tiny.txt" ]; then fail labels "no detections to check (the synthetic model found none)"
    elif [ -n "$(awk 'NF != 6' "$l/small.txt" "$l/tiny.txt")" ]; then fail labels "lines without 6 fields"
    elif [ -n "$(awk '$2 < 0 || $2 > 1 || $3 < 0 || $3 > 1 || $6 <= 0.25' "$l/small.txt" "$l/tiny.txt")" ]; then
        fail labels "values out of range"
    else pass labels; fi
fi

# a directory (its images, sorted; readme.txt ignored) and a glob
# shellcheck disable=SC2086
if run dir_and_glob 0 $M --out "$T/o_dir" "$T/dir" "$T/in/*.ppm"; then
    order=$(grep -o '{"image": "[^"]*"' "$T/o_dir/detections.json" | sed 's/.*\///; s/"$//' | tr '\n' ' ')
    if [ "$order" != "a.png b.ppm small.ppm wide.ppm " ]; then fail dir_and_glob "images in order: $order"
    else pass dir_and_glob; fi
fi

# shellcheck disable=SC2086
if run no_save 0 $M --out "$T/o_ns" --no-save --quiet "$T/in/small.ppm"; then
    if [ -n "$(ls "$T/o_ns" | grep -v '^detections.json$')" ]; then fail no_save "images written"
    elif [ -s "$T/out" ]; then fail no_save "--quiet printed: $(head -c 100 "$T/out")"
    else pass no_save; fi
fi

# shellcheck disable=SC2086
if run batch 0 $M --out "$T/o_b" --batch 2 "$T/in/small.ppm" "$T/in/wide.ppm" "$T/in/tiny.png"; then
    why=$(json_ok "$T/o_b/detections.json" 3 0) && pass batch || fail batch "JSON: $why"
fi

# images of three sizes with undecodable ones among them, --batch 4: the
# same outputs (detections, labels, annotated images, the lines printed) as
# one image per detect call (--batch 1: each alone), in the input order,
# the failures reported in theirs
mkdir -p "$T/mix"
cp "$T/in/small.ppm" "$T/mix/s1.ppm"
cp "$T/in/wide.ppm" "$T/mix/w1.ppm"
cp "$T/in/tiny.png" "$T/mix/t1.png"
cp "$T/in/small.ppm" "$T/mix/s2.ppm"
cp "$T/in/wide.ppm" "$T/mix/w2.ppm"
mix="$T/mix/s1.ppm $T/mix/w1.ppm $T/empty.jpg $T/mix/t1.png $T/mix/s2.ppm $T/corrupt.jpg $T/mix/w2.ppm"
mix_order="s1.ppm w1.ppm t1.png s2.ppm w2.ppm "
if [ -f "$DATA/dog.jpg" ]; then
    mix="$mix $DATA/dog.jpg"
    mix_order="${mix_order}dog.jpg "
fi
untimed() { sed -E 's/[0-9]+(\.[0-9]+)? ms/N ms/g; s/ in [0-9]+\.[0-9]+ s/ in N s/; s/o_mix[14]/o_mix/g' "$1"; }
# shellcheck disable=SC2086
if run mixed_batch 6 $M --imgsz 160 --conf 0.05 --txt --out "$T/o_mix4" --batch 4 $mix; then
    untimed "$T/out" >"$T/mix4.out"
    untimed "$T/err" >"$T/mix4.err"
    # shellcheck disable=SC2086
    if run mixed_batch 6 $M --imgsz 160 --conf 0.05 --txt --out "$T/o_mix1" --batch 1 $mix; then
        order=$(grep -o '{"image": "[^"]*", "width"' "$T/o_mix4/detections.json" | sed 's/", "width"//; s/.*\///' | tr '\n' ' ')
        if [ "$order" != "$mix_order" ]; then fail mixed_batch "images in order: $order, want $mix_order"
        elif [ "$(count '"class_id": ' "$T/o_mix4/detections.json")" -lt 5 ]; then
            fail mixed_batch "too few detections to compare ($(count '"class_id": ' "$T/o_mix4/detections.json"))"
        elif ! diff -r "$T/o_mix4" "$T/o_mix1" >/dev/null; then
            fail mixed_batch "--batch 4 and --batch 1 differ: $(diff -rq "$T/o_mix4" "$T/o_mix1" | head -n 3 | tr '\n' ' ')"
        elif ! untimed "$T/out" | cmp -s - "$T/mix4.out"; then fail mixed_batch "stdout differs from --batch 1"
        elif ! untimed "$T/err" | cmp -s - "$T/mix4.err"; then fail mixed_batch "stderr differs from --batch 1"
        else pass mixed_batch; fi
    fi
fi

# PNG in, PNG out; other formats become JPEG
# shellcheck disable=SC2086
if run png_out 0 $M --out "$T/o_png" "$T/in/tiny.png" "$T/in/wide.ppm"; then
    sig=$(head -c 4 "$T/o_png/tiny.png" | od -An -tx1 | tr -d ' \n')
    jsig=$(head -c 3 "$T/o_png/wide.jpg" | od -An -tx1 | tr -d ' \n')
    if [ "$sig" != "89504e47" ]; then fail png_out "tiny.png is not a PNG ($sig)"
    elif [ "$jsig" != "ffd8ff" ]; then fail png_out "wide.jpg is not a JPEG ($jsig)"
    else pass png_out; fi
fi

no_temps temps "$T" && pass temps

[ $FAILED -eq 0 ]
