#!/bin/sh
# cli_docs.sh — runs every command shown in README.md and docs/*.md, so the
# documentation cannot rot.  The convention (docs/README.md, "Commands in
# these pages"):
#   ```sh               every line is a command, run with sh from a scratch
#                       directory made for the block (the block's lines share
#                       it); `\` at the end of a line continues it; blank
#                       lines and lines starting with # are comments
#   ```sh exit=N        the commands must exit N (default 0)
#   ```sh no-run: WHY   not run here (a GPU, a cloud account, the network,
#                       root, the suite itself): one SKIP line per command
#   ```sh tested-by: cli_NAME
#                       run by tests/cli_NAME.sh (make dist, make image):
#                       that script must exist and contain every word of
#                       each command, else FAIL
#   ```text, ```json, ```yaml   output and data, not read
#   a fence with no info string, or bash/shell/console: FAIL (a command
#   could hide there)
# Also: every relative link [text](path) must name an existing file, every
# folder of the repository (two levels deep) must be named in
# docs/ARCHITECTURE.md, and each <!-- PLACEHOLDER ... --> comment prints a
# SKIP line.
# The scratch directory looks like the repository's top to the commands:
# build/ -> BUILD_DIR, weights/ (the YAMLs), tools/, deploy/, tests/, and the inputs
# the docs name (sample images, short lavfi clips, synthetic weights, the
# .pt/.onnx fixtures of tests/loaders/ under the names the docs use).
# The optimised build only: under a sanitizer build it prints one SKIP.
#   sh tests/cli_docs.sh BUILD_DIR
NAME=cli_docs
. "$(dirname "$0")/lib_cli.sh"

BABS=$(cd "$B" 2>/dev/null && pwd) || BABS=$B
B=$BABS
cd "$ROOT" || exit 1
DOCS="README.md $(ls docs/*.md)"

# show FILE N: the first N bytes of a command, on one line, safe for echo
show() { head -c "$2" "$1" | tr '\n' ' ' | sed 's/\\/\\\\/g'; }

# --- source checks: fences, links, placeholders (no build needed) ------------
for f in $DOCS; do
    awk -v f="$f" '
        /^[ \t]*```/ {
            if (!inb) {
                inb = 1; info = $0; sub(/^[ \t]*```[ \t]*/, "", info)
                split(info, w, /[ \t]+/)
                if (info == "" || w[1] == "bash" || w[1] == "shell" || w[1] == "console")
                    printf "FAIL cli_docs_fence %s:%d: a fence without an info string or with \"%s\": use sh (run), text, json or yaml\n", f, FNR, w[1]
            } else inb = 0
            next
        }
        !inb && /<!-- *PLACEHOLDER/ {
            s = $0; sub(/.*<!-- */, "", s); printf "SKIP cli_docs_placeholder %s:%d: %s ...\n", f, FNR, substr(s, 1, 90)
        }
        END { if (inb) printf "FAIL cli_docs_fence %s: a fence is never closed\n", f }
    ' "$f"
    # relative links to files
    dir=$(dirname "$f")
    grep -o '\]([^)#: ]*[^)]*)' "$f" | sed 's/^](//; s/)$//; s/#.*//' | while read -r l; do
        case "$l" in "" | http:* | https:* | mailto:*) continue ;; esac
        [ -e "$dir/$l" ] || echo "FAIL cli_docs_link $f: [..]($l) names no file"
    done
done | tee "$T/src"
grep -q '^FAIL' "$T/src" && FAILED=1
grep -q '^FAIL cli_docs_link' "$T/src" || pass "links (every relative link of README.md and docs/*.md names a file)"
grep -q '^FAIL cli_docs_fence' "$T/src" || pass "fences (every fenced block has an info string)"

