/* zip.h — the read-only subset of the ZIP format that torch.save writes: a
 * central directory of STORED (uncompressed) entries, optionally with zip64
 * sizes.  Entries are views into the caller's buffer (an mmap of the file).
 *
 * Why not libzip or minizip: torch never compresses its entries, so the
 * reader needs only the directory walk (about 150 lines); a general
 * library would bring inflate, encryption and multi-disk code into the
 * attack surface that the .pt fuzz target has to cover, plus a dependency. */
#ifndef STRIX_ZIP_H
#define STRIX_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "strix.h"

typedef struct strix_zip_entry {
    char *name;             /* NUL-terminated copy of the entry's name */
    const uint8_t *data;    /* into the buffer; size bytes */
    uint64_t size;
    uint64_t offset;        /* of the data within the file, for messages */
} strix_zip_entry;

typedef struct strix_zip {
    strix_zip_entry *entries; /* central-directory order */
    size_t n;
} strix_zip;

/* Read the directory of buf[0..len).  Every entry must be STORED, lie inside
 * the buffer and agree with its local header.  Errors (STRIX_E_WEIGHTS, one
 * line naming path): not a zip, truncated, compressed or encrypted entries,
 * multi-disk archives; STRIX_E_NOMEM. */
strix_status strix_zip_open(strix_zip *z, const uint8_t *buf, size_t len, const char *path, strix_error *err);
void strix_zip_close(strix_zip *z);

/* The entry named exactly name, or NULL. */
const strix_zip_entry *strix_zip_find(const strix_zip *z, const char *name);

#endif
