/* backend.c — picking a backend (see backend.h): the one place in the
 * engine that knows whether this build has the CUDA backend. */
#include "backend.h"

#include "cpu/backend.h"
#include "util.h"
#ifdef STRIX_WITH_CUDA
#include "cuda/backend.h"
#endif

int strix_backend_device_count(void)
{
#ifdef STRIX_WITH_CUDA
    return strix_cuda_device_count();
#else
    return 0;
#endif
}

strix_status strix_backend_check_device(const char *name, int d, strix_error *err)
{
#ifdef STRIX_WITH_CUDA
    int count = strix_cuda_device_count();
    if (count == 0)
        return strix_fail(err, STRIX_E_DEVICE,
                          "device '%s': no usable CUDA device (check the NVIDIA driver with nvidia-smi, or use --device cpu)",
                          name);
    if (d >= count)
        return strix_fail(err, STRIX_E_DEVICE, "device '%s' does not exist: %d CUDA device%s found", name, count,
                          count == 1 ? "" : "s");
    return STRIX_OK;
#else
    (void)d;
    return strix_fail(err, STRIX_E_UNSUPPORTED, "device '%s': this build has no CUDA backend (rebuild with CUDA=1)",
                      name);
#endif
}

strix_status strix_backend_create(strix_backend **out, const strix_program *p, const float *weights,
                                  const strix_backend_config *c, strix_error *err)
{
    /* before the build check, so that a CPU-only build's tests see it too */
    if (c->device >= 0 && p->task != STRIX_TASK_DETECT)
        return strix_fail(err, STRIX_E_UNSUPPORTED, "a %s model: the CUDA backend runs detect models only; use "
                          "--device cpu", strix_task_name(p->task));
#ifdef STRIX_WITH_CUDA
    if (c->device >= 0 && p->end2end) /* its top-k selection has no device kernel yet */
        return strix_fail(err, STRIX_E_UNSUPPORTED, "the one-to-one (NMS-free) head of YOLO26 runs on the cpu backend "
                          "only so far: use --device cpu, or its default one-to-many head (without --nms-free)");
    if (c->device >= 0) return strix_cuda_backend_create(out, p, weights, c, err);
#endif
    return strix_cpu_backend_create(out, p, weights, c, err);
}
