/* worker.c — `infer --manifest FILE`: the items of this worker's shard
 * (manifest.c, shard.c), each run as `infer` runs one INPUT, into its own
 * directory OUT/<name>, with the model loaded once.  Per item:
 *   1. take the item's lock, OUT/<name>/.strix-lock (flock, exclusive): two
 *      workers given the same shard (a retry while the first attempt still
 *      runs, a duplicated array task) never write one item at once; a
 *      worker first does the items nobody holds, then waits for the others;
 *   2. skip the item when its completion record matches (record.c);
 *   3. else clear what an unfinished attempt left, run it (outputs
 *      published one by one, atomically), then publish the record last.
 *      The record is the commit: an item directory without a matching
 *      record is unfinished, whatever files it holds; a failed or
 *      interrupted item's files are removed at once.
 * Items that fail with their own input (missing, unreachable, not
 * decodable) are listed in OUT/failures-I-of-N.jsonl and the others go on;
 * anything that would fail every item (out of memory, the device, the
 * output directory, a signal) stops the worker.  Exit codes: README "Run at
 * scale" (tools/exitcodes.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonl.h"
#include "outfile.h"
#include "worker.h"

static const char *env_get(const char *name) { return getenv(name); }

/* The NVML index of --device cuda:N (0 otherwise). */
static int gpu_index(const char *device)
{
    return device && !strncmp(device, "cuda:", 5) ? atoi(device + 5) : 0;
}

int worker_metrics(worker *w, options *o, long items)
{
    if (o->metrics_port < 0 && !o->metrics_file) return 0;
    char err[512];
    if (!(w->m = metrics_open(o->metrics_port, o->metrics_file, gpu_index(o->device), &w->sh, items, err,
                              sizeof err))) {
        fprintf(stderr, "infer: %s\n", err);
        return EXIT_USAGE;
    }
    o->metrics = w->m;
    if (o->metrics_port >= 0) fprintf(stderr, "infer: metrics on port %d\n", metrics_port(w->m));
    return 0;
}

int worker_open(worker *w, options *o, int argc, char **argv)
{
    memset(w, 0, sizeof *w);
    char err[512];
    int rc = manifest_read(o->manifest, &w->wl, err, sizeof err);
    if (!rc) rc = shard_resolve(o->shard, o->shards, env_get, &w->sh, err, sizeof err);
    if (!rc) rc = options_digest(argc, argv, w->digest, err, sizeof err);
    if (rc) {
        fprintf(stderr, "infer: %s\n", err);
        return rc;
    }
    long mine = 0;
    for (long k = 0; k < w->wl.n; k++) mine += shard_takes(&w->sh, k);
    if ((rc = worker_metrics(w, o, mine))) return rc;
    if (!o->quiet)
        printf("infer: %s: shard %ld of %ld (%s): %ld of %ld items\n", o->manifest, w->sh.index, w->sh.count,
               w->sh.source, mine, w->wl.n);
    return 0;
}

void worker_close(worker *w)
{
    metrics_close(w->m);
    work_list_free(&w->wl);
    memset(w, 0, sizeof *w);
}

/* mkdir -p; 0 or -1 with errno. */
static int make_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p) return -1;
    int rc = 0;
    for (char *s = p + 1; !rc; s++) {
        if (*s && *s != '/') continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) rc = -1;
        *s = c;
        if (!c) break;
    }
    free(p);
    return rc;
}

/* One item, as a run of infer on that one INPUT with --out DIR; an exit code. */
static int run_item(const options *base, const work_item *it, const char *dir, const detector *det,
                    const unsigned char *hl_mask)
{
    options o = *base;
    char *one[1] = {it->input};
    o.inputs = one;
    o.n_inputs = 1;
    o.out = dir;
    o.json = NULL;
    o.overwrite = 1; /* the lock is ours and no record matched: what is there is unfinished */
    inputs in;
    memset(&in, 0, sizeof in);
    strlist created = {0};
    plan_entry *plan = NULL;
    video_plan *vplan = NULL;
    char *json_path = NULL, *labels_dir = NULL;
    int rc = expand_inputs(&o, &in);
    if (!rc && (o.track || o.highlights) && !in.videos.n) {
        fprintf(stderr, "infer: %s: --%s works on videos: this item has none\n", it->input,
                o.track ? "track" : "highlights");
        rc = EXIT_USAGE;
    }
    if (!rc) rc = plan_run_outputs(&o, &in, &json_path, &plan, &vplan, &labels_dir, &created);
    if (!rc && in.images.n) rc = run_images(&o, &in.images, plan, det, json_path, now_ms());
    if ((!rc || rc == EXIT_IMAGE) && in.videos.n && !g_stop) {
        int vrc = run_videos(&o, vplan, in.videos.n, det, hl_mask);
        if (!rc || vrc == EXIT_INTERRUPTED) rc = vrc ? vrc : rc;
    }
    free_run_outputs(&in, plan, vplan, json_path, labels_dir, &created);
    return rc;
}

/* Whether an item's failure is its own (the others go on) or would fail
 * every item (the worker stops). */
static int item_own_failure(int rc) { return rc == EXIT_INPUT || rc == EXIT_IMAGE || rc == EXIT_USAGE; }

static const char *reason_of(int rc)
{
    switch (rc) {
    case EXIT_INPUT: return "the input is missing or unreachable";
    case EXIT_IMAGE: return "the input could not be decoded (not an image or video, unknown codec, no frames)";
    case EXIT_USAGE: return "the options do not apply to this input";
    default: return "the worker stopped on this item";
    }
}

