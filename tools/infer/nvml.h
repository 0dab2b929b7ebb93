/* nvml.h — NVML (libnvidia-ml.so.1) opened at run time, for the infer job:
 * the worker's metrics (metrics.c) read the GPU's utilisation, memory and
 * decoder utilisation through it, and a video run with --decode nvdec
 * samples the decoder's utilisation for its summary line (nvdec_sampler).
 * The CPU build and machines without the driver run without it: nvml_open
 * then says why in `why`. */
#ifndef STRIX_INFER_NVML_H
#define STRIX_INFER_NVML_H

#include <stddef.h>

/* The few NVML entry points used, with their stable C ABI (nvml.h is not
 * in Debian main; these signatures have not changed since NVML's _v2 API). */
typedef struct { unsigned int gpu, memory; } nvml_utilization;
typedef struct { unsigned long long total, free, used; } nvml_memory;
typedef struct nvml {
    void *lib;
    void *dev;
    int (*init)(void);
    int (*shutdown)(void);
    int (*handle)(unsigned int, void **);
    int (*util)(void *, nvml_utilization *);
    int (*mem)(void *, nvml_memory *);
    int (*dec)(void *, unsigned int *, unsigned int *);
    char why[160]; /* why NVML is absent, "" when present */
} nvml;

/* Open NVML on GPU `index` (NVML's numbering, which is CUDA's on a machine
 * with one GPU, or with CUDA_DEVICE_ORDER=PCI_BUS_ID and no
 * CUDA_VISIBLE_DEVICES); g->lib is NULL and g->why says why when absent. */
void nvml_open(nvml *g, int index);
void nvml_close(nvml *g);

/* The decoder's (NVDEC's) utilisation, read every 100 ms on a thread of its
 * own from start to stop.  start: NULL when NVML is absent or the thread
 * cannot start (why, whyn: the reason). */
typedef struct nvdec_sampler nvdec_sampler;
nvdec_sampler *nvdec_sampler_start(int index, char *why, size_t whyn);
/* Stop and free; the mean utilisation in percent over the samples, -1 when
 * there was none. */
double nvdec_sampler_stop(nvdec_sampler *s);

#endif
