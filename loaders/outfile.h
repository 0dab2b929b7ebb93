/* outfile.h — publishing output files whole: each is written to a hidden
 * temporary file beside it and moved into place when complete, so a failed
 * or interrupted run never leaves a partial file under the final name.  The
 * temporary names carry the host and process ("DIR/.NAME.HOST.PID.N.tmp"),
 * so a later run can remove those a killed process left behind (SIGKILL, an
 * OOM kill, a crash), without touching a live run's, on this host or another
 * sharing the directory.  Used by infer, the image writer and the
 * safetensors writer (mkweights).  Errors are errno values: the callers
 * word the message. */
#ifndef STRIX_OUTFILE_H
#define STRIX_OUTFILE_H

#include <stdio.h>

/* Create a fresh temporary file beside path (O_EXCL, mode 0666 minus the
 * umask, close-on-exec), opened "wb"; *tmp receives its malloc'd name.
 * NULL with errno set on failure (*tmp untouched). */
FILE *strix_temp_open(const char *path, char **tmp);

/* Move the finished (closed) temporary file tmp to path, its data synced to
 * the disk first and the directory entry after.  overwrite == 0 refuses an
 * existing path, even one created meanwhile (link(), with a checked rename
 * on filesystems without hard links): -1 with errno EEXIST.  0 on success,
 * else -1 with errno; tmp is removed either way (not freed). */
int strix_temp_publish(const char *tmp, const char *path, int overwrite);

/* Remove from dir the temporary files of processes of this host that no
 * longer exist (kill(pid, 0) fails with ESRCH); others' files stay.
 * Returns how many were removed (0 when dir cannot be listed). */
int strix_temp_sweep(const char *dir);

#endif
