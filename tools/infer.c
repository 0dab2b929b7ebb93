/* infer.c — the `infer` command: detect objects in images and videos with a
 * YOLO model, write annotated copies, a JSON report (JSON Lines for videos)
 * and, optionally, YOLO txt labels.
 *
 *   infer --model weights/yolov8.yaml --scale n --weights w.safetensors \
 *         [options] INPUT...
 * INPUT: an image or video file, a directory (its images and videos, sorted
 * by name, not recursive), a glob pattern (quoted, expanded with glob(3)),
 * an image-sequence pattern (frames/%04d.png) or a URL FFmpeg opens.  Files
 * with an image extension are images (stb); everything else goes to FFmpeg
 * (loaders/video.h).
 *
 * Outputs (in --out DIR, default runs/infer, created if missing, never
 * emptied; existing files are refused unless --overwrite, checked before
 * any work starts):
 *   DIR/<name>            the image with boxes and labels (PNG stays PNG,
 *                         JPEG stays JPEG, other formats become <stem>.jpg)
 *   DIR/labels/<stem>.txt with --txt: one line per box,
 *                         "class cx cy w h [score]", normalised to the image
 *                         size, printed with %g as Ultralytics' save_txt
 *                         does (written, empty, for images without boxes)
 *   DIR/detections.json   (or --json FILE):
 *   {
 *     "strix_version": "0.1.0",
 *     "model": "weights/yolov8.yaml",         the --model path
 *     "weights": "w.safetensors",             the --weights path
 *     "imgsz": 640, "conf": 0.25, "iou": 0.7,
 *     "images": [                             in input order, decoded images only
 *       {"image": "data/dog.jpg", "width": 768, "height": 576,
 *        "detections": [                      sorted by decreasing score
 *          {"class_id": 16, "class_name": "dog", "score": 0.87,
 *           "box": [x1, y1, x2, y2]}]}],      source pixels, clipped to the image
 *     "errors": [                             images that could not be used
 *       {"image": "data/bad.jpg", "error": "data/bad.jpg: not an image ..."}]
 *   }
 *   Numbers are the shortest decimals that read back to the same float;
 *   strings are JSON-escaped (bytes that are not UTF-8 become U+FFFD).
 * The images run through tools/infer/pipeline.h as the videos do: decoded
 * in order on a reader thread, detected up to --batch at a time on this
 * thread (images of one size per call, so an image's detections do not
 * depend on the images beside it), printed and written in input order on a
 * writer thread.
 * Every output file is written to a temporary file and renamed into place
 * (loaders/outfile.h), so an interrupted or failed run leaves no partial
 * file; the temporary files a killed run left in the output directories are
 * removed at the start of the next run.  No output may write over a file
 * the run reads, or over another output (tools/outguard.h).
 *
 * Videos (DIR/<stem>.mp4, DIR/<stem>.jsonl, DIR/labels/<stem>_<n>.txt):
 *   H.264 MP4 (--codec, --crf, --preset), same size, frame count and
 *   timestamps, rotation and sample aspect kept, +faststart; audio copied
 *   packet for packet (AAC when MP4 cannot hold the codec; --no-audio drops
 *   it).  JSON Lines: a header line (the input's frame count, damage and
 *   degenerate-box counts, rewritten in place at the end: see jsonl_header
 *   in infer/writers.c),
 *   then one object per frame, in order:
 *   {"frame": 0, "pts": 0.04, "inferred": true,
 *    "detections": [{"class_id": 0, "class_name": "person", "score": 0.87,
 *                    "box": [x1, y1, x2, y2]}]}
 *   frame: 0-based index; pts: presentation time in seconds from the start
 *   of the input, as in the output video; inferred: false when --vid-stride
 *   skipped the frame and its detections are those of the last detected
 *   frame; boxes in display-orientation pixels.  Labels: <n> = frame + 1
 *   (Ultralytics' numbering).  The video runs through tools/infer/pipeline.h:
 *   a decode thread, detection batched on this thread, an annotate/encode
 *   thread, bounded queues, so memory stays flat however long the video
 *   (what --highlights needs of every frame waits in a file: infer/framelog.h).
 *
 * Tracking and highlights (videos; README "Tracking, counting and highlight
 * reels"): --track runs BoT-SORT or ByteTrack (engine/analytics/track.c) on the writer thread, in
 * frame order, adding "track_id" to the JSON Lines (a tracked detection's
 * "box" becomes the tracker's, clipped to the frame, as Ultralytics'
 * tracked results carry it, and its own box "detection_box") and writing
 * OUT/<stem>.mot.txt and OUT/<stem>.tracks.json (engine/analytics/count.c totals);
 * --highlights logs each frame's qualifying detections, then after the
 * video cuts OUT/<stem>.highlights.mp4 (loaders/video_cut.c, segments from
 * engine/analytics/highlight.c, frames redrawn from the JSON Lines just written) with
 * its .json and .csv segment lists; --detections FILE replays JSON Lines
 * (loaders/jsonl.c) in place of the model.
 *
 * Exit status (also in --help):
 *   0 ok; 1 internal error; 2 usage error (bad or missing option or value);
 *   3 an input is missing or unreadable; 4 bad model YAML; 5 bad weights;
 *   6 an image or video could not be decoded (not an image, not a video, a
 *   codec FFmpeg cannot decode, a video without frames; the other inputs
 *   are still processed: each bad one is reported on stderr and images are
 *   listed under "errors"); a video with corrupt packets among good ones is
 *   not a failure: the frames that decode are kept and the skipped packets
 *   counted on stderr; 7 output not writable (or full), an output would
 *   write over a file the run reads or over another output, or an output
 *   file exists without --overwrite; 8 out
 *   of memory; 9 device error or device not in this build; 130 interrupted
 *   (SIGINT or SIGTERM: the images finished so far are written, JSON
 *   included; a video in progress is finished at the frames read so far and
 *   kept, playable, under its final name with its JSON Lines; a second
 *   signal stops at once and discards the unfinished outputs; with
 *   --manifest the first signal already discards the item in progress);
 *   10/11 some --manifest items failed (11: some inputs were missing or
 *   unreachable): OUT/failures-I-of-N.jsonl names them (infer/worker.c).
 * When several inputs fail, the status is that of the first failure.
 *
 * This file parses the options and wires the job's parts (infer/job.h):
 * infer/inputs.c, outputs.c, images.c, stills.c, video.c, media.c, detector.c,
 * tracking.c, pipeline.c, writers.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cudaenv.h"
#include "infer/job.h"
#include "infer/optparse.h"
#include "infer/worker.h"
#include "tracker_yaml.h"
#include "yamldir.h"

#define CALIB_MAX 16 /* --calibrate: images used at most */

