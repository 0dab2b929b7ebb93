/* fuzz_jsonl.c — libFuzzer target: a JSON Lines detections file (what
 * `infer --detections` replays) through loaders/jsonl.c (and the JSON
 * reader, loaders/json.c), every record and the class names it met. */
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
        while (strix_jsonl_next(r, &rec, &err) == 1)
            for (int i = 0; i < rec.n; i++) {
                /* touch every field: ASan sees any read past the arrays */
                volatile float sum = rec.dets[i].x1 + rec.dets[i].y2 + rec.dets[i].score + (float)rec.track_ids[i];
                (void)sum;
                strix_jsonl_class_name(r, rec.dets[i].class_id);
            }
        for (int c = 0; c < strix_jsonl_class_count(r); c++) strix_jsonl_class_name(r, c);
        strix_jsonl_close(r);
    }
    close(fd);
    return 0;
}
