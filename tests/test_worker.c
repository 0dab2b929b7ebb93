/* test_worker.c — unit tests of infer's batch-worker parts
 * (tools/infer/worker.h): the manifest reader (plain lines, JSON Lines,
 * every malformed entry refused with FILE:LINE), the shard taken from each
 * engine's environment and from --shard/--shards, the assignment (random
 * sizes: every item in exactly one shard), the completion record (what
 * makes an item count as done, and what makes it run again), the options
 * digest, and the metrics (text, HTTP responder, textfile). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "tools/infer/worker.h"

volatile sig_atomic_t g_stop; /* the job's signal flag (tools/infer.c defines it in infer) */

static int parse(const char *text, work_list *wl, char *err)
{
    return manifest_parse("m.txt", text, strlen(text), wl, err, 512);
}

static void manifest_plain(void)
{
    work_list wl;
    char err[512];
    int rc = parse("# videos\r\n  cams/a.mp4  \r\n\n/data/b.MKV\nrtsp://cam/live?x=1\n.hidden.mp4\nnoext\n", &wl, err);
    TL_CHECK(rc == 0, "rc %d: %s", rc, err);
    static const char *in[] = {"cams/a.mp4", "/data/b.MKV", "rtsp://cam/live?x=1", ".hidden.mp4", "noext"};
    static const char *nm[] = {"a", "b", "live", "_hidden", "noext"};
    static const long line[] = {2, 4, 5, 6, 7};
    int ok = wl.n == 5;
    for (long i = 0; ok && i < 5; i++)
        ok = !strcmp(wl.v[i].input, in[i]) && !strcmp(wl.v[i].name, nm[i]) && wl.v[i].line == line[i] &&
             wl.v[i].index == i;
    if (!ok && wl.n > 0)
        tl_fail("items: %ld; first '%s' -> '%s' line %ld", wl.n, wl.v[0].input, wl.v[0].name, wl.v[0].line);
    else if (!ok) tl_fail("no items");
    work_list_free(&wl);

    /* a URL's last component longer than a file name may be: its first 200
     * bytes (an item's directory of 300 could not be made: the worker
     * stopped at it, the items after it undone) */
    char text[1024], want[256];
    int k = tl_int(201, 400);
    memset(want, 'v', 200);
    want[200] = 0;
    int n = snprintf(text, sizeof text, "https://cdn.example/");
    memset(text + n, 'v', (size_t)k);
    snprintf(text + n + k, sizeof text - (size_t)(n + k), "?sig=1\nb.mp4\n");
    rc = parse(text, &wl, err);
    TL_CHECK(rc == 0 && wl.n == 2, "a %d-byte name: rc %d: %s", k, rc, err);
    TL_CHECK(!strcmp(wl.v[0].name, want) && !strcmp(wl.v[1].name, "b"), "a %d-byte name became %zu bytes", k,
             strlen(wl.v[0].name));
    work_list_free(&wl);
}

static void manifest_jsonl(void)
{
    work_list wl;
    char err[512];
    int rc = parse("{\"input\": \"s3dl/x y.mp4\", \"output\": \"cam-7\"}\n{\"output\": \"o\", \"input\": \"a\\u00e9.mp4\"}\n"
                   "b.mp4\n{\"input\":\"c.mp4\"}\n",
                   &wl, err);
    TL_CHECK(rc == 0, "rc %d: %s", rc, err);
    TL_CHECK(wl.n == 4, "%ld items", wl.n);
    TL_CHECK(!strcmp(wl.v[0].input, "s3dl/x y.mp4") && !strcmp(wl.v[0].name, "cam-7"), "item 0: %s %s", wl.v[0].input,
             wl.v[0].name);
    TL_CHECK(!strcmp(wl.v[1].input, "a\xc3\xa9.mp4") && !strcmp(wl.v[1].name, "o"), "item 1: %s", wl.v[1].input);
    TL_CHECK(!strcmp(wl.v[3].name, "c") && wl.v[3].line == 4, "item 3: %s line %ld", wl.v[3].name, wl.v[3].line);
    work_list_free(&wl);
}