/* Set from the signal handler; a flag is all a handler may safely touch.
 * Counts signals (capped at 2): 1 finishes cleanly, 2 stops at once. */
volatile sig_atomic_t g_stop;
/* --manifest: the first signal already discards the unfinished item (a
 * batch engine's SIGTERM wants no partial output, and the retry redoes it) */
static volatile sig_atomic_t g_discard;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = g_stop || g_discard ? 2 : 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: infer --model YAML --weights FILE [options] INPUT...\n"
            "Detect objects in images and videos; write annotated copies and detections.\n"
            "INPUT: an image or video file, a directory (its images and videos, sorted, not\n"
            "recursive), a quoted glob pattern such as 'photos/*.jpg', an image-sequence\n"
            "pattern such as 'frames/%%04d.png', or a URL FFmpeg opens (rtsp://, http://).\n"
            "\n"
            "  --model YAML      Ultralytics model YAML (default: the one a .pt checkpoint embeds; for\n"
            "                    an Ultralytics .onnx export, weights/FAMILY.yaml its metadata names)\n"
            "  --weights FILE    weights (required): .safetensors, Ultralytics .pt (read without\n"
            "                    running its pickle) or Ultralytics ONNX export (.onnx)\n"
            "  --scale n|s|m|l|x model scale (default: from the YAML file name)\n"
            "  --nc N            class count override (1..%d)\n"
            "  --names FILE      class names, one per line\n"
            "  --conf X          minimum class score, 0..1 (default 0.25)\n"
            "  --iou X           NMS IoU threshold, 0..1 (default 0.7)\n"
            "  --max-det N       at most N boxes per image (default 300)\n"
            "  --imgsz N         model input size, long side (default 640; a static ONNX\n"
            "                    export: the size it was exported with)\n"
            "  --batch N         images or frames per forward pass (default 1); with several\n"
            "                    videos the frames of all of them fill one batch; images or\n"
            "                    frames of different sizes never share one, so each input's\n"
            "                    boxes are those of a run on it alone\n"
            "  --jobs N          videos decoded, detected and written at once (default 4);\n"
            "                    each one's outputs are those of a run on it alone\n"
            "  --classes LIST    keep only these classes: names or ids, comma-separated\n"
            "                    (e.g. dog,person or 16,0)\n"
            "  --threads N       CPU threads (default 0: all)\n"
            "  --device NAME     compute device: cpu, cuda, cuda:N (default: cuda when a GPU is present, else cpu)\n"
            "  --half            FP16 on a CUDA device (ignored on the CPU, as in Ultralytics)\n"
            "  --nms-free        YOLO26: the one-to-one head, top-k without NMS (Ultralytics' nms=False)\n"
            "  --retina-masks    segment: masks at the source's resolution (process_mask_native)\n"
            "  --decode cpu|nvdec  videos: decode with FFmpeg on the CPU (default) or with the\n"
            "                    GPU's NVDEC on the model's CUDA device, the frames staying in GPU\n"
            "                    memory as NV12 (implies --nv12; RGB is downloaded only for the\n"
            "                    annotated video and BoT-SORT's GMC); each video's summary adds\n"
            "                    NVDEC's mean utilisation, read through NVML (n/a without it).\n"
            "                    Not yet measured on a GPU\n"
            "  --nv12            videos: the decoder's 4:2:0 planes go to the model as NV12 (no RGB\n"
            "                    conversion on the CPU, half the bytes to stage and upload; the\n"
            "                    letterbox converts them). RGB is still made for the annotated video\n"
            "                    and BoT-SORT's motion compensation. Boxes may differ slightly from\n"
            "                    the default (strix's colour conversion, not swscale's)\n"
            "  --exact-conv      CPU: no Winograd for 3x3 convolutions (the default takes it where\n"
            "                    faster, with 3x the packed weights' memory; results within\n"
            "                    docs/performance.md's bound): less memory and load time\n"
            "  --precision P     the convolutions' arithmetic: fp32 (default, Ultralytics' numbers),\n"
            "                    bf16 (CPU with bf16 dot products: aarch64 FEAT_BF16), fp16 (CUDA:\n"
            "                    as --half), int8 (CPU, needs --calibrate; README \"Precision\")\n"
            "                    or auto (bf16 where the CPU has it, else fp32; never int8). Reduced\n"
            "                    precisions move boxes: docs/gpu-cpu-precision.md \"Precision\". One\n"
            "                    this build or CPU cannot run: exit 9\n"
            "  --calibrate SRC   --precision int8's calibration images: an image, a directory\n"
            "                    (its images, sorted) or a quoted glob; the first %d are used. They\n"
            "                    must cover the inputs: activations beyond the ranges they show are\n"
            "                    clamped\n"
            "  --out DIR         output directory (default runs/infer; created, not emptied)\n"
            "  --json FILE       JSON report (default OUT/detections.json; for a video,\n"
            "                    JSON Lines, default OUT/NAME.jsonl)\n"
            "  --txt             YOLO labels in OUT/labels/NAME.txt\n"
            "  --save-conf       add the score to each --txt line\n"
            "  --no-save         do not write annotated images or videos\n"
            "  --overwrite       replace existing output files (default: refuse)\n"
            "  --quiet           print errors only\n"
            "  --manifest FILE   work list instead of INPUTs: one path or URL per line, or JSON\n"
            "                    Lines {\"input\": PATH, \"output\": NAME}; each item's outputs in\n"
            "                    OUT/NAME/ (NAME: the input's stem by default) with a completion\n"
            "                    record, so a re-run skips finished items (README \"Run at scale\")\n"
            "  --shard I/N       take items k with k mod N == I (default: from the batch engine's\n"
            "                    SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX)\n"
            "  --shards N        the shard count where the engine does not export it\n"
            "  --metrics-port P  Prometheus metrics over HTTP on port P (0: any free port)\n"
            "  --metrics-file F  the same metrics in F (node_exporter textfile), rewritten atomically\n"
            "  -h, --help        this help\n"
            "  --version         print the version\n"
            "\n"
            "Videos become OUT/NAME.mp4 (H.264; same size, frame count and timestamps;\n"
            "rotation and aspect kept; audio copied as it is, or re-encoded to AAC when MP4\n"
            "cannot hold it; +faststart) and OUT/NAME.jsonl (or --json FILE), one JSON\n"
            "object per frame: {\"frame\": 0, \"pts\": 0.04 (seconds), \"inferred\": true,\n"
            "\"detections\": [...]}; --txt writes OUT/labels/NAME_N.txt (N = frame + 1).\n"
            "  --vid-stride N    detect on every Nth frame; the frames between reuse the\n"
            "                    last detections (\"inferred\": false), so every frame is\n"
            "                    still written (default 1)\n"
            "  --codec NAME      video encoder (default libx264; h264_nvenc falls back to\n"
            "                    libx264 with a notice when no NVIDIA encoder is usable)\n"
            "  --crf N           encoder quality 0..51, lower is better (default: the\n"
            "                    encoder's, 23 for libx264)\n"
            "  --preset NAME     encoder preset (default: the encoder's, medium for libx264)\n"
            "  --no-audio        leave the audio out\n"
            "\n"
            "Live sources (network URLs http(s):// rtsp:// udp:// srt:// ..., devices\n"
            "such as /dev/video0, or any input but a local file with no known duration;\n"
            "docs/videos-and-outputs.md \"Live sources\"): the progress line shows\n"
            "frames, fps, latency and drops; OUT/NAME.jsonl is written at its final\n"
            "name and flushed per frame, each with its latency_s (tail -f it); a\n"
            "network source that drops, ends or stalls is reopened, its gap an\n"
            "{\"event\": ...} line in the JSON Lines (tracks survive a gap of up to\n"
            "--track-buffer frames).\n"
            "  --live            treat every video input as live\n"
            "  --stall-timeout S a live source that sends nothing for S seconds has\n"
            "                    dropped (default 10)\n"
            "  --no-reconnect    a live source's drop ends its run (default: reopen it,\n"
            "                    waiting 0.5 s, then twice as long each time, at most 8 s)\n"
            "  --max-reconnects N  reopen attempts after one drop before the run ends,\n"
            "                    exit 3 with the outputs kept (default: no limit)\n"
            "  --segment D       the annotated video as rolling files OUT/NAME-000.mp4,\n"
            "                    NAME-001.mp4, ... of D each (4s, 10m, 1h; a number:\n"
            "                    seconds), fragmented MP4 written in place: each plays\n"
            "                    once closed, the open one up to its last fragment;\n"
            "                    with --highlights a reel per piece, NAME-000.highlights.mp4\n"
            "  --segment-format F  mp4 (default) or ts: the pieces as MPEG-TS, NAME-000.ts\n"
            "  --rtsp-transport T  tcp or udp for rtsp:// inputs (default: FFmpeg's, UDP\n"
            "                    first, TCP when no UDP packet comes)\n"
            "  --realtime        keep up with a live source: when detection falls behind,\n"
            "                    drop the frames waiting for it (the newest is kept) and\n"
            "                    count them, never queueing\n"
            "\n"
            "Tracking, counting and highlight reels (videos):\n"
            "  --track           follow objects across frames (TrackTrack by default, as\n"
            "                    Ultralytics' yolo track): a \"track_id\" per\n"
            "                    detection in the JSON Lines; a tracked detection's \"box\" is\n"
            "                    then the tracker's, as in Ultralytics' tracked results (the\n"
            "                    Kalman state after the update, clipped to the frame; drawn,\n"
            "                    counted and in the MOT rows too), its own box kept as\n"
            "                    \"detection_box\"; \"#ID\" labels coloured by identity,\n"
            "                    OUT/NAME.mot.txt (MOTChallenge: frame,id,left,top,width,height,\n"
            "                    score,-1,-1,-1; frames from 1) and OUT/NAME.tracks.json (each\n"
            "                    track; unique tracks per class).  Lowers the --conf default to\n"
            "                    0.1: the trackers use the low-score boxes to keep tracks alive\n"
            "  --tracker T       tracktrack (default: TrackTrack with camera-motion\n"
            "                    compensation, gmc_method sparseOptFlow), botsort (BoT-SORT,\n"
            "                    with it too), bytetrack, ocsort, fasttrack, deepocsort, or\n"
            "                    an Ultralytics tracker YAML (the keys of tracktrack/botsort/\n"
            "                    bytetrack/ocsort/fasttrack/deepocsort.yaml; orb/sift/ecc GMC\n"
            "                    and a separate ReID model are not supported; with_reid:\n"
            "                    True with model: auto takes the detector's features).\n"
            "                    Defaults are Ultralytics': track_high_thresh 0.25,\n"
            "                    track_low_thresh 0.1, new_track_thresh 0.25, track_buffer 30,\n"
            "                    match_thresh 0.8; OC-SORT's delta_t 3, inertia 0.2,\n"
            "                    use_byte False; Deep OC-SORT's track_high_thresh and\n"
            "                    new_track_thresh 0.3, gmc_method none; FastTrack's\n"
            "                    fasttrack.yaml's; TrackTrack's track_high_thresh 0.6,\n"
            "                    track_low_thresh 0.25, new_track_thresh 0.7, match_thresh 0.7,\n"
            "                    lost_match_thr 0, conf_weight 0.1, angle_weight 0.05,\n"
            "                    penalty_p 0.2, reduce_step 0.05, tai_thr 0.55,\n"
            "                    min_track_len 3.\n"
            "                    One key is strix's own: gmc_grey opencv5 (default: the grey\n"
            "                    frame as OpenCV 5, which pip install ultralytics brings,\n"
            "                    makes it) or opencv4 (OpenCV 4's rounding)\n"
            "  --track-thresh X  override track_high_thresh (high/low score split)\n"
            "  --match-thresh X  override match_thresh (highest 1 - IoU x score matched)\n"
            "  --track-buffer N  override track_buffer (updates a lost track is kept)\n"
            "  --trail N         draw each track's last N centres as a fading trail\n"
            "  --line X1,Y1,X2,Y2  count tracks crossing this segment (pixels): \"in\" from the\n"
            "                    left of the direction X1,Y1 -> X2,Y2 to its right (a line drawn\n"
            "                    left to right: moving down is in), \"out\" the other way\n"
            "  --detections FILE replay the JSON Lines of an earlier run instead of running the\n"
            "                    model (no --model/--weights needed): re-track, re-render or\n"
            "                    re-cut one video without detecting again\n"
            "  --highlights LIST also write OUT/NAME.highlights.mp4: only the moments where these\n"
            "                    classes (names or ids) appear, cut frame-accurately with the\n"
            "                    audio in sync, and the segment list as OUT/NAME.highlights.json\n"
            "                    and .csv (start/end seconds, what appeared)\n"
            "  --hl-score X      minimum score of a detection that counts (default 0.25)\n"
            "  --hl-min-frames N with --track: only tracks seen in at least N frames (default 1)\n"
            "  --hl-gap S        merge segments less than S seconds apart (default 1)\n"
            "  --hl-pad S        widen each segment by S seconds both sides (default 0.5)\n"
            "  --hl-min-len S    drop segments shorter than S seconds (default 0)\n"
            "  --hl-max-len S    at most S seconds in all: the most active segments (default: no\n"
            "                    limit)\n"
            "A video shows a progress bar on a terminal, a line every 5 s otherwise, and a\n"
            "summary with a per-stage time breakdown.  Corrupt packets are skipped and\n"
            "counted, as are frames the decoder concealed damage in, errors FFmpeg's decoder\n"
            "logged and the frames they lost; the frames that decode are kept (exit 0).\n"
            "SIGINT/SIGTERM: images finished so far are kept with their JSON; a video is\n"
            "finished at the frames read so far and kept, complete and playable but shorter,\n"
            "under its final name with its JSON Lines (exit 130).  A second signal stops at\n"
            "once and discards the unfinished outputs.\n"
            STRIX_CUDA_ENV_HELP
            "\n"
            "Exit status: 0 ok; 1 internal error; 2 usage error; 3 input missing or\n"
            "unreadable; 4 bad model YAML; 5 bad weights; 6 an image or video could not be\n"
            "decoded: not an image, not a video, a codec FFmpeg cannot decode, no frames\n"
            "(the other inputs are still processed); 7 output not writable or full, would\n"
            "write over a file the run reads or another output, or already exists; 8 out\n"
            "of memory; 9 device error or unavailable; 10 some --manifest items failed (listed\n"
            "in OUT/failures-I-of-N.jsonl); 11 as 10, some inputs missing or unreachable\n"
            "(a retry may help); 130 interrupted (with --manifest: nothing partial kept).\n", STRIX_MAX_CLASSES, CALIB_MAX);
}

