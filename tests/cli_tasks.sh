#!/bin/sh
# cli_tasks.sh — `infer` end to end on segment, pose, obb and classify models
# against Ultralytics' YOLO.predict (tests/golden/tasks_e2e/, made by
# tools/reference/task_e2e_goldens.py: the loader fixtures
# tests/loaders/t-*.pt on ../shared/data's dog.jpg and horses.jpg, imgsz 320,
# t-cls also at imgsz 100 and 250 (rounded up to a multiple of 32);
# YOLO26's t26-seg.pt, t26-pose.pt, t26-obb.pt on dog.jpg with the default
# one-to-many head and, `"nms": false` goldens, with --nms-free: the
# one-to-one head, as YOLO.predict(nms=False); t26-seg also on eagle.jpg,
# whose best boxes reach into the letterbox padding).
#   sh tests/cli_tasks.sh BUILD
# Per golden, infer's detections.json against Results.summary(): the same
# number of results, classes in the same order, scores within 2e-4, and
#   segment   each polygon (masks.xy, --retina-masks too) by its IoU with
#             Ultralytics' (both filled even-odd, rasterised per pixel row),
#             >= 0.99 each (seen >= 0.99999; a pixel whose logit is near 0
#             may flip on another instruction set); the boxes are cropped
#             before they are clipped (t26-seg-eagle-e2e: two boxes in the
#             padding would lose their masks otherwise)
#   pose      keypoints x, y within 0.05 px, visibility within 1e-4
#   obb       the 4 corners within 0.05 px, the angle (the first edge's
#             direction) within 1e-3 rad
#   classify  the top-5 classes in order, probabilities within 2e-5
# and the txt labels as save_txt lays them out per task (fields per line).
# Then the task outputs on a video (seg, pose, obb, cls JSON Lines: every
# frame's detections carry their task field, classify's frames "probs"),
# from the .pt fixtures, their ONNX exports and --model YAML + safetensors,
# --track on seg and pose (track ids beside the masks and keypoints) and on
# obb (the tracker's rotated boxes beside the detections' own), and
# --line/--highlights from a pose model's boxes; the highlight reels of a seg and an obb model drawing the
# masks and rotated boxes (reels), and --detections replaying them (replay: an obb run re-tracked on its
# rotated boxes, a seg run's polygons passed through).  SKIPs with the reason when ../shared/data or the
# build's infer is missing.
NAME=cli_tasks
. "$(dirname "$0")/lib_cli.sh"

GOLD=$ROOT/tests/golden/tasks_e2e
ALL="segment pose obb classify yolo26_segment yolo26_pose yolo26_obb labels video track obb_track obb_recovered line_highlights reels
replay"
if [ ! -x "$B/infer" ]; then
    skip_all "$B/infer is not built"
fi
if [ ! -f "$DATA/dog.jpg" ] || [ ! -f "$DATA/horses.jpg" ] || [ ! -f "$DATA/eagle.jpg" ]; then
    skip_all "dog.jpg, horses.jpg and eagle.jpg not in $DATA (see ../shared/data/README.md)"
fi
if ! command -v jq >/dev/null 2>&1; then
    skip_all "jq not installed (sh tools/deps.sh)"
fi

# geometry of each result of a summary, one line "class score values..." per result
# (segment: the polygon's x y pairs; pose: x..., y..., visible...; obb: the corners)
gold_lines() { # FILE TASK
    case $2 in
    segment) jq -r '.results[] | [.class, .confidence, ([.segments.x, .segments.y] | transpose | flatten)[]] | @tsv' "$1" ;;
    pose) jq -r '.results[] | [.class, .confidence, .keypoints.x[], .keypoints.y[], (.keypoints.visible // [])[]] | @tsv' "$1" ;;
    obb) jq -r '.results[] | [.class, .confidence, .box.x1, .box.y1, .box.x2, .box.y2, .box.x3, .box.y3, .box.x4, .box.y4] | @tsv' "$1" ;;
    classify) jq -r '.results[] | [.class, .confidence] | @tsv' "$1" ;;
    esac
}
# infer's detections.json as Results.summary()'s results, for gold_lines
as_summary() { # FILE
    jq '{results: (.images[0] | .probs // (.detections | map({class: .class_id, confidence: .score, segments,
                                                                 keypoints, box: .obb})))}' "$1"
}

