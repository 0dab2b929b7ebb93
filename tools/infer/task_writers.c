/* task_writers.c — the task fields of the JSON outputs and the task parts
 * of the YOLO txt labels (formats: task_writers.h). */
#include "task_writers.h"

#include "jsonl.h"

/* One coordinate of every point as a JSON array. */
static void json_column(FILE *f, const float *v, int n, int stride)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        strix_json_float(f, v[(size_t)i * (size_t)stride]);
    }
    fputc(']', f);
}

void strix_json_segments(FILE *f, const float *xy, int n)
{
    fputs("\"segments\": {\"x\": ", f);
    json_column(f, xy, n, 2);
    fputs(", \"y\": ", f);
    json_column(f, xy + 1, n, 2);
    fputc('}', f);
}

void strix_json_keypoints(FILE *f, const float *kpts, int nk, int ndim)
{
    fputs("\"keypoints\": {\"x\": ", f);
    json_column(f, kpts, nk, ndim);
    fputs(", \"y\": ", f);
    json_column(f, kpts + 1, nk, ndim);
    if (ndim == 3) {
        fputs(", \"visible\": ", f);
        json_column(f, kpts + 2, nk, ndim);
    }
    fputc('}', f);
}

/* "key": {"x1": .., "y1": .., ..., "y4": ..} */
static void json_corners(FILE *f, const char *key, const float corners[8])
{
    fprintf(f, "\"%s\": {", key);
    for (int k = 0; k < 4; k++) {
        fprintf(f, "%s\"x%d\": ", k ? ", " : "", k + 1);
        strix_json_float(f, corners[2 * k]);
        fprintf(f, ", \"y%d\": ", k + 1);
        strix_json_float(f, corners[2 * k + 1]);
    }
    fputc('}', f);
}

void strix_json_obb(FILE *f, const float corners[8]) { json_corners(f, "obb", corners); }

void strix_json_detection_obb(FILE *f, const float corners[8]) { json_corners(f, "detection_obb", corners); }

static const char *class_name(int c, const char *const *names, int n_names, char *fallback, size_t size)
{
    if (names && c >= 0 && c < n_names && names[c]) return names[c];
    snprintf(fallback, size, "%d", c);
    return fallback;
}

void strix_json_probs(FILE *f, const int *top, const float *probs, int k, const char *const *names, int n_names)
{
    fputs("\"probs\": [", f);
    for (int j = 0; j < k; j++) {
        char fb[24];
        fputs(j ? ", {\"name\": " : "{\"name\": ", f);
        strix_json_str(f, class_name(top[j], names, n_names, fb, sizeof fb));
        fprintf(f, ", \"class\": %d, \"confidence\": ", top[j]);
        strix_json_float(f, probs[top[j]]);
        fputc('}', f);
    }
    fputc(']', f);
}

void strix_txt_points(FILE *f, const float *xy, int n, int stride, int with_visibility, int src_w, int src_h)
{
    for (int i = 0; i < n; i++) {
        const float *p = xy + (size_t)i * (size_t)stride;
        fprintf(f, " %g %g", (double)(p[0] / (float)src_w), (double)(p[1] / (float)src_h));
        if (with_visibility) fprintf(f, " %g", (double)p[2]);
    }
}

void strix_txt_probs(FILE *f, const int *top, const float *probs, int k, const char *const *names, int n_names)
{
    for (int j = 0; j < k; j++) {
        char fb[24];
        fprintf(f, "%.2f %s\n", (double)probs[top[j]], class_name(top[j], names, n_names, fb, sizeof fb));
    }
}