/* --tracker NAME or FILE.yaml (Ultralytics' tracker YAMLs), then the
 * --track-thresh, --match-thresh and --track-buffer given over it; an exit code. */
static int tracker_options(options *o)
{
    strix_track_options *t = &o->track_opts;
    /* as Ultralytics' check_yaml: a file of that name here first, else its own tracktrack.yaml, botsort.yaml,
     * bytetrack.yaml, ocsort.yaml, fasttrack.yaml, deepocsort.yaml */
    static const strix_tracker_type types[] = {STRIX_TRACKER_TRACKTRACK, STRIX_TRACKER_BOTSORT,
                                               STRIX_TRACKER_BYTETRACK,  STRIX_TRACKER_OCSORT,
                                               STRIX_TRACKER_FASTTRACK,  STRIX_TRACKER_DEEPOCSORT};
    int here = access(o->tracker, F_OK) == 0, named = -1;
    for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++) {
        const char *name = strix_tracker_type_name(types[i]);
        size_t n = strlen(name);
        if (!strcmp(o->tracker, name) || (!here && !strncmp(o->tracker, name, n) && !strcmp(o->tracker + n, ".yaml")))
            named = i;
    }
    if (named >= 0)
        strix_track_options_init(t, types[named]);
    else {
        size_t n = strlen(o->tracker);
        if (n < 5 || (strcmp(o->tracker + n - 5, ".yaml") && (n < 4 || strcmp(o->tracker + n - 4, ".yml"))))
            return usage_error("--tracker: '%s' is neither tracktrack, botsort, bytetrack, ocsort, fasttrack, "
                               "deepocsort nor a tracker .yaml file", o->tracker);
        strix_error e;
        strix_status st = strix_tracker_yaml_read(o->tracker, t, &e);
        if (st) {
            fprintf(stderr, "infer: %s\n", e.message);
            return st == STRIX_E_IO ? EXIT_INPUT : EXIT_USAGE;
        }
    }
    if (t->with_reid && o->detections)
        return usage_error("--detections: %s sets with_reid: True, whose ReID features come from the model, which a "
                           "replay does not run; set with_reid: False or drop --detections", o->tracker);
    if (o->track_thresh >= 0) t->track_high_thresh = (float)o->track_thresh;
    if (o->match_thresh >= 0) t->match_thresh = (float)o->match_thresh;
    if (o->track_buffer >= 0) t->track_buffer = o->track_buffer;
    return 0;
}

