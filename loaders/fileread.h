/* fileread.h — a whole regular file read into memory, for the parsers that
 * work on bytes (MOT text, class-name lists): the one place those files are
 * opened, so the engine itself does no file I/O. */
#ifndef STRIX_FILEREAD_H
#define STRIX_FILEREAD_H

#include <stddef.h>
#include <stdint.h>

#include "strix.h"

/* *out: the file's bytes plus a terminating NUL (free() it), *len the byte
 * count.  Refused with STRIX_E_IO: a path that cannot be opened ("PATH:
 * cannot open: REASON"), a directory or other non-regular file, a file larger
 * than max_bytes, a read error; STRIX_E_NOMEM when out of memory. */
strix_status strix_file_read(const char *path, size_t max_bytes, char **out, size_t *len, strix_error *err);

/* Map a whole regular file read-only (the .pt and ONNX readers point their
 * tensors into it).  Errors as strix_file_read, plus STRIX_E_WEIGHTS for an
 * empty file; unmap with strix_file_unmap(*out, *len). */
strix_status strix_file_map(const char *path, size_t max_bytes, const uint8_t **out, size_t *len, strix_error *err);
void strix_file_unmap(const uint8_t *map, size_t len);

#endif
