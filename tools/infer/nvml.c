/* nvml.c — NVML opened at run time (tools/infer/nvml.h): the handle the
 * worker's metrics read, and the NVDEC utilisation sampler of a video run. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml.h"

void nvml_open(nvml *g, int index)
{
    memset(g, 0, sizeof *g);
    if (!(g->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL))) {
        snprintf(g->why, sizeof g->why, "libnvidia-ml.so.1 not found (no NVIDIA driver on this machine)");
        return;
    }
    *(void **)&g->init = dlsym(g->lib, "nvmlInit_v2");
    *(void **)&g->shutdown = dlsym(g->lib, "nvmlShutdown");
    *(void **)&g->handle = dlsym(g->lib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&g->util = dlsym(g->lib, "nvmlDeviceGetUtilizationRates");
    *(void **)&g->mem = dlsym(g->lib, "nvmlDeviceGetMemoryInfo");
    *(void **)&g->dec = dlsym(g->lib, "nvmlDeviceGetDecoderUtilization");
    if (!g->init || !g->shutdown || !g->handle || !g->util || !g->mem || !g->dec)
        snprintf(g->why, sizeof g->why, "libnvidia-ml.so.1 lacks an NVML entry point (driver too old)");
    else if (g->init() != 0) snprintf(g->why, sizeof g->why, "nvmlInit failed (driver not loaded?)");
    else if (g->handle((unsigned)index, &g->dev) != 0) {
        g->shutdown();
        snprintf(g->why, sizeof g->why, "NVML has no GPU %d", index);
    }
    if (g->why[0]) {
        dlclose(g->lib);
        g->lib = NULL;
    }
}

void nvml_close(nvml *g)
{
    if (!g->lib) return;
    g->shutdown();
    dlclose(g->lib);
    g->lib = NULL;
}

struct nvdec_sampler {
    nvml g;
    pthread_t thread;
    int stop_fd[2];
    double sum;
    long samples;
};

static void *sampler_thread(void *arg)
{
    nvdec_sampler *s = arg;
    struct pollfd p = {s->stop_fd[0], POLLIN, 0};
    /* a read every 100 ms: NVML's own sample period for the decoder is
     * about as long, so none is counted twice for long */
    while (poll(&p, 1, 100) == 0) {
        unsigned int u, period;
        if (s->g.dec(s->g.dev, &u, &period) == 0) {
            s->sum += u;
            s->samples++;
        }
    }
    return NULL;
}

nvdec_sampler *nvdec_sampler_start(int index, char *why, size_t whyn)
{
    nvdec_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, whyn, "out of memory");
        return NULL;
    }
    nvml_open(&s->g, index);
    if (!s->g.lib) {
        snprintf(why, whyn, "%s", s->g.why);
        free(s);
        return NULL;
    }
    if (pipe(s->stop_fd)) {
        snprintf(why, whyn, "cannot make a pipe: %s", strerror(errno));
        nvml_close(&s->g);
        free(s);
        return NULL;
    }
    if (pthread_create(&s->thread, NULL, sampler_thread, s)) {
        snprintf(why, whyn, "cannot start the NVML sampling thread");
        close(s->stop_fd[0]), close(s->stop_fd[1]);
        nvml_close(&s->g);
        free(s);
        return NULL;
    }
    return s;
}

double nvdec_sampler_stop(nvdec_sampler *s)
{
    if (!s) return -1;
    ssize_t w = write(s->stop_fd[1], "x", 1);
    (void)w; /* a failed write leaves the thread to its poll: only a closed pipe stops it */
    pthread_join(s->thread, NULL);
    close(s->stop_fd[0]), close(s->stop_fd[1]);
    nvml_close(&s->g);
    double mean = s->samples ? s->sum / s->samples : -1;
    free(s);
    return mean;
}