/* with_reid (model: auto): the model keeps each detection's native
 * features, taken with each frame on the detection thread (so no
 * submit/collect); an exit code. */
static int reid_setup(const options *o, detector *d)
{
    if (d->task == STRIX_TASK_SEGMENT) {
        fprintf(stderr, "infer: %s: with_reid with a segment model is not supported (its empty-mask detections are "
                "dropped, Ultralytics keeps them under ReID); use a detect, pose or obb model or set with_reid: "
                "False\n", o->tracker);
        return EXIT_USAGE;
    }
    strix_error e;
    strix_status st = strix_model_keep_features(d->model, 1, &e);
    if (st) {
        fprintf(stderr, "infer: %s (with_reid in %s)\n", e.message, o->tracker);
        return st == STRIX_E_UNSUPPORTED ? EXIT_USAGE : strix_exit_code(st);
    }
    d->reid = 1;
    d->async = d->pinned = 0;
    return 0;
}

/* TrackTrack: the detector also computes each frame's recovered
 * detections (Ultralytics' dets_del) for the tracker, on the detection
 * thread (so no submit/collect); Ultralytics recovers none for segment and
 * pose models.  On CUDA, where the library computes none, one line says
 * the tracking goes without them. */
static void recovered_setup(const options *o, detector *d)
{
    if (d->task != STRIX_TASK_DETECT && d->task != STRIX_TASK_OBB) return;
    if (!o->cpu) {
        if (!o->quiet)
            fprintf(stderr, "infer: TrackTrack's recovered detections (Ultralytics' loose NMS) are computed on the "
                    "cpu only: tracking without them (--device cpu to have them)\n");
        return;
    }
    d->recovered = d->dopt.recovered = 1;
    d->async = d->pinned = 0;
}