# compare GOLD_LINES STRIX_LINES TASK WIDTH HEIGHT: prints "ok WORST" or one line of what differs
compare() {
    awk -v task="$3" -v W="$4" -v H="$5" -F '\t' '
    # the covered length of row yc of polygon p (points in X[p, i], Y[p, i], N[p]) as sorted intervals in S[p, k]
    function row(p, yc,   i, j, n, x, k, t) {
        n = 0
        for (i = 1; i <= N[p]; i++) {
            j = i % N[p] + 1
            if ((Y[p, i] <= yc) != (Y[p, j] <= yc)) {
                x = X[p, i] + (yc - Y[p, i]) * (X[p, j] - X[p, i]) / (Y[p, j] - Y[p, i])
                for (k = n; k >= 1 && S[p, k] > x; k--) S[p, k + 1] = S[p, k]
                S[p, k + 1] = x
                n++
            }
        }
        C[p] = n
    }
    function len(p,   k, s) { s = 0; for (k = 1; k < C[p]; k += 2) s += S[p, k + 1] - S[p, k]; return s }
    function both(   a, b, s, lo, hi) {
        s = 0; a = 1; b = 1
        while (a < C[1] && b < C[2]) {
            lo = S[1, a] > S[2, b] ? S[1, a] : S[2, b]
            hi = S[1, a + 1] < S[2, b + 1] ? S[1, a + 1] : S[2, b + 1]
            if (hi > lo) s += hi - lo
            if (S[1, a + 1] < S[2, b + 1]) a += 2; else b += 2
        }
        return s
    }
    function iou(   y, i, u, a1, a2) {
        i = 0; a1 = 0; a2 = 0
        for (y = 0; y < H; y++) {
            row(1, y + 0.5); row(2, y + 0.5)
            a1 += len(1); a2 += len(2); i += both()
        }
        u = a1 + a2 - i
        return u > 0 ? i / u : 1
    }
    function ad(a, b) { return a > b ? a - b : b - a }
    NR == FNR { g[FNR] = $0; ng = FNR; next }
    { s[FNR] = $0; ns = FNR }
    END {
        if (ng != ns) { print ng " results in Ultralytics, " ns " from strix"; exit }
        worst = task == "segment" ? 1 : 0
        for (r = 1; r <= ng; r++) {
            n1 = split(g[r], a, "\t"); n2 = split(s[r], b, "\t")
            if (a[1] != b[1]) { print "result " r ": class " b[1] ", Ultralytics " a[1]; exit }
            tol = task == "classify" ? 2e-5 : 2e-4
            if (ad(a[2], b[2]) > tol) { print "result " r ": score " b[2] ", Ultralytics " a[2]; exit }
            if (task == "segment") {
                N[1] = (n1 - 2) / 2; N[2] = (n2 - 2) / 2
                for (i = 1; i <= N[1]; i++) { X[1, i] = a[2 * i + 1]; Y[1, i] = a[2 * i + 2] }
                for (i = 1; i <= N[2]; i++) { X[2, i] = b[2 * i + 1]; Y[2, i] = b[2 * i + 2] }
                v = iou()
                if (v < 0.99) { print "result " r ": polygon IoU " v " (" N[2] " points, Ultralytics " N[1] ")"; exit }
                if (v < worst) worst = v
                continue
            }
            if (n1 != n2) { print "result " r ": " n2 - 2 " values, Ultralytics " n1 - 2; exit }
            nk = task == "pose" ? (n1 - 2) / (n1 - 2 == 51 ? 3 : 2) : 0
            for (i = 3; i <= n1; i++) {
                t = task == "pose" && i > 2 + 2 * nk ? 1e-4 : 0.05
                if (ad(a[i], b[i]) > t) { print "result " r ": value " i - 2 " is " b[i] ", Ultralytics " a[i]; exit }
                if (ad(a[i], b[i]) > worst) worst = ad(a[i], b[i])
            }
            if (task == "obb") {
                pi = atan2(0, -1)
                d = atan2(b[6] - b[4], b[5] - b[3]) - atan2(a[6] - a[4], a[5] - a[3])
                while (d > pi / 2) d -= pi
                while (d < -pi / 2) d += pi
                if (ad(d, 0) > 1e-3) { print "result " r ": angle off by " d " rad"; exit }
            }
        }
        print "ok " worst
    }' "$1" "$2"
}

