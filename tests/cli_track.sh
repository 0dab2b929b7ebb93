#!/bin/sh
# cli_track.sh — end-to-end tests of `infer --track`, `--highlights`,
# `--line` and `--detections`: a synthetic 12 s clip (lavfi testsrc2 +
# a 440 Hz tone, H.264 + AAC) and a detections file written here whose
# objects appear on known frames (there are no pretrained weights, so the
# replay drives the tests): a dog on frames 50-99 moving right, a person on
# frames 120-149 moving down across y = 90, a second dog on frames 200-224.
# ByteTrack confirms a track on its second frame, so the tracked
# appearances are frames 51-99, 121-149 and 201-224.  Checked: the exact
# highlight segments (JSON and CSV), the reel's frame count, video and audio
# durations with ffprobe, the MOT file, the per-class counts, the crossing,
# replay checks, --tracker (names, tracker YAMLs with every key of
# Ultralytics' botsort.yaml, ocsort.yaml and tracktrack.yaml, its fasttrack.yaml
# and deepocsort.yaml as shipped, and their errors), --track's default
# (TrackTrack), usage errors and exit codes,
# no temporary files left.  One
# run with a (synthetic-weight) model checks the live path.
#   sh tests/cli_track.sh BUILD_DIR
NAME=cli_track
. "$(dirname "$0")/lib_cli.sh"

ALL="help segments_exact reel_durations mot_file counts_and_line tracked_boxes pad_gap_defaults min_frames max_len no_match
rerender_keeps_ids retrack skipped_frames tracker_choice fasttrack_deepocsort default_tracktrack recovered_rows real_footage reid degenerate_boxes bad_detections mismatched_video usage_errors refuse_overwrite live_model temps"
if [ ! -x "$B/infer" ]; then
    skip_all "$B/infer is not built"
fi
if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
    skip_all "ffmpeg/ffprobe not installed (sh tools/deps.sh)"
fi
ASAN=0
grep -q __asan_init "$B/infer" 2>/dev/null && ASAN=1

# infer_rc WANT_RC ARGS...: infer with stdout/stderr in $T/out, $T/err; on
# another exit status, prints why (the caller reports the test)
infer_rc() {
    want=$1
    shift
    "$B/infer" "$@" >"$T/out" 2>"$T/err"
    got=$?
    [ "$got" -eq "$want" ] && return 0
    echo "    infer $* -> exit $got (want $want): $(head -c 400 "$T/err")"
    return 1
}
# dur FILE TYPE: a stream's duration in seconds
dur() { ffprobe -v error -select_streams "$2:0" -show_entries stream=duration -of csv=p=0 "$1"; }
nframes() {
    ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"
}
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25:duration=12 \
    -f lavfi -i sine=frequency=440:sample_rate=48000:duration=12 \
    -c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac -shortest "$T/clip.mp4" 2>"$T/ffmpeg.err" ||
    skip_all "ffmpeg could not make the test clip: $(head -c 200 "$T/ffmpeg.err")"
# the detections, in infer's JSON Lines format
awk 'BEGIN { for (f = 0; f < 300; f++) { d = ""
    if (f >= 50 && f < 100) { x = 20 + 2 * (f - 50)
        d = sprintf("{\"class_id\": 16, \"class_name\": \"dog\", \"score\": 0.9, \"box\": [%d, 100, %d, 160]}", x, x + 60) }
    if (f >= 200 && f < 225) { x = 200 - 2 * (f - 200); if (d != "") d = d ", "
        d = d sprintf("{\"class_id\": 16, \"class_name\": \"dog\", \"score\": 0.8, \"box\": [%d, 50, %d, 110]}", x, x + 50) }
    if (f >= 120 && f < 150) { if (d != "") d = d ", "
        d = d sprintf("{\"class_id\": 0, \"class_name\": \"person\", \"score\": 0.7, \"box\": [100, %d, 140, %d]}", f - 100, f)
        d = d sprintf(", {\"class_id\": 0, \"class_name\": \"person\", \"score\": 0.2, \"box\": [250, 10, 260, 30]}") }
    printf("{\"frame\": %d, \"pts\": %g, \"inferred\": true, \"detections\": [%s]}\n", f, f / 25, d) } }' >"$T/dets.jsonl"
R="--detections $T/dets.jsonl"
# the cases below were written for BoT-SORT (a track confirmed on its second frame, new tracks from 0.25); the
# default tracker, TrackTrack, has its own case (default_tracktrack)
BOT="--tracker botsort"

# help
if "$B/infer" --help | grep -q -- "--highlights LIST" && "$B/infer" --help | grep -q -- "--track "; then pass help
else fail help "--help does not document --track / --highlights"; fi

# segments_exact: no padding, no merging: the tracked appearances exactly
O=$T/exact
if infer_rc 0 $R --track $BOT --line 0,90,320,90 --highlights dog,person --hl-pad 0 --hl-gap 0 --out "$O" "$T/clip.mp4"; then
    csv=$(tail -n +2 "$O/clip.highlights.csv")
    want='2.040000,4.000000,1.960000,0.000000,51,99,"1 dog"
4.840000,6.000000,1.160000,1.960000,121,149,"1 person"
8.040000,9.000000,0.960000,3.120000,201,224,"1 dog"'
    if [ "$csv" = "$want" ] && grep -q '"first_frame": 121, "last_frame": 149' "$O/clip.highlights.json" &&
        grep -q '"reel_duration": 4.08' "$O/clip.highlights.json"; then pass segments_exact
    else fail segments_exact "segments: $csv"; fi
else fail segments_exact "infer failed"; fi

# reel_durations: 102 frames (49 + 29 + 24), 4.08 s of video, audio as long within a frame
if [ -f "$O/clip.highlights.mp4" ]; then
    n=$(nframes "$O/clip.highlights.mp4")
    vd=$(dur "$O/clip.highlights.mp4" v)
    ad=$(dur "$O/clip.highlights.mp4" a)
    if [ "$n" = 102 ] && near "$vd" 4.08 0.0001 && near "$ad" "$vd" 0.04; then pass reel_durations
    else fail reel_durations "frames $n, video $vd s, audio $ad s (want 102, 4.08, 4.08 +- 0.04)"; fi
else fail reel_durations "no reel"; fi

# mot_file: one row per tracked box, frames from 1, 10 columns; the box is the tracker's (BoT-SORT's Kalman
# state after the update, GMC on the decoded frames: within a pixel of the detection [22, 100, 82, 160])
if [ -f "$O/clip.mot.txt" ]; then
    rows=$(wc -l <"$O/clip.mot.txt")
    first=$(head -n 1 "$O/clip.mot.txt")
    cols=$(awk -F, '{ print NF }' "$O/clip.mot.txt" | sort -u)
    if [ "$rows" = 102 ] && [ "$cols" = 10 ] && echo "$first" | awk -F, '
        function off(a, b) { return a > b ? a - b : b - a }
        { exit !($1 == 52 && $2 == 1 && off($3, 22) < 1 && off($4, 100) < 1 && off($5, 60) < 1 && off($6, 60) < 1 &&
                 $7 == "0.9000" && $8 $9 $10 == "-1-1-1") }'; then
        pass mot_file
    else fail mot_file "$rows rows, first '$first', columns $cols"; fi
