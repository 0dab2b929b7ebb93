/* fuzz_tracker.c — libFuzzer target: a tracker YAML (`infer --tracker
 * FILE.yaml`, loaders/tracker_yaml.c), then a tracker with those options
 * (or, when the file is refused, Ultralytics' defaults) driven through a
 * stream of frames whose detections and pixels come from the input, as
 * `infer --track` drives it with a model's or a replayed (--detections)
 * stream: ByteTrack, OC-SORT, FastTrack, TrackTrack, BoT-SORT and Deep OC-SORT and their
 * camera-motion compensation on small frames of any size, by the frame and by the grey half frame
 * in bands, on axis-aligned or oriented boxes (strix_tracker_update_obb, as
 * for an obb model).
 *
 * Input: the YAML text up to the first NUL byte; after it, frames, each
 *   1 byte   bit 0-3: detections n (0..15); bit 4-5: the pixels given to
 *            GMC (0, 1: the frame; 2: grey bands; 3: none); bit 6: BGR;
 *            bit 7: oriented boxes (a tracker that had the other kind
 *            must refuse them)
 *   2 bytes  frame width and height - 1 (mod 128), when pixels are given
 *   1 byte   pattern seed (the pixels are a texture shifted by the frame
 *            index, so consecutive frames look like a panning camera)
 *   1 byte   grey bands only: the band height - 1 (mod 64)
 *   n x 11   per detection: 4 x int16 corners / 4 (pixels), score byte /
 *            255, class byte, flags byte (bit 0: the first corner's raw
 *            float bits from the next 4 bytes: NaN, inf, denormals; bit 1:
 *            score byte / 64, up to 4, which the tracker must refuse; bit
 *            2 of the frame's first detection: ReID features given
 *            (strix_tracker_features: per detection its 4 values as a
 *            feature, all zero included); bit 3 of it: the same
 *            detections given as the update's recovered ones too
 *            (strix_tracker_recovered, which only TrackTrack takes));
 *            oriented: the 4 values are cx, cy, w, h and 2 more bytes
 *            follow, an int16 angle / 1024 (radians)
 * until the input ends, 64 frames at most.  The API promises no crash on any box (a box
 * without area or with a non-finite corner is ignored) and an error, not
 * a crash, for anything else; and each accepted frame gives every
 * detection (recovered ones included) -1 or an identity >= 1, no identity
 * twice: all checked here. */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>

#include "fuzz.h"
#include "tracker_yaml.h"

typedef struct cursor {
    const uint8_t *p;
    size_t n;
} cursor;

