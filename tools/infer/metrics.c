/* metrics.c — the worker's metrics in Prometheus' text exposition format
 * (version 0.0.4), for autoscaling and dashboards: items done, skipped and
 * failed, frames done and frames/s, the items still queued, time per
 * stage, live sources' frames dropped by --realtime and their latency (a
 * histogram), and the GPU's utilisation, memory and decoder utilisation read
 * through NVML (tools/infer/nvml.h: libnvidia-ml.so.1 opened at run time;
 * the CPU build and machines without the driver run without it, and the
 * text says so).
 * Served on --metrics-port by one thread and written to --metrics-file
 * (node_exporter's textfile collector) every few seconds and at the end,
 * each time published whole (loaders/outfile.h).
 *
 * A minimal HTTP/1.0 responder rather than libmicrohttpd: it answers every
 * request with the metrics, one short response per connection, which is
 * all a Prometheus scrape needs and keeps the tool free of another
 * library. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nvml.h"
#include "outfile.h"
#include "worker.h"

#define FILE_EVERY_MS 5000.0

/* strix_frame_latency_seconds' bucket bounds (seconds; +Inf after them) */
static const double lat_le[] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define N_LAT ((int)(sizeof lat_le / sizeof lat_le[0]))

static const char *const stage_names[STAGE_COUNT] = {"decode", "detect", "postprocess", "track", "annotate",
                                                     "write"};

struct metrics {
    pthread_mutex_t mu;
    pthread_t thread;
    int thread_started, stop_fd[2];
    int listen_fd, port;
    const char *file;
    shard sh;
    long items, outcome[3], frames, frames_failed;
    double stage_ms[STAGE_COUNT], t0;
    long dropped, lat_count, lat_bucket[N_LAT]; /* lat_bucket[i]: latencies <= lat_le[i] */
    double lat_sum;
    nvml gpu;
};

