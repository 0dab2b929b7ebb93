/* trace.h — NVTX ranges around the infer job's stages (decode, inference,
 * tracking, annotate, postprocess, encode), so an Nsight Systems timeline
 * shows what each thread of tools/infer/pipeline.h does.  Only in CUDA
 * builds (NVTX 3 is header-only in the CUDA toolkit), and only when the run
 * asks for them (STRIX_CUDA_NVTX=1, which also turns on the library's
 * ranges per layer); otherwise nothing. */
#ifndef STRIX_INFER_TRACE_H
#define STRIX_INFER_TRACE_H

#ifdef STRIX_WITH_CUDA
#include <nvtx3/nvToolsExt.h>
static inline void stage_push(int on, const char *name)
{
    if (on) nvtxRangePushA(name);
}
static inline void stage_pop(int on)
{
    if (on) nvtxRangePop();
}
#else
static inline void stage_push(int on, const char *name)
{
    (void)on;
    (void)name;
}
static inline void stage_pop(int on) { (void)on; }
#endif

#endif
