/* vmath.h — the CPU backend's vector helpers on GCC/Clang vector extensions
 * (not intrinsics, so one source serves every instruction set): the vector
 * types, fused multiply-add, broadcast, unaligned load/store, select and a
 * vectorised exp.  The includer defines VL (floats per vector: 4 SSE2/NEON,
 * 8 AVX2, 16 AVX-512) first; each ISA build of conv_kernels.h includes it,
 * and so do the baseline files whose hot loops the compiler also clones for
 * wider targets (decode.c, attention.c: target_clones).
 *
 * v_fma fuses only where the translation unit's target has a fast fmaf
 * (FP_FAST_FMAF): ISO C mode keeps a*b+c unfused otherwise, so every clone
 * of a baseline function computes the same bits. */
#ifndef STRIX_CPU_VMATH_H
#define STRIX_CPU_VMATH_H

#if !defined(__GNUC__)
#error "engine/cpu/vmath.h uses GCC/Clang vector extensions: build with gcc or clang"
#endif
#ifndef VL
#error "define VL (floats per vector) before including vmath.h"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__FMA__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(VL * sizeof(float))));
typedef uint32_t vu __attribute__((vector_size(VL * sizeof(float))));

/* Fused multiply-add where the hardware has it (ISO C mode forbids the
 * compiler from contracting a*b+c itself).  The x86 FMA widths take the
 * intrinsic: gcc turns the portable lane loop below into one vfmadd only
 * where its SLP vectoriser sees the whole loop, and inside the depthwise
 * kernel's unrolled accumulators it did not (8 scalar fmas and 8 lane
 * inserts per call). */
static inline vf v_fma(vf a, vf b, vf c)
{
#if defined(__FMA__) && VL == 8
    return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#elif defined(__AVX512F__) && VL == 16
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(FP_FAST_FMAF)
    vf r;
#pragma GCC unroll 16
    for (int l = 0; l < VL; l++) r[l] = fmaf(a[l], b[l], c[l]);
    return r;
#else
    return a * b + c;
#endif
}

/* s in every lane: a vector of ones times the scalar (which the extensions
 * broadcast; x * 1 is exact, so compilers fold the multiply away and emit
 * one broadcast; filling the lanes one by one made gcc build SSE2
 * broadcasts out of four shuffles each). */
static inline vf v_splat(float s)
{
    return ((vf){0} + 1.0f) * s;
}

static inline vf v_load(const float *p)
{
    vf r;
    memcpy(&r, p, sizeof r);
    return r;
}

static inline void v_store(float *p, vf v) { memcpy(p, &v, sizeof v); }

/* m ? a : b lane by lane (m lanes are all-ones or zero). */
static inline vf v_select(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }

/* exp(x), vectorised, relative error ~2e-7 (Cephes expf: Cody-Waite range
 * reduction x = n ln2 + r, |r| <= ln2/2, degree-7 polynomial, 2^n built in
 * the exponent bits).  x is clamped to [-87, 88] so 2^n stays a normal
 * float; that saturates exp but not SiLU, whose result there is x or ~0. */
static inline vf v_exp(vf x)
{
    x = v_select(x < v_splat(-87.0f), v_splat(-87.0f), x);
    x = v_select(x > v_splat(88.0f), v_splat(88.0f), x);
    /* round(x / ln2): adding 1.5 * 2^23 pushes the fraction bits out */
    vf fn = v_fma(x, v_splat(1.44269504088896341f), v_splat(12582912.0f)) - v_splat(12582912.0f);
    vf r = v_fma(fn, v_splat(-0.693359375f), x);
    r = v_fma(fn, v_splat(2.12194440e-4f), r);
    vf p = v_splat(1.9875691500e-4f);
    p = v_fma(p, r, v_splat(1.3981999507e-3f));
    p = v_fma(p, r, v_splat(8.3334519073e-3f));
    p = v_fma(p, r, v_splat(4.1665795894e-2f));
    p = v_fma(p, r, v_splat(1.6666665459e-1f));
    p = v_fma(p, r, v_splat(5.0000001201e-1f));
    p = v_fma(p * r, r, r + v_splat(1.0f));
    vu e = ((vu)__builtin_convertvector(fn, vi) + 127u) << 23;
    return p * (vf)e;
}

/* 1 / (1 + exp(-x)) lane by lane, the division kept (as the SiLU's). */
static inline vf v_sigmoid(vf x)
{
    return v_splat(1.0f) / (v_splat(1.0f) + v_exp(-x));
}

/* The sum and the maximum of a vector's lanes. */
static inline float v_hsum(vf v)
{
    float s = 0.0f;
    for (int l = 0; l < VL; l++) s += v[l];
    return s;
}

static inline float v_hmax(vf v)
{
    float m = v[0];
    for (int l = 1; l < VL; l++) m = v[l] > m ? v[l] : m;
    return m;
}

#endif
