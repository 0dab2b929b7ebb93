/* yamldir.h — where the tools find strix's family YAMLs (weights/yolov8.yaml,
 * ...), which an Ultralytics ONNX export given without --model picks from its
 * metadata: the weights/ folder beside the executable's folder, as the
 * source tree (build/infer, weights/) and the dist tarball (bin/infer,
 * weights/) both lay them out, or one level further up (the sanitizer
 * build's build/asan/infer), or share/strix/ beside it, where make install
 * puts them (PREFIX/bin/infer, PREFIX/share/strix/).  Header-only: each tool
 * is one .c file. */
#ifndef STRIX_YAMLDIR_H
#define STRIX_YAMLDIR_H

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder's absolute path in buf[PATH_MAX], or NULL when there is none:
 * weights/ or share/strix/ in the parent of the executable's folder, else
 * weights/ one level up (the sanitizer build's build/asan/infer). */
static inline const char *strix_tool_yaml_dir(char *buf)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1); /* symbolic links resolved */
    if (n <= 0) return NULL;
    exe[n] = 0;
    for (int up = 0; up < 3; up++) { /* drop the file name, then its folder, then that folder's parent */
        char *slash = strrchr(exe, '/');
        if (!slash) return NULL;
        *slash = 0;
        struct stat st;
        snprintf(buf, PATH_MAX, "%s/weights", exe);
        if (up && stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return buf;
        snprintf(buf, PATH_MAX, "%s/share/strix", exe);
        if (up == 1 && stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return buf;
    }
    return NULL;
}

#endif