# every folder of the repository, two levels deep, is named in ARCHITECTURE.md
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    unnamed=""
    for d in $(git -C "$ROOT" ls-files | awk -F/ 'NF > 1 { print $1 } NF > 2 { print $1 "/" $2 }' | sort -u); do
        grep -qF "\`$d/\`" docs/ARCHITECTURE.md || unnamed="$unnamed $d/"
    done
    if [ -n "$unnamed" ]; then
        fail folders "docs/ARCHITECTURE.md does not name:$unnamed"
    else
        pass "folders (docs/ARCHITECTURE.md names every folder two levels deep)"
    fi
else
    skip folders "not a git checkout: no list of the repository's folders"
fi

# --- extract the commands: one file per command, one plan line each -----------
mkdir -p "$T/cmd"
for f in $DOCS; do
    awk -v f="$f" -v dir="$T/cmd" '
        function flush() {
            if (cmd == "") return
            n++; file = sprintf("%s/%s_%d.sh", dir, key, n)
            print cmd > file; close(file)
            printf "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", f, start, blk, mode, arg, want, file
            cmd = ""
        }
        BEGIN { key = f; gsub(/[^A-Za-z0-9]/, "_", key); blk = 0 }
        /^[ \t]*```/ {
            if (!inb) {
                inb = 1; info = $0; sub(/^[ \t]*```[ \t]*/, "", info)
                issh = (info ~ /^sh([ \t]|$)/); blk++
                mode = "run"; arg = "-"; want = 0
                if (info ~ /^sh[ \t]+no-run:/) { mode = "skip"; arg = info; sub(/^sh[ \t]+no-run:[ \t]*/, "", arg) }
                else if (info ~ /^sh[ \t]+tested-by:/) { mode = "by"; arg = info; sub(/^sh[ \t]+tested-by:[ \t]*/, "", arg); sub(/[ \t].*/, "", arg) }
                else if (info ~ /^sh[ \t]+exit=[0-9]+/) { want = info; sub(/^sh[ \t]+exit=/, "", want); sub(/[^0-9].*/, "", want) }
                if (arg == "") arg = "no reason given"
            } else { flush(); inb = 0; issh = 0 }
            next
        }
        !inb || !issh { next }
        {
            line = $0
            if (cmd == "") {
                if (line ~ /^[ \t]*(#|$)/) next
                start = FNR
            }
            if (line ~ /\\$/) { cmd = cmd substr(line, 1, length(line) - 1) " "; next }
            cmd = cmd line; flush()
        }
    ' "$f"
done >"$T/plan"

if grep -q __asan_init "$B/infer" 2>/dev/null; then
    skip all "the docs' $(wc -l <"$T/plan") commands run once, against the optimised build (under the sanitizers they would add minutes and reach no code the other cli_* scripts do not)"
    exit $FAILED
fi

# --- the commands that are not run here ---------------------------------------
tab=$(printf '\t')
while IFS="$tab" read -r f line blk mode arg want file; do
    label="$f:$line"
    case $mode in
    skip) skip "$label" "$arg: $(show "$file" 100)" ;;
    by)
        script=tests/$arg.sh
        if [ ! -f "$script" ]; then
            fail "$label" "tested-by: $arg, but $script does not exist"
            continue
        fi
        missing=""
        # the command's words, without a trailing # comment
        set -f # the words are literal text (a * in a path is not a glob here)
        for w in $(sed 's/[ \t]#.*//' "$file"); do
            grep -qF -- "$w" "$script" || missing="$missing $w"
        done
        set +f
        if [ -n "$missing" ]; then
            fail "$label" "tested-by: $arg, but $script does not contain:$missing"
        else
            pass "$label (run by $script: $(show "$file" 60))"
        fi
        ;;
    esac
done <"$T/plan"

# --- the commands that are run ---------------------------------------------
grep -q "${tab}run${tab}" "$T/plan" || exit $FAILED
need_tools="infer inspect mkweights"
for t in $need_tools; do
    if [ ! -x "$B/$t" ]; then
        grep "${tab}run${tab}" "$T/plan" | while IFS="$tab" read -r f line rest; do
            skip "$f:$line" "$B/$t is not built (make tools)"
        done
        exit $FAILED
    fi