/* Take the item's lock: 1 held, 0 busy (block == 0), -1 error or stopped. */
static int take_lock(int fd, int block)
{
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 1;
        if (errno != EWOULDBLOCK && errno != EINTR) return -1;
        if (!block) return 0;
        if (g_stop) return -1;
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
}

int worker_run(worker *w, const options *o, const detector *det, const unsigned char *hl_mask)
{
    const char *out = o->out;
    if (make_dirs(out) != 0) {
        fprintf(stderr, "infer: %s: cannot create the directory: %s (choose another --out)\n", out, strerror(errno));
        return EXIT_OUTPUT;
    }
    char fname[96];
    snprintf(fname, sizeof fname, "failures-%ld-of-%ld.jsonl", w->sh.index, w->sh.count);
    size_t fl = strlen(out) + sizeof fname + 2;
    char *fpath = malloc(fl), *flog = NULL;
    size_t flog_len = 0;
    FILE *fails = fpath ? open_memstream(&flog, &flog_len) : NULL;
    unsigned char *deferred = calloc((size_t)w->wl.n + 1, 1);
    if (!fails || !deferred) {
        if (fails) fclose(fails);
        free(flog);
        free(fpath);
        free(deferred);
        fprintf(stderr, "infer: out of memory\n");
        return EXIT_NOMEM;
    }
    snprintf(fpath, fl, "%s/%s", out, fname);
    long n_fail = 0, n_done = 0, n_skip = 0;
    int fatal = 0, retryable = 0;
    /* pass 0: the items nobody holds; pass 1: wait for the ones another worker held */
    for (int pass = 0; pass < 2 && !fatal; pass++)
        for (long k = 0; k < w->wl.n && !fatal; k++) {
            if (!shard_takes(&w->sh, k) || (pass == 1 && !deferred[k])) continue;
            if (g_stop) {
                fatal = EXIT_INTERRUPTED;
                break;
            }
            const work_item *it = &w->wl.v[k];
            size_t dl = strlen(out) + strlen(it->name) + 16;
            char *dir = malloc(dl), *lock = malloc(dl);
            if (!dir || !lock) {
                free(dir);
                free(lock);
                fatal = EXIT_NOMEM;
                fprintf(stderr, "infer: out of memory\n");
                break;
            }
            snprintf(dir, dl, "%s/%s", out, it->name);
            snprintf(lock, dl, "%s/.strix-lock", dir);
            int fd = make_dirs(dir) == 0 ? open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666) : -1;
            int held = fd >= 0 ? take_lock(fd, pass) : -1;
            if (held < 0) {
                if (g_stop) fatal = EXIT_INTERRUPTED;
                else {
                    fprintf(stderr, "infer: %s: cannot lock the item: %s (check the output directory)\n", lock,
                            strerror(errno));
                    fatal = EXIT_OUTPUT;
                }
            } else if (!held) deferred[k] = 1;
            else if (record_matches(dir, it->input, w->digest)) {
                n_skip++;
                metrics_item(w->m, ITEM_SKIPPED);
            } else {
                item_clear(dir); /* an unfinished attempt's files, or a stale record */
                int rc = run_item(o, it, dir, det, hl_mask);
                if (!rc) rc = record_write(dir, it->input, w->digest);
                if (rc) {
                    item_clear(dir);
                    n_fail++;
                    metrics_item(w->m, ITEM_FAILED);
                    if (!item_own_failure(rc)) fatal = rc;
                    retryable |= rc == EXIT_INPUT;
                    fprintf(fails, "{\"input\": ");
                    strix_json_str(fails, it->input);
                    fprintf(fails, ", \"output\": ");
                    strix_json_str(fails, it->name);
                    fprintf(fails, ", \"line\": %ld, \"exit\": %d, \"reason\": \"%s\"}\n", it->line, rc,
                            rc == EXIT_INTERRUPTED ? "interrupted (SIGINT/SIGTERM)" : reason_of(rc));
                } else {
                    n_done++;
                    metrics_item(w->m, ITEM_DONE);
                }
            }
            if (fd >= 0) close(fd); /* releases the lock */
            free(dir);
            free(lock);
        }
    int bad = fclose(fails) != 0;
    int rc = 0;
    if (bad) rc = EXIT_NOMEM;
    else if (n_fail) { /* the shard's failures list, published whole; none: an older list goes */
        char *tmp;
        FILE *f = strix_temp_open(fpath, &tmp);
        if (!f) {
            fprintf(stderr, "infer: %s: cannot create: %s\n", fpath, strerror(errno));
            rc = EXIT_OUTPUT;
        } else {
            fwrite(flog, 1, flog_len, f);
            rc = commit_temp(f, tmp, fpath, 1);
        }
    } else if (unlink(fpath) != 0 && errno != ENOENT) {
        fprintf(stderr, "infer: %s: cannot remove the old failures list: %s\n", fpath, strerror(errno));
        rc = EXIT_OUTPUT;
    }
    if (!o->quiet || n_fail || fatal)
        fprintf(n_fail || fatal ? stderr : stdout,
                "infer: shard %ld of %ld: %ld done, %ld already done, %ld failed%s%s%s\n", w->sh.index, w->sh.count,
                n_done, n_skip, n_fail, n_fail ? " (listed in " : "", n_fail ? fpath : "", n_fail ? ")" : "");
    free(flog);
    free(fpath);
    free(deferred);
    if (fatal) return fatal;
    if (rc) return rc;
    return n_fail ? (retryable ? EXIT_PARTIAL_RETRY : EXIT_PARTIAL) : 0;
}