/* Returns -1 when the run should stop with status 0 (help, version). */
static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->device = NULL; /* cuda when a GPU is present, else cpu (main) */
    o->nvdec = -1;
    o->out = "runs/infer";
    o->conf = 0.25;
    o->iou = 0.7;
    o->max_det = 300;
    o->imgsz = 640;
    o->batch = 1;
    o->jobs = 4;
    o->vid_stride = 1;
    o->crf = -1;
    o->save = 1;
    o->audio = 1;
    o->track_thresh = -1;
    o->match_thresh = -1;
    o->track_buffer = -1;
    o->tracker = "tracktrack"; /* Ultralytics' default (cfg/default.yaml) */
    o->hl_score = 0.25;
    o->hl_gap = 1;
    o->hl_pad = 0.5;
    o->hl_min_frames = 1;
    o->metrics_port = -1;
    o->stall_timeout = 10;
    o->reconnect = 1;
    o->max_reconnects = -1;
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    if (!o->inputs) {
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    int only_inputs = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_inputs || a[0] != '-' || !a[1]) {
            o->inputs[o->n_inputs++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_inputs = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "--version")) {
            printf("infer (strix) %s\n", STRIX_VERSION);
            return -1;
        }
        /* flags */
        int *flag = !strcmp(a, "--txt") ? &o->txt : !strcmp(a, "--save-conf") ? &o->save_conf
                  : !strcmp(a, "--overwrite") ? &o->overwrite : !strcmp(a, "--quiet") ? &o->quiet
                  : !strcmp(a, "--half") ? &o->half : !strcmp(a, "--track") ? &o->track
                  : !strcmp(a, "--nms-free") ? &o->nms_free : !strcmp(a, "--nv12") ? &o->nv12
                  : !strcmp(a, "--live") ? &o->live
                  : !strcmp(a, "--exact-conv") ? &o->exact_conv
                  : !strcmp(a, "--realtime") ? &o->realtime : !strcmp(a, "--retina-masks") ? &o->retina
                  : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        if (!strcmp(a, "--no-save")) {
            o->save = 0;
            continue;
        }
        if (!strcmp(a, "--no-audio")) {
            o->audio = 0;
            continue;
        }
        if (!strcmp(a, "--no-reconnect")) {
            o->reconnect = 0;
            continue;
        }
        /* options with a value: "--opt VALUE" or "--opt=VALUE" */
        char name[32];
        const char *val;
        const char *eq = strchr(a, '=');
        if (eq) {
            size_t n = (size_t)(eq - a);
            if (n >= sizeof name) return usage_error("unknown option '%s'", a);
            memcpy(name, a, n);
            name[n] = 0;
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
            val = i + 1 < argc ? argv[i + 1] : NULL;
        }
        static const char *const with_value[] = {"--model", "--weights", "--scale", "--nc", "--names",
                                                 "--conf", "--iou", "--max-det", "--imgsz", "--batch",
                                                 "--jobs", "--threads", "--device", "--out", "--json", "--classes",
                                                 "--vid-stride", "--codec", "--crf", "--preset",
                                                 "--tracker", "--track-thresh", "--match-thresh", "--track-buffer",
                                                 "--trail", "--line", "--detections", "--highlights", "--hl-score",
                                                 "--hl-min-frames", "--hl-gap", "--hl-pad", "--hl-min-len",
                                                 "--hl-max-len", "--manifest", "--shard", "--shards",
                                                 "--metrics-port", "--metrics-file", "--decode", "--calibrate",
                                                 "--precision", "--stall-timeout", "--max-reconnects", "--segment",
                                                 "--segment-format", "--rtsp-transport"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) known |= !strcmp(name, with_value[k]);
        if (!known) return usage_error("unknown option '%s'", a);
        if (!val) return usage_error("%s needs a value", name);
        if (!eq) i++;
        int rc = 0;
        if (!strcmp(name, "--model")) o->model = val;
        else if (!strcmp(name, "--weights")) o->weights = val;
        else if (!strcmp(name, "--names")) o->names = val;
        else if (!strcmp(name, "--device")) o->device = val;
        else if (!strcmp(name, "--decode")) {
            if (strcmp(val, "cpu") && strcmp(val, "nvdec"))
                return usage_error("--decode: '%s' is not cpu or nvdec", val);
            o->nvdec = !strcmp(val, "nvdec") ? 0 : -1; /* the device index comes with the model's device */
        }
        else if (!strcmp(name, "--out")) o->out = val;
        else if (!strcmp(name, "--json")) o->json = val;
        else if (!strcmp(name, "--classes")) o->classes = val;
        else if (!strcmp(name, "--codec")) o->codec = val;
        else if (!strcmp(name, "--preset")) o->preset = val;
        else if (!strcmp(name, "--vid-stride")) rc = parse_int(name, val, 1, 100000, &o->vid_stride);
        else if (!strcmp(name, "--crf")) rc = parse_int(name, val, 0, 51, &o->crf);
        else if (!strcmp(name, "--scale")) {
            if (strlen(val) != 1 || !strchr("nsmlx", val[0]))
                return usage_error("--scale: '%s' is not one of n, s, m, l, x", val);
            o->scale = val[0];
        } else if (!strcmp(name, "--nc")) rc = parse_int(name, val, 1, STRIX_MAX_CLASSES, &o->nc);
        else if (!strcmp(name, "--conf")) {
            rc = parse_unit(name, val, &o->conf);
            o->conf_set = 1;
        } else if (!strcmp(name, "--detections")) o->detections = val;
        else if (!strcmp(name, "--highlights")) o->highlights = val;
        else if (!strcmp(name, "--tracker")) o->tracker = val;
        else if (!strcmp(name, "--track-thresh")) rc = parse_unit(name, val, &o->track_thresh);
        else if (!strcmp(name, "--match-thresh")) rc = parse_unit(name, val, &o->match_thresh);
        else if (!strcmp(name, "--track-buffer")) rc = parse_int(name, val, 0, 1000000, &o->track_buffer);
        else if (!strcmp(name, "--trail")) rc = parse_int(name, val, 0, 10000, &o->trail);
        else if (!strcmp(name, "--hl-min-frames")) rc = parse_int(name, val, 1, 100000000, &o->hl_min_frames);
        else if (!strcmp(name, "--hl-score")) rc = parse_unit(name, val, &o->hl_score);
        else if (!strcmp(name, "--hl-gap")) rc = parse_seconds(name, val, &o->hl_gap);
        else if (!strcmp(name, "--hl-pad")) rc = parse_seconds(name, val, &o->hl_pad);
        else if (!strcmp(name, "--hl-min-len")) rc = parse_seconds(name, val, &o->hl_min_len);
        else if (!strcmp(name, "--hl-max-len")) rc = parse_seconds(name, val, &o->hl_max_len);
        else if (!strcmp(name, "--line")) {
            rc = parse_line(val, o->line);
            o->has_line = 1;
        }
        else if (!strcmp(name, "--iou")) rc = parse_unit(name, val, &o->iou);
        else if (!strcmp(name, "--max-det")) rc = parse_int(name, val, 1, 100000, &o->max_det);
        else if (!strcmp(name, "--imgsz")) {
            rc = parse_int(name, val, 32, 8192, &o->imgsz);
            o->imgsz_set = 1;
        }
        else if (!strcmp(name, "--batch")) rc = parse_int(name, val, 1, 1024, &o->batch);
        else if (!strcmp(name, "--jobs")) rc = parse_int(name, val, 1, 64, &o->jobs);
        else if (!strcmp(name, "--stall-timeout")) {
            rc = parse_seconds(name, val, &o->stall_timeout);
            if (!rc && o->stall_timeout < 0.1)
                rc = usage_error("--stall-timeout: '%s' is under 0.1 s (give the seconds a live source may be silent)",
                                 val);
        }
        else if (!strcmp(name, "--segment")) rc = parse_duration(name, val, &o->segment);
        else if (!strcmp(name, "--segment-format")) {
            if (strcmp(val, "mp4") && strcmp(val, "ts"))
                return usage_error("--segment-format: '%s' is not mp4 or ts", val);
            o->segment_ts = !strcmp(val, "ts");
            o->segment_format_set = 1;
        } else if (!strcmp(name, "--rtsp-transport")) {
            if (strcmp(val, "tcp") && strcmp(val, "udp"))
                return usage_error("--rtsp-transport: '%s' is not tcp or udp", val);
            o->rtsp_transport = val;
        }
        else if (!strcmp(name, "--max-reconnects")) rc = parse_int(name, val, 0, 1000000000, &o->max_reconnects);
        else if (!strcmp(name, "--threads")) rc = parse_int(name, val, 0, 4096, &o->threads);
        else if (!strcmp(name, "--manifest")) o->manifest = val;
        else if (!strcmp(name, "--shard")) o->shard = val;
        else if (!strcmp(name, "--metrics-file")) o->metrics_file = val;
        else if (!strcmp(name, "--calibrate")) o->calibrate = val;
        else if (!strcmp(name, "--precision")) {
            int k = 0;
            while (k < STRIX_PRECISION_COUNT && strcmp(val, strix_precision_name((strix_precision)k))) k++;
            if (k == STRIX_PRECISION_COUNT)
                return usage_error("--precision %s: unknown: use fp32, bf16, fp16, int8 or auto", val);
            o->precision = k;
        }
        else if (!strcmp(name, "--metrics-port")) rc = parse_int(name, val, 0, 65535, &o->metrics_port);
        else if (!strcmp(name, "--shards")) {
            int n;
            rc = parse_int(name, val, 1, 1000000, &n);
            o->shards = n;
        }
        if (rc) return rc;
        if (!*val) return usage_error("%s: empty value", name);
    }
    size_t wl = o->weights ? strlen(o->weights) : 0;
    if (!o->detections && !o->model && (wl < 3 || strcmp(o->weights + wl - 3, ".pt")) &&
        (wl < 5 || strcasecmp(o->weights + wl - 5, ".onnx")))
        return usage_error("--model YAML is required (only a .pt checkpoint or an Ultralytics ONNX export names its "
                           "graph; or --detections FILE)");
    if (!o->detections && !o->weights) return usage_error("--weights FILE is required (or --detections FILE)");
    if (o->manifest && (o->n_inputs || o->json || o->detections))
        return usage_error("--manifest FILE lists the inputs: give no INPUT, --json or --detections with it");
    if (!o->manifest && (o->shard || o->shards)) return usage_error("--shard and --shards work with --manifest FILE");
    if (!o->n_inputs && !o->manifest) return usage_error("no INPUT given (or --manifest FILE)");
    if (o->save_conf && !o->txt) return usage_error("--save-conf needs --txt");
    if (o->segment > 0 && !o->save) return usage_error("--segment cuts the annotated video: leave out --no-save");
    if (o->segment_format_set && o->segment <= 0) return usage_error("--segment-format needs --segment D");
    if (o->segment > 0 && o->hl_min_frames > 1)
        return usage_error("--hl-min-frames: a piece's reel (--segment) is cut before its tracks end: leave it out");
    int int8 = o->precision == STRIX_PRECISION_INT8;
    if (int8 && !o->calibrate)
        return usage_error("--precision int8 needs --calibrate SRC: a few images like the inputs (an image, a "
                           "directory or a quoted glob) to set the activation ranges");
    if (o->calibrate && !int8) return usage_error("--calibrate sets up --precision int8: add it");
    if (o->precision && o->detections)
        return usage_error("--precision runs the model: --detections replays without one");
    if (o->has_line && !o->track) return usage_error("--line counts tracks: add --track");
    if (o->trail && !o->track) return usage_error("--trail draws tracks: add --track");
    if (o->hl_min_frames > 1 && !o->track) return usage_error("--hl-min-frames counts track lengths: add --track");
    for (int i = 1; i < argc && !o->highlights; i++)
        if (!strncmp(argv[i], "--hl-", 5)) return usage_error("%s needs --highlights LIST", argv[i]);
    if (o->track && !o->conf_set) o->conf = 0.1; /* as Ultralytics' model.track: low boxes feed the tracker */
    return o->track ? tracker_options(o) : 0;
}

