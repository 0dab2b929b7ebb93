/* outfile.c — temporary files beside their destination, published by
 * fsync then rename or link (and an fsync of the directory), and the sweep
 * of those killed runs left (outfile.h). */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This host's name as it goes into temporary names: at most 64 bytes, '/'
 * and bytes outside printable ASCII made '_' ("localhost" if unknown). */
static void host_tag(char *h, size_t cap)
{
    if (gethostname(h, cap) != 0 || !h[0]) snprintf(h, cap, "localhost");
    h[cap - 1] = 0;
    for (char *p = h; *p; p++)
        if (*p == '/' || *p <= ' ' || *p > '~') *p = '_';
}

FILE *strix_temp_open(const char *path, char **tmp)
{
    char host[65];
    host_tag(host, sizeof host);
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t cap = strlen(path) + strlen(host) + 48;
    char *t = malloc(cap);
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    int e = EEXIST;
    for (int attempt = 0; attempt < 1000; attempt++) {
        snprintf(t, cap, "%.*s.%s.%s.%ld.%d.tmp", dirlen, path, base, host, (long)getpid(), attempt);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            e = errno;
            if (e == EEXIST) continue;
            break;
        }
        FILE *f = fdopen(fd, "wb");
        if (f) {
            *tmp = t;
            return f;
        }
        e = errno;
        close(fd);
        unlink(t);
        break;
    }
    free(t);
    errno = e;
    return NULL;
}

/* fsync the file (or directory) at path; 0, or -1 with errno.  Filesystems
 * that cannot sync a directory (EINVAL) count as synced. */
static int sync_path(const char *path, int dir)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
    if (fd < 0) return -1;
    int rc = fsync(fd) != 0 && !(dir && errno == EINVAL) ? -1 : 0, e = errno;
    close(fd);
    if (rc) errno = e;
    return rc;
}

/* The directory part of path ("." without one); malloc'd, NULL when out of memory. */
static char *dir_part(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

int strix_temp_publish(const char *tmp, const char *path, int overwrite)
{
    int rc = 0, e = 0;
    /* the data reaches the disk before the name does: after a power loss the
     * final name holds the whole file or is absent, never a torn one */
    if (sync_path(tmp, 0) != 0) {
        e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (overwrite) {
        if (rename(tmp, path) != 0) rc = -1, e = errno;
    } else if (link(tmp, path) != 0) {
        /* link() fails when path exists, so a file created meanwhile is never
         * replaced; filesystems without hard links get a checked rename */
        e = errno;
        struct stat st;
        if (e == EEXIST) rc = -1;
        else if (e != EPERM && e != ENOSYS && e != EOPNOTSUPP && e != ENOTSUP && e != EMLINK) rc = -1;
        else if (lstat(path, &st) == 0) rc = -1, e = EEXIST;
        else if (rename(tmp, path) != 0) rc = -1, e = errno;
    }
    unlink(tmp); /* after a rename: nothing there (ENOENT, harmless) */
    if (!rc) { /* the new name made durable too; best effort: the file is in
                * place already, so a failure here is no failure to publish */
        char *d = dir_part(path);
        if (d) (void)sync_path(d, 1);
        free(d);
    }
    if (rc) errno = e;
    return rc;
}

/* The process id in a temporary name of this host (".NAME.HOST.PID.N.tmp"),
 * or 0 when name is not one. */
static long temp_pid(const char *name, const char *host)
{
    size_t n = strlen(name);
    long hl = (long)strlen(host);
    if (name[0] != '.' || n < 4 || strcmp(name + n - 4, ".tmp")) return 0;
    const char *end = name + n - 4, *q = end; /* end: the '.' of ".tmp" */
    while (q > name && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q == end || q[-1] != '.') return 0;   /* N */
    const char *pid_dot = q - 1, *pid = pid_dot;
    while (pid[-1] >= '0' && pid[-1] <= '9') pid--; /* stops at name[0], a '.' */
    if (pid == pid_dot || pid_dot - pid > 9 || pid[-1] != '.') return 0; /* PID */
    const char *host_dot = pid - 1;           /* HOST is [host_dot - hl, host_dot), after ".NAME" */
    if (host_dot - name < hl + 2 || strncmp(host_dot - hl, host, (size_t)hl) || host_dot[-hl - 1] != '.') return 0;
    return strtol(pid, NULL, 10);
}

int strix_temp_sweep(const char *dir)
{
    char host[65];
    host_tag(host, sizeof host);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    int dfd = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        long pid = temp_pid(e->d_name, host);
        if (pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to ask: keep */
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            unlinkat(dfd, e->d_name, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}