else fail mot_file "no MOT file"; fi

# counts_and_line: 2 dogs, 1 person (the 0.2 box never starts a track); the person crosses y = 90 downwards
if grep -q '"counts": {"person": 1, "dog": 2}' "$O/clip.tracks.json" 2>/dev/null &&
    grep -q '"in": 1, "out": 0}' "$O/clip.tracks.json" &&
    grep -q '"crossings": \[{"track_id": 2, "direction": "in"}\]' "$O/clip.jsonl" &&
    grep -q "3 tracks: 1 person, 2 dog; line: 1 in, 0 out" "$T/out"; then pass counts_and_line
else fail counts_and_line "$(grep -o '"counts": [^}]*}' "$O/clip.tracks.json" 2>/dev/null) $(tail -n 1 "$T/out")"; fi

# tracked_boxes: a tracked detection's "box" is the tracker's, as Ultralytics' tracked results carry it (the
# Kalman state after the update, clipped to the frame), its own box "detection_box": tests/golden/track/edges.*
# (tools/reference/cli_track_boxes.py: Ultralytics 8.4.190's BYTETracker and BOTSORT, gmc_method none, on
# objects leaving through the frame's edges; 404 boxes, 96 of them clipped) give every tracked box to the bit
G=tests/golden/track
printf 'tracker_type: botsort\ngmc_method: none\n' >"$T/bot_nogmc.yaml"
boxes_of() { # NAME FILE: "NAME frame track_id x1 y1 x2 y2" per tracked detection of an infer JSON Lines file
    awk -v name="$1" '{ match($0, /"frame": [0-9]+/); fr = substr($0, RSTART + 9, RLENGTH - 9); s = $0
        while (match(s, /"box": \[[^]]*\], "track_id": [0-9]+/)) {
            m = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
            gsub(/"box": \[|\], "track_id": |,/, " ", m); split(m, a, " ")
            print name, fr, a[5], a[1], a[2], a[3], a[4] } }' "$2"
}
ok=1
infer_rc 0 --detections "$G/edges.jsonl" --track --tracker bytetrack --no-save --out "$T/eb" "$T/clip.mp4" || ok=0
infer_rc 0 --detections "$G/edges.jsonl" --track --tracker "$T/bot_nogmc.yaml" --no-save --out "$T/es" "$T/clip.mp4" ||
    ok=0
{ boxes_of bytetrack "$T/eb/clip.jsonl"; boxes_of botsort "$T/es/clip.jsonl"; } >"$T/boxes.txt"
cmp -s "$T/boxes.txt" "$G/edges.ref.txt" || { ok=0; echo "    tracked boxes differ from Ultralytics': $(diff "$T/boxes.txt" "$G/edges.ref.txt" | head -n 3)"; }
# every tracked detection keeps the replayed box as "detection_box" (the input has one detection per object)
tracked=$(grep -o '"track_id": [0-9]*, "detection_box": \[[^]]*\]' "$T/eb/clip.jsonl" | wc -l)
[ "$tracked" -gt 150 ] && [ "$tracked" = "$(grep -o '"track_id"' "$T/eb/clip.jsonl" | wc -l)" ] || ok=0
grep -o '"frame": [0-9]*\|"detection_box": \[[^]]*\]' "$T/eb/clip.jsonl" | awk '/frame/ { f = $2 } /detection_box/ {
    sub(/"detection_box": /, ""); print f, $0 }' >"$T/own.txt"
grep -o '"frame": [0-9]*\|"box": \[[^]]*\]' "$G/edges.jsonl" | awk '/frame/ { f = $2 } /box/ { sub(/"box": /, ""); print f, $0 }' |
    grep -F -x -f "$T/own.txt" | cmp -s - "$T/own.txt" || { ok=0; echo "    a detection_box is not the replayed box"; }
[ $ok = 1 ] && pass tracked_boxes || fail tracked_boxes "see above"

# pad_gap_defaults: pad 0.5 s snapped outward to frames, then merged within 1 s
O=$T/defaults
if infer_rc 0 $R --track $BOT --highlights dog,person --no-save --out "$O" "$T/clip.mp4"; then
    csv=$(tail -n +2 "$O/clip.highlights.csv" | cut -d, -f1,2,5,6)
    # dog 1.52-4.52 and person 4.32-6.52 overlap: one segment 1.52-6.52; dog 7.52-9.52
    want='1.520000,6.520000,38,162
7.520000,9.520000,188,237'
    if [ "$csv" = "$want" ] && [ ! -e "$O/clip.mp4" ] && [ -f "$O/clip.highlights.mp4" ]; then pass pad_gap_defaults
    else fail pad_gap_defaults "segments: $csv"; fi
else fail pad_gap_defaults "infer failed"; fi

# min_frames: the person track (29 frames) is too short for --hl-min-frames 30
O=$T/minf
if infer_rc 0 $R --track $BOT --highlights person,dog --hl-pad 0 --hl-gap 0 --hl-min-frames 30 --no-save --out "$O" "$T/clip.mp4" &&
    [ "$(tail -n +2 "$O/clip.highlights.csv" | cut -d, -f5,6 | tr '\n' ' ')" = "51,99 " ]; then pass min_frames
else fail min_frames "$(cat "$O/clip.highlights.csv" 2>/dev/null)"; fi

# max_len: a 2.5 s cap keeps the most active segment (the first dog: 49 frames)
O=$T/cap
if infer_rc 0 $R --track $BOT --highlights dog --hl-pad 0 --hl-gap 0 --hl-max-len 2.5 --no-save --out "$O" "$T/clip.mp4" &&
    [ "$(tail -n +2 "$O/clip.highlights.csv" | cut -d, -f5,6 | tr '\n' ' ')" = "51,99 " ]; then pass max_len
else fail max_len "$(cat "$O/clip.highlights.csv" 2>/dev/null)"; fi

# no_match: nothing of the class: exit 0, an empty segment list, no reel
O=$T/none
if infer_rc 0 $R --highlights 2 --no-save --out "$O" "$T/clip.mp4" && [ ! -e "$O/clip.highlights.mp4" ] &&
    grep -q '"segments": \[\]' "$O/clip.highlights.json" && grep -q "nothing matched" "$T/out"; then pass no_match
else fail no_match "$(cat "$T/out" "$T/err")"; fi

# rerender_keeps_ids: replaying a tracked run's JSON Lines without --track keeps its identities
O=$T/rerender
if infer_rc 0 --detections "$T/exact/clip.jsonl" --no-save --out "$O" "$T/clip.mp4" &&
    [ "$(grep -c '"track_id": 3' "$O/clip.jsonl")" = 24 ] && [ ! -e "$O/clip.mot.txt" ]; then pass rerender_keeps_ids