char *metrics_render(metrics *m)
{
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    pthread_mutex_lock(&m->mu);
    double secs = (now_ms() - m->t0) / 1e3;
    fprintf(f, "# HELP strix_shard_index This worker's shard of the manifest (item k goes to shard k mod count).\n"
               "# TYPE strix_shard_index gauge\nstrix_shard_index %ld\n"
               "# HELP strix_shard_count Shards the manifest is split into.\n"
               "# TYPE strix_shard_count gauge\nstrix_shard_count %ld\n",
            m->sh.index, m->sh.count);
    static const char *const what[3] = {"done", "skipped", "failed"};
    static const char *const help[3] = {"Items finished by this worker (outputs and completion record published).",
                                        "Items skipped: their completion record matched (done by an earlier run).",
                                        "Items that failed (listed in the shard's failures file)."};
    for (int i = 0; i < 3; i++)
        fprintf(f, "# HELP strix_items_%s_total %s\n# TYPE strix_items_%s_total counter\nstrix_items_%s_total %ld\n",
                what[i], help[i], what[i], what[i], m->outcome[i]);
    fprintf(f, "# HELP strix_items_queued Items of this shard not yet started (the queue depth).\n"
               "# TYPE strix_items_queued gauge\nstrix_items_queued %ld\n",
            m->items - m->outcome[0] - m->outcome[1] - m->outcome[2]);
    fprintf(f, "# HELP strix_frames_done_total Frames and images detected and written.\n"
               "# TYPE strix_frames_done_total counter\nstrix_frames_done_total %ld\n"
               "# HELP strix_frames_failed_total Images that could not be decoded (their item goes on).\n"
               "# TYPE strix_frames_failed_total counter\nstrix_frames_failed_total %ld\n"
               "# HELP strix_frames_per_second Frames done per second since the worker started.\n"
               "# TYPE strix_frames_per_second gauge\nstrix_frames_per_second %.3f\n",
            m->frames, m->frames_failed, secs > 0 ? (double)m->frames / secs : 0.0);
    fprintf(f, "# HELP strix_frames_dropped_total Frames of live sources dropped by --realtime to keep up.\n"
               "# TYPE strix_frames_dropped_total counter\nstrix_frames_dropped_total %ld\n"
               "# HELP strix_frame_latency_seconds Live sources: from a frame at the source (its pts on the "
               "local clock) to its JSON line written.\n# TYPE strix_frame_latency_seconds histogram\n",
            m->dropped);
    for (int i = 0; i < N_LAT; i++)
        fprintf(f, "strix_frame_latency_seconds_bucket{le=\"%g\"} %ld\n", lat_le[i], m->lat_bucket[i]);
    fprintf(f, "strix_frame_latency_seconds_bucket{le=\"+Inf\"} %ld\nstrix_frame_latency_seconds_sum %.3f\n"
               "strix_frame_latency_seconds_count %ld\n", m->lat_count, m->lat_sum, m->lat_count);
    fprintf(f, "# HELP strix_stage_seconds_total Time spent in each stage (stages overlap across threads).\n"
               "# TYPE strix_stage_seconds_total counter\n");
    for (int s = 0; s < STAGE_COUNT; s++)
        fprintf(f, "strix_stage_seconds_total{stage=\"%s\"} %.3f\n", stage_names[s], m->stage_ms[s] / 1e3);
    pthread_mutex_unlock(&m->mu);
    fprintf(f, "# HELP strix_gpu_nvml_available Whether NVML could be read (0: no GPU metrics follow).\n"
               "# TYPE strix_gpu_nvml_available gauge\n");
    nvml_utilization u;
    nvml_memory mem;
    unsigned int dec, period;
    if (!m->gpu.lib || m->gpu.util(m->gpu.dev, &u) || m->gpu.mem(m->gpu.dev, &mem) ||
        m->gpu.dec(m->gpu.dev, &dec, &period)) {
        fprintf(f, "# strix: NVML unavailable: %s\nstrix_gpu_nvml_available 0\n",
                m->gpu.why[0] ? m->gpu.why : "an NVML query failed");
    } else {
        fprintf(f, "strix_gpu_nvml_available 1\n"
                   "# HELP strix_gpu_utilization_ratio GPU busy fraction over NVML's last sample period.\n"
                   "# TYPE strix_gpu_utilization_ratio gauge\nstrix_gpu_utilization_ratio %.2f\n"
                   "# HELP strix_gpu_decoder_utilization_ratio NVDEC busy fraction.\n"
                   "# TYPE strix_gpu_decoder_utilization_ratio gauge\nstrix_gpu_decoder_utilization_ratio %.2f\n"
                   "# HELP strix_gpu_memory_used_bytes Device memory in use (all processes).\n"
                   "# TYPE strix_gpu_memory_used_bytes gauge\nstrix_gpu_memory_used_bytes %llu\n"
                   "# HELP strix_gpu_memory_total_bytes Device memory.\n"
                   "# TYPE strix_gpu_memory_total_bytes gauge\nstrix_gpu_memory_total_bytes %llu\n",
                u.gpu / 100.0, dec / 100.0, mem.used, mem.total);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The textfile: published whole, so the collector never reads half of it. */
static void write_file(metrics *m)
{
    char *text = metrics_render(m), *tmp = NULL;
    FILE *f = text ? strix_temp_open(m->file, &tmp) : NULL;
    if (f) {
        fputs(text, f);
        int bad = ferror(f) | (fclose(f) != 0);
        if (bad || strix_temp_publish(tmp, m->file, 1) != 0) unlink(tmp);
        free(tmp);
    }
    free(text);
}

/* One connection: read the request head (whatever it asks), answer with the metrics. */
static void serve(metrics *m, int fd)
{
    char req[2048];
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (got < sizeof req - 1 && poll(&p, 1, 2000) > 0) {
        ssize_t r = read(fd, req + got, sizeof req - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
        req[got] = 0;
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n")) break;
    }
    char *body = metrics_render(m), head[160];
    size_t n = body ? strlen(body) : 0;
    int h = snprintf(head, sizeof head, "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n", body ? "200 OK" : "500 Out of memory", n);
    /* MSG_NOSIGNAL: a scraper that hangs up early must not SIGPIPE the worker */
    if (send(fd, head, (size_t)h, MSG_NOSIGNAL) == h && n) {
        for (size_t off = 0; off < n;) {
            ssize_t w = send(fd, body + off, n - off, MSG_NOSIGNAL);
            if (w <= 0) break;
            off += (size_t)w;
        }
    }
    free(body);
}

static void *metrics_thread(void *arg)
{
    metrics *m = arg;
    double last = now_ms();
    for (;;) {
        struct pollfd p[2] = {{m->stop_fd[0], POLLIN, 0}, {m->listen_fd, POLLIN, 0}};
        int r = poll(p, m->listen_fd >= 0 ? 2 : 1, 500);
        if (r > 0 && p[0].revents) break;
        if (r > 0 && m->listen_fd >= 0 && (p[1].revents & POLLIN)) {
            int c = accept(m->listen_fd, NULL, NULL);
            if (c >= 0) {
                serve(m, c);
                close(c);
            }
        }
        if (m->file && now_ms() - last >= FILE_EVERY_MS) {
            write_file(m);
            last = now_ms();
        }
    }
    return NULL;
}

metrics *metrics_open(int port, const char *file, int gpu, const shard *s, long items, char *err, size_t errn)
{
    metrics *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errn, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    m->listen_fd = m->port = -1;
    m->stop_fd[0] = m->stop_fd[1] = -1;
    m->file = file;
    m->sh = *s;
    m->items = items;
    m->t0 = now_ms();
    nvml_open(&m->gpu, gpu);
    if (port >= 0) {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((unsigned short)port);
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        socklen_t al = sizeof a;
        int one = 1;
        m->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (m->listen_fd < 0 || setsockopt(m->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
            bind(m->listen_fd, (struct sockaddr *)&a, sizeof a) || listen(m->listen_fd, 16) ||
            getsockname(m->listen_fd, (struct sockaddr *)&a, &al)) {
            snprintf(err, errn, "--metrics-port %d: cannot listen: %s (choose another port)", port, strerror(errno));
            metrics_close(m);
            return NULL;
        }
        m->port = ntohs(a.sin_port);
    }
    if (pipe(m->stop_fd) || pthread_create(&m->thread, NULL, metrics_thread, m)) {
        snprintf(err, errn, "cannot start the metrics thread: %s", strerror(errno));
        metrics_close(m);
        return NULL;
    }
    m->thread_started = 1;
    return m;
}

int metrics_port(const metrics *m) { return m ? m->port : -1; }

void metrics_item(metrics *m, int outcome)
{
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->outcome[outcome]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_frames(metrics *m, long done, long failed)
{
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->frames += done;
    m->frames_failed += failed;
    pthread_mutex_unlock(&m->mu);
}

void metrics_stage(metrics *m, int stage, double ms)
{
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->stage_ms[stage] += ms;
    pthread_mutex_unlock(&m->mu);
}

void metrics_dropped(metrics *m, long n)
{
    if (!m || n <= 0) return;
    pthread_mutex_lock(&m->mu);
    m->dropped += n;
    pthread_mutex_unlock(&m->mu);
}

void metrics_latency(metrics *m, double seconds)
{
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < N_LAT; i++) m->lat_bucket[i] += seconds <= lat_le[i]; /* cumulative, as Prometheus' */
    m->lat_count++;
    m->lat_sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

void metrics_close(metrics *m)
{
    if (!m) return;
    if (m->thread_started) {
        ssize_t w = write(m->stop_fd[1], "x", 1);
        (void)w; /* a full pipe already wakes the thread */
        pthread_join(m->thread, NULL);
    }
    if (m->file) write_file(m);
    for (int i = 0; i < 2; i++)
        if (m->stop_fd[i] >= 0) close(m->stop_fd[i]);
    if (m->listen_fd >= 0) close(m->listen_fd);
    nvml_close(&m->gpu);
    pthread_mutex_destroy(&m->mu);
    free(m);
}
