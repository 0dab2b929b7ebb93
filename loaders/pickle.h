/* pickle.h — a restricted unpickler: reads the pickle stream of a torch
 * checkpoint (data.pkl) into a tree of plain values and NEVER executes or
 * imports anything.  A GLOBAL opcode is only a name; the ones an Ultralytics
 * checkpoint holds are recognised:
 *   torch.nn.modules.*, ultralytics.nn.* classes  -> inert records (class name + BUILD state)
 *   collections.OrderedDict, builtins.set/frozenset -> dict, set; torch.Size -> tuple
 *   builtins.getattr (a bound method fuse() stores) -> an inert record
 *   torch._utils._rebuild_tensor_v2 / _rebuild_parameter(_with_state) -> tensor
 *   torch.{Float,Half,BFloat16,Double,Long,Int,Short,Char,Byte,Bool}Storage -> storage type
 *   ultralytics.utils.IterableSimpleNamespace, types.SimpleNamespace -> inert records
 * and any other name is refused with one line naming it.  Storages come from
 * persistent ids ('storage', type, key, location, numel): the caller finds
 * their bytes (archive/data/<key>). */
#ifndef STRIX_PICKLE_H
#define STRIX_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "strix.h"

#define STRIX_PK_MAX_DIMS 8

typedef enum strix_pk_type {
    STRIX_PK_NONE,
    STRIX_PK_BOOL,
    STRIX_PK_INT,
    STRIX_PK_FLOAT,
    STRIX_PK_STR,     /* UTF-8 text (str) */
    STRIX_PK_BYTES,
    STRIX_PK_TUPLE,
    STRIX_PK_LIST,
    STRIX_PK_SET,
    STRIX_PK_DICT,    /* items: key, value, key, value, ... (insertion order) */
    STRIX_PK_GLOBAL,  /* an allowed global, by name (s) */
    STRIX_PK_OBJECT,  /* an instance of an allowed class: s the class name, state its BUILD argument */
    STRIX_PK_STORAGE, /* s the storage key, dtype, numel */
    STRIX_PK_TENSOR   /* storage, offset, shape, stride */
} strix_pk_type;

/* Storage element types (torch's legacy storage classes). */
typedef enum strix_pk_dtype {
    STRIX_PK_F32, STRIX_PK_F16, STRIX_PK_BF16, STRIX_PK_F64,
    STRIX_PK_I64, STRIX_PK_I32, STRIX_PK_I16, STRIX_PK_I8, STRIX_PK_U8, STRIX_PK_BOOLEAN
} strix_pk_dtype;

typedef struct strix_pk_value strix_pk_value;
struct strix_pk_value {
    strix_pk_type type;
    int64_t i;                 /* INT, BOOL; STORAGE: numel; TENSOR: storage offset (elements) */
    double f;                  /* FLOAT */
    char *s;                   /* STR, BYTES (len bytes, NUL-terminated), GLOBAL, OBJECT class, STORAGE key */
    size_t len;
    strix_pk_value **items;    /* TUPLE, LIST, SET; DICT (2 per entry); n counts the pointers */
    size_t n, cap;
    strix_pk_value *state;     /* OBJECT: the BUILD state (NULL when none) */
    strix_pk_value *storage;   /* TENSOR */
    strix_pk_dtype dtype;      /* STORAGE */
    int ndim;                  /* TENSOR */
    int64_t shape[STRIX_PK_MAX_DIMS], stride[STRIX_PK_MAX_DIMS];
};

typedef struct strix_pickle strix_pickle; /* owns every value */

/* Unpickle buf[0..len).  *root is the top value, valid until
 * strix_pickle_free.  Errors (STRIX_E_WEIGHTS, naming path): a refused global,
 * an unknown or malformed opcode, a truncated stream, a value of the wrong
 * type for an opcode; STRIX_E_NOMEM. */
strix_status strix_pickle_load(strix_pickle **out, const strix_pk_value **root, const uint8_t *buf, size_t len,
                               const char *path, strix_error *err);
void strix_pickle_free(strix_pickle *p);

/* The value of key (a STR) in a DICT, or NULL. */
const strix_pk_value *strix_pk_get(const strix_pk_value *dict, const char *key);
/* Bytes per element of a storage dtype, and its safetensors-style name. */
size_t strix_pk_dtype_size(strix_pk_dtype d);
const char *strix_pk_dtype_name(strix_pk_dtype d);

#endif