/* --classes or --highlights (opt) "dog,person" or "16,0": a mask over the
 * model's classes; an exit code. */
static int parse_classes(const char *opt, const char *list, const char *const *names, int nc, unsigned char **mask)
{
    *mask = calloc((size_t)(nc > 0 ? nc : 1), 1);
    char *copy = strdup(list);
    if (!*mask || !copy) {
        free(copy);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    int rc = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        for (size_t n = strlen(t); n && t[n - 1] == ' ';) t[--n] = 0;
        if (!*t) continue;
        int id = -1;
        if (strspn(t, "0123456789") == strlen(t)) {
            id = strlen(t) < 9 ? atoi(t) : nc;
            if (id >= nc) rc = usage_error("%s: %s is not a class id of this model (0..%d)", opt, t, nc - 1);
        } else {
            for (int i = 0; i < nc && id < 0; i++)
                if (!strcasecmp(t, names[i])) id = i;
            if (id < 0)
                rc = usage_error("%s: '%s' is not a class of this model (its classes: %s%s%s%s)", opt, t,
                                 nc > 0 ? names[0] : "none", nc > 1 ? ", " : "", nc > 1 ? names[1] : "",
                                 nc > 2 ? ", ..." : "");
        }
        if (!rc) (*mask)[id] = 1;
    }
    free(copy);
    return rc;
}

