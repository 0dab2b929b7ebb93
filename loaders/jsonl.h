/* jsonl.h — reads back the JSON Lines that `infer` writes for a video (one
 * object per frame), so a run can be re-tracked, re-rendered or re-cut
 * without running the model again (`infer --detections FILE`); and the
 * string and number writers infer writes its JSON with.
 *
 * A line:
 *   {"frame": 0, "pts": 0.04, "inferred": true,
 *    "detections": [{"class_id": 0, "class_name": "person", "score": 0.87,
 *                    "box": [x1, y1, x2, y2], "track_id": 3,
 *                    "detection_box": [x1, y1, x2, y2]}]}
 *   frame       required, integer >= 0, strictly increasing from line to line
 *   pts         required, finite number (seconds)
 *   inferred    optional true/false (default true)
 *   detections  required array of objects:
 *     class_id    required, integer in [0, STRIX_JSONL_MAX_CLASSES)
 *     class_name  optional string (or null); one class_id must always carry
 *                 the same name
 *     score       required, number in [0, 1]
 *     box         required, array of exactly 4 finite numbers
 *     track_id    optional integer >= 0 (or null); -1 in the record when absent
 *     detection_box  optional, as box: a tracked detection's own box when
 *                 box is the tracker's (infer --track writes both); the
 *                 record's raw has it, dets the box
 *     recovered   optional true/false (default false): infer --track with
 *                 TrackTrack writes true on a row that is not one of the
 *                 frame's detections but a recovered one (the looser NMS's)
 *                 a track took, after the detections, as Ultralytics'
 *                 tracked results hold it
 *     segments    optional {"x": [...], "y": [...]}: a segment model's polygon
 *                 (Results.masks.xy), x and y of equal length
 *     keypoints   optional {"x": [...], "y": [...], "visible": [...]}: a pose
 *                 model's keypoints ("visible" optional), the columns of equal
 *                 length >= 1; every detection of the file has as many, with
 *                 or without "visible" alike
 *     obb         optional {"x1": ., "y1": ., ..., "x4": ., "y4": .}: an obb
 *                 model's rotated box, its 4 corners
 *     detection_obb  optional, as obb (only beside it): a tracked one's own
 *                 corners when obb is the tracker's (infer --track)
 *   probs       optional array of {"name": "cat", "class": 3, "confidence":
 *               0.9} (name optional, or null): a classify model's top-5
 * One task per file: all detections of a file carry the same one of
 * segments, keypoints and obb (or none), and probs comes only where they
 * carry none; numbers in them must be finite.
 * The first line may instead be the run's header, an object with one key
 *   {"header": {"video": "clip.mp4", "frames": 300, "damage": {...}, ...}}
 * (written by infer, see docs/videos-and-outputs.md); it is checked as JSON and skipped.
 * A live run's event lines, objects with the one key "event" (a reconnect:
 *   {"event": {"type": "reconnect", ...}}), may come between frames; they
 * are checked as JSON and skipped too.
 * Keys may come in any order; unknown keys (any JSON value) are skipped, so
 * newer writers stay readable; whitespace is free wherever JSON allows it;
 * CRLF line ends and blank lines are fine.  The JSON itself is checked
 * strictly (RFC 8259: UTF-8, escapes, number grammar, no trailing commas,
 * nothing after the object; a key of this schema given twice is an error).
 * Lines can be any length.  Floats read back bit-exactly what infer printed.
 *
 * Errors name the file, the line and, for JSON syntax, the column:
 *   runs/x.jsonl:12: detection 3: "box" must be an array of 4 numbers
 *   runs/x.jsonl:7: column 41: expected ',' or '}'
 * with STRIX_E_IO (the file cannot be opened, read, or used as detections)
 * or STRIX_E_NOMEM.
 */
#ifndef STRIX_JSONL_H
#define STRIX_JSONL_H

#include <stdio.h>

#include "strix.h"

#define STRIX_JSONL_MAX_CLASSES 1000000 /* class_id bound: keeps the name table small */

typedef struct strix_jsonl_reader strix_jsonl_reader;

typedef struct strix_jsonl_record {
    long frame;             /* 0-based frame index */
    double pts;             /* presentation time, seconds */
    int inferred;           /* 0: detections repeated from the last inferred frame */
    int n;                  /* detections */
    strix_detection *dets;  /* [n], reader-owned, valid until the next call */
    int *track_ids;         /* [n], -1 when a detection has none; same lifetime */
    strix_detection *raw;   /* [n], dets with "detection_box" as the box where given; same lifetime */
    unsigned char *recovered; /* [n], 1: "recovered": true (a TrackTrack row from a recovered detection, not a
                               * detection of the frame); same lifetime */
    /* The task fields, same lifetime; task says which the record has (STRIX_TASK_DETECT: none; the
     * arrays of the others are then not set) */
    strix_task task;
    int *seg_at;            /* segment: [n + 1], polygon i is points seg_at[i] .. seg_at[i + 1] - 1 */
    float *seg_xy;          /* segment: [seg_at[n], 2] x y */
    float *kpts;            /* pose: [n, nk, kd] */
    int nk, kd;             /* pose: keypoints per detection; 2 (x y) or 3 (x y visible) values each */
    float *obb;             /* obb: [n, 4, 2] the corners, "obb" */
    float *raw_obb;         /* obb: [n, 4, 2] "detection_obb" where given, else "obb" */
    int n_probs;            /* classify: entries of "probs" */
    int *prob_class;        /* classify: [n_probs] their class ids */
    float *prob_conf;       /* classify: [n_probs] their confidences */
} strix_jsonl_record;

strix_status strix_jsonl_open(strix_jsonl_reader **out, const char *path, strix_error *err);

/* 1 with the next record, 0 at the end of the file, -1 on error (err names
 * path:line and what is wrong).  After an error every call returns -1. */
int strix_jsonl_next(strix_jsonl_reader *r, strix_jsonl_record *rec, strix_error *err);

/* Class names met so far: the name of class_id, NULL if none was seen (or
 * class_id is out of range); valid until close.  Used when no model is
 * loaded. */
const char *strix_jsonl_class_name(const strix_jsonl_reader *r, int class_id);

/* 1 + the largest class_id seen so far (0 before any detection). */
int strix_jsonl_class_count(const strix_jsonl_reader *r);

void strix_jsonl_close(strix_jsonl_reader *r);

/* Writing, as infer writes its JSON and JSON Lines (so what it writes reads
 * back exactly): a string with escapes, U+FFFD for bytes that are not
 * UTF-8; numbers as whole numbers when they are, else the shortest decimal
 * that reads back as the same float or double; null when not finite. */
void strix_json_str(FILE *f, const char *s);
void strix_json_float(FILE *f, float v);
void strix_json_double(FILE *f, double v);

#endif
