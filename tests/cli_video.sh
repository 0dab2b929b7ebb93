#!/bin/sh
# cli_video.sh — end-to-end tests of `infer` on videos: synthetic clips made
# here with FFmpeg's lavfi (testsrc2 + a sine tone) in several containers and
# codecs (MP4 H.264+AAC, MKV VP9+Opus, AVI MJPEG+PCM, an odd size, a rotated
# clip, a variable-frame-rate clip, truncated and corrupted streams, a
# Cinepak AVI whose header miscounts its frames, H.264 with a damaged NAL
# unit, an MP4 whose H.264 slice headers are damaged, an image sequence),
# checked with ffprobe: frame counts, durations, timestamps, rotation,
# audio packets byte for byte (framemd5), JSON Lines count and schema, exit
# codes, one-line errors, no temporary files left, memory flat over a long
# clip, SIGINT; ../shared/data/vtest.avi end to end when present.
#   sh tests/cli_video.sh BUILD_DIR
# Prints one PASS/FAIL/SKIP line per test; exits 1 if any failed.  Needs the
# ffmpeg and ffprobe programs (tools/deps.sh installs them); SKIPs without.
NAME=cli_video
. "$(dirname "$0")/lib_cli.sh"

ALL="help mp4_h264_aac mkv_vp9_opus avi_mjpeg_pcm odd_size rotated vfr truncated corrupt avi_wrong_count damaged_h264
decoder_errors not_a_video empty_file audio_only zero_frames unsupported_codec missing_input unreachable_url same_as_input unwritable_out
full_disk refuse_overwrite no_audio classes classes_images vid_stride batch nv12 txt sequence file_url codec_fallback
bad_encoder_options json_option mixed_inputs sigint memory_flat vtest temps"
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
# an AddressSanitizer build runs slower and its memory figures mean nothing
ASAN=0
grep -q __asan_init "$B/infer" 2>/dev/null && ASAN=1
# small model input and one thread keep it quick; random weights: the boxes
# mean nothing but every stage runs
M="--model $YAML --scale n --weights $W --imgsz 64 --threads 1 --device cpu"

# one_line NAME: exactly one line on stderr
one_line() {
    [ "$(wc -l <"$T/err")" -eq 1 ] && return 0
    fail "$1" "want one line on stderr, got: $(head -c 400 "$T/err")"
    return 1
}
ff() { ffmpeg -v error -nostdin -y "$@"; }
probe() { ffprobe -v error "$@" 2>/dev/null; }
frames() { probe -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" | head -n 1 |
    sed 's/,*$//'; }
# (side data such as a display matrix adds empty csv fields: dropped)
vinfo() { probe -select_streams v:0 -show_entries stream=codec_name,width,height -of csv=p=0 "$1" | head -n 1 |
    sed 's/,*$//'; }
# presentation times of the video frames, "%.6f " each
vpts() { probe -select_streams v:0 -show_entries frame=pts_time -of csv=p=0 "$1" |
    awk -F, '$1 != "" { printf "%.6f ", $1 }'; }