#define V20 "vvvvvvvvvvvvvvvvvvvv"
#define V60 V20 V20 V20
#define V200 V60 V60 V60 V20

static void manifest_errors(void)
{
    static const struct {
        const char *text, *want; /* want: the start of the message */
    } cases[] = {
        {"a.mp4\n{\"input\": \"b.mp4\",}\n", "m.txt:2: "},
        {"{\"input\": \"b.mp4\", \"camera\": 3}\n", "m.txt:1: unknown key \"camera\""},
        /* what the line names, escaped: the message stays one line, no terminal escape reaches the log */
        {"{\"in\\nput\": \"b.mp4\"}\n", "m.txt:1: unknown key \"in\\x0aput\" (an item"},
        {"{\"input\": \"b.mp4\", \"output\": \"a\\u001b[2J\"}\n", "m.txt:1: \"output\" \"a\\x1b[2J\" holds a '/' or a control"},
        {"a.mp4\n\n{\"input\": \"b.mp4\", \"output\": \"x/y\"}\n", "m.txt:3: \"output\" \"x/y\" holds a '/'"},
        {"{\"input\": \"b.mp4\", \"output\": \"..\"}\n", "m.txt:1: \"output\" \"..\" starts with '.'"},
        {"{\"output\": \"b\"}\n", "m.txt:1: the item has no \"input\""},
        {"{\"input\": 7}\n", "m.txt:1: \"input\" must be a string, found a number"},
        {"{\"input\": \"a\", \"input\": \"b\"}\n", "m.txt:1: \"input\" given twice"},
        {"{\"input\": \"a\"} x\n", "m.txt:1: expected the end of the line"},
        {"x/a.mp4\nb.mp4\ny/a.avi\n", "m.txt:3: output name \"a\" is also that of line 1"},
        {"a.mp4\n{\"input\": \"b.mp4\", \"output\": \"a\"}\n", "m.txt:2: output name \"a\" is also that of line 1"},
        {"# nothing\n\n", "m.txt: no items"},
        /* two names that differ past the first 200 bytes share their default name */
        {"http://h/" V200 "a.mp4\nhttp://h/" V200 "b.mp4\n", "m.txt:2: output name \"" V60 "\" is also that of line 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        work_list wl;
        char err[512] = "";
        int rc = parse(cases[i].text, &wl, err);
        TL_CHECK(rc == EXIT_USAGE, "case %zu: rc %d, want %d (%s)", i, rc, EXIT_USAGE, err);
        TL_CHECK(!strncmp(err, cases[i].want, strlen(cases[i].want)), "case %zu: '%s', want '%s...'", i, err,
                 cases[i].want);
        TL_CHECK(wl.n == 0 && !wl.v, "case %zu: items left", i);
    }
    work_list wl;
    char err[512];
    int rc = manifest_read("/nonexistent/m.txt", &wl, err, sizeof err);
    TL_CHECK(rc == EXIT_INPUT && strstr(err, "/nonexistent/m.txt"), "missing manifest: rc %d '%s'", rc, err);
}

/* A fake environment: NAME=VALUE pairs. */
static const char *const *g_env;
static const char *fake_env(const char *name)
{
    for (int i = 0; g_env[i]; i += 2)
        if (!strcmp(g_env[i], name)) return g_env[i + 1];
    return NULL;
}

static void shard_env(void)
{
    static const struct {
        const char *env[8];
        const char *opt;
        long shards;
        int rc;
        long index, count;
        const char *source;
    } cases[] = {
        {{"SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", NULL}, NULL, 0, 0, 3, 4, "SLURM_ARRAY_TASK_ID"},
        {{"SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "5", NULL}, NULL, 0, 0, 2, 4,
         "SLURM_ARRAY_TASK_ID"},
        {{"SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", NULL}, NULL, 0, EXIT_USAGE, 0, 0, NULL},
        {{"SLURM_ARRAY_TASK_ID", "1", NULL}, NULL, 3, 0, 1, 3, "SLURM_ARRAY_TASK_ID"},
        {{"JOB_COMPLETION_INDEX", "2", NULL}, NULL, 5, 0, 2, 5, "JOB_COMPLETION_INDEX"},
        {{"JOB_COMPLETION_INDEX", "2", NULL}, NULL, 0, EXIT_USAGE, 0, 0, NULL},
        {{"AWS_BATCH_JOB_ARRAY_INDEX", "0", NULL}, NULL, 2, 0, 0, 2, "AWS_BATCH_JOB_ARRAY_INDEX"},
        {{"AWS_BATCH_JOB_ARRAY_INDEX", "-1", NULL}, NULL, 2, EXIT_USAGE, 0, 0, NULL},
        {{"AWS_BATCH_JOB_ARRAY_INDEX", "2", NULL}, NULL, 2, EXIT_USAGE, 0, 0, NULL},
        {{"AWS_BATCH_JOB_ARRAY_INDEX", "1", NULL}, "5/6", 0, 0, 5, 6, "--shard"},
        {{NULL}, NULL, 0, 0, 0, 1, "no array index: every item"},
        {{NULL}, NULL, 4, EXIT_USAGE, 0, 0, NULL},
        {{NULL}, "6/6", 0, EXIT_USAGE, 0, 0, NULL},
        {{NULL}, "1/", 0, EXIT_USAGE, 0, 0, NULL},
        {{NULL}, "/3", 0, EXIT_USAGE, 0, 0, NULL},
        {{NULL}, "a/3", 0, EXIT_USAGE, 0, 0, NULL},
        {{NULL}, "0/0", 0, EXIT_USAGE, 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        g_env = cases[i].env;
        shard s;
        char err[512] = "";
        int rc = shard_resolve(cases[i].opt, cases[i].shards, fake_env, &s, err, sizeof err);
        TL_CHECK(rc == cases[i].rc, "case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err);
        if (rc) {
            TL_CHECK(err[0], "case %zu: no message", i);
            continue;
        }
        TL_CHECK(s.index == cases[i].index && s.count == cases[i].count && !strcmp(s.source, cases[i].source),
                 "case %zu: %ld/%ld from %s", i, s.index, s.count, s.source);
    }
}

static void shard_partition(void)
{
    for (int t = 0; t < 50; t++) {
        long n_items = tl_int(0, 500), count = tl_int(1, 40);
        int *seen = calloc((size_t)n_items + 1, sizeof *seen);
        long *size = calloc((size_t)count, sizeof *size);
        TL_CHECK(seen && size, "out of memory");
        for (long i = 0; i < count; i++) {
            shard s = {i, count, "test"};
            for (long k = 0; k < n_items; k++)
                if (shard_takes(&s, k)) {
                    seen[k]++;
                    size[i]++;
                }
        }
        long lo = n_items, hi = 0;
        int once = 1;
        for (long k = 0; k < n_items; k++) once &= seen[k] == 1;
        for (long i = 0; i < count; i++) {
            lo = size[i] < lo ? size[i] : lo;
            hi = size[i] > hi ? size[i] : hi;
        }
        free(seen);
        free(size);
        TL_CHECK(once, "%ld items over %ld shards: an item in none or several", n_items, count);
        TL_CHECK(hi - lo <= 1, "%ld items over %ld shards: sizes %ld..%ld", n_items, count, lo, hi);
    }
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static void record_roundtrip(void)
{
    char root[] = "/tmp/strix_test_worker.XXXXXX";
    TL_CHECK(mkdtemp(root), "mkdtemp failed");
    char in[256], dir[256], sub[300], out1[300], out2[300], other[256];
    snprintf(in, sizeof in, "%s/in.mp4", root);
    snprintf(dir, sizeof dir, "%s/item", root);
    snprintf(sub, sizeof sub, "%s/labels", dir);
    snprintf(out1, sizeof out1, "%s/in.jsonl", dir);
    snprintf(out2, sizeof out2, "%s/labels/in_1.txt", dir);
    snprintf(other, sizeof other, "%s/.strix-lock", dir);
    int ok = write_text(in, "video bytes") == 0 && mkdir(dir, 0777) == 0 && mkdir(sub, 0777) == 0 &&
             write_text(out1, "{}\n") == 0 && write_text(out2, "0 0.5 0.5 1 1\n") == 0 && write_text(other, "") == 0;
    const char *why = NULL;
    if (!ok) why = "cannot make the test files";
    if (!why && record_matches(dir, in, "00112233aabbccdd")) why = "a missing record matched";
    if (!why && record_write(dir, in, "00112233aabbccdd")) why = "record_write failed";
    if (!why && !record_matches(dir, in, "00112233aabbccdd")) why = "the record just written does not match";
    if (!why && record_matches(dir, in, "00112233aabbccde")) why = "another options digest matched";
    if (!why && record_matches(dir, "in.mp4", "00112233aabbccdd")) why = "another input path matched";
    size_t len;
    char *text = why ? NULL : record_render(dir, in, "00112233aabbccdd", &len);
    if (!why && (!text || !strstr(text, "\"file\": \"labels/in_1.txt\", \"size\": 14") ||
                 strstr(text, "strix-lock") || strstr(text, RECORD_NAME)))
        why = "the record does not list the outputs as expected";
    free(text);
    if (!why && write_text(out2, "0 0.5 0.5 1\n")) why = "rewrite failed";
    if (!why && record_matches(dir, in, "00112233aabbccdd")) why = "a truncated output matched";
    if (!why && (record_write(dir, in, "00112233aabbccdd") || !record_matches(dir, in, "00112233aabbccdd")))
        why = "rewritten record does not match";
    if (!why && write_text(in, "video bytes, longer")) why = "rewrite failed";
    if (!why && record_matches(dir, in, "00112233aabbccdd")) why = "a changed input matched";
    item_clear(dir);
    struct stat st;
    if (!why && (stat(out1, &st) == 0 || stat(out2, &st) == 0)) why = "item_clear left an output";
    if (!why && stat(other, &st) != 0) why = "item_clear removed the lock";
    unlink(other);
    rmdir(dir);
    unlink(in);
    rmdir(root);
    TL_CHECK(!why, "%s", why);
}

static void digest_options(void)
{
    char root[] = "/tmp/strix_test_digest.XXXXXX";
    TL_CHECK(mkdtemp(root), "mkdtemp failed");
    char w1[256], w2[256], w3[256];
    snprintf(w1, sizeof w1, "%s/w1", root);
    snprintf(w2, sizeof w2, "%s/w2", root);
    snprintf(w3, sizeof w3, "%s/w3", root);
    write_text(w1, "weights A");
    write_text(w2, "weights A");
    write_text(w3, "weights B");
    char *a[] = {"infer", "--weights", w1, "--conf", "0.3", "--manifest", "m1", "--out", "o1", "--quiet", NULL};
    char *b[] = {"infer", "--weights", w2, "--conf", "0.3", "--manifest=m2", "--shard", "1/2", "--jobs", "3", NULL};
    char *c[] = {"infer", "--weights", w3, "--conf", "0.3", NULL};
    char *d[] = {"infer", "--weights", w1, "--conf", "0.4", NULL};
    char *e[] = {"infer", "--weights", w1, "--conf", "0.3", NULL};
    char ha[17], hb[17], hc[17], hd[17], he[17], err[512];
    int rc = options_digest(10, a, ha, err, sizeof err) | options_digest(10, b, hb, err, sizeof err) |
             options_digest(5, c, hc, err, sizeof err) | options_digest(5, d, hd, err, sizeof err) |
             options_digest(5, e, he, err, sizeof err);
    unlink(w1);
    unlink(w2);
    unlink(w3);
    rmdir(root);
    TL_CHECK(!rc, "options_digest failed: %s", err);
    TL_CHECK(!strcmp(ha, he), "worker-only options changed the digest: %s vs %s", ha, he);
    TL_CHECK(!strcmp(ha, hb), "the same weights bytes under another path changed the digest");
    TL_CHECK(strcmp(ha, hc), "other weights bytes gave the same digest");
    TL_CHECK(strcmp(ha, hd), "another --conf gave the same digest");
    TL_CHECK(strlen(ha) == 16 && strlen(hb) == 16, "digest not 16 hex digits: %s", ha);
}

static void metrics_text_http_file(void)
{
    char path[] = "/tmp/strix_test_metrics.XXXXXX";
    int fd = mkstemp(path);
    TL_CHECK(fd >= 0, "mkstemp failed");
    close(fd);
    shard s = {1, 4, "--shard"};
    char err[512];
    /* a sandbox without IPv4 sockets: skip; anywhere else metrics_open must listen */
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    if (probe < 0) {
        unlink(path);
        tl_skip("no IPv4 sockets here: %s", strerror(errno));
        return;
    }
    close(probe);
    metrics *m = metrics_open(0, path, 0, &s, 5, err, sizeof err);
    if (!m) unlink(path);
    TL_CHECK(m, "metrics_open on any free port: %s", err);
    metrics_item(m, ITEM_DONE);
    metrics_item(m, ITEM_FAILED);
    metrics_frames(m, 42, 2);
    metrics_stage(m, STAGE_DETECT, 1500);
    char *t = metrics_render(m);
    const char *why = NULL;
    static const char *const want[] = {"strix_items_done_total 1\n", "strix_items_failed_total 1\n",
                                       "strix_items_queued 3\n", "strix_frames_done_total 42\n", "strix_frames_failed_total 2\n",
                                       "strix_stage_seconds_total{stage=\"detect\"} 1.500\n", "strix_shard_index 1\n",
                                       "# TYPE strix_gpu_nvml_available gauge\n"};
    for (size_t i = 0; t && i < sizeof want / sizeof want[0] && !why; i++)
        if (!strstr(t, want[i])) why = want[i];
    free(t);
    /* the HTTP responder: one GET, one answer */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)metrics_port(m));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char resp[8192];
    size_t got = 0;
    if (!why && c >= 0 && connect(c, (struct sockaddr *)&a, sizeof a) == 0) {
        const char *req = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";
        if (write(c, req, strlen(req)) == (ssize_t)strlen(req))
            for (ssize_t r; got < sizeof resp - 1 && (r = read(c, resp + got, sizeof resp - 1 - got)) > 0;)
                got += (size_t)r;
    } else if (!why) why = "cannot connect to the metrics port";
    resp[got] = 0;
    if (c >= 0) close(c);
    if (!why && (strncmp(resp, "HTTP/1.0 200 OK\r\n", 17) || !strstr(resp, "\r\n\r\n# HELP") ||
                 !strstr(resp, "strix_frames_done_total 42\n")))
        why = "the HTTP answer lacks the status line or the metrics";
    metrics_frames(m, 1, 0);
    metrics_close(m); /* writes the file a last time */
    char *file = NULL;
    FILE *f = fopen(path, "rb");
    if (f) {
        file = calloc(1, 65536);
        if (file) fread(file, 1, 65535, f);
        fclose(f);
    }
    if (!why && (!file || !strstr(file, "strix_frames_done_total 43\n"))) why = "the textfile lacks the last count";
    free(file);
    unlink(path);
    TL_CHECK(!why, "%s", why);
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(manifest_plain);
    TL_RUN(manifest_jsonl);
    TL_RUN(manifest_errors);
    TL_RUN(shard_env);
    TL_RUN(shard_partition);
    TL_RUN(record_roundtrip);
    TL_RUN(digest_options);
    TL_RUN(metrics_text_http_file);
    TL_MAIN_END();
}
