/* safetensors.h — read and write safetensors files (named tensors in one file).
 *
 * File layout (https://huggingface.co/docs/safetensors):
 *   [8 bytes]  N, little-endian u64: size of the header
 *   [N bytes]  UTF-8 JSON object: name -> {"dtype", "shape", "data_offsets": [begin, end]},
 *              plus an optional "__metadata__": {string: string}; may end in spaces
 *   [rest]     the data section; offsets are relative to its start (byte 8 + N)
 *
 * The reader maps the file read-only and validates everything at open (JSON
 * syntax, types, dtype sizes against shapes, that the tensors tile the data
 * section exactly), so accessors cannot fail afterwards.  Tensor data is a
 * pointer into the mapping, little-endian, dense row-major, possibly unaligned.
 *
 * A handle is immutable after open: any number of threads may read one.
 */
#ifndef STRIX_SAFETENSORS_H
#define STRIX_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "strix.h"

#define STRIX_ST_MAX_DIMS 8
/* Headers larger than this are refused: a real model's header is well under
 * 1 MB and a hostile size would otherwise drive the allocation. */
#define STRIX_ST_MAX_HEADER ((uint64_t)100 << 20)

/* Every standard byte-sized safetensors dtype.  Only the float ones
 * (F32, F16, BF16, F64) can be converted with strix_st_to_f32; the others are
 * recognised so that files holding, e.g., I64 num_batches_tracked parse. */
typedef enum strix_st_dtype {
    STRIX_ST_F32 = 0,
    STRIX_ST_F16,
    STRIX_ST_BF16,
    STRIX_ST_F64,
    STRIX_ST_F8_E4M3,
    STRIX_ST_F8_E5M2,
    STRIX_ST_F8_E8M0,
    STRIX_ST_I64,
    STRIX_ST_I32,
    STRIX_ST_I16,
    STRIX_ST_I8,
    STRIX_ST_U64,
    STRIX_ST_U32,
    STRIX_ST_U16,
    STRIX_ST_U8,
    STRIX_ST_BOOL,
    STRIX_ST_C64,
    STRIX_ST_DTYPE_COUNT
} strix_st_dtype;

/* "F32", "I64", ...; NULL for a value out of range. */
const char *strix_st_dtype_name(strix_st_dtype d);
/* Bytes per element; 0 for a value out of range. */
size_t strix_st_dtype_size(strix_st_dtype d);
/* 1 and *out set when name is a known dtype string, else 0. */
int strix_st_dtype_from_name(const char *name, strix_st_dtype *out);

typedef struct strix_st_file strix_st_file;

/* One tensor of an open file; everything here lives as long as the file. */
typedef struct strix_st_tensor {
    const char *name;         /* UTF-8, escapes decoded */
    strix_st_dtype dtype;
    const char *dtype_name;   /* "F32", ... */
    int ndim;                 /* 0 (a scalar) .. STRIX_ST_MAX_DIMS */
    int64_t shape[STRIX_ST_MAX_DIMS];
    size_t numel;             /* product of shape (1 for a scalar) */
    size_t nbytes;            /* numel * dtype size */
    uint64_t offset;          /* begin of data_offsets, within the data section */
    const void *data;         /* into the mapping; not aligned in general */
    const strix_st_file *file; /* the owner, for error messages */
    const char *origin;       /* where the bytes came from (a .pt storage, an ONNX initializer);
                                 NULL for a safetensors file (data_offsets say it) */
} strix_st_tensor;

typedef struct strix_st_kv {
    const char *key, *value;
} strix_st_kv;

/* Open, map and validate path.  Errors: STRIX_E_IO (missing, unreadable, not
 * a regular file, mmap failure), STRIX_E_WEIGHTS (any format problem, the
 * message names the tensor), STRIX_E_NOMEM.  *out is NULL on failure. */
strix_status strix_st_open(strix_st_file **out, const char *path, strix_error *err);
void strix_st_close(strix_st_file *f);

const char *strix_st_path(const strix_st_file *f);

/* Tensors in data-section order (by data_offsets; empty tensors sharing an
 * offset by name); NULL unless 0 <= i < count. */