else fail rerender_keeps_ids "$(grep -c '"track_id"' "$O/clip.jsonl" 2>/dev/null) frames with identities"; fi

# retrack: the same detections tracked again give the same JSON Lines
O=$T/retrack
if infer_rc 0 --detections "$T/exact/clip.jsonl" --track $BOT --line 0,90,320,90 --no-save --out "$O" "$T/clip.mp4" &&
    cmp -s "$O/clip.jsonl" "$T/exact/clip.jsonl" && cmp -s "$O/clip.mot.txt" "$T/exact/clip.mot.txt"; then pass retrack
else fail retrack "re-tracking changed the output"; fi

# skipped_frames: replayed frames marked "inferred": false keep the last tracked frame's identities and boxes;
# the first frame skipped, or a skipped frame with more detections than the last, has none for them
printf '%s\n' '{"frame": 0, "pts": 0, "inferred": false, "detections": [{"class_id": 0, "score": 0.9, "box": [10, 10, 50, 90]}]}' \
    '{"frame": 1, "pts": 0.04, "detections": [{"class_id": 0, "score": 0.9, "box": [12, 10, 52, 90]}]}' \
    '{"frame": 2, "pts": 0.08, "inferred": false, "detections": [{"class_id": 0, "score": 0.9, "box": [12, 10, 52, 90]}, {"class_id": 0, "score": 0.8, "box": [100, 10, 150, 90]}]}' \
    >"$T/skip.jsonl"
O=$T/skip
ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25:duration=0.12 -c:v libx264 -preset ultrafast \
    -pix_fmt yuv420p "$T/c3.mp4" 2>"$T/err"
if infer_rc 0 --detections "$T/skip.jsonl" --track $BOT --no-save --out "$O" "$T/c3.mp4" &&
    [ "$(sed -n 2p "$O/c3.jsonl" | grep -c track_id)" = 0 ] &&
    sed -n 3p "$O/c3.jsonl" | grep -q '"box": \[12, 10, 52, 90\], "track_id": 1, "detection_box": \[12, 10, 52, 90\]}\]' &&
    sed -n 4p "$O/c3.jsonl" | grep -q '"track_id": 1, "detection_box": \[12, 10, 52, 90\]}, {[^}]*"box": \[100, 10, 150, 90\]}\]}$'; then
    pass skipped_frames
else fail skipped_frames "$(sed -n 2,4p "$O/c3.jsonl" 2>/dev/null)"; fi

# tracker_choice: --tracker bytetrack, --tracker ocsort and tracker YAMLs (the keys and values of Ultralytics' botsort.yaml,
# gmc none; then sparseOptFlow with strix's gmc_grey; ocsort.yaml's) name themselves in tracks.json; an unknown key, ReID, an unsupported GMC method or tracker and a
# bad name: exit 2 with one line naming file:line; a missing file: exit 3
O=$T/choice
cat >"$T/mybot.yaml" <<'YAML'
tracker_type: botsort # comment
track_high_thresh: 0.25
track_low_thresh: 0.1
new_track_thresh: 0.25
track_buffer: 30
match_thresh: 0.8
fuse_score: True
gmc_method: none
proximity_thresh: 0.5
appearance_thresh: 0.8
with_reid: False
model: auto
YAML
ok=1
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker bytetrack --no-save --out "$O/b" "$T/clip.mp4" &&
    grep -q '"name": "bytetrack", "track_high_thresh": 0.25, "track_low_thresh": 0.1' "$O/b/clip.tracks.json" || ok=0
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker "$T/mybot.yaml" --track-buffer 12 --no-save \
    --out "$O/y" "$T/clip.mp4" && grep -q '"track_buffer": 12, "fuse_score": true, "gmc_method": "none"' \
    "$O/y/clip.tracks.json" || ok=0
# strix's own key gmc_grey: OpenCV 5's grey by default, OpenCV 4's on request
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --no-save --out "$O/g5" "$T/clip.mp4" &&
    grep -q '"gmc_method": "sparseOptFlow", "gmc_grey": "opencv5"' "$O/g5/clip.tracks.json" || ok=0
sed 's/^gmc_method: none/gmc_method: sparseOptFlow\ngmc_grey: opencv4/' "$T/mybot.yaml" >"$T/grey4.yaml"
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker "$T/grey4.yaml" --no-save --out "$O/g4" "$T/clip.mp4" &&
    grep -q '"gmc_method": "sparseOptFlow", "gmc_grey": "opencv4"' "$O/g4/clip.tracks.json" || ok=0
for bad in "unknown key 'lost_thresh'@lost_thresh: 0.3" \
    "model 'osnet.pt': strix runs no separate ReID model@model: osnet.pt\nwith_reid: True" \
    "gmc_method orb is not implemented@gmc_method: orb" "match_thresh must be a number in 0..1@match_thresh: 1.5" \
    "unknown gmc_grey 'opencv3'@gmc_grey: opencv3"; do
    sed "s/^tracker_type: botsort.*/&\n${bad#*@}/" "$T/mybot.yaml" | awk '!seen[$1]++' >"$T/bad.yaml"
    if ! infer_rc 2 --detections "$T/exact/clip.jsonl" --track --tracker "$T/bad.yaml" --no-save --out "$O/x" \
        "$T/clip.mp4" || ! grep -q "bad.yaml:2: ${bad%@*}" "$T/err" || [ "$(wc -l <"$T/err")" != 1 ]; then
        ok=0
        echo "    ${bad#*@}: $(cat "$T/err")"
    fi
done
# OC-SORT: --tracker ocsort, and a YAML with every key of Ultralytics' ocsort.yaml; its own keys in tracks.json
cat >"$T/myoc.yaml" <<'YAML'
tracker_type: ocsort
track_high_thresh: 0.25
track_low_thresh: 0.1
new_track_thresh: 0.25
track_buffer: 30
match_thresh: 0.8
fuse_score: True
delta_t: 3
inertia: 0.2
use_byte: False
YAML
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker ocsort --no-save --out "$O/o" "$T/clip.mp4" &&
    grep -q '"name": "ocsort", .*"fuse_score": true, "delta_t": 3, "inertia": 0.2, "use_byte": false' \
        "$O/o/clip.tracks.json" || ok=0
sed 's/^delta_t: 3/delta_t: 5/; s/^use_byte: False/use_byte: True/' "$T/myoc.yaml" >"$T/oc5.yaml"
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker "$T/oc5.yaml" --no-save --out "$O/o5" "$T/clip.mp4" &&
    grep -q '"delta_t": 5, "inertia": 0.2, "use_byte": true' "$O/o5/clip.tracks.json" || ok=0
printf 'tracker_type: ocsort\ninertia: -1\n' >"$T/oc.yaml"
infer_rc 2 --detections "$T/exact/clip.jsonl" --track --tracker "$T/oc.yaml" --out "$O/x" "$T/clip.mp4" &&
    grep -q "oc.yaml:2: inertia must be a number >= 0" "$T/err" || ok=0
