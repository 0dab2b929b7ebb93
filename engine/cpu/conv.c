/* conv.c — strix_cpu_conv2d: picks the convolution build of one instruction
 * set (engine/cpu/conv_<isa>.c, see conv_isa.h) and the CPU feature tests
 * behind that choice.
 *
 * The choice is made by the caller (the CPU backend keeps the one it made at
 * load, engine/cpu/backend.c), not cached here: the library holds no mutable
 * global state.  The feature tests are cheap (libgcc/compiler-rt read cpuid
 * once at start-up; getauxval reads the auxiliary vector). */
#include <assert.h>
#include <stddef.h>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "conv_isa.h"
#include "ops.h"

int strix_cpu_isa_supported(strix_cpu_isa isa)
{
    switch (isa) {
    case STRIX_CPU_ISA_AUTO:
    case STRIX_CPU_ISA_GENERIC: return 1;
#if defined(__x86_64__)
    /* __builtin_cpu_supports also checks that the OS saves the ymm/zmm state */
    case STRIX_CPU_ISA_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case STRIX_CPU_ISA_AVX512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
#if defined(__aarch64__)
    case STRIX_CPU_ISA_NEON:
#if defined(__linux__)
        return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
#else
        return 1; /* Advanced SIMD is part of the aarch64 baseline */
#endif
#endif
    default: return 0;
    }
}

const char *strix_cpu_isa_name(strix_cpu_isa isa)
{
    switch (isa) {
    case STRIX_CPU_ISA_AUTO: return "auto";
    case STRIX_CPU_ISA_GENERIC: return "generic";
    case STRIX_CPU_ISA_AVX2: return "avx2";
    case STRIX_CPU_ISA_AVX512: return "avx512";
    case STRIX_CPU_ISA_NEON: return "neon";
    }
    return NULL;
}

strix_cpu_isa strix_cpu_isa_best(void)
{
#ifndef STRIX_SANITIZED
    static const strix_cpu_isa widest_first[] = {STRIX_CPU_ISA_AVX512, STRIX_CPU_ISA_AVX2,
                                                 STRIX_CPU_ISA_NEON};
    for (size_t i = 0; i < sizeof widest_first / sizeof widest_first[0]; i++)
        if (strix_cpu_isa_supported(widest_first[i])) return widest_first[i];
#endif
    return STRIX_CPU_ISA_GENERIC;
}

size_t strix_cpu_conv2d_workspace(const strix_view *out, const strix_view *in,
                                  const strix_conv_params *p, int threads)
{
    size_t most = strix_cpu_conv2d_workspace_generic(out, in, p, threads), b = 0;
#if defined(__x86_64__)
    /* only the instruction sets this CPU has: each sizing function is
     * compiled for its set, and GCC vectorises their memsets with it (zmm
     * stores in the AVX-512 ones, SIGILL on an AVX2-only CPU); a set the CPU
     * lacks is never picked, so its workspace is never needed */
    if (strix_cpu_isa_supported(STRIX_CPU_ISA_AVX2)) {
        b = strix_cpu_conv2d_workspace_avx2(out, in, p, threads);
        if (b > most) most = b;
    }
    if (strix_cpu_isa_supported(STRIX_CPU_ISA_AVX512)) {
        b = strix_cpu_conv2d_workspace_avx512(out, in, p, threads);
        if (b > most) most = b;
        b = strix_cpu_conv2d_workspace_avx512_n16(out, in, p, threads);
        if (b > most) most = b;
    }
#endif
#if defined(__aarch64__)
    b = strix_cpu_conv2d_workspace_neon(out, in, p, threads);
    if (b > most) most = b;
#endif
    (void)b;
    return most;
}

/* The builds behind an instruction set: AVX-512 has two, by the layer's
 * output channels per group (ng). */
typedef enum build {
    BUILD_GENERIC,
    BUILD_AVX2,
    BUILD_AVX512,
    BUILD_AVX512_N16,
    BUILD_NEON,
} build;

