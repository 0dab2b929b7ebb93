/* fuzz.h — shared by the libFuzzer targets in tests/fuzz/: hands an input
 * to library readers that only take a path, through an anonymous in-memory
 * file (memfd), so no target touches the disk. */
#ifndef STRIX_FUZZ_H
#define STRIX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* An in-memory file holding data; path is "/proc/self/fd/N" for the
 * reader.  Returns the descriptor to close afterwards; aborts when the
 * kernel refuses (the harness cannot run, which is no finding). */
static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("strix-fuzz", 0);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            perror("write to memfd");
            abort();
        }
        off += (size_t)w;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