acodec() { probe -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$1"; }
duration() { probe -show_entries format=duration -of csv=p=0 "$1"; }
# per-packet size and payload MD5 of the first audio stream
audio_sums() { ffmpeg -v error -nostdin -i "$1" -map 0:a:0 -c copy -f framemd5 - 2>/dev/null | grep -v '^#' |
    awk -F', *' '{print $5, $6}'; }
close() { awk -v a="$1" -v b="$2" -v e="$3" 'BEGIN { d = a - b; exit !(d <= e && -d <= e) }'; }
no_temps() {
    left=$(find "$T" -name '*.tmp' 2>/dev/null | head -n 3)
    [ -z "$left" ] || { fail "$1" "temporary files left: $left"; return 1; }
    return 0
}

# jsonl_ok FILE N: the header line (saying N frames), then N lines, frames
# 0..N-1 in order, increasing pts, and nothing but the documented keys (each
# detection object is removed by a pattern of its exact shape; what remains
# must be the frame skeleton)
jsonl_ok() {
    [ -f "$1" ] || { echo "no $1"; return 1; }
    n=$(wc -l <"$1")
    [ "$n" -eq $(($2 + 1)) ] || { echo "$n lines, want a header and $2"; return 1; }
    awk -v want="$2" '
    BEGIN { num = "-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?" }
    NR == 1 {
        c = "\"[a-z_]+\": [0-9]+ *"
        h = "^\\{\"header\": \\{\"video\": \"[^\"]*\", \"frames\": " want " *, \"damage\": \\{"
        h = h c ", " c ", " c ", " c ", " c ", " c "\\}, \"degenerate_boxes\": ([0-9]+|null) *\\}\\}$"
        if ($0 !~ h) {
            print "line 1 is not the header: " substr($0, 1, 160); exit 1
        }
        next
    }
    {
        line = $0
        det = "\\{\"class_id\": [0-9]+, \"class_name\": \"[^\"]*\", \"score\": " num ", \"box\": \\[" num ", " num ", " num ", " num "\\]\\}"
        gsub(det, "D", line)
        gsub("D, ", "D", line)
        if (line !~ "^\\{\"frame\": [0-9]+, \"pts\": " num ", \"inferred\": (true|false), \"detections\": \\[D*\\]\\}$") {
            print "line " NR " does not match the schema: " substr($0, 1, 160); exit 1
        }
        split($0, a, /[:,] */)
        if (a[2] != NR - 2) { print "line " NR " has frame " a[2]; exit 1 }
        if (NR > 2 && a[4] + 0 <= last) { print "pts not increasing at line " NR; exit 1 }
        last = a[4] + 0
    }' "$1"
}

# header_count FILE KEY: a count in the JSON Lines header, -1 when there is none
header_count() {
    c=$(head -n 1 "$1" 2>/dev/null | grep -o "\"$2\": [0-9]*" | grep -o '[0-9]*$')
    echo "${c:--1}"
}

# ------------------------------------------------------------------ media
S="testsrc2=size=320x240:rate=25"
A="sine=frequency=440:sample_rate=48000"
ff -f lavfi -i "$S" -f lavfi -i "$A" -t 1 -c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac -shortest "$T/a.mp4"
ff -f lavfi -i "$S" -f lavfi -i "$A" -t 1 -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -c:a libopus -shortest "$T/b.mkv"
ff -f lavfi -i "testsrc2=size=320x240:rate=10" -f lavfi -i "sine=frequency=440:sample_rate=44100" -t 1 \
    -c:v mjpeg -c:a pcm_s16le -shortest "$T/c.avi"
# testsrc (not testsrc2, which rounds to even sizes); odd sides need 4:4:4
ff -f lavfi -i "testsrc=size=641x479:rate=25" -frames:v 10 -c:v libx264 -preset ultrafast -pix_fmt yuv444p "$T/odd.mkv"
ff -i "$T/a.mp4" -c copy -metadata:s:v:0 rotate=90 "$T/rot.mp4"
# frame intervals of 40, 100 and 230 ms
ff -f lavfi -i "$S" -frames:v 30 -vf "setpts='(N*0.04+if(gt(N,10),(N-10)*0.06,0)+if(gt(N,20),(N-20)*0.13,0))/TB'" \
    -fps_mode vfr -c:v libx264 -preset ultrafast -video_track_timescale 1000 "$T/vfr.mp4"
ff -f lavfi -i "$S" -f lavfi -i "$A" -t 2 -c:v libx264 -preset ultrafast -c:a aac -shortest "$T/full.ts"
size=$(wc -c <"$T/full.ts")
head -c $((size * 6 / 10)) "$T/full.ts" >"$T/cut.ts"
cp "$T/full.ts" "$T/bad.ts"
dd if=/dev/zero of="$T/bad.ts" bs=1 seek=$((size / 3)) count=30000 conv=notrunc 2>/dev/null
mkdir -p "$T/seq"
ff -f lavfi -i "testsrc2=size=160x120:rate=5" -frames:v 7 "$T/seq/img_%03d.png"
ff -f lavfi -i "$A" -t 1 -c:a aac "$T/audio.m4a"
printf 'YUV4MPEG2 W320 H240 F25:1 Ip A1:1 C420jpeg\n' >"$T/zero.y4m"
# an MKV whose codec id FFmpeg does not know: V_VP9 renamed in place
cp "$T/b.mkv" "$T/unsup.mkv"
off=$(grep -obUa V_VP9 "$T/unsup.mkv" | head -n 1 | cut -d: -f1)
[ -n "$off" ] && printf 'V_XYZ' | dd of="$T/unsup.mkv" bs=1 seek="$off" conv=notrunc 2>/dev/null
echo "not a video" >"$T/notvideo.mp4"
: >"$T/empty.mp4"
echo plain >"$T/afile"
for f in a.mp4 b.mkv c.avi odd.mkv rot.mp4 vfr.mp4 full.ts seq/img_001.png audio.m4a; do
    if [ ! -s "$T/$f" ]; then
        skip_all "ffmpeg could not make the test media ($f): encoders missing?"
    fi
done

# ------------------------------------------------------------------ tests
if run help 0 --help && grep -q -- "--vid-stride" "$T/out" && grep -q "JSON" "$T/out" &&
    grep -q "SIGINT" "$T/out"; then pass help
elif [ "$rc" -eq 0 ]; then fail help "no video options in --help"; fi

# shellcheck disable=SC2086
if run mp4_h264_aac 0 $M --out "$T/o1" "$T/a.mp4"; then
    o=$T/o1/a.mp4
    why=$(jsonl_ok "$T/o1/a.jsonl" 25) || true
    moov=$(grep -obUa -m 1 moov "$o" | head -n 1 | cut -d: -f1)
    mdat=$(grep -obUa -m 1 mdat "$o" | head -n 1 | cut -d: -f1)
    if [ "$(vinfo "$o")" != "h264,320,240" ]; then fail mp4_h264_aac "video stream: $(vinfo "$o")"
    elif [ "$(frames "$o")" != 25 ]; then fail mp4_h264_aac "$(frames "$o") frames, want 25"
    elif ! close "$(duration "$o")" "$(duration "$T/a.mp4")" 0.05; then
        fail mp4_h264_aac "duration $(duration "$o") vs $(duration "$T/a.mp4")"
    elif [ "$(acodec "$o")" != aac ]; then fail mp4_h264_aac "audio: '$(acodec "$o")'"
    elif [ "$(audio_sums "$o")" != "$(audio_sums "$T/a.mp4")" ]; then fail mp4_h264_aac "audio packets changed"
    elif [ -n "$why" ]; then fail mp4_h264_aac "JSON Lines: $why"
    elif [ -z "$moov" ] || [ -z "$mdat" ] || [ "$moov" -gt "$mdat" ]; then fail mp4_h264_aac "not +faststart"
    elif ! grep -q "^infer: .*a.mp4: 25 frames (25 detected), [0-9]* detections in .* fps; decode .* s, preprocess .* s, inference .* s, postprocess .* s, annotate .* s, encode .* s" "$T/out"; then
        fail mp4_h264_aac "no summary with the stage breakdown: $(head -c 300 "$T/out")"
    elif grep -v "^infer: .* frames, .* fps, ETA" "$T/err" | grep -q .; then
        fail mp4_h264_aac "stderr: $(head -c 200 "$T/err")"
    else pass mp4_h264_aac; fi
fi

# shellcheck disable=SC2086
if run mkv_vp9_opus 0 $M --out "$T/o2" "$T/b.mkv"; then
    o=$T/o2/b.mp4
    if [ "$(frames "$o")" != "$(frames "$T/b.mkv")" ]; then fail mkv_vp9_opus "$(frames "$o") frames, want $(frames "$T/b.mkv")"
    elif [ "$(acodec "$o")" != opus ]; then fail mkv_vp9_opus "audio '$(acodec "$o")', want opus copied"
    elif [ "$(audio_sums "$o")" != "$(audio_sums "$T/b.mkv")" ]; then fail mkv_vp9_opus "audio packets changed"
    elif ! close "$(duration "$o")" "$(duration "$T/b.mkv")" 0.05; then fail mkv_vp9_opus "duration $(duration "$o")"
    else pass mkv_vp9_opus; fi
fi

# PCM cannot go into MP4: re-encoded to AAC, with a notice
# shellcheck disable=SC2086
if run avi_mjpeg_pcm 0 $M --out "$T/o3" "$T/c.avi"; then
    o=$T/o3/c.mp4
    ad=$(probe -select_streams a:0 -show_entries stream=duration -of csv=p=0 "$o")
    if [ "$(frames "$o")" != 10 ]; then fail avi_mjpeg_pcm "$(frames "$o") frames, want 10"
    elif [ "$(acodec "$o")" != aac ]; then fail avi_mjpeg_pcm "audio '$(acodec "$o")', want aac"
    elif ! close "$ad" 1 0.1; then fail avi_mjpeg_pcm "audio lasts $ad s, want 1"
    elif ! grep -q "notice: .*re-encoded to AAC" "$T/err"; then fail avi_mjpeg_pcm "no notice: $(cat "$T/err")"
    else pass avi_mjpeg_pcm; fi
fi

# shellcheck disable=SC2086
if run odd_size 0 $M --out "$T/o4" "$T/odd.mkv"; then
    if [ "$(vinfo "$T/o4/odd.mp4")" != "h264,641,479" ]; then fail odd_size "$(vinfo "$T/o4/odd.mp4")"
    elif [ "$(frames "$T/o4/odd.mp4")" != 10 ]; then fail odd_size "$(frames "$T/o4/odd.mp4") frames"
    elif ! grep -q "notice: .*odd" "$T/err"; then fail odd_size "no notice about the odd size"
    else pass odd_size; fi
fi

# rotation kept as metadata; detections in display orientation (240 x 320)
# shellcheck disable=SC2086
if run rotated 0 $M --conf 0.05 --out "$T/o5" "$T/rot.mp4"; then
    rin=$(probe -select_streams v:0 -show_entries stream_side_data=rotation -of csv=p=0 "$T/rot.mp4")
    rout=$(probe -select_streams v:0 -show_entries stream_side_data=rotation -of csv=p=0 "$T/o5/rot.mp4")
    ext=$(grep -o '"box": \[[^]]*\]' "$T/o5/rot.jsonl" | tr -d '[],"box:' |
        awk '{ if ($3 > x) x = $3; if ($4 > y) y = $4 } END { print x + 0, y + 0 }')
    if [ -z "$rin" ] || [ "$rin" != "$rout" ]; then fail rotated "rotation '$rout', want '$rin'"
    elif [ "$(vinfo "$T/o5/rot.mp4")" != "h264,320,240" ]; then fail rotated "stored size $(vinfo "$T/o5/rot.mp4")"
    elif [ "$(frames "$T/o5/rot.mp4")" != 25 ]; then fail rotated "$(frames "$T/o5/rot.mp4") frames"
    elif ! echo "$ext" | awk '{ exit !($1 <= 240 && $2 <= 320 && $2 > 240) }'; then
        fail rotated "boxes reach x=${ext% *}, y=${ext#* }: not in the 240x320 display frame"
    else pass rotated; fi
fi

# shellcheck disable=SC2086
if run vfr 0 $M --out "$T/o6" "$T/vfr.mp4"; then
    pin=$(vpts "$T/vfr.mp4")
    pout=$(vpts "$T/o6/vfr.mp4")
    pjson=$(grep -o '"pts": [0-9.e-]*' "$T/o6/vfr.jsonl" | awk '{ printf "%.6f ", $2 }')
    if [ "$pin" != "$pout" ]; then fail vfr "timestamps changed: in $pin; out $pout"
    elif [ "$pin" != "$pjson" ]; then fail vfr "JSON pts $pjson, want $pin"
    else pass vfr; fi
fi

# decode past the damage, exit 0, say so on stderr (detection on every 5th
# frame: it is not what these test)
for t in truncated:cut.ts corrupt:bad.ts; do
    name=${t%%:*} f=${t#*:}
    # shellcheck disable=SC2086
    run "$name" 0 $M --vid-stride 5 --out "$T/o_$name" "$T/$f" || continue
    o=$T/o_$name/${f%.ts}.mp4
    n=$(frames "$o")
    if [ -z "$n" ] || [ "$n" -lt 1 ] || [ "$n" -ge 50 ]; then fail "$name" "$n frames in the output"
    elif ! why=$(jsonl_ok "$T/o_$name/${f%.ts}.jsonl" "$n"); then fail "$name" "JSON Lines: $why"
    elif ! grep -q "damaged input\|corrupt\|truncated" "$T/err"; then fail "$name" "no warning on stderr"
    else pass "$name"; fi
done

# avi_wrong_count: a complete Cinepak AVI whose headers (avih total frames,
# the stream header's length) say 90 frames where it holds 30: every frame
# decodes, no "truncated" or "corrupt" warning, at most a neutral notice
ff -f lavfi -i "testsrc2=size=160x120:rate=10" -frames:v 30 -c:v cinepak "$T/cinepak.avi"
if [ ! -s "$T/cinepak.avi" ]; then skip avi_wrong_count "ffmpeg has no cinepak encoder"
else
    avih=$(grep -obUa avih "$T/cinepak.avi" | head -n 1 | cut -d: -f1)
    strh=$(grep -obUa strh "$T/cinepak.avi" | head -n 1 | cut -d: -f1)
    # little-endian 90 at avih + 8 + 16 (dwTotalFrames) and strh + 8 + 32 (dwLength)
    printf 'Z\000\000\000' | dd of="$T/cinepak.avi" bs=1 seek=$((avih + 24)) conv=notrunc 2>/dev/null
    printf 'Z\000\000\000' | dd of="$T/cinepak.avi" bs=1 seek=$((strh + 40)) conv=notrunc 2>/dev/null
    said=$(probe -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$T/cinepak.avi")
    # shellcheck disable=SC2086
    if run avi_wrong_count 0 $M --no-save --out "$T/o_avi" "$T/cinepak.avi"; then
        if [ "$said" != 90 ]; then fail avi_wrong_count "the patched header says $said frames, want 90"
        elif ! why=$(jsonl_ok "$T/o_avi/cinepak.jsonl" 30); then fail avi_wrong_count "JSON Lines: $why"
        elif grep -qi "truncat\|corrupt\|damage" "$T/err"; then fail avi_wrong_count "warned: $(cat "$T/err")"
        elif ! grep -q "header counts 90 frames; 30 decoded, with no read or decode error" "$T/err"; then
            fail avi_wrong_count "no notice: $(cat "$T/err")"
        elif [ "$(header_count "$T/o_avi/cinepak.jsonl" decode_errors)" != 0 ] ||
            [ "$(header_count "$T/o_avi/cinepak.jsonl" frames_lost)" != 0 ]; then
            fail avi_wrong_count "header: $(head -n 1 "$T/o_avi/cinepak.jsonl")"
        else pass avi_wrong_count; fi
    fi
fi

# damaged_h264: an H.264 stream (lavfi testsrc2 -> libx264, keyframes every
# 50 frames) with 32 bytes overwritten in the middle of its 30th NAL unit:
# the decoder conceals the damage, and the frames after it until the next
# keyframe decode from a damaged reference.  Both are counted, on stderr and
# in the JSON Lines header; the clean stream reports nothing
ff -f lavfi -i "testsrc2=size=320x240:rate=25" -frames:v 100 -c:v libx264 -preset ultrafast -g 50 -f h264 \
    "$T/clean.h264"
grep -obUaP '\x00\x00\x01' "$T/clean.h264" | cut -d: -f1 >"$T/nals.txt"
a=$(sed -n 30p "$T/nals.txt") b=$(sed -n 31p "$T/nals.txt")
if [ -z "$b" ]; then skip damaged_h264 "the test stream has fewer than 31 NAL units"
else
    cp "$T/clean.h264" "$T/damaged.h264"
    awk 'BEGIN { for (i = 0; i < 32; i++) printf "\377" }' |
        dd of="$T/damaged.h264" bs=1 seek=$(((a + b) / 2)) conv=notrunc 2>/dev/null
    # shellcheck disable=SC2086
    if run damaged_h264 0 $M --no-save --out "$T/o_dmg" "$T/damaged.h264" "$T/clean.h264"; then
        J=$T/o_dmg/damaged.jsonl
        hit=$(($(header_count "$J" concealed_frames) + $(header_count "$J" skipped_packets)))
        tainted=$(header_count "$J" tainted_frames)
        if ! why=$(jsonl_ok "$J" 100); then fail damaged_h264 "JSON Lines: $why"
        elif [ "$hit" -lt 1 ] || [ "$tainted" -lt 1 ] || [ "$tainted" -gt 49 ]; then
            fail damaged_h264 "header: $(head -n 1 "$J")"
        elif ! grep -q "damaged.h264: damaged input: .*$tainted more frames decoded from damaged references" "$T/err"
        then fail damaged_h264 "stderr: $(cat "$T/err")"
        elif grep -q "clean.h264: damaged" "$T/err" ||
            [ "$(header_count "$T/o_dmg/clean.jsonl" tainted_frames)" != 0 ]; then
            fail damaged_h264 "the clean stream reported damage: $(cat "$T/err")"
        else pass damaged_h264; fi
    fi
fi

# decoder_errors: damage FFmpeg's H.264 decoder only logs.  An MP4 of 51
# frames, 4 slices each, IDR frames at 0, 25 and 50, whose slice headers are
# damaged before muxing: the first slice of frame 25 and all four of frame
# 50 say slice type 8 (SI) in an IDR NAL unit.  FFmpeg logs "A non-intra
# slice in an IDR NAL unit" and "decode_slice_header error" for each slice
# (and "no frame!" for frame 50), conceals frame 25 and loses frame 50: the
# header still counts 51 frames, 50 decode.  The errors and the lost frame
# are counted on stderr and in the JSON Lines header, and the neutral "no
# read or decode error" notice about the header's count must not appear;
# the same clip undamaged counts nothing.  With --quiet: the damage line
# only.
# flip_slice FILE OFFSET: the IDR slice whose start code (00 00 01) is at
# OFFSET, its slice_type 7 (I: the 7-bit Exp-Golomb code 0001000 after
# first_mb_in_slice's code) made 8 (0001001, SI) by flipping one bit
flip_slice() {
    at=$(od -An -tu1 -j $(($2 + 4)) -N6 "$1" | awk '{
        bits = ""
        for (i = 1; i <= NF; i++) for (b = 128; b >= 1; b /= 2) bits = bits (int($i / b) % 2)
        z = 0
        while (substr(bits, z + 1, 1) == "0") z++
        p = 2 * z + 1
        if (substr(bits, p + 1, 7) != "0001000") { print "-1 0"; exit }
        bit = p + 6
        print int(bit / 8), $(int(bit / 8) + 1) + 2 ^ (7 - bit % 8)
    }')
    [ "${at%% *}" -ge 0 ] || return 1
    # shellcheck disable=SC2059
    printf "$(printf '\\%03o' "${at#* }")" | dd of="$1" bs=1 seek=$(($2 + 4 + ${at%% *})) conv=notrunc 2>/dev/null
}
ff -f lavfi -i "testsrc=size=320x240:rate=25" -frames:v 51 -c:v libx264 -preset ultrafast -g 25 -bf 0 \
    -x264-params slices=4 -f h264 "$T/slices.h264"
grep -obUaP '\x00\x00\x01\x65' "$T/slices.h264" | cut -d: -f1 >"$T/idr.txt"
cp "$T/slices.h264" "$T/slices_bad.h264"
flipped=0
for k in 5 9 10 11 12; do
    o=$(sed -n "${k}p" "$T/idr.txt")
    [ -n "$o" ] && flip_slice "$T/slices_bad.h264" "$o" && flipped=$((flipped + 1))
done
for f in slices slices_bad; do ff -r 25 -f h264 -i "$T/$f.h264" -c copy "$T/$f.mp4"; done
if [ "$flipped" != 5 ]; then skip decoder_errors "libx264's slices are not laid out as expected (IDR slice offsets: $(tr '\n' ' ' <"$T/idr.txt"))"
else
    J=$T/o_dec/slices_bad.jsonl
    # shellcheck disable=SC2086
    if run decoder_errors 0 $M --no-save --out "$T/o_dec" "$T/slices_bad.mp4" "$T/slices.mp4"; then
        if ! why=$(jsonl_ok "$J" 50); then fail decoder_errors "JSON Lines: $why"
        elif [ "$(header_count "$J" decode_errors)" -lt 10 ] || [ "$(header_count "$J" frames_lost)" != 1 ] ||
            [ "$(header_count "$J" concealed_frames)" != 1 ]; then
            fail decoder_errors "header: $(head -n 1 "$J")"
        elif ! grep -q "slices_bad.mp4: damaged input: .*[0-9][0-9] errors logged by FFmpeg's decoder, 1 frame lost.*FFmpeg's h264 decoder first said 'A non-intra slice in an IDR NAL unit'" "$T/err"
        then fail decoder_errors "stderr: $(cat "$T/err")"
        elif grep -q "no read or decode error\|\[h264 @" "$T/err"; then fail decoder_errors "stderr: $(cat "$T/err")"
        elif grep -q "slices.mp4: damaged" "$T/err" || ! why=$(jsonl_ok "$T/o_dec/slices.jsonl" 51) ||
            [ "$(header_count "$T/o_dec/slices.jsonl" decode_errors)" != 0 ] ||
            [ "$(header_count "$T/o_dec/slices.jsonl" frames_lost)" != 0 ]; then
            fail decoder_errors "the clean clip reported damage: $why $(cat "$T/err") $(head -n 1 "$T/o_dec/slices.jsonl")"
        # shellcheck disable=SC2086
        elif run decoder_errors 0 $M --no-save --quiet --out "$T/o_decq" "$T/slices_bad.mp4" && one_line decoder_errors; then
            if ! grep -q "slices_bad.mp4: damaged input: .*1 frame lost" "$T/err"; then fail decoder_errors "--quiet: $(cat "$T/err")"
            elif [ "$(head -n 1 "$T/o_decq/slices_bad.jsonl")" != "$(head -n 1 "$J")" ]; then
                fail decoder_errors "--quiet header: $(head -n 1 "$T/o_decq/slices_bad.jsonl")"
            else pass decoder_errors; fi
        fi
    fi
fi

# bad inputs: one clear line, the documented status, nothing left behind
for t in not_a_video:6:notvideo.mp4 empty_file:6:empty.mp4 audio_only:6:audio.m4a zero_frames:6:zero.y4m \
    unsupported_codec:6:unsup.mkv missing_input:3:nope.mp4; do
    name=${t%%:*} rest=${t#*:}
    want=${rest%%:*} f=${rest#*:}
    # shellcheck disable=SC2086
    run "$name" "$want" $M --out "$T/o_$name" "$T/$f" || continue
    one_line "$name" || continue
    if ! grep -q "$f" "$T/err"; then fail "$name" "the message does not name the input: $(cat "$T/err")"
    elif [ -e "$T/o_$name" ]; then fail "$name" "left $(ls "$T/o_$name")"
    else pass "$name"; fi
done
# shellcheck disable=SC2086
run unreachable_url 3 $M --out "$T/o_url" "http://127.0.0.1:9/clip.mp4" && one_line unreachable_url &&
    pass unreachable_url

mkdir -p "$T/same"
cp "$T/a.mp4" "$T/same/a.mp4"
sum=$(cksum <"$T/same/a.mp4")
# shellcheck disable=SC2086
if run same_as_input 7 $M --out "$T/same" --overwrite "$T/same/a.mp4" && one_line same_as_input; then
    if [ "$(cksum <"$T/same/a.mp4")" != "$sum" ]; then fail same_as_input "the input was changed"
    else pass same_as_input; fi
fi
# shellcheck disable=SC2086
run unwritable_out 7 $M --out "$T/afile/sub" "$T/a.mp4" && one_line unwritable_out && pass unwritable_out

# a full disk, made with a file-size limit: writes fail (EFBIG)
# shellcheck disable=SC2086
(ulimit -f 40 2>/dev/null && exec "$B/infer" $M --out "$T/o_full" "$T/a.mp4") >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -ne 7 ]; then fail full_disk "exit status $rc, want 7: $(head -c 300 "$T/err")"
elif [ -e "$T/o_full/a.mp4" ] || [ -e "$T/o_full/a.jsonl" ]; then fail full_disk "left a partial output"
elif ! grep -q "write failed" "$T/err"; then fail full_disk "no write error reported: $(cat "$T/err")"
else no_temps full_disk && pass full_disk; fi

# shellcheck disable=SC2086
if run refuse_overwrite 7 $M --out "$T/o1" "$T/a.mp4" && one_line refuse_overwrite; then
    # shellcheck disable=SC2086
    run refuse_overwrite 0 $M --out "$T/o1" --overwrite --quiet "$T/a.mp4" && {
        if [ -s "$T/out" ] || [ -s "$T/err" ]; then fail refuse_overwrite "--quiet printed something"
        else pass refuse_overwrite; fi
    }
fi

# shellcheck disable=SC2086
if run no_audio 0 $M --out "$T/o7" --no-audio "$T/a.mp4"; then
    if [ -n "$(acodec "$T/o7/a.mp4")" ]; then fail no_audio "audio stream kept"
    elif [ "$(frames "$T/o7/a.mp4")" != 25 ]; then fail no_audio "$(frames "$T/o7/a.mp4") frames"
    else pass no_audio; fi
fi

# shellcheck disable=SC2086
if run classes 0 $M --conf 0.05 --out "$T/o8" --classes "person, 11" --no-save "$T/a.mp4"; then
    ids=$(grep -o '"class_id": [0-9]*' "$T/o8/a.jsonl" | sort -u | awk '{ printf "%s ", $2 }')
    if [ -z "$ids" ]; then fail classes "no detections to check (the synthetic model found none)"
    elif echo "$ids" | tr ' ' '\n' | grep -q -v -e '^0$' -e '^11$' -e '^$'; then fail classes "classes $ids"
    elif [ -e "$T/o8/a.mp4" ]; then fail classes "--no-save wrote a video"
    else
        # shellcheck disable=SC2086
        run classes 2 $M --out "$T/o8b" --classes dgo "$T/a.mp4" && one_line classes && pass classes
    fi
fi

# --classes on images: the boxes of that class, exactly
# shellcheck disable=SC2086
if run classes_images 0 $M --conf 0.05 --out "$T/o8c" --no-save "$T/seq"; then
    c=$(grep -o '"class_id": [0-9]*' "$T/o8c/detections.json" | head -n 1 | awk '{ print $2 }')
    nwant=$(grep -c "\"class_id\": $c," "$T/o8c/detections.json")
    # shellcheck disable=SC2086
    if [ -z "$c" ]; then fail classes_images "no detections to check (the synthetic model found none)"
    elif run classes_images 0 $M --conf 0.05 --out "$T/o8d" --no-save --classes "$c" "$T/seq"; then
        got=$(grep -c '"class_id": ' "$T/o8d/detections.json")
        same=$(grep -c "\"class_id\": $c," "$T/o8d/detections.json")
        if [ "$got" -ne "$nwant" ] || [ "$same" -ne "$nwant" ]; then
            fail classes_images "$got boxes ($same of class $c), want the $nwant of class $c"
        else pass classes_images; fi
    fi
fi

# shellcheck disable=SC2086
if run vid_stride 0 $M --conf 0.05 --out "$T/o9" --vid-stride 3 --batch 2 "$T/a.mp4"; then
    bad=$(awk 'NR == 1 { next } { i = NR - 2; d = $0; sub(/.*"detections": /, "", d)
                 if (i % 3 == 0) { if ($0 !~ /"inferred": true/) { print "frame " i " not inferred"; exit } src = d }
                 else if ($0 !~ /"inferred": false/ || d != src) { print "frame " i " does not reuse frame " i - i % 3; exit } }' \
        "$T/o9/a.jsonl")
    if [ "$(frames "$T/o9/a.mp4")" != 25 ]; then fail vid_stride "$(frames "$T/o9/a.mp4") frames, want all 25"
    elif [ -n "$bad" ]; then fail vid_stride "$bad"
    elif ! grep -q "25 frames (9 detected)" "$T/out"; then fail vid_stride "summary: $(head -c 200 "$T/out")"
    else pass vid_stride; fi
fi

# batching changes nothing in the results
# shellcheck disable=SC2086
run batch 0 $M --out "$T/o10" --batch 4 --no-save "$T/a.mp4" &&
    if cmp -s "$T/o10/a.jsonl" "$T/o1/a.jsonl"; then pass batch; else fail batch "--batch 4 gave other detections"; fi

# --nv12: the model reads the decoder's planes (test_model checks that an
# NV12 frame detects exactly as its converted RGB; with these random
# weights the boxes are too chaotic to compare with the swscale run): every
# frame detected, and the annotated video, which needs RGB too, complete
# shellcheck disable=SC2086
if run nv12 0 $M --out "$T/o10n" --nv12 "$T/a.mp4"; then
    inferred=$(grep -c '"inferred": true' "$T/o10n/a.jsonl")
    if [ "$inferred" != 25 ]; then fail nv12 "$inferred frames detected in the JSON Lines, want 25"
    elif [ "$(frames "$T/o10n/a.mp4")" != 25 ]; then fail nv12 "$(frames "$T/o10n/a.mp4") annotated frames, want 25"
    else pass nv12; fi
fi

# shellcheck disable=SC2086
if run txt 0 $M --conf 0.05 --out "$T/o11" --txt --no-save "$T/b.mkv"; then
    nl=$(find "$T/o11/labels" -name 'b_[0-9]*.txt' | wc -l)
    lines=$(cat "$T/o11/labels"/b_*.txt | wc -l)
    dets=$(grep -o '"class_id"' "$T/o11/b.jsonl" | wc -l)
    if [ "$nl" -ne 25 ] || [ ! -f "$T/o11/labels/b_1.txt" ] || [ ! -f "$T/o11/labels/b_25.txt" ]; then
        fail txt "$nl label files, want b_1.txt .. b_25.txt"
    elif [ "$lines" -ne "$dets" ]; then fail txt "$lines label lines for $dets detections"
    else pass txt; fi
fi

# shellcheck disable=SC2086
if run sequence 0 $M --out "$T/o12" "$T/seq/img_%03d.png"; then
    if [ "$(frames "$T/o12/img.mp4")" != 7 ]; then fail sequence "$(frames "$T/o12/img.mp4") frames, want 7"
    else pass sequence; fi
fi
# shellcheck disable=SC2086
if run file_url 0 $M --out "$T/o13" --no-save "file:$T/a.mp4"; then
    if why=$(jsonl_ok "$T/o13/a.jsonl" 25); then pass file_url; else fail file_url "$why"; fi
fi

# h264_nvenc: used where an NVIDIA encoder works, else libx264 with a notice
# shellcheck disable=SC2086
if run codec_fallback 0 $M --out "$T/o14" --codec h264_nvenc --crf 30 "$T/b.mkv"; then
    if [ "$(vinfo "$T/o14/b.mp4")" != "h264,320,240" ]; then fail codec_fallback "$(vinfo "$T/o14/b.mp4")"
    elif grep -q "notice" "$T/err" && ! grep -q "encoding with libx264" "$T/err"; then fail codec_fallback "$(cat "$T/err")"
    else pass codec_fallback; fi
fi
ok=1
for args in "--codec nosuch" "--preset bogus" "--crf 60" "--codec mpeg4 --crf 20" "--vid-stride 0"; do
    # shellcheck disable=SC2086
    run bad_encoder_options 2 $M --out "$T/o15" $args "$T/b.mkv" || { ok=0; break; }
    one_line bad_encoder_options || { ok=0; break; }
done
if [ $ok -eq 1 ]; then
    if [ -e "$T/o15" ]; then fail bad_encoder_options "left $T/o15"; else pass bad_encoder_options; fi
fi

# shellcheck disable=SC2086
if run json_option 0 $M --out "$T/o16" --json "$T/one.jsonl" --no-save "$T/b.mkv"; then
    if ! why=$(jsonl_ok "$T/one.jsonl" 25); then fail json_option "$why"
    else
        # shellcheck disable=SC2086
        run json_option 2 $M --out "$T/o16" --json "$T/two.jsonl" "$T/a.mp4" "$T/b.mkv" && pass json_option
    fi
fi

# an image and a video in one run: each gets its own outputs
# shellcheck disable=SC2086
if run mixed_inputs 0 $M --out "$T/o17" "$T/seq/img_001.png" "$T/b.mkv"; then
    if [ ! -s "$T/o17/img_001.png" ] || [ ! -s "$T/o17/detections.json" ] || [ ! -s "$T/o17/b.mp4" ] ||
        [ ! -s "$T/o17/b.jsonl" ]; then fail mixed_inputs "outputs: $(cd "$T/o17" && echo *)"
    else pass mixed_inputs; fi
fi

# a long clip: SIGINT keeps a complete, shorter video with its JSON Lines;
# peak memory does not grow with the length
ff -f lavfi -i "$S" -f lavfi -i "$A" -t 80 -c:v libx264 -preset ultrafast -c:a aac -shortest "$T/long.mp4"
ff -i "$T/long.mp4" -t 4 -c copy "$T/short.mp4"
# shellcheck disable=SC2086
"$B/infer" $M --out "$T/o18" --preset ultrafast "$T/long.mp4" >"$T/out" 2>"$T/err" &
pid=$!
i=0
while [ $i -lt 600 ] && ! cat "$T"/o18/.long.jsonl.*.tmp 2>/dev/null | grep -q '"frame":'; do
    sleep 0.1
    i=$((i + 1))
done
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
n=$(frames "$T/o18/long.mp4")
if [ "$rc" -ne 130 ]; then fail sigint "exit status $rc, want 130: $(head -c 300 "$T/err")"
elif [ -z "$n" ] || [ "$n" -lt 1 ] || [ "$n" -ge 2000 ]; then fail sigint "$n frames kept"
elif ! why=$(jsonl_ok "$T/o18/long.jsonl" "$n"); then fail sigint "JSON Lines: $why"
elif ! grep -q "interrupted: kept" "$T/err"; then fail sigint "stderr does not say what was kept: $(cat "$T/err")"
else no_temps sigint && pass sigint; fi

if [ $ASAN -eq 1 ]; then
    skip memory_flat "AddressSanitizer build: its allocator holds freed memory"
else
    peak() { sed -n 's/.*peak memory \([0-9]*\) MB.*/\1/p' "$T/out"; }
    L="$M --imgsz 32 --vid-stride 10 --preset ultrafast --no-audio --overwrite"
    # shellcheck disable=SC2086
    if run memory_flat 0 $L --out "$T/o19" "$T/short.mp4"; then
        p1=$(peak)
        # shellcheck disable=SC2086
        if run memory_flat 0 $L --out "$T/o19" "$T/long.mp4"; then
            p2=$(peak)
            if [ -z "$p1" ] || [ -z "$p2" ]; then fail memory_flat "no peak memory in the summary"
            elif [ "$(frames "$T/o19/long.mp4")" != 2000 ]; then fail memory_flat "$(frames "$T/o19/long.mp4") frames"
            elif [ "$p2" -gt $((p1 + 8)) ]; then fail memory_flat "peak $p1 MB for 100 frames, $p2 MB for 2000"
            else pass memory_flat; fi
        fi
    fi
fi

if [ -f "$DATA/vtest.avi" ]; then
    # detection on every 5th frame (every 25th under AddressSanitizer): 795 frames stay quick
    # shellcheck disable=SC2086
    if run vtest 0 $M --conf 0.05 --vid-stride $((ASAN ? 25 : 5)) --preset veryfast --out "$T/o20" "$DATA/vtest.avi"; then
        n=$(probe -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$T/o20/vtest.mp4")
        if [ "$n" != 795 ]; then fail vtest "$n frames, want 795"
        elif [ "$(vinfo "$T/o20/vtest.mp4")" != "h264,768,576" ]; then fail vtest "$(vinfo "$T/o20/vtest.mp4")"
        elif ! why=$(jsonl_ok "$T/o20/vtest.jsonl" 795); then fail vtest "$why"
        else pass vtest; fi
    fi
else
    skip vtest "no $DATA/vtest.avi (see ../shared/data/README.md)"
fi

no_temps temps && pass temps

[ $FAILED -eq 0 ]
