/* stills.c — the infer job's image stages (loaders/image.h): the
 * image-list source (each image decoded, in the list's order, on the
 * pipeline's reader thread; one that cannot be decoded keeps its place with
 * the reason) and the annotated-image sink (boxes drawn, the image written
 * through a temporary file under its planned name, on the writer thread). */
#include <string.h>

#include "annotate.h"
#include "job.h"
#include "util.h"

void still_source_open(still_source *s, const still_source_config *c)
{
    memset(s, 0, sizeof *s);
    s->c = *c;
}

int still_source_read(still_source *s, still *out)
{
    strix_image_free(&out->img);
    memset(&out->err, 0, sizeof out->err);
    if (s->pos >= s->c.paths->n || (s->c.interrupt && s->c.interrupt(s->c.interrupt_ctx))) return 0;
    out->name = s->c.paths->v[s->pos++];
    return strix_image_load(out->name, 0, &out->img, &out->err) == STRIX_OK ? 1 : -1;
}

void still_free(still *s)
{
    strix_image_free(&s->img);
}

void still_sink_init(still_sink *s, const still_sink_config *c)
{
    memset(s, 0, sizeof *s);
    s->c = *c;
}

strix_status still_sink_write(still_sink *s, const char *path, still *img, const strix_detection *d, int n,
                              const task_frame *task, strix_error *err)
{
    double t0 = now_ms();
    strix_annotate_style style;
    strix_annotate_style_init(&style);
    if (task && task_draw(task, img->img.data, img->img.width, img->img.height, 3 * img->img.width, d, n, NULL,
                          s->c.names, s->c.n_names))
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory drawing the masks", path);
    if (!task)
        strix_annotate(img->img.data, img->img.width, img->img.height, 0, d, n, s->c.names, s->c.n_names, &style);
    double t1 = now_ms();
    strix_status st = strix_image_write(path, img->img.data, img->img.width, img->img.height, 0, 0, s->c.overwrite,
                                        err);
    s->annotate_ms += t1 - t0;
    s->write_ms += now_ms() - t1;
    return st;
}