printf 'tracker_type: deepsort\n' >"$T/oc.yaml"
infer_rc 2 --detections "$T/exact/clip.jsonl" --track --tracker "$T/oc.yaml" --out "$O/x" "$T/clip.mp4" &&
    grep -q "oc.yaml:1: unknown tracker_type 'deepsort' (botsort, bytetrack, ocsort, fasttrack, deepocsort or tracktrack)" \
        "$T/err" || ok=0
infer_rc 2 --detections "$T/exact/clip.jsonl" --track --tracker deepsort --out "$O/x" "$T/clip.mp4" || ok=0
infer_rc 3 --detections "$T/exact/clip.jsonl" --track --tracker "$T/none.yaml" --out "$O/x" "$T/clip.mp4" || ok=0
[ ! -e "$O/x" ] || { ok=0; echo "    a refused run left $O/x"; }
[ $ok = 1 ] && pass tracker_choice || fail tracker_choice "see above"

# fasttrack_deepocsort: Ultralytics 8.4.190's fasttrack.yaml and deepocsort.yaml, their text as shipped, and
# the names fasttrack / deepocsort run and name themselves and their keys in tracks.json; Deep OC-SORT's
# sparseOptFlow GMC runs on the clip's frames; with_reid: True with a replay (--detections: no features) is refused
# (exit 2, one line)
O=$T/new
mkdir -p "$T/ul"
cat >"$T/ul/fasttrack.yaml" <<'YAML'
# Ultralytics 🚀 AGPL-3.0 License - https://ultralytics.com/license

# FastTracker tracker defaults for mode="track"
# Occlusion-aware ByteTrack-style tracker with lightweight Kalman rollback and init IoU suppression.
# Paper: https://arxiv.org/abs/2508.14370
# Docs: https://docs.ultralytics.com/modes/track

tracker_type: fasttrack # (str) Tracker backend: fasttrack
track_high_thresh: 0.25 # (float) First-stage match threshold
track_low_thresh: 0.1 # (float) Second-stage threshold for low-score matches
new_track_thresh: 0.25 # (float) Start a new track if no match ≥ this
track_buffer: 30 # (int) Frames to keep lost tracks alive
match_thresh: 0.8 # (float) First-stage association similarity threshold
fuse_score: True # (bool) Fuse detection score with IoU when matching

# --- FastTracker-specific knobs ---
reset_velocity_offset_occ: 5 # (int) History frames back to restore KF velocity on occlusion onset
reset_pos_offset_occ: 3 # (int) History frames back to restore KF position on occlusion onset
enlarge_bbox_occ: 1.1 # (float) One-shot bbox height scale while occluded (widens search region)
dampen_motion_occ: 0.5 # (float) Velocity dampening factor applied while occluded (0-1)
active_occ_to_lost_thresh: 10 # (int) Max consecutive occluded frames before marking lost
occ_cover_thresh: 0.7 # (float) Fraction of track's area covered by another to declare occlusion
occ_reappear_window: 40 # (int) Frames a recently-occluded lost track stays re-findable
init_iou_suppress: 0.7 # (float) Suppress new-track init if IoU with any active track ≥ this (1.0 disables)
YAML
cat >"$T/ul/deepocsort.yaml" <<'YAML'
# Ultralytics 🚀 AGPL-3.0 License - https://ultralytics.com/license

# Deep OC-SORT tracker defaults for mode="track"
# Paper: https://arxiv.org/abs/2302.11813
# Docs: https://docs.ultralytics.com/modes/track

tracker_type: deepocsort # (str) Tracker backend: Deep OC-SORT with appearance features and GMC
track_high_thresh: 0.3 # (float) First-stage match threshold; raise for cleaner tracks, lower to keep more
track_low_thresh: 0.1 # (float) Second-stage threshold for low-score matches; used with use_byte=True
new_track_thresh: 0.3 # (float) Start a new track if no match ≥ this; higher reduces false tracks
track_buffer: 30 # (int) Frames to keep lost tracks alive; higher handles occlusion, increases ID switches risk
match_thresh: 0.8 # (float) Association similarity threshold (IoU/cost); tune with detector quality
fuse_score: True # (bool) Fuse detection score with motion/IoU for matching; stabilizes weak detections

# OC-SORT specifics (inherited)
delta_t: 3 # (int) Temporal window for velocity direction computation in OCM
inertia: 0.2 # (float) Weight of velocity consistency cost in association
use_byte: False # (bool) Enable ByteTrack-style low-confidence second association pass

