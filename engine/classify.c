/* classify.c — a classify model on images (strix_model_classify): Ultralytics'
 * ClassificationPredictor, whose preprocessing is not a letterbox but
 * classify_transforms(imgsz): torchvision's Resize(imgsz) on the PIL image
 * (the shortest side to imgsz through Pillow's 8-bit bilinear resize),
 * CenterCrop(imgsz), then /255; the network ends in its softmax.
 * Pillow's resize is written here rather than linked: the core links no
 * imaging library, and its fixed-point arithmetic is a few dozen lines that
 * must round as Pillow's does (the probabilities depend on every pixel). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "util.h"

enum { PREC = 22 }; /* Pillow's PRECISION_BITS for 8-bit images: 32 - 8 - 2 */

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc for the triangle
 * filter: out pixel i reads bounds[2i] .. + bounds[2i + 1] of the input. */
static int coeffs(int in, int out, int **bounds, int **kk, int *ksize)
{
    double scale = (double)in / out, fs = scale < 1 ? 1 : scale, support = fs;
    *ksize = (int)ceil(support) * 2 + 1;
    *bounds = malloc(sizeof **bounds * 2 * (size_t)out);
    *kk = malloc(sizeof **kk * (size_t)out * (size_t)*ksize);
    double *w = malloc(sizeof *w * (size_t)*ksize);
    if (!*bounds || !*kk || !w) {
        free(w);
        return 0;
    }
    for (int i = 0; i < out; i++) {
        double center = (i + 0.5) * scale, ww = 0;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        if (lo < 0) lo = 0;
        if (hi > in) hi = in;
        hi -= lo;
        for (int x = 0; x < hi; x++) {
            double t = fabs((x + lo - center + 0.5) / fs);
            w[x] = t < 1 ? 1 - t : 0;
            ww += w[x];
        }
        int *k = *kk + (size_t)i * *ksize;
        for (int x = 0; x < *ksize; x++) {
            double v = x < hi && ww != 0 ? w[x] / ww : 0;
            k[x] = (int)(v < 0 ? -0.5 + v * (1 << PREC) : 0.5 + v * (1 << PREC));
        }
        (*bounds)[2 * i] = lo;
        (*bounds)[2 * i + 1] = hi;
    }
    free(w);
    return 1;
}

static uint8_t clip8(int v) { return v >= (1 << PREC << 8) ? 255 : v <= 0 ? 0 : (uint8_t)(v >> PREC); }

/* One 3-channel image [h, w] (row stride) resized to [oh, ow] as Pillow
 * does: the horizontal pass (rounded to 8 bits), then the vertical one.
 * tmp: h x ow x 3. */
static int pil_resize(const uint8_t *in, int w, int h, size_t stride, uint8_t *tmp, uint8_t *out, int ow, int oh)
{
    int *hb = NULL, *hk = NULL, *vb = NULL, *vk = NULL, hs, vs;
    int ok = coeffs(w, ow, &hb, &hk, &hs) && coeffs(h, oh, &vb, &vk, &vs);
    for (int y = 0; ok && y < h; y++)
        for (int x = 0; x < ow; x++)
            for (int c = 0; c < 3; c++) {
                int ss = 1 << (PREC - 1);
                for (int k = 0; k < hb[2 * x + 1]; k++)
                    ss += in[(size_t)y * stride + (size_t)(hb[2 * x] + k) * 3 + c] * hk[(size_t)x * hs + k];
                tmp[((size_t)y * ow + x) * 3 + c] = clip8(ss);
            }
    for (int y = 0; ok && y < oh; y++)
        for (int x = 0; x < ow; x++)
            for (int c = 0; c < 3; c++) {
                int ss = 1 << (PREC - 1);
                for (int k = 0; k < vb[2 * y + 1]; k++)
                    ss += tmp[((size_t)(vb[2 * y] + k) * ow + x) * 3 + c] * vk[(size_t)y * vs + k];
                out[((size_t)y * ow + x) * 3 + c] = clip8(ss);
            }
    free(hb);
    free(hk);
    free(vb);
    free(vk);
    return ok;
}