done
if ! command -v ffmpeg >/dev/null 2>&1; then
    grep "${tab}run${tab}" "$T/plan" | while IFS="$tab" read -r f line rest; do
        skip "$f:$line" "ffmpeg is not installed (sh tools/deps.sh): it makes the sample clips"
    done
    exit $FAILED
fi

# The fixtures, once, in $T/fx; each block gets a copy.
fx=$T/fx
mkdir -p "$fx/weights" "$fx/images"
ln -s "$BABS" "$fx/build"
ln -s "$ROOT/tools" "$fx/tools"
ln -s "$ROOT/deploy" "$fx/deploy"
ln -s "$ROOT/tests" "$fx/tests"
cp "$ROOT"/weights/*.yaml "$fx/weights/"
cp "$ROOT/weights/yolov8.yaml" "$fx/weights/yolov8n.yaml"
if ! "$B/mkweights" --model "$ROOT/weights/yolov8.yaml" --scale n --seed 7 \
    --out "$fx/weights/yolov8n.safetensors" >"$T/mk.out" 2>&1; then
    fail fixtures "mkweights failed: $(head -c 300 "$T/mk.out")"
    exit 1
fi
cp "$ROOT/tests/loaders/v8_f16.pt" "$fx/yolov8n.pt"
cp "$ROOT/tests/loaders/v8_f16.pt" "$fx/best.pt"
cp "$ROOT/tests/loaders/v8_op12.onnx" "$fx/yolov8n.onnx"
cp "$ROOT/tests/loaders/tiny-v8.yaml" "$fx/yolov8n.yaml"
for t in seg pose obb cls; do cp "$ROOT/tests/loaders/t-$t.pt" "$fx/yolo11n-$t.pt"; done
images=""
for i in dog horses person eagle; do
    if [ -f "$DATA/$i.jpg" ]; then
        cp "$DATA/$i.jpg" "$fx/$i.jpg"
        cp "$DATA/$i.jpg" "$fx/images/$i.jpg"
    else
        images="$images $i.jpg"
    fi
done
[ -f "$fx/dog.jpg" ] && cp "$fx/dog.jpg" "$fx/photo.jpg"
# short clips: 2 s of a test pattern at 10 fps with a tone (H.264 + AAC)
clip() { # OUT SIZE
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=$2:rate=10:duration=2" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=2" \
        -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest "$1" >"$T/ff.out" 2>&1
}
if ! clip "$fx/clip.mp4" 320x240 || ! clip "$fx/walk.mp4" 320x240 ||
    ! clip "$fx/walk.mov" 320x240 || ! clip "$fx/park.mp4" 320x240; then
    fail fixtures "ffmpeg could not make the clips: $(head -c 300 "$T/ff.out")"
    exit 1
fi

# run each block in a fresh copy of the fixtures
prev=""
while IFS="$tab" read -r f line blk mode arg want file; do
    [ "$mode" = run ] || continue
    label="$f:$line"
    if [ "$f:$blk" != "$prev" ]; then
        prev="$f:$blk"
        rm -rf "$T/s"
        cp -a "$fx" "$T/s"
    fi
    # an input the block names that the sample data lacks: SKIP, not FAIL
    miss=""
    for i in $images; do
        pat="$i\|images/"
        [ "$i" = dog.jpg ] && pat="$pat\|photo.jpg"
        grep -q "$pat" "$file" && miss="$miss $i"
    done
    if [ -n "$miss" ]; then
        skip "$label" "sample image(s)$miss not in $DATA (see ../shared/data/README.md)"
        continue
    fi
    start=$(date +%s)
    (cd "$T/s" && PATH="$BABS:$PATH" timeout 120 sh "$file") >"$T/run.out" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    if [ "$rc" -eq "$want" ]; then
        pass "$label (${secs} s: $(show "$file" 70))"
    else
        fail "$label" "exit status $rc, want $want: $(show "$file" 120); output: $(tail -c 400 "$T/run.out" | tr '\n' ' ' | sed 's/\\/\\\\/g')"
    fi
done <"$T/plan"
exit $FAILED
