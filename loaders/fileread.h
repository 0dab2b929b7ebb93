/* fileread.h — a whole regular file read into memory, for the parsers that
 * work on bytes (MOT text, class-name lists): the one place those files are
 * opened, so the engine itself does no file I/O. */
#ifndef STRIX_FILEREAD_H
#define STRIX_FILEREAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "strix.h"

/* fopen(path, "rb") of a regular file without the wait of a FIFO: open(2)
 * of a FIFO no one writes blocks, and a signal whose handler has SA_RESTART
 * does not end it, so the path is opened non-blocking and kept only when it
 * is a regular file (blocking again).  0: *f open, *st its stat; otherwise *f NULL and
 * STRIX_FILE_UNOPENED (errno says why), STRIX_FILE_DIR (a directory) or
 * STRIX_FILE_OTHER (a FIFO, device or socket). */
enum { STRIX_FILE_UNOPENED = -1, STRIX_FILE_DIR = 1, STRIX_FILE_OTHER = 2 };
int strix_file_open(const char *path, FILE **f, struct stat *st);

/* *out: the file's bytes plus a terminating NUL (free() it), *len the byte
 * count.  Refused with STRIX_E_IO: a path that cannot be opened ("PATH:
 * cannot open: REASON"), a directory or other non-regular file, a file larger
 * than max_bytes, a read error; STRIX_E_NOMEM when out of memory. */
strix_status strix_file_read(const char *path, size_t max_bytes, char **out, size_t *len, strix_error *err);

/* Map a whole regular file read-only (the .pt and ONNX readers point their
 * tensors into it; opened non-blocking, as strix_file_open).  Errors as
 * strix_file_read, plus STRIX_E_WEIGHTS for an empty file; unmap with
 * strix_file_unmap(*out, *len). */
strix_status strix_file_map(const char *path, size_t max_bytes, const uint8_t **out, size_t *len, strix_error *err);
void strix_file_unmap(const uint8_t *map, size_t len);

#endif