/* classify_transforms(size) of one image into x [size, size, 3] RGB in
 * [0, 1]: the shortest side to size, the other int(size * long / short)
 * (torchvision's Resize; the image as it is when that is its size),
 * CenterCrop (zeros beyond the image).  A BGR image resizes channel by
 * channel as its RGB twin does, so only the crop swaps them.  0: out of
 * memory. */
static int classify_input(const strix_image *im, int size, float *x)
{
    int w = im->width, h = im->height, bgr = im->format == STRIX_BGR;
    size_t stride = im->stride ? (size_t)im->stride : 3 * (size_t)w;
    int rw = w <= h ? size : (int)((double)size * w / h), rh = w <= h ? (int)((double)size * h / w) : size;
    const uint8_t *rs = im->data;
    size_t rstride = stride;
    uint8_t *buf = NULL;
    if (rw != w || rh != h) {
        buf = malloc((size_t)h * rw * 3 + (size_t)rh * rw * 3);
        if (!buf || !pil_resize(im->data, w, h, stride, buf, buf + (size_t)h * rw * 3, rw, rh)) {
            free(buf);
            return 0;
        }
        rs = buf + (size_t)h * rw * 3;
        rstride = (size_t)rw * 3;
    }
    int top = (int)nearbyint((rh - size) / 2.0), left = (int)nearbyint((rw - size) / 2.0);
    for (int y = 0; y < size; y++)
        for (int xx = 0; xx < size * 3; xx++) {
            int sy = y + top, sx = xx / 3 + left, c = bgr ? 2 - xx % 3 : xx % 3;
            int v = sy >= 0 && sy < rh && sx >= 0 && sx < rw ? rs[(size_t)sy * rstride + (size_t)sx * 3 + c] : 0;
            x[(size_t)y * size * 3 + xx] = (float)v / 255.0f;
        }
    free(buf);
    return 1;
}

int strix_model_classify_size(const strix_model *m, int imgsz)
{
    if (m->input_h > 0) return m->input_h > m->input_w ? m->input_h : m->input_w;
    /* the predictor's check_imgsz: up to a multiple of AutoBackend's stride, max(model stride, 32) (a classify
     * model's own is 1), or an ONNX export's `stride` metadata */
    int mult = m->meta_stride > 0 ? m->meta_stride : 32;
    return imgsz < 1 ? imgsz : (imgsz + mult - 1) / mult * mult;
}

strix_status strix_model_classify(strix_model *m, const strix_image *images, int n, int imgsz, float *probs,
                                  strix_error *err)
{
    if (m->graph.task != STRIX_TASK_CLASSIFY)
        return strix_fail(err, STRIX_E_ARG, "strix_model_classify: a %s model (detect with strix_model_detect)",
                          strix_task_name(m->graph.task));
    int size = strix_model_classify_size(m, imgsz);
    if (n < 1 || !images || !probs) return strix_fail(err, STRIX_E_ARG, "strix_model_classify: no images");
    if (size < 32 || size > 8192) return strix_fail(err, STRIX_E_ARG, "imgsz must be in 32..8192");
    for (int i = 0; i < n; i++) {
        const strix_image *im = &images[i];
        if ((im->format != STRIX_RGB && im->format != STRIX_BGR) || im->memory == STRIX_DEVICE || !im->data ||
            im->width < 1 || im->height < 1 || (im->stride && im->stride < 3 * im->width))
            return strix_fail(err, STRIX_E_ARG, "classify: image %d: its preprocessing reads RGB or BGR pixels in host "
                              "memory (%dx%d)", i, im->width, im->height);
    }
    size_t per = (size_t)size * size * 3;
    float *x = malloc(sizeof *x * per * (size_t)n);
    if (!x) return strix_fail(err, STRIX_E_NOMEM, "classify: out of memory for %d images of %dx%d", n, size, size);
    for (int i = 0; i < n; i++)
        if (!classify_input(&images[i], size, x + per * i)) {
            free(x);
            return strix_fail(err, STRIX_E_NOMEM, "classify: out of memory resizing a %dx%d image", images[i].width,
                              images[i].height);
        }
    strix_status st = strix_model_forward(m, x, n, size, size, probs, err);
    free(x);
    return st;
}
