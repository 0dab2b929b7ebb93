/* reels.c — --highlights with --segment: a highlight reel per rolling
 * piece, OUT/NAME-000.highlights.mp4 from OUT/NAME-000.mp4 (or .ts), cut
 * (strix_video_cut) from the piece itself as soon as it is closed, on the
 * video's writer thread.  A live source cannot be read again at the end,
 * as the reel of a file is; the piece can, and it already holds the drawn
 * boxes and the source's audio.  Each piece's frames (time in the piece,
 * activity: the qualifying detections) are kept until its reel is cut, 16
 * bytes a frame of one or two pieces: memory stays flat over a long run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "outfile.h"

int reels_open(reels *r, const char *video_out, int ts)
{
    memset(r, 0, sizeof *r);
    size_t n = strlen(video_out), stem = n > 4 && !strcmp(video_out + n - 4, ".mp4") ? n - 4 : n;
    if (!(r->stem = malloc(stem + 1))) {
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    memcpy(r->stem, video_out, stem);
    r->stem[stem] = 0;
    r->ext = ts ? "ts" : "mp4";
    r->since = time(NULL);
    return 0;
}

/* Piece k's file name, or its reel's. */
static void piece_name(const reels *r, long k, int reel, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%03ld.%s", r->stem, k, reel ? "highlights.mp4" : r->ext);
}

/* Cut the oldest piece's reel (its file closed) and drop it; an exit code. */
static int cut_oldest(vrun *v)
{
    reels *r = &v->reels;
    const options *o = v->o;
    reel_piece *p = &r->q[0];
    char src[4096], dst[4096];
    piece_name(r, r->first, 0, src, sizeof src);
    piece_name(r, r->first, 1, dst, sizeof dst);
    strix_highlight_options ho;
    highlight_options(o, &ho);
    double fps = strix_video_reader_info(v->src.rd)->fps;
    double end = p->n ? p->pts[p->n - 1] + 1 / (fps > 0 ? fps : 25) : 0;
    strix_highlight_segment *sg = NULL;
    long n_sg = 0;
    strix_video_segment *cut = NULL;
    char *tmp = NULL;
    strix_error e;
    int rc = 0;
    if (strix_highlight_segments(p->pts, p->act, p->n, end, &ho, &sg, &n_sg, &e)) {
        fprintf(stderr, "infer: %s\n", e.message);
        rc = strix_exit_code(e.status);
    } else if (n_sg && !(cut = malloc(sizeof *cut * (size_t)n_sg))) {
        fprintf(stderr, "infer: out of memory\n");
        rc = EXIT_NOMEM;
    } else if (n_sg) {
        for (long i = 0; i < n_sg; i++) cut[i] = (strix_video_segment){sg[i].start, sg[i].end};
        FILE *t = strix_temp_open(dst, &tmp);
        if (t) fclose(t);
        strix_video_cut_options co;
        reel_cut_options(v, dst, &co);
        strix_status st = !t ? STRIX_E_IO : strix_video_cut(src, tmp, cut, (int)n_sg, &co, NULL, &e);
        if (!t) {
            fprintf(stderr, "infer: %s: cannot create the file: %s\n", dst, strerror(errno));
            rc = EXIT_OUTPUT;
        } else if (st) {
            fprintf(stderr, "infer: %s\n", g_stop ? "highlight reel interrupted: not written" : e.message);
            rc = g_stop ? EXIT_INTERRUPTED : st == STRIX_E_NOMEM ? EXIT_NOMEM : EXIT_OUTPUT;
            unlink(tmp);
            free(tmp);
        } else {
            rc = commit_file(tmp, dst, o->overwrite);
            r->written += !rc;
        }
    }
    free(sg);
    free(cut);
    free(p->pts);
    free(p->act);
    memmove(r->q, r->q + 1, sizeof *r->q * (size_t)--r->n);
    r->first++;
    return rc;
}

int reels_frame(vrun *v, double time, double activity)
{
    reels *r = &v->reels;
    double start;
    long begun = strix_video_writer_pieces(v->vs.wr, &start);
    if (begun > r->first + r->n) { /* this frame begins a piece */
        if (r->n == r->cap) {
            int cap = r->cap ? 2 * r->cap : 2;
            reel_piece *q = realloc(r->q, sizeof *q * (size_t)cap);
            if (!q) goto nomem;
            r->q = q;
            r->cap = cap;
        }
        r->q[r->n++] = (reel_piece){start, NULL, NULL, 0, 0};
    }
    reel_piece *p = &r->q[r->n - 1];
    if (p->n == p->cap) {
        long cap = p->cap ? 2 * p->cap : 256;
        double *pts = realloc(p->pts, sizeof *pts * (size_t)cap);
        if (pts) p->pts = pts;
        double *act = realloc(p->act, sizeof *act * (size_t)cap);
        if (act) p->act = act;
        if (!pts || !act) goto nomem;
        p->cap = cap;
    }
    p->pts[p->n] = time - p->start;
    p->act[p->n++] = activity;
    /* piece k is closed once this run made k + 1 (--overwrite may have left an older one); a stop cuts
     * no more */
    int rc = 0;
    while (!rc && r->n > 1 && !g_stop) {
        char next[4096];
        struct stat sb;
        piece_name(r, r->first + 1, 0, next, sizeof next);
        if (stat(next, &sb) || sb.st_mtime < r->since) break;
        rc = cut_oldest(v);
    }
    return rc;
nomem:
    fprintf(stderr, "infer: out of memory\n");
    return EXIT_NOMEM;
}

int reels_finish(vrun *v)
{
    int rc = 0;
    while (!rc && v->reels.n) rc = cut_oldest(v);
    return rc;
}

void reels_free(reels *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->q[i].pts);
        free(r->q[i].act);
    }
    free(r->q);
    free(r->stem);
    memset(r, 0, sizeof *r);
}