static build pick(strix_cpu_isa isa, int cout, const strix_conv_params *p)
{
    isa = (strix_cpu_isa)(isa & ~STRIX_CPU_CONV_EXACT);
    if (isa == STRIX_CPU_ISA_AUTO) isa = strix_cpu_isa_best();
    assert(strix_cpu_isa_supported(isa));
    int ng = cout / p->groups;
    switch (isa) {
    case STRIX_CPU_ISA_AVX2: return BUILD_AVX2;
    /* 16-channel layers would pad the 32-wide block to twice their work */
    case STRIX_CPU_ISA_AVX512: return ng % 32 && ng <= 16 ? BUILD_AVX512_N16 : BUILD_AVX512;
    case STRIX_CPU_ISA_NEON: return BUILD_NEON;
    default: return BUILD_GENERIC;
    }
}

/* Whether a call may take a build's Winograd path (STRIX_CPU_CONV_EXACT). */
static int wino_allowed(strix_cpu_isa isa) { return !(isa & STRIX_CPU_CONV_EXACT); }

/* One switch for the three per-build entry points. */
#if defined(__x86_64__)
#define ISA_CASES(call)                                                                            \
    case BUILD_AVX2: call(avx2); break;                                                            \
    case BUILD_AVX512: call(avx512); break;                                                        \
    case BUILD_AVX512_N16: call(avx512_n16); break;
#elif defined(__aarch64__)
#define ISA_CASES(call) case BUILD_NEON: call(neon); break;
#else
#define ISA_CASES(call)
#endif

size_t strix_cpu_conv2d_packed_floats(strix_cpu_isa isa, int cin, int cout, const strix_conv_params *p)
{
    size_t n = 0;
#define PACKED_FLOATS(s) n = strix_cpu_conv2d_packed_floats_##s(cin, cout, p, wino_allowed(isa))
    switch (pick(isa, cout, p)) {
        ISA_CASES(PACKED_FLOATS)
    default: PACKED_FLOATS(generic); break;
    }
    return n;
}

int strix_cpu_conv2d_winograd(strix_cpu_isa isa, int cin, int cout, const strix_conv_params *p)
{
    /* a build packs the transformed weights exactly when it may run them */
    return wino_allowed(isa) &&
           strix_cpu_conv2d_packed_floats(isa, cin, cout, p) >
               strix_cpu_conv2d_packed_floats((strix_cpu_isa)(isa | STRIX_CPU_CONV_EXACT), cin, cout, p);
}

void strix_cpu_conv2d_pack(strix_cpu_isa isa, float *packed, const float *w, int cin, int cout,
                           const strix_conv_params *p)
{
#define PACK(s) strix_cpu_conv2d_pack_##s(packed, w, cin, cout, p, wino_allowed(isa))
    switch (pick(isa, cout, p)) {
        ISA_CASES(PACK)
    default: PACK(generic); break;
    }
}

static void conv(strix_cpu_isa isa, const strix_view *out, const strix_view *in, const float *w,
                 const float *packed, const float *bias, const strix_view *residual,
                 const strix_conv_params *p, void *workspace, strix_cpu_team *team)
{
#define CONV(s) strix_cpu_conv2d_##s(out, in, w, packed, bias, residual, p, wino_allowed(isa), workspace, team)
    switch (pick(isa, out->c, p)) {
        ISA_CASES(CONV)
    default: CONV(generic); break;
    }
}

void strix_cpu_conv2d(strix_cpu_isa isa, const strix_view *out, const strix_view *in, const float *w,
                      const float *bias, const strix_view *residual,
                      const strix_conv_params *p, void *workspace, strix_cpu_team *team)
{
    conv(isa, out, in, w, NULL, bias, residual, p, workspace, team);
}

void strix_cpu_conv_epilogue(strix_cpu_isa isa, float *out, size_t ldo, const float *acc, size_t lda,
                             const float *bias, const float *res, size_t ldr, int rows, int n, strix_act act)
{
    /* by build, not by layer: the epilogue's vectors do not depend on NR */
    strix_conv_params any = {1, 1, 1, 1, 0, 0, 1, 1, 1, act};
#define EPILOGUE(s) strix_cpu_conv_epilogue_##s(out, ldo, acc, lda, bias, res, ldr, rows, n, act)
    switch (pick(isa, 32, &any)) {
        ISA_CASES(EPILOGUE)
    default: EPILOGUE(generic); break;
    }
}

void strix_cpu_conv2d_packed(strix_cpu_isa isa, const strix_view *out, const strix_view *in,
                             const float *packed, const float *bias, const strix_view *residual,
                             const strix_conv_params *p, void *workspace, strix_cpu_team *team)
{
    conv(isa, out, in, NULL, packed, bias, residual, p, workspace, team);
}
