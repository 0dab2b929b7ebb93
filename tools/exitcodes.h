/* exitcodes.h — the exit codes every strix tool uses (documented in README.md,
 * one table, with what a batch engine should do on each: README "Run at
 * scale"), so a batch scheduler can tell "bad input, don't retry" (2-7) from
 * "transient, retry" (8, 9, 11, 130) from "some items failed" (10) from
 * "bug" (1).  deploy/ (AWS Batch retryStrategy, Kubernetes podFailurePolicy,
 * Slurm requeue) uses these numbers: tests/test_deploy.c checks they agree. */
#ifndef STRIX_EXITCODES_H
#define STRIX_EXITCODES_H

#include "strix.h"

enum {
    EXIT_OK_ = 0,
    EXIT_INTERNAL = 1, /* a bug in strix */
    EXIT_USAGE = 2,    /* bad or missing option or value */
    EXIT_INPUT = 3,    /* an input file is missing or unreadable (a live source: never came up, or
                          gone for good, its --max-reconnects used up) */
    EXIT_MODEL = 4,    /* the model YAML is malformed or unsupported */
    EXIT_WEIGHTS = 5,  /* the weights file is malformed or does not match the model */
    EXIT_IMAGE = 6,    /* an image could not be decoded or is out of limits */
    EXIT_OUTPUT = 7,   /* an output cannot be written, would write over a file the run reads
                          or another output, or exists without --overwrite */
    EXIT_NOMEM = 8,    /* out of memory */
    EXIT_DEVICE = 9,   /* the compute device failed, or is not in this build */
    EXIT_PARTIAL = 10, /* --manifest: some items failed for good (not decodable, options that do not
                          apply), the others are done; OUT/failures-I-of-N.jsonl names them */
    EXIT_PARTIAL_RETRY = 11, /* --manifest: as 10, and some failed inputs were missing or unreachable:
                          a retry redoes only the unfinished items */
    EXIT_INTERRUPTED = 130 /* SIGINT/SIGTERM: stopped cleanly (with --manifest: no partial output) */
};

static inline int strix_exit_code(strix_status s)
{
    switch (s) {
    case STRIX_OK: return EXIT_OK_;
    case STRIX_E_ARG: return EXIT_USAGE;
    case STRIX_E_IO: return EXIT_INPUT;
    case STRIX_E_MODEL: return EXIT_MODEL;
    case STRIX_E_WEIGHTS: return EXIT_WEIGHTS;
    case STRIX_E_IMAGE: return EXIT_IMAGE;
    case STRIX_E_NOMEM: return EXIT_NOMEM;
    case STRIX_E_UNSUPPORTED:
    case STRIX_E_DEVICE: return EXIT_DEVICE;
    case STRIX_E_INTERNAL: return EXIT_INTERNAL;
    }
    return EXIT_INTERNAL;
}

#define STRIX_EXIT_CODES_HELP                                                              \
    "exit codes: 0 ok, 1 internal error, 2 usage, 3 input missing/unreadable, 4 bad model YAML,\n" \
    "            5 bad weights, 6 bad image, 7 output not writable/exists/an input, 8 out of memory,\n" \
    "            9 device error/unavailable, 10/11 some manifest items failed (11: retry may help),\n" \
    "            130 interrupted\n"

#endif
