/* fuzz_safetensors.c — libFuzzer target: a safetensors file through
 * loaders/safetensors.c (open validates everything, its header through the
 * JSON reader, loaders/json.c), then every accessor and, for small tensors,
 * the conversion to fp32. */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>

#include "fuzz.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    strix_st_file *f;
    strix_error err;
    if (strix_st_open(&f, path, &err) == STRIX_OK) {
        size_t n = strix_st_count(f);
        for (size_t i = 0; i < n; i++) {
            const strix_st_tensor *t = strix_st_get(f, i);
            if (strix_st_find(f, t->name) != t || strix_st_index_of(f, t) != i) abort();
            if (t->numel <= 4096) {
                float buf[4096];
                strix_st_to_f32(buf, t, &err);
            }
        }
        for (size_t i = 0; i < strix_st_metadata_count(f); i++) {
            const strix_st_kv *kv = strix_st_metadata_at(f, i);
            const char *v = strix_st_metadata_get(f, kv->key);
            if (!v || strcmp(v, kv->value) != 0) abort();
        }
        strix_st_close(f);
    }
    close(fd);
    return 0;
}
