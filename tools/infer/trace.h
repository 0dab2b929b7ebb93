/* trace.h — NVTX ranges around the infer job's stages (inference,
 * tracking, annotate, postprocess, encode; decode and preprocess, the
 * frames' demux + decode and their conversion by swscale, are marked by the
 * video reader itself, strix_video_read_options.nvtx, since both happen
 * inside one strix_video_read), so an Nsight Systems timeline shows every
 * stage of the summary line on the thread of tools/infer/pipeline.h that
 * runs it.  Only in CUDA
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
