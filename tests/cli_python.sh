#!/bin/sh
# cli_python.sh — the Python package (python/) as a user gets it: Debian's
# python3 and python3-numpy (tools/deps.sh), a fresh venv, `pip install
# ./python` with no package index (the README's command,
#   python3 -m venv --system-site-packages .venv && .venv/bin/pip install ./python
# with the venv in the test's directory) (its in-tree backend runs make here and
# bundles BUILD_DIR's libstrix.so), then tests/python/test_strix.py (the
# same detections as `infer --json`, a frame with none, wrong frames, bad
# weights, two models in two threads, tracking, the ctypes structures
# against strix.h; the task models' masks and polygons, keypoints, oriented
# boxes and top-5 as `infer --json` gives them, and tracked) and README.md's
# "Use from Python" example, run verbatim.
# The plain build only: under a sanitizer build it prints one SKIP.
#   sh tests/cli_python.sh BUILD_DIR
NAME=cli_python
. "$(dirname "$0")/lib_cli.sh"

if grep -q __asan_init "$B/infer" 2>/dev/null; then
    skip all "the package wraps the plain build's libstrix.so (this is the sanitizer build)"
    exit 0
fi
PY=/usr/bin/python3 # Debian's, as deps.sh installs it (not a python3 earlier on PATH)
if ! [ -x $PY ] || ! $PY -c 'import numpy, venv, ensurepip' 2>"$T/err"; then
    skip all "Debian's python3 with numpy and venv is missing ($(tail -n 1 "$T/err")): sh tools/deps.sh installs them"
    exit 0
fi
W=$ROOT/tests/loaders/v8_f16.pt # an Ultralytics checkpoint (tools/reference/make_loader_fixtures.py)

# The venv sees Debian's numpy; --no-index: nothing may come from the network.
if ! $PY -m venv --system-site-packages "$T/venv" >"$T/err" 2>&1 ||
    ! "$T/venv/bin/pip" install --no-index --config-settings make-args="BUILD=$B" "$ROOT/python" >"$T/err" 2>&1; then
    fail install "venv + pip install ./python: $(tail -n 5 "$T/err" | tr '\n' ' ')"
    exit 1