# Deep OC-SORT specifics
gmc_method: none # (str) Global motion compensation: sparseOptFlow|orb|sift|ecc|none; enable for moving-camera scenes
with_reid: False # (bool) Enable ReID model use; needs extra model and compute
model: auto # (str) ReID model path; "auto" uses detector features, or use a .pt checkpoint or exported embedding model
proximity_thresh: 0.5 # (float) Min IoU to consider tracks proximate for ReID; higher is stricter
appearance_thresh: 0.9 # (float) Min appearance similarity for ReID; raise to avoid identity swaps
alpha_fixed_emb: 0.95 # (float) Base EMA factor for track embedding updates; higher = slower update
YAML
ok=1
# each tracker's own keys, after the common ones (float32 thresholds, written as the floats they are)
FT='"fuse_score": true, "reset_velocity_offset_occ": 5, "reset_pos_offset_occ": 3, "enlarge_bbox_occ": 1.1, "dampen_motion_occ": 0.5, "active_occ_to_lost_thresh": 10, "occ_cover_thresh": 0.7, "occ_reappear_window": 40, "init_iou_suppress": 0.7, "conf"'
DO='"fuse_score": true, "gmc_method": "none", "delta_t": 3, "inertia": 0.2, "use_byte": false, "conf"'
for run in "fasttrack@0.25@$FT@$T/ul/fasttrack.yaml" "fasttrack@0.25@$FT@fasttrack" \
    "deepocsort@0.3@$DO@$T/ul/deepocsort.yaml" "deepocsort@0.3@$DO@deepocsort"; do
    name=${run%%@*} tracker=${run##*@} rest=${run#*@}
    high=${rest%%@*} keys=${rest#*@}
    keys=${keys%@*}
    d=$O/$name${tracker##*/}
    if ! infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker "$tracker" --no-save --out "$d" \
        "$T/clip.mp4" || ! grep -qF "\"name\": \"$name\", \"track_high_thresh\": $high," "$d/clip.tracks.json" ||
        ! grep -qF "$keys" "$d/clip.tracks.json" || ! grep -q ',1,' "$d/clip.mot.txt"; then
        ok=0
        echo "    --tracker $tracker: $(grep -o '"tracker": {[^}]*}' "$d/clip.tracks.json" 2>/dev/null)"
    fi
done
sed 's/^gmc_method: none/gmc_method: sparseOptFlow/' "$T/ul/deepocsort.yaml" >"$T/dogmc.yaml"
infer_rc 0 --detections "$T/exact/clip.jsonl" --track --tracker "$T/dogmc.yaml" --no-save --out "$O/g" "$T/clip.mp4" &&
    grep -q '"name": "deepocsort", .*"gmc_method": "sparseOptFlow", "gmc_grey": "opencv5", "delta_t": 3' \
        "$O/g/clip.tracks.json" || ok=0
sed "s/^with_reid: [^ ]*/with_reid: True/" "$T/ul/deepocsort.yaml" >"$T/docreid.yaml"
if ! infer_rc 2 --detections "$T/exact/clip.jsonl" --track --tracker "$T/docreid.yaml" --no-save --out "$O/x" \
    "$T/clip.mp4" || ! grep -q "docreid.yaml sets with_reid: True, whose ReID features come from the model" "$T/err" ||
    [ "$(wc -l <"$T/err")" != 1 ]; then
    ok=0
    echo "    with_reid: True with --detections: $(cat "$T/err")"
fi
for bad in "occ_cover_thresh must be a number in 0..1@occ_cover_thresh: 2@22" \
    "enlarge_bbox_occ must be a number >= 0@enlarge_bbox_occ: -1@19"; do
    msg=${bad%%@*} line=${bad##*@} set=${bad#*@}
    set=${set%@*}
    key=${set%%:*}
    f="$T/ul/deepocsort.yaml"
    grep -q "^$key:" "$f" || f="$T/ul/fasttrack.yaml"
    sed "s/^$key: [^ ]*/$set/" "$f" >"$T/bad.yaml"
    if ! infer_rc 2 --detections "$T/exact/clip.jsonl" --track --tracker "$T/bad.yaml" --no-save --out "$O/x" \
        "$T/clip.mp4" || ! grep -q "bad.yaml:$line: $msg" "$T/err" || [ "$(wc -l <"$T/err")" != 1 ]; then
        ok=0
        echo "    $set: $(cat "$T/err")"
    fi
done
[ ! -e "$O/x" ] || { ok=0; echo "    a refused run left $O/x"; }
[ $ok = 1 ] && pass fasttrack_deepocsort || fail fasttrack_deepocsort "see above"
# default_tracktrack: --track alone is TrackTrack (Ultralytics' default, tracktrack.yaml): tracks start above 0.7 (the
# 0.7 person never does) and are confirmed on their third frame (dogs on frames 52-99 and 202-224: 71 MOT rows); a
# YAML with every key of Ultralytics' tracktrack.yaml, min_track_len 1 and new_track_thresh 0.6, tracks the person too,
# each object from its first frame (50 + 30 + 25 rows); a separate ReID model and an unknown key are refused (exit 2,
# one line)
O=$T/tt
cat >"$T/mytt.yaml" <<'YAML'
tracker_type: tracktrack # (str) Tracker backend: tracktrack
track_high_thresh: 0.6
track_low_thresh: 0.25
new_track_thresh: 0.6
track_buffer: 30
match_thresh: 0.7
lost_match_thr: 0.0
iou_weight: 0.5
reid_weight: 0.5
conf_weight: 0.1
angle_weight: 0.05
penalty_p: 0.2
penalty_q: 0.4
reduce_step: 0.05
tai_thr: 0.55
min_track_len: 1
gmc_method: sparseOptFlow
with_reid: False
model: auto
YAML
ok=1
if infer_rc 0 $R --track --no-save --out "$O/d" "$T/clip.mp4"; then
    grep -q '"name": "tracktrack", "track_high_thresh": 0.6, "track_low_thresh": 0.25, "new_track_thresh": 0.7, "match_thresh": 0.7, "track_buffer": 30, .*"gmc_method": "sparseOptFlow", "gmc_grey": "opencv5", "lost_match_thr": 0, "conf_weight": 0.1, "angle_weight": 0.05, "penalty_p": 0.2, "reduce_step": 0.05, "tai_thr": 0.55, "min_track_len": 3' \
        "$O/d/clip.tracks.json" && grep -q '"counts": {"dog": 2}' "$O/d/clip.tracks.json" || { ok=0; echo "    $(head -c 600 "$O/d/clip.tracks.json")"; }
    mot=$(awk -F, '{ n[$2]++; if (!($2 in f)) f[$2] = $1; l[$2] = $1 } END { for (i in n) printf "%s:%d:%d-%d ", i, n[i], f[i], l[i] }' "$O/d/clip.mot.txt")
    case "$mot" in *"1:48:53-100 "*"2:23:203-225 "*|*"2:23:203-225 "*"1:48:53-100 "*) ;; *) ok=0; echo "    default MOT: $mot" ;; esac
    [ "$(wc -l <"$O/d/clip.mot.txt")" = 71 ] || ok=0
else ok=0; fi
if infer_rc 0 $R --track --tracker "$T/mytt.yaml" --no-save --out "$O/y" "$T/clip.mp4"; then
    grep -q '"counts": {"person": 1, "dog": 2}' "$O/y/clip.tracks.json" && grep -q '"min_track_len": 1' "$O/y/clip.tracks.json" &&
        [ "$(wc -l <"$O/y/clip.mot.txt")" = 105 ] || { ok=0; echo "    yaml: $(wc -l <"$O/y/clip.mot.txt") MOT rows, $(grep -o '"counts": [^}]*}' "$O/y/clip.tracks.json")"; }
else ok=0; fi
for bad in "model 'osnet.pt': strix runs no separate ReID model@model: osnet.pt\nwith_reid: True" \
    "unknown key 'penalty_r'@penalty_r: 0.1" \
    "tai_thr must be a number in 0..1@tai_thr: 2"; do
    sed "s/^tracker_type: tracktrack.*/&\n${bad#*@}/" "$T/mytt.yaml" | awk '!seen[$1]++' >"$T/badtt.yaml"
    if ! infer_rc 2 $R --track --tracker "$T/badtt.yaml" --no-save --out "$O/x" "$T/clip.mp4" ||
        ! grep -q "badtt.yaml:2: ${bad%@*}" "$T/err" || [ "$(wc -l <"$T/err")" != 1 ]; then
        ok=0
        echo "    ${bad#*@}: $(cat "$T/err")"
    fi
done
[ $ok = 1 ] && pass default_tracktrack || fail default_tracktrack "see above"

# recovered_rows: TrackTrack's recovered detections (the boxes a looser NMS kept, Ultralytics' dets_del) replayed from
# a file's "recovered": true rows: tests/golden/track/loose.tracktrack.txt (tools/reference/loose_goldens.py: 80 frames
# of people crossing, Ultralytics 8.4.190's TRACKTRACK given its detections and dets_del) as JSON Lines; every
# detection gets Ultralytics' identity and tracked box, and each recovered detection that updated a track (a row of
# idx -1 there) becomes a row "recovered": true after the frame's detections, with that identity and the tracker's
# box, and none other does; a replay of that output without --track passes those rows through, and one with
# ByteTrack drops them (only TrackTrack takes recovered detections)
O=$T/rec
L=$G/loose.tracktrack.txt
ok=1
mkdir -p "$O"
ffmpeg -v error -y -f lavfi -i color=c=gray:size=864x640:rate=25:duration=3.2 -c:v libx264 -preset ultrafast \
    -pix_fmt yuv420p "$O/people.mp4" 2>"$T/ffmpeg.err" || { ok=0; echo "    ffmpeg: $(head -c 200 "$T/ffmpeg.err")"; }
printf 'tracker_type: tracktrack\ngmc_method: none\n' >"$T/tt_nogmc.yaml"
# the golden as JSON Lines (detections, then the recovered ones), and what infer should write: per row "frame kind
# index-or-r id x1 y1 x2 y2" (untracked: id -1, no box)
awk -v jl="$O/loose.jsonl" '
    function flush() { if (f >= 0) printf "{\"frame\": %d, \"pts\": %s, \"detections\": [%s]}\n", f, f / 25, d >jl }
    BEGIN { f = -1 }
    $1 == "frame" { flush(); f = $2; d = ""; k = 0 }
    $1 == "det" || $1 == "rec" {
        d = d (d == "" ? "" : ", ") sprintf("{\"class_id\": 0, \"score\": %s, \"box\": [%s, %s, %s, %s]%s}", $6, $2, $3,
            $4, $5, $1 == "rec" ? ", \"recovered\": true" : "")
        if ($1 == "det") print f, "d", k++, $7, ($7 >= 0 ? $9 " " $10 " " $11 " " $12 : "")
        else if ($7 >= 0) print f, "r", "r", $7, $9, $10, $11, $12 }
    END { flush() }' "$L" >"$O/want.txt"
# rows_of FILE: the same from infer's JSON Lines
rows_of() {
    awk '{ match($0, /"frame": [0-9]+/); fr = substr($0, RSTART + 9, RLENGTH - 9)
        n = split($0, seg, /\{"class_id"/)
        for (i = 2; i <= n; i++) { id = -1; box = ""
            if (match(seg[i], /"track_id": [0-9]+/)) { id = substr(seg[i], RSTART + 12, RLENGTH - 12)
                match(seg[i], /"box": \[[^]]*\]/); box = substr(seg[i], RSTART + 8, RLENGTH - 9); gsub(/,/, "", box) }
            if (seg[i] ~ /"recovered": true/) print fr, "r", "r", id, box; else print fr, "d", i - 2, id, box } }' "$1"
}
if [ $ok = 1 ] && infer_rc 0 --detections "$O/loose.jsonl" --track --tracker "$T/tt_nogmc.yaml" --no-save \
    --out "$O/t" "$O/people.mp4"; then
    rows_of "$O/t/people.jsonl" >"$O/got.txt"
    # numbers compared as numbers (awk's doubles: the shortest decimals of the same float32 read back equal)
    res=$(awk 'NR == FNR { w[NR] = $0; n = NR; next }
        { m++; if (split(w[FNR], a, " ") != NF) { bad++; next }
          for (i = 1; i <= NF; i++) if (i <= 3 ? $i != a[i] : $i + 0 != a[i] + 0) { bad++; if (!first) first = FNR ": " $0 " / " w[FNR]; break }
          if ($2 == "r") r++ }
        END { printf "%d %d %d %d %s\n", n, m, bad, r, first }' "$O/want.txt" "$O/got.txt")
    echo "    rows wanted, written, differing, recovered rows: $res"
    # shellcheck disable=SC2086 # $res: four numbers, then the first difference
    set -- $res
    [ "$1" = "$2" ] && [ "$3" = 0 ] && [ "$4" -ge 2 ] || ok=0
    # the rows pass through a replay without --track; ByteTrack drops them
    if infer_rc 0 --detections "$O/t/people.jsonl" --no-save --out "$O/p" "$O/people.mp4"; then
        rows_of "$O/p/people.jsonl" | cmp -s - "$O/got.txt" || { ok=0; echo "    the replay without --track changed rows"; }
    else ok=0; fi
    if infer_rc 0 --detections "$O/t/people.jsonl" --track --tracker bytetrack --no-save --out "$O/b" "$O/people.mp4"; then
        ! grep -q '"recovered"' "$O/b/people.jsonl" || { ok=0; echo "    ByteTrack wrote recovered rows"; }
    else ok=0; fi
else ok=0; fi
[ $ok = 1 ] && pass recovered_rows || fail recovered_rows "see above"

# real_footage: real video with the detections strix's synthetic weights made on it and, as "recovered": true rows,
# its recovered detections (the looser NMS's, TrackTrack's dets_del; the other trackers take none)
# (tools/reference/track_goldens.py --real), replayed through each tracker: every detection's identity equals the one
# Ultralytics 8.4.190's tracker gave it (NAME.real.txt: ByteTrack, BoT-SORT with GMC, OC-SORT, TrackTrack, which with
# its defaults tracks few of these ~0.5-score boxes, TrackTrack with lower thresholds, FastTrack, Deep OC-SORT, and Deep
# OC-SORT with gmc_method: sparseOptFlow), and TrackTrack-with-lower-thresholds' tracked
# boxes equal Ultralytics' (clipped to the frame) to the bit (GMC's transforms are OpenCV's); the rows TrackTrack makes
# of recovered detections equal its idx -1 rows (NAME.rec.txt; none on these clips: a recovered box takes a track only
# where the frame's detections leave it). Two clips of the sample video vtest.avi (a street, static camera): vtest, its
# first 150 frames; hand, its first 28 frames seen through a 640x480 window that moves like a handheld camera
# (lossless FFV1, so the pixels are the decoder's everywhere)
V=$DATA/vtest.avi
# real_clip NAME VIDEO DETECTIONS MIN_BOXES: the clip made against $G/NAME.{jsonl,real.txt}; 0 when all agree
real_clip() {
    name=$1 video=$2 ndet=$3 minb=$4 rc=0
    for c in 3:bytetrack 4:botsort 5:ocsort 6:tracktrack "7:$T/ttlow.yaml" 8:fasttrack 9:deepocsort "10:$T/docgmc.yaml"; do
        col=${c%%:*} trk=${c#*:}
        if ! infer_rc 0 --detections "$G/$name.jsonl" --track --tracker "$trk" --no-save --out "$T/real/$name.$col" \
            "$video"; then
            rc=1
            continue
        fi
        # per detection of the output: frame index identity box (the tracker's, "- - - -" untracked); the rows of
        # recovered detections (TrackTrack's) apart, as NAME.rec.txt has them
        awk -v col="$col" -v rec="$T/real/$name.$col.rec" '/"detections"/ {
            match($0, /"frame": [0-9]+/); fr = substr($0, RSTART + 9, RLENGTH - 9)
            n = split($0, seg, /\{"class_id"/)
            for (i = 2; i <= n; i++) { id = -1; box = "- - - -"
                if (match(seg[i], /"track_id": [0-9]+/)) { id = substr(seg[i], RSTART + 12, RLENGTH - 12)
                    match(seg[i], /"box": \[[^]]*\]/); box = substr(seg[i], RSTART + 8, RLENGTH - 9); gsub(/, /, " ", box) }
                if (seg[i] ~ /"recovered": true/) print fr, col, id, box >rec; else print fr, i - 2, id, box } }' \
            "$T/real/$name.$col/$name.jsonl" >"$T/real/$name.$col.ids"
        touch "$T/real/$name.$col.rec"
        if ! grep -v '^#' "$G/$name.rec.txt" | awk -v c="$col" '$2 == c' | cmp -s - "$T/real/$name.$col.rec"; then
            rc=1
            echo "    $name ${trk##*/}: the rows of recovered detections differ from $G/$name.rec.txt's"
        fi
        res=$(grep -v '^#' "$G/$name.real.txt" | paste -d' ' - "$T/real/$name.$col.ids" | awk -v c="$col" -v box="$([ "$col" = 7 ] && echo 1)" '
            function off(a, b) { return a > b ? a - b : b - a }
            { n++; if ($1 != $15 || $2 != $16) { bad = "out of step at line " n; exit }
              if ($c >= 0) t++
              if ($c != $17) d++
              if (box && $c >= 0 && $c == $17) { b++; for (q = 0; q < 4; q++) if ($(11 + q) + 0 != $(18 + q) + 0) { o++; break } } }
            END { if (bad) print bad; else printf "%d %d %d %d %d\n", n, t, d, b, o }')
        echo "    $name ${trk##*/}: $res (detections, tracked by Ultralytics, identities differing, boxes compared, boxes off)"
        # shellcheck disable=SC2086 # $res: five numbers
        set -- $res
        if [ "$#" != 5 ] || [ "$1" != "$ndet" ] || [ "$3" != 0 ] || [ "$5" != 0 ] || { [ "$col" = 7 ] && [ "$4" -lt "$minb" ]; }; then
            rc=1
        fi
    done
    return $rc
}
if [ ! -f "$V" ]; then skip real_footage "$V is absent (the project's sample media, ../shared/data)"
elif ! ffmpeg -v error -y -i "$V" -frames:v 150 -c copy "$T/vtest.avi" 2>"$T/ffmpeg.err" ||
    ! ffmpeg -v error -y -i "$V" -frames:v 28 -vf "crop=640:480:x='2*trunc((64+40*sin(n/7)+20*sin(n/3))/2)':y='2*trunc((48+30*sin(n/5+1)+12*sin(n/2))/2)'" \
        -c:v ffv1 "$T/hand.mkv" 2>>"$T/ffmpeg.err"; then
    fail real_footage "ffmpeg could not make the clips of $V: $(head -c 200 "$T/ffmpeg.err")"
else
    printf 'tracker_type: tracktrack\ntrack_high_thresh: 0.3\ntrack_low_thresh: 0.2\nnew_track_thresh: 0.4\n' >"$T/ttlow.yaml"
    printf 'tracker_type: deepocsort\ngmc_method: sparseOptFlow\n' >"$T/docgmc.yaml"
    ok=1
    real_clip vtest "$T/vtest.avi" 1017 150 || ok=0
    real_clip hand "$T/hand.mkv" 863 50 || ok=0
    [ $ok = 1 ] && pass real_footage || fail real_footage "see above"
fi

# reid: with_reid: True, model: auto end to end: infer detects on vtest.avi's first 30 frames (yolov8n, the synthetic
# weights of seed 7, conf 0.3), takes each detection's native features and tracks with BoT-SORT (sparseOptFlow GMC on
# the frames): every identity equals the one Ultralytics 8.4.190's BOTSORT gave strix's detections and features
# (tests/golden/track/reid.ids.txt, tools/reference/reid_goldens.py; tests/test_reid.c checks the other trackers'
# columns); a segment model is refused (exit 2, one line).  The sanitizer build runs the same pipeline on a few small
# frames instead, without the identities: its -O2 convolutions round the features differently in the last bits, which
# moves near-tied identities, and its model runs a minute on the clip (tests/test_reid.c checks the trackers there)
if [ ! -f "$V" ]; then skip reid "$V is absent (the project's sample media, ../shared/data)"
elif ! [ -x "$B/mkweights" ] || ! "$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$T/w7.safetensors" \
    --overwrite >/dev/null 2>&1; then skip reid "mkweights is not built or failed"
elif ! ffmpeg -v error -y -i "$V" -frames:v 30 -c copy "$T/vtest30.avi" 2>"$T/ffmpeg.err"; then
    fail reid "ffmpeg could not cut $V: $(head -c 200 "$T/ffmpeg.err")"
else
    ok=1
    mkdir -p "$T/reid" && grep -v '^#' "$G/reid.ids.txt" >"$T/reid/golden.ids"
    printf 'tracker_type: botsort\nwith_reid: True\nmodel: auto\n' >"$T/botreid.yaml"
    if [ $ASAN = 1 ]; then
        infer_rc 0 --model "$YAML" --scale n --weights "$T/w7.safetensors" --device cpu --imgsz 64 --conf 0.01 \
            --vid-stride 6 --track --tracker "$T/botreid.yaml" --no-save --out "$T/reid/bot" "$T/vtest30.avi" &&
            grep -q '"with_reid": true' "$T/reid/bot/vtest30.tracks.json" || ok=0
    elif infer_rc 0 --model "$YAML" --scale n --weights "$T/w7.safetensors" --device cpu --conf 0.3 --track \
        --tracker "$T/botreid.yaml" --no-save --out "$T/reid/bot" "$T/vtest30.avi"; then
        # per detection: frame index identity, beside the golden's line (botsort: its third column)
        res=$(awk '/"detections"/ { match($0, /"frame": [0-9]+/); fr = substr($0, RSTART + 9, RLENGTH - 9)
            n = split($0, seg, /\{"class_id"/)
            for (i = 2; i <= n; i++) { id = -1; if (match(seg[i], /"track_id": [0-9]+/)) id = substr(seg[i], RSTART + 12, RLENGTH - 12)
                print fr, i - 2, id } }' "$T/reid/bot/vtest30.jsonl" |
            paste -d' ' - "$T/reid/golden.ids" | awk '
            { n++; if ($1 != $4 || $2 != $5) { bad = "out of step at line " n; exit }
                if ($6 >= 0) t++; if ($3 != $6) d++ }
            END { if (bad) print bad; else printf "%d %d %d\n", n, t, d }')
        echo "    botsort with_reid: $res (detections, tracked by Ultralytics, identities differing)"
        # shellcheck disable=SC2086 # $res: three numbers
        set -- $res
        if [ "$#" != 3 ] || [ "$1" != 284 ] || [ "$2" -lt 30 ] || [ "$3" != 0 ]; then ok=0; fi
        grep -q '"with_reid": true, "model": "auto", "proximity_thresh": 0.5, "appearance_thresh": 0.8, "conf": 0.3' \
            "$T/reid/bot/vtest30.tracks.json" || { ok=0; echo "    $(grep -o '"tracker": {[^}]*}' "$T/reid/bot/vtest30.tracks.json")"; }
    else ok=0; fi
    SEG=${YAML%/*}/yolov8-seg.yaml
    if ! "$B/mkweights" --model "$SEG" --scale n --seed 7 --out "$T/seg7.safetensors" --overwrite >/dev/null 2>&1 ||
        ! infer_rc 2 --model "$SEG" --scale n --weights "$T/seg7.safetensors" --device cpu --track \
            --tracker "$T/botreid.yaml" --no-save --out "$T/reid/seg" "$T/vtest30.avi" ||
        ! grep -q "with a segment model is not supported" "$T/err" || [ "$(wc -l <"$T/err")" != 1 ]; then
        ok=0
        echo "    segment: $(cat "$T/err")"
    fi
    [ $ok = 1 ] && pass reid || fail reid "see above"
fi

# degenerate_boxes: a box clipped to zero width and an inverted box (replayed) are not tracked, counted,
# and change nothing else: the same MOT rows as the clean replay
awk '/"frame": 60,/ { sub(/"detections": \[/, "\"detections\": [{\"class_id\": 16, \"score\": 0.9, \"box\": [0, 100, 0, 160]}, ") }
    /"frame": 61,/ { sub(/"detections": \[/, "\"detections\": [{\"class_id\": 0, \"score\": 0.8, \"box\": [50, 60, 40, 90]}, ") }
    { print }' "$T/dets.jsonl" >"$T/degen.jsonl"
O=$T/degen
if infer_rc 0 --detections "$T/degen.jsonl" --track $BOT --line 0,90,320,90 --no-save --out "$O" "$T/clip.mp4" &&
    grep -q "2 detections with an empty or non-finite box (no area) not tracked" "$T/err" &&
    grep -q '"degenerate_boxes": 2,' "$O/clip.tracks.json" && cmp -s "$O/clip.mot.txt" "$T/exact/clip.mot.txt" &&
    infer_rc 0 --detections "$O/clip.jsonl" --track $BOT --no-save --out "$O/again" "$T/clip.mp4" &&
    cmp -s "$O/again/clip.mot.txt" "$T/exact/clip.mot.txt"; then pass degenerate_boxes
else fail degenerate_boxes "$(cat "$T/err")"; fi

# bad_detections: malformed or missing file: exit 3, one line naming file:line, nothing written
printf '{"frame": 0, "pts": 0, "inferred": true, "detections": []}\n{"frame": 1, "pts": 0.04, "detections": [{"box": [1, 2]}]}\n' >"$T/bad.jsonl"
O=$T/bad
if infer_rc 3 --detections "$T/bad.jsonl" --out "$O" "$T/clip.mp4" && grep -q "bad.jsonl:2" "$T/err" &&
    [ "$(wc -l <"$T/err")" = 1 ] && [ ! -e "$O/clip.mp4" ] && infer_rc 3 --detections "$T/nope.jsonl" --out "$O" "$T/clip.mp4"; then
    pass bad_detections
else fail bad_detections "$(cat "$T/err")"; fi

# mismatched_video: the 25 fps clip's detections replayed on a 30 fps clip: the
# times part by more than half a frame at frame 3: exit 3, the message says
# which frame, nothing kept
ffmpeg -v error -y -f lavfi -i testsrc2=size=160x120:rate=30:duration=2 -c:v libx264 -preset ultrafast \
    -pix_fmt yuv420p "$T/other.mp4"
O=$T/mismatch
if infer_rc 3 $R --track $BOT --out "$O" "$T/other.mp4" && grep -q "frame 3 is at 0.120 s there but at 0.100 s" "$T/err" &&
    [ ! -e "$O/other.mp4" ] && [ ! -e "$O/other.jsonl" ] && [ ! -e "$O/other.mot.txt" ]; then pass mismatched_video
else fail mismatched_video "$(cat "$T/err")"; fi

# usage_errors: exit 2, one line each
ok=1
for args in "--line 0,0,10,10 $R" "--trail 5 $R" "--hl-gap 1 $R" "--hl-min-frames 3 --highlights dog $R" \
    "--highlights cat $R" "--line 1,2,1,2 --track $R" "--detections $T/dets.jsonl --names x.txt"; do
    # shellcheck disable=SC2086
    if ! infer_rc 2 $args --out "$T/usage" "$T/clip.mp4" || [ "$(wc -l <"$T/err")" != 1 ]; then ok=0; echo "    $args"; fi
done
if ! infer_rc 2 $R --out "$T/usage" "$T/clip.mp4" "$T/other.mp4"; then ok=0; fi
if ! infer_rc 2 --model "$YAML" --weights x --track --out "$T/usage" "$DATA/dog.jpg" 2>/dev/null && [ -f "$DATA/dog.jpg" ]; then ok=0; fi
[ $ok = 1 ] && pass usage_errors || fail usage_errors "see above"

# refuse_overwrite: an existing reel is refused before any work (exit 7), kept as it was
O=$T/exist
mkdir -p "$O" && echo keep >"$O/clip.highlights.mp4"
if infer_rc 7 $R --highlights dog --out "$O" "$T/clip.mp4" && [ "$(cat "$O/clip.highlights.mp4")" = keep ] &&
    [ ! -e "$O/clip.jsonl" ] && infer_rc 0 $R --highlights dog --overwrite --out "$O" "$T/clip.mp4" &&
    [ "$(nframes "$O/clip.highlights.mp4")" -gt 100 ]; then pass refuse_overwrite
else fail refuse_overwrite "$(cat "$T/err")"; fi

# live_model: detection by a model (random weights) with tracking and highlights on every class
if [ -x "$B/mkweights" ] && "$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$T/w.safetensors" >/dev/null 2>&1; then
    O=$T/live
    ffmpeg -v error -y -f lavfi -i testsrc2=size=160x120:rate=10:duration=2 -c:v libx264 -preset ultrafast \
        -pix_fmt yuv420p "$T/live.mp4"
    all=$(seq -s, 0 79)
    if infer_rc 0 --model "$YAML" --scale n --weights "$T/w.safetensors" --imgsz 64 --threads 1 --device cpu --track \
        --trail 5 --highlights "$all" --hl-score 0 --conf 0.01 --out "$O" "$T/live.mp4" &&
        [ "$(wc -l <"$O/live.jsonl")" = 21 ] && [ -f "$O/live.mot.txt" ] && grep -q '"tracks": \[' "$O/live.tracks.json" &&
        [ -f "$O/live.highlights.json" ]; then pass live_model
    else fail live_model "$(cat "$T/err")"; fi
else skip live_model "mkweights is not built or failed"; fi

# temps: no temporary files left anywhere
left=$(find "$T" -name '*.tmp' | head -n 3)
[ -z "$left" ] && pass temps || fail temps "left behind: $left"
exit $FAILED
