/* cublas_dl.c — cuBLAS loaded at run time, linked instead of -lcublas into
 * every CUDA program (Makefile CUDA=1).
 *
 * Why: a dist binary must start on a machine without the CUDA toolkit (a
 * bare root, an edge box) and run on the CPU there; linked against
 * libcublas.so it would not even load.  And any CUDA build run on the CPU
 * would load libcublas + libcublasLt for nothing: their relocations alone
 * made `infer` ~220 MB more resident (288.5 vs 66.0 MB on one image) and slower
 * to start.  cuBLAS (~700 MB with cublasLt) is
 * too large to ship, so it comes from the system's CUDA toolkit of the same
 * major version (libcublas.so.CUBLAS_VER_MAJOR, any minor), opened on the
 * first call.  When it is missing every entry point returns
 * CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString says what to
 * install, so the engine's "create the cuBLAS handle" error is the one clear
 * line a user sees (the CPU path never calls cuBLAS).
 *
 * Each function the engine, kernels or tests call is forwarded here with its
 * exact prototype from cublas_v2.h; a new call elsewhere fails the dist link
 * with "undefined reference to cublasX" until it is added to the list. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <cublas_v2.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

/* The forwarded functions: X(return type, name, (parameters), (arguments)). */
#define CUBLAS_FUNCS(X)                                                                                            \
    X(cublasStatus_t, cublasCreate_v2, (cublasHandle_t * h), (h))                                                  \
    X(cublasStatus_t, cublasDestroy_v2, (cublasHandle_t h), (h))                                                   \
    X(cublasStatus_t, cublasSetStream_v2, (cublasHandle_t h, cudaStream_t s), (h, s))                              \
    X(cublasStatus_t, cublasGetStream_v2, (cublasHandle_t h, cudaStream_t * s), (h, s))                            \
    X(cublasStatus_t, cublasSetWorkspace_v2, (cublasHandle_t h, void *ws, size_t n), (h, ws, n))                   \
    X(cublasStatus_t, cublasSetMathMode, (cublasHandle_t h, cublasMath_t m), (h, m))                               \
    X(cublasStatus_t, cublasGemmEx,                                                                                \
      (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,       \
       const void *A, cudaDataType At, int lda, const void *B, cudaDataType Bt, int ldb, const void *beta,         \
       void *C, cudaDataType Ct, int ldc, cublasComputeType_t ct, cublasGemmAlgo_t algo),                          \
      (h, ta, tb, m, n, k, alpha, A, At, lda, B, Bt, ldb, beta, C, Ct, ldc, ct, algo))                             \
    X(cublasStatus_t, cublasGemmStridedBatchedEx,                                                                  \
      (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,       \
       const void *A, cudaDataType At, int lda, long long sA, const void *B, cudaDataType Bt, int ldb,             \
       long long sB, const void *beta, void *C, cudaDataType Ct, int ldc, long long sC, int batch,                 \
       cublasComputeType_t ct, cublasGemmAlgo_t algo),                                                             \
      (h, ta, tb, m, n, k, alpha, A, At, lda, sA, B, Bt, ldb, sB, beta, C, Ct, ldc, sC, batch, ct, algo))

/* Process-wide by nature (one shared library per process), written once
 * under pthread_once and read-only afterwards. */
static struct {
#define X(ret, name, params, args) ret(*name) params;
    CUBLAS_FUNCS(X)
#undef X
    const char *(*name_of)(cublasStatus_t);
    const char *(*string_of)(cublasStatus_t);
    int loaded;
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_open(void)
{
    void *h = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    int ok = 1;
#define X(ret, name, params, args) ok &= (*(void **)&lib.name = dlsym(h, #name)) != NULL;
    CUBLAS_FUNCS(X)
#undef X
    ok &= (*(void **)&lib.name_of = dlsym(h, "cublasGetStatusName")) != NULL;
    ok &= (*(void **)&lib.string_of = dlsym(h, "cublasGetStatusString")) != NULL;
    lib.loaded = ok;
}

static int lib_ready(void)
{
    pthread_once(&lib_once, lib_open);
    return lib.loaded;
}

#define X(ret, name, params, args)                                \
    ret name params                                               \
    {                                                             \
        if (!lib_ready()) return CUBLAS_STATUS_NOT_INITIALIZED;   \
        return lib.name args;                                     \
    }
CUBLAS_FUNCS(X)
#undef X

const char *cublasGetStatusName(cublasStatus_t s)
{
    return lib_ready() ? lib.name_of(s) : "CUBLAS_STATUS_NOT_INITIALIZED";
}

const char *cublasGetStatusString(cublasStatus_t s)
{
    if (lib_ready()) return lib.string_of(s);
    return CUBLAS_SONAME " (cuBLAS of a CUDA " STR(CUBLAS_VER_MAJOR) ".x toolkit) could not be loaded: install it "
                         "or add its lib64 directory to LD_LIBRARY_PATH, or use --device cpu";
}