size_t strix_st_count(const strix_st_file *f);
const strix_st_tensor *strix_st_get(const strix_st_file *f, size_t i);
/* By exact name (binary search, O(log n)); NULL when absent. */
const strix_st_tensor *strix_st_find(const strix_st_file *f, const char *name);
/* The i with strix_st_get(f, i) == t, in O(1) (t must belong to f): lets a
 * caller keep per-tensor flags, e.g. which tensors a model used. */
size_t strix_st_index_of(const strix_st_file *f, const strix_st_tensor *t);

/* The "__metadata__" entries, in header order; lookup is O(log n). */
size_t strix_st_metadata_count(const strix_st_file *f);
const strix_st_kv *strix_st_metadata_at(const strix_st_file *f, size_t i);
const char *strix_st_metadata_get(const strix_st_file *f, const char *key);

/* Convert t to fp32 into dst (t->numel floats).  F32, F16, BF16 are exact;
 * F64 is rounded to nearest.  Other dtypes: STRIX_E_WEIGHTS. */
strix_status strix_st_to_f32(float *dst, const strix_st_tensor *t, strix_error *err);

/* Scalar conversions (portable C, IEEE binary16 / bfloat16 bit patterns).
 * f32 -> f16 rounds to nearest even, overflows to inf, keeps NaN a NaN. */
float strix_st_f16_to_f32(uint16_t h);
float strix_st_bf16_to_f32(uint16_t b);
uint16_t strix_st_f32_to_f16(float f);

/* ------------------------------------------------------- in-memory sets
 *
 * The .pt and ONNX readers hand their tensors over as a set with the same
 * accessors, so the weight binder reads all three formats alike. */
typedef struct strix_st_source {
    const char *name;         /* copied */
    strix_st_dtype dtype;
    int ndim;
    int64_t shape[STRIX_ST_MAX_DIMS];
    const void *data;         /* numel * dtype size bytes, owned by `owner` (below) */
    const char *origin;       /* copied; may be NULL */
} strix_st_source;

/* A tensor set over t[0..n) named path.  owner (may be NULL) keeps the data
 * alive: release(owner) runs at strix_st_close, or before this returns on a
 * failure.  Errors: STRIX_E_WEIGHTS (a duplicate name, a bad dtype or rank),
 * STRIX_E_NOMEM. */
strix_status strix_st_from_memory(strix_st_file **out, const char *path, const strix_st_source *t, size_t n,
                                  void (*release)(void *), void *owner, strix_error *err);

/* ----------------------------------------------------------------- writer
 *
 * Collects tensors, then writes them in the order added.  The writer copies
 * names, shapes and metadata but only REFERENCES the float data: each data
 * pointer must stay valid until strix_st_writer_write returns (or the writer
 * is freed).  F16 tensors are converted from that fp32 data while writing.
 *
 * The header lists keys in sorted (byte-wise) order and is padded with spaces
 * so that the data section starts 8-byte aligned.  The file is written to a
 * temporary file beside path, flushed to disk and renamed into place, so path
 * never holds a partial file.
 */
typedef struct strix_st_writer strix_st_writer;

strix_status strix_st_writer_create(strix_st_writer **out, strix_error *err);
void strix_st_writer_free(strix_st_writer *w);

/* dtype: STRIX_ST_F32 or STRIX_ST_F16.  data: numel floats, dense row-major
 * (may be NULL when numel is 0).  Errors: STRIX_E_ARG (bad name: "__metadata__",
 * invalid UTF-8, NUL-free C string expected; bad dtype; ndim or a dimension out
 * of range), STRIX_E_NOMEM.  Duplicate names are reported by write. */
strix_status strix_st_writer_add(strix_st_writer *w, const char *name, strix_st_dtype dtype,
                                 int ndim, const int64_t *shape, const float *data,
                                 strix_error *err);

/* Set (or replace) one "__metadata__" entry; both must be valid UTF-8. */
strix_status strix_st_writer_set_metadata(strix_st_writer *w, const char *key,
                                          const char *value, strix_error *err);

/* Write everything to path.  overwrite == 0 refuses an existing path
 * (STRIX_E_IO).  Errors: STRIX_E_ARG (duplicate tensor name), STRIX_E_IO,
 * STRIX_E_NOMEM.  On failure nothing is left behind. The writer stays usable. */
strix_status strix_st_writer_write(strix_st_writer *w, const char *path, int overwrite,
                                   strix_error *err);

#endif
