/* util.c — error reporting shared by the library, status names, aligned scratch buffers. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

strix_status strix_fail(strix_error *err, strix_status st, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
}

void strix_error_clear(strix_error *err)
{
    if (err) {
        err->status = STRIX_OK;
        err->message[0] = 0;
    }
}

const char *strix_status_name(strix_status s)
{
    switch (s) {
    case STRIX_OK: return "ok";
    case STRIX_E_ARG: return "invalid argument";
    case STRIX_E_IO: return "i/o error";
    case STRIX_E_MODEL: return "bad model file";
    case STRIX_E_WEIGHTS: return "bad weights file";
    case STRIX_E_IMAGE: return "bad image";
    case STRIX_E_NOMEM: return "out of memory";
    case STRIX_E_UNSUPPORTED: return "unsupported";
    case STRIX_E_DEVICE: return "device error";
    case STRIX_E_INTERNAL: return "internal error";
    }
    return "unknown status";
}

double strix_typed_double(float f)
{
    char buf[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f) return strtod(buf, NULL);
    }
    return f;
}

int strix_reserve(void **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 1;
    void *p = NULL;
    if (posix_memalign(&p, 64, need ? need : 64)) return 0;
    free(*buf);
    *buf = p;
    *cap = need;
    return 1;
}
