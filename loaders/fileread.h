/* fileread.h — a whole regular file read into memory, for the parsers that
 * work on bytes (MOT text, class-name lists): the one place those files are
 * opened, so the engine itself does no file I/O. */
#ifndef STRIX_FILEREAD_H
#define STRIX_FILEREAD_H

#include <stddef.h>

#include "strix.h"

/* *out: the file's bytes plus a terminating NUL (free() it), *len the byte
 * count.  Refused with STRIX_E_IO: a path that cannot be opened ("PATH:
 * cannot open: REASON"), a directory or other non-regular file, a file larger
 * than max_bytes, a read error; STRIX_E_NOMEM when out of memory. */
strix_status strix_file_read(const char *path, size_t max_bytes, char **out, size_t *len, strix_error *err);

#endif
