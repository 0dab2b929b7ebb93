/* shard.c — which share of a manifest this worker takes (worker.h): from
 * --shard I/N, else from the array index the batch engine exports (Slurm,
 * Kubernetes Indexed Job, AWS Batch), with the count from the engine where
 * it exports one and from --shards where it does not.  Item k goes to shard
 * k mod N, so every item lands in exactly one shard whatever N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define SHARD_MAX 1000000L

/* A whole decimal number 0..SHARD_MAX (no sign, no blanks); 0 or -1. */
static int parse_count(const char *s, long *v)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 7) return -1;
    *v = strtol(s, NULL, 10);
    return *v <= SHARD_MAX ? 0 : -1;
}

int shard_resolve(const char *opt, long shards, env_lookup env, shard *s, char *err, size_t errn)
{
    memset(s, 0, sizeof *s);
    if (opt) {
        const char *slash = strchr(opt, '/');
        char idx[16];
        size_t k = slash ? (size_t)(slash - opt) : 0;
        if (k >= sizeof idx) k = 0;
        if (k) {
            memcpy(idx, opt, k);
            idx[k] = 0;
        }
        if (!k || parse_count(idx, &s->index) || parse_count(slash + 1, &s->count) || s->count < 1 ||
            s->index >= s->count) {
            snprintf(err, errn, "--shard: '%s' is not I/N with 0 <= I < N (e.g. --shard 2/8)", opt);
            return EXIT_USAGE;
        }
        snprintf(s->source, sizeof s->source, "--shard");
        return 0;
    }
    static const char *const vars[] = {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"};
    const char *var = NULL, *val = NULL;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !val; i++)
        if ((val = env(vars[i])) && *val) var = vars[i];
        else val = NULL;
    if (!var) {
        if (shards > 1) {
            snprintf(err, errn, "--shards %ld: no array index in the environment (SLURM_ARRAY_TASK_ID, "
                     "JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX): pass --shard I/N", shards);
            return EXIT_USAGE;
        }
        s->count = 1;
        snprintf(s->source, sizeof s->source, "no array index: every item");
        return 0;
    }
    long id, count = shards, min = 0;
    if (parse_count(val, &id)) {
        snprintf(err, errn, "%s='%.20s' is not a whole number 0..%ld", var, val, SHARD_MAX);
        return EXIT_USAGE;
    }
    if (!strcmp(var, "SLURM_ARRAY_TASK_ID")) {
        const char *c = env("SLURM_ARRAY_TASK_COUNT"), *m = env("SLURM_ARRAY_TASK_MIN");
        long ec;
        if (!count && c && *c) {
            if (parse_count(c, &ec)) {
                snprintf(err, errn, "SLURM_ARRAY_TASK_COUNT='%.20s' is not a whole number", c);
                return EXIT_USAGE;
            }
            count = ec;
        }
        if (m && *m && parse_count(m, &min)) {
            snprintf(err, errn, "SLURM_ARRAY_TASK_MIN='%.20s' is not a whole number", m);
            return EXIT_USAGE;
        }
    }
    if (count < 1) {
        snprintf(err, errn, "%s is set but the shard count is not: pass --shards N (%s)", var,
                 !strcmp(var, "JOB_COMPLETION_INDEX") ? "the Job's completions"
                 : !strcmp(var, "AWS_BATCH_JOB_ARRAY_INDEX") ? "the array size" : "the array's task count");
        return EXIT_USAGE;
    }
    if (id < min || id - min >= count) {
        snprintf(err, errn, "%s=%ld is outside the %ld shards%s (an array with a step, such as --array=0-9:2, is "
                 "not supported: use consecutive indices or --shard I/N)", var, id, count,
                 min ? " counted from SLURM_ARRAY_TASK_MIN" : "");
        return EXIT_USAGE;
    }
    s->index = id - min;
    s->count = count;
    snprintf(s->source, sizeof s->source, "%s", var);
    return 0;
}