for case in segment:t-seg pose:t-pose obb:t-obb classify:t-cls yolo26_segment:t26-seg yolo26_pose:t26-pose \
    yolo26_obb:t26-obb; do
    tn=${case%%:*} m=${case#*:}
    task=${tn#yolo26_}
    bad="" seen=""
    for g in "$GOLD/$m"-*.json; do
        pic=$(jq -r .picture "$g")
        conf=$(jq -r .conf "$g")
        imgsz=$(jq -r .imgsz "$g")
        w=$(jq -r .width "$g")
        h=$(jq -r .height "$g")
        retina="" nmsfree=""
        [ "$(jq -r .retina_masks "$g")" = true ] && retina=--retina-masks
        [ "$(jq -r .nms "$g")" = false ] && nmsfree=--nms-free
        label=$(basename "$g" .json)
        # shellcheck disable=SC2086
        run "$tn" 0 --weights "$ROOT/tests/loaders/$m.pt" --device cpu --imgsz "$imgsz" --conf "$conf" --iou 0.7 \
            $retina $nmsfree --no-save --quiet --out "$T/$label" "$DATA/$pic" || { bad=1; break; }
        gold_lines "$g" $task >"$T/gold"
        as_summary "$T/$label/detections.json" >"$T/summary.json"
        gold_lines "$T/summary.json" $task >"$T/strix"
        got=$(compare "$T/gold" "$T/strix" $task "$w" "$h")
        case $got in
        ok*) seen="$seen $label: ${got#ok }" ;;
        *) fail "$tn" "$label: $got"; bad=1; break ;;
        esac
    done
    if [ -z "$bad" ]; then
        pass "$tn"
        echo "    worst ($([ $task = segment ] && echo "polygon IoU" || echo "abs diff")):$seen"
    fi
done

