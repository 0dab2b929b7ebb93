/* util.c — error reporting shared by the library, and status names. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>

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
