/* framelog.c — the file-backed frame log of framelog.h.  A record is
 * [double pts][int32 n][n x (int32 class_id, int32 id)] in host byte
 * order (the file never outlives the process).  Writes go through stdio's
 * buffer; reading back uses one buffer as large as the largest frame. */
#include "framelog.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct strix_frame_log {
    FILE *f;
    long frames, read;
    double first_pts, last_pts;
    int reading;
    strix_frame_item *buf; /* the frame last read */
    int cap, largest;
};

strix_status strix_frame_log_open(strix_frame_log **out, strix_error *err)
{
    *out = NULL;
    strix_frame_log *l = calloc(1, sizeof *l);
    if (!l) return strix_fail(err, STRIX_E_NOMEM, "frame log: out of memory");
    if (!(l->f = tmpfile())) {
        int e = errno;
        free(l);
        return strix_fail(err, STRIX_E_IO, "frame log: cannot create a temporary file in /tmp: %s (check that it is "
                    "writable and has free space)", strerror(e));
    }
    *out = l;
    return STRIX_OK;
}

static strix_status io_fail(strix_error *err, const char *what)
{
    return strix_fail(err, STRIX_E_IO, "frame log: temporary file %s failed%s%s (check free space in /tmp)", what,
                errno ? ": " : "", errno ? strerror(errno) : "");
}

strix_status strix_frame_log_add(strix_frame_log *l, double pts, const strix_frame_item *items, int n,
                                 strix_error *err)
{
    if (!l || n < 0 || (n && !items)) return strix_fail(err, STRIX_E_ARG, "frame log: bad arguments");
    if (l->reading) return strix_fail(err, STRIX_E_ARG, "frame log: add after rewind");
    int32_t k = n;
    errno = 0;
    if (fwrite(&pts, sizeof pts, 1, l->f) != 1 || fwrite(&k, sizeof k, 1, l->f) != 1) return io_fail(err, "write");
    for (int i = 0; i < n; i++) {
        int32_t rec[2] = {items[i].class_id, items[i].id};
        if (fwrite(rec, sizeof rec, 1, l->f) != 1) return io_fail(err, "write");
    }
    if (!l->frames) l->first_pts = pts;
    l->last_pts = pts;
    l->frames++;
    if (n > l->largest) l->largest = n;
    return STRIX_OK;
}

long strix_frame_log_frames(const strix_frame_log *l) { return l->frames; }
double strix_frame_log_first_pts(const strix_frame_log *l) { return l->first_pts; }
double strix_frame_log_last_pts(const strix_frame_log *l) { return l->last_pts; }

strix_status strix_frame_log_rewind(strix_frame_log *l, strix_error *err)
{
    errno = 0;
    if (fflush(l->f) || fseek(l->f, 0, SEEK_SET)) return io_fail(err, "flush");
    l->reading = 1;
    l->read = 0;
    if (l->largest > l->cap) {
        strix_frame_item *b = realloc(l->buf, sizeof *b * (size_t)l->largest);
        if (!b) return strix_fail(err, STRIX_E_NOMEM, "frame log: out of memory");
        l->buf = b;
        l->cap = l->largest;
    }
    return STRIX_OK;
}

int strix_frame_log_next(strix_frame_log *l, double *pts, const strix_frame_item **items, int *n, strix_error *err)
{
    if (!l->reading) {
        strix_fail(err, STRIX_E_ARG, "frame log: read before rewind");
        return -1;
    }
    if (l->read == l->frames) return 0;
    int32_t k;
    errno = 0;
    if (fread(pts, sizeof *pts, 1, l->f) != 1 || fread(&k, sizeof k, 1, l->f) != 1 || k < 0 || k > l->cap) {
        io_fail(err, "read");
        return -1;
    }
    for (int i = 0; i < k; i++) {
        int32_t rec[2];
        if (fread(rec, sizeof rec, 1, l->f) != 1) {
            io_fail(err, "read");
            return -1;
        }
        l->buf[i] = (strix_frame_item){rec[0], rec[1]};
    }
    l->read++;
    *items = l->buf;
    *n = k;
    return 1;
}

void strix_frame_log_free(strix_frame_log *l)
{
    if (!l) return;
    fclose(l->f);
    free(l->buf);
    free(l);
}