static int take(cursor *c, void *out, size_t k)
{
    if (c->n < k) return 0;
    memcpy(out, c->p, k);
    c->p += k;
    c->n -= k;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t yaml_len = nul ? (size_t)(nul - data) : size;
    char path[64];
    int fd = fuzz_memfile(data, yaml_len, path, sizeof path);
    strix_track_options o;
    strix_error err;
    if (strix_tracker_yaml_read(path, &o, &err) != STRIX_OK)
        strix_track_options_init(&o, (strix_tracker_type)(yaml_len % 6)); /* each of the six */
    close(fd);
    if (!nul) return 0;

    strix_tracker *t;
    if (strix_tracker_create(&t, &o, &err) != STRIX_OK) return 0;
    cursor c = {nul + 1, size - yaml_len - 1};
    strix_detection dets[15];
    float feats[15 * 4];
    int ids[2 * 15];
    float xywhr[15 * 5];
    static uint8_t px[128 * 128 * 3], grey[64 * 64];
    for (int frame = 0; frame < 64; frame++) { /* 64 frames at most: an input stays fast */
        uint8_t head, wh[2], seed, band = 0;
        if (!take(&c, &head, 1)) break;
        int n = head & 15, mode = (head >> 4) & 3, bgr = (head >> 6) & 1, obb = head >> 7;
        strix_image img = {0};
        if (mode != 3) {
            if (!take(&c, wh, 2) || !take(&c, &seed, 1) || (mode == 2 && !take(&c, &band, 1))) break;
            int w = wh[0] % 128 + 1, h = wh[1] % 128 + 1;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w * 3; x++) {
                    unsigned X = (unsigned)(x / 3 + frame * (seed & 7)), Y = (unsigned)(y + frame * (seed >> 5));
                    px[(size_t)y * (size_t)w * 3 + (size_t)x] = (uint8_t)((X / 4 * 37u) ^ (Y / 4 * 91u) ^ seed ^ (unsigned)x % 3);
                }
            img = (strix_image){.data = px, .width = w, .height = h, .format = bgr ? STRIX_BGR : STRIX_RGB};
        }
        int got = 0, reid = 0, rec = 0;
        for (; got < n; got++) {
            int16_t q[4];
            uint8_t sc[3];
            if (!take(&c, q, sizeof q) || !take(&c, sc, sizeof sc)) break;
            strix_detection *d = &dets[got];
            *d = (strix_detection){q[0] / 4.0f, q[1] / 4.0f, q[2] / 4.0f, q[3] / 4.0f,
                                   sc[2] & 2 ? sc[0] / 64.0f : sc[0] / 255.0f, sc[1]};
            for (int k = 0; k < 4; k++) feats[4 * got + k] = q[k] / 4.0f;
            if (!got) reid = sc[2] & 4, rec = sc[2] & 8;
            if (sc[2] & 1 && !take(&c, &d->x1, sizeof d->x1)) break;
            int16_t a = 0;
            if (obb && !take(&c, &a, sizeof a)) break;
            float *r = xywhr + 5 * got;
            r[0] = d->x1, r[1] = d->y1, r[2] = d->x2, r[3] = d->y2, r[4] = a / 1024.0f;
        }
        /* refused without with_reid; with it, this frame's detections carry these features */
        if (reid) (void)strix_tracker_features(t, feats, got, 4, &err);
        if (rec) (void)strix_tracker_recovered(t, dets, obb ? xywhr : NULL, got, &err);
        for (int i = 0; i < got; i++) ids[i] = -2; /* not an answer the tracker gives */
        strix_status st;
        if (mode == 2) {
            /* the grey half frame in bands of the input's height, as a decoder's rows callback makes it */
            int done = 0, rows = band % 64 + 1;
            st = STRIX_OK;
            for (int y1 = 0; !st && done < img.height;) {
                y1 = y1 + rows < img.height ? y1 + rows : img.height;
                st = strix_track_grey(&img, &done, y1, grey, o.gmc_grey, &err);
            }
            if (!st) st = obb ? strix_tracker_update_obb(t, NULL, grey, img.width, img.height, dets, xywhr, got, ids, &err)
                              : strix_tracker_update_grey(t, grey, img.width, img.height, dets, got, ids, &err);
        } else {
            st = obb ? strix_tracker_update_obb(t, mode == 3 ? NULL : &img, NULL, 0, 0, dets, xywhr, got, ids, &err)
                     : strix_tracker_update(t, mode == 3 ? NULL : &img, dets, got, ids, &err);
        }
        if (st != STRIX_OK && st != STRIX_E_ARG) break; /* out of memory: the tracker refuses from then on */
        for (int i = 0; st == STRIX_OK && i < got; i++) /* the recovered ones' identities after the update's */
            ids[got + i] = strix_tracker_recovered_id(t, i);
        if (st == STRIX_OK)
            for (int i = 0; i < 2 * got; i++) {
                if (ids[i] != -1 && ids[i] < 1) __builtin_trap(); /* not written, or not an identity */
                for (int j = 0; j < i; j++)
                    if (ids[i] > 0 && ids[j] == ids[i]) __builtin_trap(); /* one track, two detections */
            }
    }
    (void)strix_tracker_degenerate(t);
    float b[5];
    for (int i = 0; i < 2 * 15; i++) /* the last frame's boxes, of either kind (recovered ones from n on) */
        (void)(strix_tracker_box(t, i, b) + strix_tracker_box_xywhr(t, i, b));
    strix_tracker_free(t);
    return 0;
}
