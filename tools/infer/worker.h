/* worker.h — infer as a worker of a batch engine (AWS Batch array jobs,
 * Kubernetes Indexed Jobs, Slurm arrays; README "Run at scale"): the work
 * list of --manifest (manifest.c), the shard this worker takes (shard.c),
 * the per-item completion records and the options digest (record.c), the
 * Prometheus metrics (metrics.c) and the loop over the shard's items
 * (worker.c).  The library reads no environment: shard.c is handed a
 * lookup function (getenv in the tool, a table in the tests). */
#ifndef STRIX_INFER_WORKER_H
#define STRIX_INFER_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"

/* One item of a manifest: the input (a path or URL) and its output name,
 * the directory OUT/<name> that holds its outputs and completion record. */
typedef struct work_item {
    char *input, *name;
    long line;  /* 1-based line of the manifest */
    long index; /* 0-based position among the manifest's items: what the shards split */
} work_item;

typedef struct work_list {
    work_item *v;
    long n, cap;
} work_list;

/* manifest.c.  A manifest: one item per line, either a bare path/URL or a
 * JSON object {"input": "PATH", "output": "NAME"} ("output" optional);
 * blank lines and lines starting with '#' are skipped.  NAME (default: the
 * input's base name without extension, other characters than [A-Za-z0-9._+-]
 * made '_') must be unique.  Returns 0 or an exit code with one line in err
 * ("FILE:LINE: what is wrong (what to do)"). */
int manifest_parse(const char *path, const char *text, size_t n, work_list *wl, char *err, size_t errn);
int manifest_read(const char *path, work_list *wl, char *err, size_t errn);
void work_list_free(work_list *wl);

/* shard.c */
typedef struct shard {
    long index, count;
    char source[64]; /* where they came from: "--shard", "SLURM_ARRAY_TASK_ID", ... */
} shard;
typedef const char *(*env_lookup)(const char *name);
/* --shard I/N (opt, or NULL) overrides everything; else the first of
 * SLURM_ARRAY_TASK_ID (count SLURM_ARRAY_TASK_COUNT or --shards; index
 * relative to SLURM_ARRAY_TASK_MIN), JOB_COMPLETION_INDEX,
 * AWS_BATCH_JOB_ARRAY_INDEX (count --shards: neither engine exports it);
 * none: the whole list (0/1).  shards: --shards N, 0 when not given.
 * Returns 0 or EXIT_USAGE with one line in err. */
int shard_resolve(const char *opt, long shards, env_lookup env, shard *s, char *err, size_t errn);
/* The assignment: item k (0-based, manifest order) belongs to shard k mod N. */
static inline int shard_takes(const shard *s, long k) { return k % s->count == s->index; }

/* record.c.  FNV-1a 64 (a change detector for records, not a security hash). */
uint64_t fnv1a(uint64_t h, const void *p, size_t n);
#define FNV1A_INIT 0xcbf29ce484222325ull
/* The digest of what decides an item's outputs: the command line without
 * the inputs and the options that do not change outputs (--manifest,
 * --shard, --shards, --out, --metrics-*, --jobs, --threads, --batch,
 * --overwrite, --quiet), with the contents of the files it names (--model,
 * --weights, --names, --tracker, --detections) instead of their times: the
 * same model copied to another node digests the same.  hex: 17 bytes.
 * Returns 0 or an exit code with one line in err. */
int options_digest(int argc, char **argv, char hex[17], char *err, size_t errn);
/* The completion record of item dir DIR: DIR/strix-done.json, naming the
 * input (path, size and modification time when it is a file), the options
 * digest and every output file in DIR with its size.  record_render
 * renders what the record of DIR would say now (malloc'd text, NULL when
 * out of memory); an item is done when its record file holds exactly that. */
#define RECORD_NAME "strix-done.json"
char *record_render(const char *dir, const char *input, const char *digest, size_t *len);
int record_matches(const char *dir, const char *input, const char *digest);
/* Publish the record (temporary file, fsync, rename); 0 or an exit code. */
int record_write(const char *dir, const char *input, const char *digest);
/* Remove the outputs of an item that did not finish (every file under DIR
 * but the hidden ones: the lock, a live run's temporaries). */
void item_clear(const char *dir);

/* metrics.c: counters the worker, the video writer threads and the image
 * run update; exposed in Prometheus' text format on a port (a thread) and
 * in a textfile-collector file rewritten atomically.  NVML (GPU
 * utilisation, memory, decoder) is opened at run time. */
typedef struct metrics metrics;
enum { STAGE_DECODE, STAGE_DETECT, STAGE_POST, STAGE_TRACK, STAGE_ANNOTATE, STAGE_WRITE, STAGE_COUNT };
enum { ITEM_DONE, ITEM_SKIPPED, ITEM_FAILED };
/* port: -1 none, 0 any free port (printed); file: NULL none.  gpu: the NVML
 * device index.  NULL with one line in err when the port cannot be bound. */
metrics *metrics_open(int port, const char *file, int gpu, const shard *s, long items, char *err, size_t errn);
int metrics_port(const metrics *m); /* the bound port, -1 none */
void metrics_item(metrics *m, int outcome);
void metrics_frames(metrics *m, long done, long failed);
void metrics_stage(metrics *m, int stage, double ms);
void metrics_dropped(metrics *m, long n);          /* frames --realtime dropped */
void metrics_latency(metrics *m, double seconds);  /* one live frame's latency */
/* Renders the exposition text (malloc'd, NUL-terminated). */
char *metrics_render(metrics *m);
/* Stops the thread and writes the file a last time (m may be NULL). */
void metrics_close(metrics *m);

/* worker.c: the shard's items of --manifest, each in OUT/<name>, skipping
 * those whose record matches; an exit code (README "Run at scale"). */
typedef struct worker {
    work_list wl;
    shard sh;
    char digest[17];
    metrics *m;
} worker;
int worker_open(worker *w, options *o, int argc, char **argv);
/* --metrics-port, --metrics-file (if given) into w->m and o->metrics, for
 * w->sh and its items (a run without --manifest: shard 0 of 1, no items);
 * an exit code (printed) */
int worker_metrics(worker *w, options *o, long items);
int worker_run(worker *w, const options *o, const detector *det, const unsigned char *hl_mask);
void worker_close(worker *w);

#endif
