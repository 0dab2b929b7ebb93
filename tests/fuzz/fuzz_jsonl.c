/* fuzz_jsonl.c — libFuzzer target: a JSON Lines detections file (what
 * `infer --detections` replays) through loaders/jsonl.c (and the JSON
 * reader, loaders/json.c), every record with its task fields (polygons,
 * keypoints, rotated boxes, probabilities) and the class names it met. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz.h"
#include "jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    strix_jsonl_reader *r;
    strix_error err;
    if (strix_jsonl_open(&r, path, &err) == STRIX_OK) {
        strix_jsonl_record rec;
        while (strix_jsonl_next(r, &rec, &err) == 1) {
            /* touch every field: ASan sees any read past the arrays */
            volatile float sum = 0;
            for (int i = 0; i < rec.n; i++) {
                sum += rec.dets[i].x1 + rec.dets[i].y2 + rec.dets[i].score + (float)rec.track_ids[i];
                strix_jsonl_class_name(r, rec.dets[i].class_id);
                if (rec.task == STRIX_TASK_SEGMENT)
                    for (int k = 2 * rec.seg_at[i]; k < 2 * rec.seg_at[i + 1]; k++) sum += rec.seg_xy[k];
                for (int k = 0; rec.task == STRIX_TASK_POSE && k < rec.nk * rec.kd; k++)
                    sum += rec.kpts[(size_t)i * rec.nk * rec.kd + k];
                for (int k = 0; rec.task == STRIX_TASK_OBB && k < 8; k++) sum += rec.obb[8 * i + k] + rec.raw_obb[8 * i + k];
            }
            for (int k = 0; k < rec.n_probs; k++) {
                sum += rec.prob_conf[k];
                strix_jsonl_class_name(r, rec.prob_class[k]);
            }
            (void)sum;
        }
        for (int c = 0; c < strix_jsonl_class_count(r); c++) strix_jsonl_class_name(r, c);
        strix_jsonl_close(r);
    }
    close(fd);
    return 0;
}