/* --precision int8: quantise the model, calibrated on the first CALIB_MAX images of
 * --calibrate (expanded as an INPUT is); an exit code. */
static int calibrate_int8(const options *o, strix_model *m)
{
    options co = *o;
    char *spec[1] = {(char *)o->calibrate};
    co.inputs = spec;
    co.n_inputs = 1;
    inputs in;
    memset(&in, 0, sizeof in);
    int rc = expand_inputs(&co, &in);
    if (!rc && in.videos.n)
        rc = usage_error("--calibrate %s: takes images, and %s is not one", o->calibrate, in.videos.v[0]);
    if (!rc && !in.images.n) rc = usage_error("--calibrate %s: no images found", o->calibrate);
    int n = in.images.n < CALIB_MAX ? in.images.n : CALIB_MAX, loaded = 0;
    strix_owned_image img[CALIB_MAX];
    strix_image view[CALIB_MAX];
    strix_error e;
    for (; !rc && loaded < n; loaded++) {
        strix_status st = strix_image_load(in.images.v[loaded], 0, &img[loaded], &e);
        if (st) {
            fprintf(stderr, "infer: --calibrate: %s\n", e.message);
            rc = strix_exit_code(st);
            break;
        }
        view[loaded] = strix_image_view(&img[loaded]);
    }
    if (!rc) {
        strix_detect_options d;
        strix_detect_options_init(&d);
        d.imgsz = o->imgsz;
        strix_status st = strix_model_quantize(m, view, n, &d, &e);
        if (st) {
            fprintf(stderr, "infer: --precision int8: %s\n", e.message);
            rc = strix_exit_code(st);
        } else if (!o->quiet) {
            fprintf(stderr, "infer: int8: calibrated on %d image%s of %s\n", n, n == 1 ? "" : "s", o->calibrate);
        }
    }
    for (int i = 0; i < loaded; i++) strix_image_free(&img[i]);
    list_free(&in.images);
    list_free(&in.videos);
    return rc;
}

/* Load the model of --model/--weights and its class names; an exit code. */
static int load_model(options *o, strix_model **model, const char ***names, int *nc)
{
    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.yaml_path = o->model;
    mo.weights_path = o->weights;
    char yaml_dir[PATH_MAX];
    mo.yaml_dir = strix_tool_yaml_dir(yaml_dir);
    mo.scale = o->scale;
    mo.nc = o->nc;
    mo.threads = o->threads;
    mo.device = o->device;
    strix_cuda_env_apply(&mo);
    o->nvtx = mo.nvtx; /* the job's stage ranges with the library's layer ranges */
    o->async = mo.cuda_async; /* the detection stage submits a batch before collecting the last */
    if (!mo.device) {
        mo.device = strix_device_count() > 0 ? "cuda" : "cpu";
        if (!o->quiet && strix_device_count() == 0)
            fprintf(stderr, "infer: no CUDA device found: running on the cpu (--device cpu silences this)\n");
    }
    mo.half = o->half;
    mo.nms_free = o->nms_free;
    mo.cpu_exact_conv = o->exact_conv;
    mo.precision = (strix_precision)o->precision;
    o->cpu = !strcmp(mo.device, "cpu");
    if (o->nvdec >= 0) {
        if (strncmp(mo.device, "cuda", 4))
            return usage_error("--decode nvdec needs the model on a CUDA device (--device cuda or cuda:N): its "
                               "frames stay in GPU memory");
        o->nvdec = mo.device[4] == ':' ? atoi(mo.device + 5) : 0;
    }
    strix_error e;
    strix_status st = strix_model_load(model, &mo, &e);
    if (!st && o->names) st = strix_model_load_names(*model, o->names, &e);
    if (st) {
        fprintf(stderr, "infer: %s\n", e.message);
        return strix_exit_code(st);
    }
    strix_task task = strix_model_task(*model);
    if (task == STRIX_TASK_CLASSIFY && (o->track || o->highlights || o->has_line))
        return usage_error("%s: a classify model finds no boxes to track, count or cut highlights from: drop "
                           "--track, --line and --highlights", o->weights ? o->weights : o->model);
    if (o->retina && task != STRIX_TASK_SEGMENT)
        return usage_error("--retina-masks: %s is a %s model; it applies to segment models only",
                           o->weights ? o->weights : o->model, strix_task_name(task));
    int fh, fw;
    if (strix_model_fixed_input(*model, &fh, &fw)) { /* it runs at that size: the JSON records it */
        int side = fh > fw ? fh : fw;
        if (o->imgsz_set && o->imgsz != side)
            return usage_error("--imgsz %d: %s is a static ONNX export with input %dx%d (HxW) and runs at that size "
                               "only: drop --imgsz, or export it with imgsz=%d or dynamic=True", o->imgsz, o->weights,
                               fh, fw, o->imgsz);
        o->imgsz = side;
    }
    int rc = o->precision == STRIX_PRECISION_INT8 ? calibrate_int8(o, *model) : 0;
    if (rc) return rc;
    *nc = strix_model_class_count(*model);
    if (!(*names = malloc(sizeof **names * (size_t)(*nc > 0 ? *nc : 1)))) {
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    for (int i = 0; i < *nc; i++) (*names)[i] = strix_model_class_name(*model, i);
    return 0;
}

/* --detections: the class names met in the file (read once through); an exit code. */
static int replay_names(const options *o, const char ***names, int *nc)
{
    strix_jsonl_reader *rd;
    strix_error e;
    strix_status st = strix_jsonl_open(&rd, o->detections, &e);
    strix_jsonl_record rec;
    int got = 0;
    while (!st && (got = strix_jsonl_next(rd, &rec, &e)) > 0) {}
    if (st || got < 0) { /* missing, unreadable or malformed: a bad input */
        fprintf(stderr, "infer: %s\n", e.message);
        strix_jsonl_close(rd);
        return e.status == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_INPUT;
    }
    *nc = strix_jsonl_class_count(rd);
    *names = calloc((size_t)(*nc > 0 ? *nc : 1), sizeof **names);
    int rc = *names ? 0 : EXIT_NOMEM;
    for (int i = 0; i < *nc && !rc; i++) {
        const char *n = strix_jsonl_class_name(rd, i);
        char tmp[32];
        snprintf(tmp, sizeof tmp, "class%d", i);
        if (!((*names)[i] = strdup(n ? n : tmp))) rc = EXIT_NOMEM;
    }
    strix_jsonl_close(rd);
    if (rc) fprintf(stderr, "infer: out of memory\n");
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        free(o.inputs);
        return rc < 0 ? 0 : rc;
    }
    double t_start = now_ms();

    inputs in;
    memset(&in, 0, sizeof in);
    strlist created = {0};
    plan_entry *plan = NULL;
    video_plan *vplan = NULL;
    char *json_path = NULL, *labels_dir = NULL;
    strix_model *model = NULL;
    const char **names = NULL;
    unsigned char *mask = NULL, *hl_mask = NULL;
    int nc = 0;
    worker w;
    memset(&w, 0, sizeof w);
    detector det;
    memset(&det, 0, sizeof det);

    rc = expand_inputs(&o, &in);
    if (rc) goto out;
    int n_img = in.images.n, n_vid = in.videos.n;
#if defined(_OPENMP) && defined(STRIX_WITH_CUDA)
    /* A video runs decode and encode threads beside the library's threads.
     * The CPU backend's own threads never spin (engine/cpu/team.h), but the
     * CUDA backend stages frames with an OpenMP loop, and libgomp's default
     * spin-waiting after it burns the cores those threads (or a neighbour's
     * process) need: measured on 2 cores with one busy neighbour, 2 fps
     * spinning against 23 fps passive.  libgomp reads the policy once, when
     * it loads, so only a fresh process image can change it: re-run
     * ourselves once with OMP_WAIT_POLICY=passive unless the user chose a
     * policy.  If that fails, carry on as we are. */
    if ((n_vid || o.manifest) && !getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "passive", 0) == 0)
        execv("/proc/self/exe", argv); /* returns only when it failed */