# labels: one line per result with the fields save_txt writes (class + polygon pairs; class + box + 17x3;
# class + 4 corners; classify: "0.39 name" lines, at most 5)
bad=""
for m in t-seg:odd t-pose:56 t-obb:9 t-cls:probs; do
    mod=${m%%:*} fields=${m#*:}
    run labels 0 --weights "$ROOT/tests/loaders/$mod.pt" --device cpu --imgsz 320 --conf 0.55 --txt --no-save \
        --quiet --out "$T/l$mod" "$DATA/dog.jpg" || { bad=1; break; }
    f="$T/l$mod/labels/dog.txt"
    got=$(awk -v want="$fields" '{ n = NF; bad = want == "odd" ? n % 2 == 0 || n < 7 : want == "probs" ? $1 !~ /^[01][.][0-9][0-9]$/ || NR > 5 : n != want
                                   if (bad) { print NR ": " n " fields"; exit } }
                         END { if (!NR) print "no lines" }' "$f" 2>&1)
    [ -n "$got" ] && { fail labels "$mod: $f line $got, want $fields"; bad=1; break; }
done
[ -z "$bad" ] && pass labels

if ! command -v ffmpeg >/dev/null 2>&1 || [ ! -f "$DATA/vtest.avi" ]; then
    for t in video track obb_track obb_recovered line_highlights reels replay; do skip "$t" "ffmpeg or $DATA/vtest.avi missing"; done
    [ "$FAILED" = 0 ]
    exit $?
fi
ffmpeg -v error -i "$DATA/vtest.avi" -frames:v 12 -c:v libx264 -pix_fmt yuv420p "$T/clip.mp4" 2>"$T/ffmpeg.err"

# video_case LABEL KEY ARGS...: infer ARGS on the clip (vid-stride 2: the carried frames too); every
# frame line carries KEY (detections' field, or the frame's probs), and the annotated video is there
video_case() {
    label=$1 key=$2
    shift 2
    run video 0 "$@" --device cpu --imgsz 160 --vid-stride 2 --quiet --out "$T/v$label" "$T/clip.mp4" || return 1
    j="$T/v$label/clip.jsonl"
    if [ "$key" = probs ]; then
        got=$(jq -s '[.[] | select(.frame != null) | (.probs | length)] | unique' "$j" | tr -d ' \n')
        want="[3]"
        [ "${label#yolo}" != "$label" ] && want="[5]" # Ultralytics' cls YAML: nc 1000, the top 5
    else
        got=$(jq -s --arg k "$key" '[.[] | select(.frame != null) | .detections[] | has($k)] | unique' "$j" | tr -d ' \n')
        want="[true]"
    fi
    frames=$(jq -s '[.[] | select(.frame != null)] | length' "$j")
    [ "$got" = "$want" ] && [ "$frames" = 12 ] || { fail video "$label: $j: $frames frames, $key per line $got"; return 1; }
    [ -s "$T/v$label/clip.mp4" ] || { fail video "$label: no annotated video"; return 1; }
}

# the .pt fixtures; YOLO26's task models with their one-to-one heads (--nms-free; conf 0.9: their synthetic
# scores run high, and a few masks a frame keep the case under a second)
bad=""
for m in t-seg:segments:0.55 t-pose:keypoints:0.55 t-obb:obb:0.55 t-cls:probs:0.55 t26-seg:segments:0.9:--nms-free \
    t26-pose:keypoints:0.9:--nms-free t26-obb:obb:0.9:--nms-free; do
    mod=${m%%:*} r=${m#*:}
    key=${r%%:*} r=${r#*:}
    conf=${r%%:*} flag=""
    [ "$r" != "$conf" ] && flag=${r#*:}
    # shellcheck disable=SC2086
    video_case "$mod" "$key" --weights "$ROOT/tests/loaders/$mod.pt" --conf "$conf" $flag || { bad=1; break; }
done
# their ONNX exports (static 160 x 160), with the YAML each was exported from
for m in seg:segments pose:keypoints obb:obb cls:probs; do
    [ -z "$bad" ] || break
    video_case "t-$m.onnx" "${m#*:}" --weights "$ROOT/tests/loaders/t-${m%%:*}.onnx" \
        --model "$ROOT/tests/loaders/tiny-${m%%:*}.yaml" --scale n --conf 0.55 || bad=1
done
# --model YAML + safetensors: mkweights' synthetic weights of Ultralytics' own task YAMLs (their
# scores run about 0.5 on this clip: --max-det 5 keeps the masks few)
for m in yolov8-seg:segments yolo11-pose:keypoints yolov8-obb:obb yolo11-cls:probs; do
    [ -z "$bad" ] || break
    y=${m%%:*}
    if ! "$B/mkweights" --model "$ROOT/weights/$y.yaml" --scale n --seed 3 --out "$T/$y.safetensors" >"$T/mkw" 2>&1; then
        fail video "mkweights $y: $(head -c 300 "$T/mkw")"
        bad=1
        break
    fi
    video_case "$y" "${m#*:}" --model "$ROOT/weights/$y.yaml" --scale n --weights "$T/$y.safetensors" --conf 0.55 \
        --max-det 5 || bad=1
done
[ -z "$bad" ] && pass video

# --track: masks and keypoints stay beside their detection's track id (BoT-SORT:
# the synthetic weights score about 0.5, under TrackTrack's new_track_thresh 0.7):
# each tracked detection's polygon or keypoints are those the untracked run gives
# the detection with its box ("detection_box"), score and class on that frame
bad=""
for m in t-seg:segments t-pose:keypoints; do
    mod=${m%%:*} key=${m#*:}
    for tr in --track ""; do
        run track 0 --weights "$ROOT/tests/loaders/$mod.pt" --device cpu --imgsz 160 --conf 0.5 $tr --tracker botsort \
            --no-save --quiet --out "$T/t$mod$tr" "$T/clip.mp4" || { bad=1; break 2; }
    done
    j="$T/t$mod--track/clip.jsonl"
    ids=$(jq -n -r --arg k "$key" --slurpfile a "$j" --slurpfile b "$T/t$mod/clip.jsonl" '
            [$b[] | select(.frame != null) | {key: (.frame | tostring),
                value: ([.detections[] | {key: ([.box, .score, .class_id] | tostring), value: .[$k]}] | from_entries)}]
            | from_entries
            | . as $plain
            | [$a[] | select(.frame != null) | .frame as $f | .detections[] | select(.track_id != null)
               | has($k) and .[$k] == $plain[$f | tostring][[.detection_box, .score, .class_id] | tostring]]
            | [length, (unique | tostring)] | @tsv' | tr -d '"')
    case $ids in
    0*|*false*) fail track "$mod: $j: tracked detections and whether each has its detection's $key: $ids"; bad=1; break ;;
    esac
done
[ -z "$bad" ] && pass track

# --track on an obb model: tracked on the rotated boxes (strix_tracker_update_obb); a tracked detection's "obb"
# is the tracker's rotated box and its "box" those corners' bounds (not clipped: OBB.xyxy), its own boxes
# in "detection_obb" and "detection_box" (none on an untracked one); identities last from frame to frame; the
# txt labels are the corners (class + 8 values)
run obb_track 0 --weights "$ROOT/tests/loaders/t-obb.pt" --device cpu --imgsz 160 --conf 0.5 --track --tracker botsort \
    --txt --highlights "blue car" --quiet --out "$T/ot" "$T/clip.mp4" &&
    got=$(jq -s -r 'def abs: if . < 0 then -. else . end;
                    [.[] | select(.frame != null) | .detections[]] as $d | [$d[] | select(.track_id != null)] as $t
                    | [($t | length), ([$t[].track_id] | unique | length),
                       ([$t[] | has("obb") and has("detection_obb") and has("detection_box")] | all),
                       ([$d[] | select(.track_id == null) | has("detection_obb")] | any),
                       ([$t[] | .obb != .detection_obb] | any),
                       ([$t[] | .obb as $o | .box as $b | [$o.x1, $o.x2, $o.x3, $o.x4] as $x | [$o.y1, $o.y2, $o.y3, $o.y4] as $y
                         | ($x | min) - $b[0], ($y | min) - $b[1], ($x | max) - $b[2], ($y | max) - $b[3] | abs]
                        | max < 0.001)]
                    | map(tostring) | join(" ")' "$T/ot/clip.jsonl") &&
    fields=$(awk '{ print NF }' "$T/ot/labels/clip_6.txt" | sort -u | tr '\n' ' ') &&
    set -- $got &&
    if [ "$#" = 6 ] && [ "$1" -ge 100 ] && [ $(($2 * 3)) -lt "$1" ] && [ "$3 $4 $5 $6" = "true false true true" ] &&
        [ "$fields" = "9 " ] && [ -s "$T/ot/clip.mp4" ]; then pass obb_track
    else fail obb_track "tracked, identities, own boxes, untracked with one, tracker's box differs, bounds: $got;" \
        "label fields: $fields"; fi

# TrackTrack on an obb model with its recovered detections (lower thresholds: these synthetic boxes score ~0.5): a
# recovered detection a track took is a row after the frame's detections, "recovered": true, with the tracker's
# rotated box and its own ("detection_obb", "detection_box"); a replay without --track passes the rows through
printf 'tracker_type: tracktrack\ntrack_high_thresh: 0.3\ntrack_low_thresh: 0.2\nnew_track_thresh: 0.35\nmin_track_len: 1\n' \
    >"$T/ttobb.yaml"
run obb_recovered 0 --weights "$ROOT/tests/loaders/t-obb.pt" --device cpu --imgsz 160 --conf 0.3 --track \
    --tracker "$T/ttobb.yaml" --no-save --quiet --out "$T/orec" "$T/clip.mp4" &&
    run obb_recovered 0 --detections "$T/orec/clip.jsonl" --no-save --quiet --out "$T/orep" "$T/clip.mp4" &&
    got=$(jq -s -r '[.[] | select(.frame != null) | .detections] as $f | [$f[][] | select(.recovered)] as $r
                    | [($r | length),
                       ([$r[] | has("track_id") and has("obb") and has("detection_obb") and has("detection_box")] | all),
                       ([$f[] | [.[].recovered // false] | . == sort] | all)]
                    | map(tostring) | join(" ")' "$T/orec/clip.jsonl") &&
    set -- $got &&
    jq -c '.detections // empty' "$T/orec/clip.jsonl" >"$T/orec.dets" && jq -c '.detections // empty' "$T/orep/clip.jsonl" >"$T/orep.dets" &&
    if [ "$#" = 3 ] && [ "$1" -gt 0 ] && [ "$2 $3" = "true true" ] && cmp -s "$T/orec.dets" "$T/orep.dets"; then
        pass obb_recovered
    else fail obb_recovered "recovered rows, each tracked with both boxes, after the detections: $got;" \
        "replay $(cmp "$T/orec.dets" "$T/orep.dets" 2>&1 | head -c 100)"; fi

# counting and highlights from a pose model's boxes
run line_highlights 0 --weights "$ROOT/tests/loaders/t-pose.pt" --device cpu --imgsz 160 --conf 0.5 --track \
    --tracker botsort --line 0,288,768,288 --highlights green,red,"blue car" --no-save --quiet --out "$T/lh" "$T/clip.mp4" &&
    if jq -e '.segments | type == "array"' "$T/lh/clip.highlights.json" >/dev/null 2>&1 &&
        [ -s "$T/lh/clip.tracks.json" ]; then pass line_highlights
    else fail line_highlights "no highlights JSON or tracks: $(ls "$T/lh")"; fi

# the PSNR (dB, the psnr filter's average over the frames; "inf" for identical videos) of video $1 against $2
psnr() { ffmpeg -i "$1" -i "$2" -lavfi "[0:v][1:v]psnr" -f null - 2>&1 | sed -n 's/.*PSNR .* average:\([0-9.inf]*\) .*/\1/p'; }
# at_least PSNR BOUND: whether PSNR >= BOUND
at_least() { [ "$1" = inf ] || awk -v p="$1" -v b="$2" 'BEGIN { exit !(p != "" && p + 0 >= b + 0) }'; }

# --highlights redraws the task's fields: a seg model's reel (every frame of the clip: "blue car" is on
# each) shows the masks, filled from the polygons the JSON Lines keep (masks.xy: no holes, so not the
# main video's pixels exactly): against the main annotated video its PSNR is >= 21.5 dB (seen 25.7), where
# the same boxes without masks (a replay of the JSON Lines less "segments") stay under it (seen 17.4);
# the obb reel, its rotated boxes drawn from the corners written, is >= 40 dB (seen: identical)
run reels 0 --weights "$ROOT/tests/loaders/t-seg.pt" --device cpu --imgsz 160 --conf 0.6 --highlights "blue car" --quiet \
    --out "$T/rs" "$T/clip.mp4" &&
    jq -c 'if .detections then .detections |= map(del(.segments)) else . end' "$T/rs/clip.jsonl" >"$T/boxes.jsonl" &&
    run reels 0 --detections "$T/boxes.jsonl" --quiet --out "$T/rb" "$T/clip.mp4" &&
    reel=$(psnr "$T/rs/clip.highlights.mp4" "$T/rs/clip.mp4") && boxes=$(psnr "$T/rb/clip.mp4" "$T/rs/clip.mp4") &&
    obb=$(psnr "$T/ot/clip.highlights.mp4" "$T/ot/clip.mp4") &&
    if at_least "$reel" 21.5 && ! at_least "$boxes" 21.5 && at_least "$obb" 40; then pass reels
    else fail reels "PSNR against the main video: seg reel $reel (want >= 21.5), boxes only $boxes (want < 21.5)," \
        "obb reel $obb (want >= 40)"; fi

# --detections replays a task model's fields: a tracked obb run re-tracked on its detections' own rotated
# boxes ("detection_obb") gives the live run's identities, its "obb" and "box" within 0.01 px (float
# rounding of the corners read back; seen 0.0006) and its "detection_obb" exactly; a seg run's replay
# writes every frame's detections with their polygons as they were
run replay 0 --detections "$T/ot/clip.jsonl" --track --tracker botsort --no-save --quiet --out "$T/or" "$T/clip.mp4" &&
    run replay 0 --detections "$T/rs/clip.jsonl" --no-save --quiet --out "$T/sr" "$T/clip.mp4" &&
    got=$(jq -n -r --slurpfile a "$T/ot/clip.jsonl" --slurpfile b "$T/or/clip.jsonl" '
          def abs: if . < 0 then -. else . end;
          [$a[] | select(.frame != null) | .detections[]] as $x | [$b[] | select(.frame != null) | .detections[]] as $y
          | [range(0; [$x, $y | length] | min)] as $r
          | def gap(k): [$r[] as $i | ($x[$i][k] // {}) | to_entries[] | (.value - $y[$i][k][.key]) | abs] | max // 0;
          [($x | length) - ($y | length), ([$x[].track_id | select(. != null)] | length),
           ([$r[] | select($x[.].track_id != $y[.].track_id or $x[.].class_id != $y[.].class_id or
                           ($x[.] | has("detection_obb")) != ($y[.] | has("detection_obb")))] | length),
           (gap("obb") < 0.01), (gap("detection_obb") == 0),
           ([$r[] as $i | [$x[$i].box, $y[$i].box] | transpose[] | (.[0] - .[1]) | abs] | max < 0.01)]
          | map(tostring) | join(" ")') &&
    seg=$(jq -n --slurpfile a "$T/rs/clip.jsonl" --slurpfile b "$T/sr/clip.jsonl" \
          '[$a[] | select(.frame != null)] == [$b[] | select(.frame != null)]') &&
    set -- $got &&
    if [ "$#" = 6 ] && [ "$1" = 0 ] && [ "$2" -ge 100 ] && [ "$3 $4 $5 $6 $seg" = "0 true true true true" ]; then
        pass replay
    else fail replay "obb: detections live - replayed, tracked, differing ids, obb, detection_obb, box: $got;" \
        "seg polygons as written: $seg"; fi

[ "$FAILED" = 0 ]