fi
site=$("$T/venv/bin/python" -c 'import strix, os; print(os.path.dirname(strix.__file__))')
case "$site" in
"$T"/venv/*) pass install ;;
*) fail install "import strix found $site, not the venv's copy" ;;
esac

# The reference: infer on the sample images (or two made here without them).
if [ -f "$DATA/dog.jpg" ] && [ -f "$DATA/horses.jpg" ]; then
    imgs="$DATA/dog.jpg $DATA/horses.jpg"
else
    ffmpeg -v error -f lavfi -i "testsrc2=size=640x360" -frames:v 1 "$T/a.png" &&
        ffmpeg -v error -f lavfi -i "mandelbrot=size=500x400" -frames:v 1 "$T/b.png" || fail inputs "ffmpeg lavfi"
    imgs="$T/a.png $T/b.png"
fi
# The task models' references: infer on the first image at imgsz 320 (the conf of each: a few to a hundred
# results), and a static ONNX export of the classify model (at its own size); the loop stops at a failure.
mkdir -p "$T/tasks"
# shellcheck disable=SC2086 # $imgs: paths without spaces (DATA, T)
set -- $imgs
for m in seg:0.6 seg-retina:0.6:--retina-masks pose:0.55 obb:0.55 cls:0.25; do
    name=${m%%:*} r=${m#*:}
    conf=${r%%:*} flag=""
    [ "$r" != "$conf" ] && flag=${r#*:}
    # shellcheck disable=SC2086 # $flag: one word or none
    run reference 0 --device cpu --weights "$ROOT/tests/loaders/t-${name%-retina}.pt" --imgsz 320 --conf "$conf" \
        $flag --no-save --quiet --json "$T/tasks/t-$name.json" --out "$T/truns" "$1" || break
done
# TrackTrack with its recovered detections on a real clip (an obb model, thresholds low enough for these synthetic
# boxes): the frames as infer decodes them, for Model.track to compare with infer --track
if [ -f "$DATA/vtest.avi" ] && ffmpeg -v error -y -i "$DATA/vtest.avi" -frames:v 12 -c copy "$T/tasks/clip.avi" &&
    ffmpeg -v error -y -i "$T/tasks/clip.avi" -f rawvideo -pix_fmt rgb24 -sws_flags bilinear "$T/tasks/clip.rgb"; then
    printf 'tracker_type: tracktrack\ntrack_high_thresh: 0.3\ntrack_low_thresh: 0.2\nnew_track_thresh: 0.35\nmin_track_len: 1\n' \
        >"$T/tasks/tt.yaml"
    run reference 0 --device cpu --weights "$ROOT/tests/loaders/t-obb.pt" --imgsz 160 --conf 0.3 --track \
        --tracker "$T/tasks/tt.yaml" --no-save --quiet --out "$T/tasks/obbtrack" "$T/tasks/clip.avi" || rm -f "$T/tasks/clip.rgb"
fi
[ -s "$T/tasks/t-cls.json" ] && run reference 0 --device cpu --weights "$ROOT/tests/loaders/t-cls.onnx" --model "$ROOT/tests/loaders/tiny-cls.yaml" \
    --scale n --no-save --quiet --json "$T/tasks/t-cls-onnx.json" --out "$T/truns" "$1"
# shellcheck disable=SC2086
if [ -s "$T/tasks/t-cls-onnx.json" ] && run reference 0 --device cpu --weights "$W" --json "$T/ref.json" --out "$T/runs" $imgs; then
    # shellcheck disable=SC2086
    (cd "$T" && "$T/venv/bin/python" "$ROOT/tests/python/test_strix.py" "$ROOT" "$W" "$T/ref.json" "$T/tasks" $imgs) ||
        FAILED=1
fi

# README.md's example, verbatim, where the files it names are: the checkpoint
# under the name it uses and the first sample image as dog.jpg.
mkdir -p "$T/readme"
awk '/^## Use from Python/ { sec = 1; next } /^## / { sec = 0 }
     sec && /^```python/ { inb = 1; next } inb && /^```/ { exit } inb' "$ROOT/README.md" >"$T/readme/example.py"
weights=$(sed -n 's/.*Model("\([^"]*\)").*/\1/p' "$T/readme/example.py" | head -n 1)
image=$(sed -n 's/.*imread("\([^"]*\)").*/\1/p' "$T/readme/example.py" | head -n 1)
if [ ! -s "$T/readme/example.py" ] || [ -z "$weights" ] || [ -z "$image" ]; then
    fail readme_example "README.md has no \"## Use from Python\" section with a \`\`\`python block naming Model(\"...\") and imread(\"...\")"
else
    cp "$W" "$T/readme/$weights"
    set -- $imgs
    cp "$1" "$T/readme/$image"
    if (cd "$T/readme" && "$T/venv/bin/python" example.py) >"$T/readme/out" 2>"$T/err"; then
        # each line: NAME SCORE [x1, y1, x2, y2] (score to 0.001, box to 0.1), against infer's first image
        bad=$($PY - "$T/ref.json" "$T/readme/out" <<'PYEOF'
import json, sys
ref = json.load(open(sys.argv[1]))["images"][0]["detections"]
out = open(sys.argv[2]).read().splitlines()
if len(out) != len(ref):
    print("%d lines, infer found %d detections" % (len(out), len(ref)))
for i, (line, d) in enumerate(zip(out, ref)):
    head, box = line.split(" [", 1)
    name, score = head.rsplit(" ", 1)
    box = [float(v) for v in box.rstrip("]").split(",")]
    if (name != d["class_name"] or abs(float(score) - d["score"]) > 0.0006
            or max(abs(a - b) for a, b in zip(box, d["box"])) > 0.051):
        print("line %d: %r, infer: %s" % (i + 1, line, d))
        break
PYEOF
)
        if [ -z "$bad" ]; then pass readme_example; else fail readme_example "$bad"; fi
    else
        fail readme_example "exit status $?: $(head -c 400 "$T/err")"
    fi
fi
exit $FAILED