#endif
    if (o.detections && (n_vid != 1 || n_img)) {
        rc = usage_error("--detections FILE replays one video: give that video, and only it");
        goto out;
    }
    if (o.detections && o.names) {
        rc = usage_error("--names: with --detections the class names come from the detections file");
        goto out;
    }
    if ((o.track || o.highlights) && !n_vid && !o.manifest) {
        rc = usage_error("--%s works on videos: no video among the inputs", o.track ? "track" : "highlights");
        goto out;
    }
    if (o.json && n_vid && (n_vid > 1 || n_img)) {
        rc = usage_error("--json FILE names one file: give a single video, or only images");
        goto out;
    }

    if (o.manifest) { /* the work list, the shard, the metrics (infer/worker.c) */
        rc = worker_open(&w, &o, argc, argv);
        g_discard = 1;
    } else {
        rc = plan_run_outputs(&o, &in, &json_path, &plan, &vplan, &labels_dir, &created);
        w.sh = (shard){0, 1, "no --manifest"};
        if (!rc) rc = worker_metrics(&w, &o, 0);
    }
    if (rc) goto out;

    /* from here on a signal finishes the current batch (images) or the
     * frames in flight (video) and stops cleanly */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* images: a second signal stops at once; a video counts it and discards */
    sa.sa_flags = n_vid || o.manifest ? SA_RESTART : SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a file-size limit (ulimit -f) then fails the write (EFBIG, exit 7)
     * instead of killing the process with the temporary file left */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigaction(SIGXFSZ, &sa, NULL);
    if (n_vid || o.manifest) strix_video_log_level(0);

    rc = o.detections ? replay_names(&o, &names, &nc) : load_model(&o, &model, &names, &nc);
    if (rc) goto out;
    if (o.classes && (rc = parse_classes("--classes", o.classes, names, nc, &mask))) goto out;
    if (o.highlights && (rc = parse_classes("--highlights", o.highlights, names, nc, &hl_mask))) goto out;

    if (g_stop) { /* interrupted while loading: nothing written yet */
        fprintf(stderr, "infer: interrupted before the first %s\n", n_img ? "image" : "frame");
        rc = EXIT_INTERRUPTED;
        goto out;
    }
    detector_init(&det, &o, model, names, nc, mask);
    if ((rc = detector_task_init(&det, o.retina))) {
        fprintf(stderr, "infer: out of memory\n");
        goto out;
    }
    if (o.track && o.track_opts.with_reid && model && (rc = reid_setup(&o, &det))) goto out;
    if (o.track && o.track_opts.tracker_type == STRIX_TRACKER_TRACKTRACK && model) recovered_setup(&o, &det);
    if (o.manifest) rc = worker_run(&w, &o, &det, hl_mask);
    if (n_img) {
        rc = run_images(&o, &in.images, plan, &det, json_path, t_start);
        if (rc && rc != EXIT_IMAGE) goto out; /* fatal, or interrupted: the videos wait */
    }
    if (n_vid && !g_stop) {
        int vrc = run_videos(&o, vplan, n_vid, &det, hl_mask);
        if (!rc || vrc == EXIT_INTERRUPTED) rc = vrc ? vrc : rc;
    }

out:
    detector_free(&det);
    worker_close(&w);
    if (rc) remove_created(&created); /* only the empty ones go */
    if (model) strix_model_free(model);
    for (int i = 0; o.detections && names && i < nc; i++) free((char *)names[i]); /* replay_names' copies */
    free(names);
    free(mask);
    free(hl_mask);
    free_run_outputs(&in, plan, vplan, json_path, labels_dir, &created);
    free(o.inputs);
    return rc;
}
