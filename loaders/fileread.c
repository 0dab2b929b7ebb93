/* fileread.c — strix_file_open: a regular file opened without a FIFO's
 * wait; strix_file_read: open, check it is a regular file of a bounded
 * size, read it whole; strix_file_map: the same checks, mapped. */
#include "fileread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int strix_file_open(const char *path, FILE **f, struct stat *st)
{
    *f = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return STRIX_FILE_UNOPENED;
    int kind = STRIX_FILE_UNOPENED;
    if (fstat(fd, st) == 0) kind = S_ISREG(st->st_mode) ? 0 : S_ISDIR(st->st_mode) ? STRIX_FILE_DIR : STRIX_FILE_OTHER;
    int flags = kind ? -1 : fcntl(fd, F_GETFL);
    if (flags != -1 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 && (*f = fdopen(fd, "rb"))) return 0;
    int e = errno;
    close(fd);
    errno = e;
    return kind ? kind : STRIX_FILE_UNOPENED;
}

strix_status strix_file_read(const char *path, size_t max_bytes, char **out, size_t *len, strix_error *err)
{
    *out = NULL;
    *len = 0;
    FILE *f;
    struct stat st;
    int kind = strix_file_open(path, &f, &st);
    if (kind == STRIX_FILE_UNOPENED) return strix_fail(err, STRIX_E_IO, "%s: cannot open: %s", path, strerror(errno));
    if (kind)
        return strix_fail(err, STRIX_E_IO, "%s: %s; give the path of a file", path,
                          kind == STRIX_FILE_DIR ? "is a directory" : "is not a regular file");
    if ((unsigned long long)st.st_size > max_bytes) {
        fclose(f);
        return strix_fail(err, STRIX_E_IO, "%s: %lld bytes, more than the %zu this reader takes", path,
                          (long long)st.st_size, max_bytes);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory reading %zu bytes", path, n);
    }
    size_t got = fread(buf, 1, n, f);
    int bad = ferror(f) || got != n;
    fclose(f);
    if (bad) {
        free(buf);
        return strix_fail(err, STRIX_E_IO, "%s: read error after %zu of %zu bytes (check the disk, or whether "
                          "the file is being written)", path, got, n);
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return STRIX_OK;
}

strix_status strix_file_map(const char *path, size_t max_bytes, const uint8_t **out, size_t *len, strix_error *err)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* mmap does not care */
    if (fd < 0) return strix_fail(err, STRIX_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int dir = S_ISDIR(st.st_mode);
        close(fd);
        return strix_fail(err, STRIX_E_IO, "%s: %s; give the path of a file", path,
                          dir ? "is a directory" : "is not a regular file");
    }
    if (st.st_size == 0) {
        close(fd);
        return strix_fail(err, STRIX_E_WEIGHTS, "%s: the file is empty", path);
    }
    if ((unsigned long long)st.st_size > max_bytes) {
        close(fd);
        return strix_fail(err, STRIX_E_IO, "%s: %lld bytes, more than the %zu this reader takes", path,
                          (long long)st.st_size, max_bytes);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED) return strix_fail(err, STRIX_E_IO, "%s: cannot map the file: %s", path, strerror(e));
    *out = m;
    *len = (size_t)st.st_size;
    return STRIX_OK;
}

void strix_file_unmap(const uint8_t *map, size_t len)
{
    if (map) munmap((void *)map, len);
}
