/* moteval.c — score a tracker's MOTChallenge output against ground truth:
 * CLEAR MOT (MOTA, MOTP) and identity (IDF1) metrics with py-motmetrics'
 * conventions (engine/eval/moteval.h), printed on one line, or one metric per
 * line with --raw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcodes.h"
#include "moteval.h"
#include "strix.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: moteval [--iou X] [--raw] GT.txt HYP.txt\n"
            "  Scores the tracks in HYP.txt against the ground truth GT.txt, both MOTChallenge\n"
            "  text files (frame,id,bb_left,bb_top,bb_width,bb_height[,conf,...] per line),\n"
            "  as py-motmetrics does.  MOTP is the mean IoU of the matches (py-motmetrics\n"
            "  prints 1 - this).\n"
            "  --iou X       IoU a match needs, in (0, 1] (default 0.5, MOTChallenge's)\n"
            "  --raw         every metric as a 'name value' line, full precision\n"
            "  --version     print the version\n" STRIX_EXIT_CODES_HELP);
}

static int load(const char *path, strix_mot_box **b, long *n)
{
    strix_error e;
    strix_status st = strix_mot_read(path, b, n, &e);
    if (st) fprintf(stderr, "moteval: %s\n", e.message);
    return st ? strix_exit_code(st) : 0;
}

int main(int argc, char **argv)
{
    double iou = 0.5;
    int raw = 0;
    const char *files[2];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("moteval (strix) %s\n", STRIX_VERSION);
            return 0;
        } else if (!strcmp(a, "--raw")) {
            raw = 1;
        } else if (!strcmp(a, "--iou")) {
            char *end;
            if (i + 1 >= argc) {
                fprintf(stderr, "moteval: --iou: needs a value (see --help)\n");
                return EXIT_USAGE;
            }
            const char *v = argv[++i];
            iou = strtod(v, &end);
            if (!*v || *end || !(iou > 0 && iou <= 1)) {
                fprintf(stderr, "moteval: --iou %s: want a number in (0, 1] (see --help)\n", v);
                return EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "moteval: %s: unknown option (see --help)\n", a);
            return EXIT_USAGE;
        } else if (nfiles == 2) {
            fprintf(stderr, "moteval: %s: only two files, GT.txt and HYP.txt (see --help)\n", a);
            return EXIT_USAGE;
        } else {
            files[nfiles++] = a;
        }
    }
    if (nfiles != 2) {
        fprintf(stderr, "moteval: GT.txt and HYP.txt are required (see --help)\n");
        return EXIT_USAGE;
    }
    strix_mot_box *gt = NULL, *hyp = NULL;
    long ngt, nhyp;
    int rc = load(files[0], &gt, &ngt);
    if (!rc) rc = load(files[1], &hyp, &nhyp);
    if (rc) {
        free(gt);
        return rc;
    }
    strix_mot_metrics m;
    strix_error e;
    strix_status st = strix_mot_evaluate(gt, ngt, hyp, nhyp, iou, &m, &e);
    free(gt);
    free(hyp);
    if (st) {
        fprintf(stderr, "moteval: %s\n", e.message);
        return strix_exit_code(st);
    }
    if (raw) {
        printf("iou %.17g\nframes %ld\ngt %ld\nhyp %ld\ntp %ld\nfp %ld\nfn %ld\nidsw %ld\nfrag %ld\n"
               "mota %.17g\nmotp %.17g\nidtp %ld\nidfp %ld\nidfn %ld\nidf1 %.17g\nidp %.17g\nidr %.17g\n"
               "gt_ids %d\nhyp_ids %d\nmostly_tracked %d\npartly_tracked %d\nmostly_lost %d\n",
               iou, m.frames, m.gt, m.hyp, m.tp, m.fp, m.fn, m.idsw, m.frag, m.mota, m.motp, m.idtp, m.idfp, m.idfn,
               m.idf1, m.idp, m.idr, m.gt_ids, m.hyp_ids, m.mostly_tracked, m.partly_tracked, m.mostly_lost);
    } else {
        printf("MOTA %.4f IDF1 %.4f MOTP %.4f IDP %.4f IDR %.4f | frames %ld gt %ld hyp %ld tp %ld fp %ld fn %ld "
               "idsw %ld frag %ld | ids gt %d hyp %d MT %d PT %d ML %d (IoU >= %g)\n",
               m.mota, m.idf1, m.motp, m.idp, m.idr, m.frames, m.gt, m.hyp, m.tp, m.fp, m.fn, m.idsw, m.frag,
               m.gt_ids, m.hyp_ids, m.mostly_tracked, m.partly_tracked, m.mostly_lost, iou);
    }
    return 0;
}
