/* optparse.h — infer's option-value parsers (optparse.c).  Each returns 0,
 * or EXIT_USAGE after printing one line "infer: OPT: 'VALUE' is not ...
 * (see infer --help)". */
#ifndef STRIX_INFER_OPTPARSE_H
#define STRIX_INFER_OPTPARSE_H

/* Prints "infer: MESSAGE (see infer --help)"; returns EXIT_USAGE. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
int usage_error(const char *fmt, ...);
/* An integer in lo..hi. */
int parse_int(const char *opt, const char *s, int lo, int hi, int *out);
/* A number in lo..hi ("what" names the range in the message). */
int parse_number(const char *opt, const char *s, double lo, double hi, const char *what, double *out);
/* A number of seconds, 0 or more. */
int parse_seconds(const char *opt, const char *s, double *out);
int parse_duration(const char *opt, const char *s, double *out);
/* --line "x1,y1,x2,y2": two different points, in pixels. */
int parse_line(const char *s, float *l);
/* A number in 0..1. */
int parse_unit(const char *opt, const char *s, double *out);

#endif
