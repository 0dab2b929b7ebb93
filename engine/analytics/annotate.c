/* annotate.c — boxes and "name score" labels drawn onto RGB frames (and
 * the tasks' oriented boxes, translucent masks, keypoints and skeletons,
 * top-5 text, as Ultralytics' Results.plot draws them), laid
 * out as Ultralytics' Annotator (cv2 path) does: line width
 * max(round((h + w + 3) / 2 * 0.003), 2) (the sum of the image shape, channels
 * included), the 20-colour palette by class id, a filled label box above
 * the box (inside it when there is no room above; shifted left when it
 * would leave the right edge), dark text on the light palette colours, and
 * the lowest-scoring detection drawn first so the best ends on top.
 *
 * Text uses an embedded 5x9 bitmap font (95 printable ASCII glyphs, 7 rows
 * above the baseline, 2 for descenders) scaled by whole pixels.  It is ours
 * rather than stb_easy_font because stb_easy_font keeps mutable static state
 * (its spacing setting) and non-const tables, which the library's rules
 * forbid, and emits quads we would rasterise anyway; a bitmap is simpler to
 * clip exactly.  Glyph rows are bytes, bit 4 the leftmost column.
 *
 * Every write goes through fill(), which clips to the frame: nothing is
 * ever written outside [0, width) x [0, height).  Pixels: rows of `stride`
 * bytes, 3 bytes per pixel, RGB.
 */
#include "annotate.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLYPH_W 5
#define GLYPH_H 9
#define GLYPH_ADVANCE 6 /* one column of spacing */
#define FIRST_GLYPH 32
#define LAST_GLYPH 126

static const uint8_t font[LAST_GLYPH - FIRST_GLYPH + 1][GLYPH_H] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ' ' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04, 0x00, 0x00}, /* '!' */
    {0x0a, 0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '"' */
    {0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a, 0x00, 0x00}, /* '#' */
    {0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04, 0x00, 0x00}, /* '$' */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03, 0x00, 0x00}, /* '%' */
    {0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d, 0x00, 0x00}, /* '&' */
    {0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* "'" */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02, 0x00, 0x00}, /* '(' */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08, 0x00, 0x00}, /* ')' */
    {0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00, 0x00, 0x00}, /* '*' */
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00, 0x00, 0x00}, /* '+' */
    {0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08, 0x00, 0x00}, /* ',' */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '-' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c, 0x00, 0x00}, /* '.' */
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00, 0x00, 0x00}, /* '/' */
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e, 0x00, 0x00}, /* '0' */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e, 0x00, 0x00}, /* '1' */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f, 0x00, 0x00}, /* '2' */
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e, 0x00, 0x00}, /* '3' */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02, 0x00, 0x00}, /* '4' */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e, 0x00, 0x00}, /* '5' */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e, 0x00, 0x00}, /* '6' */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08, 0x00, 0x00}, /* '7' */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e, 0x00, 0x00}, /* '8' */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c, 0x00, 0x00}, /* '9' */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00, 0x00, 0x00}, /* ':' */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08, 0x00, 0x00}, /* ';' */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02, 0x00, 0x00}, /* '<' */
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x00}, /* '=' */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08, 0x00, 0x00}, /* '>' */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04, 0x00, 0x00}, /* '?' */
    {0x0e, 0x11, 0x01, 0x0d, 0x15, 0x15, 0x0e, 0x00, 0x00}, /* '@' */
    {0x0e, 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x00, 0x00}, /* 'A' */
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e, 0x00, 0x00}, /* 'B' */
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e, 0x00, 0x00}, /* 'C' */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c, 0x00, 0x00}, /* 'D' */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f, 0x00, 0x00}, /* 'E' */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10, 0x00, 0x00}, /* 'F' */
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f, 0x00, 0x00}, /* 'G' */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11, 0x00, 0x00}, /* 'H' */
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e, 0x00, 0x00}, /* 'I' */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c, 0x00, 0x00}, /* 'J' */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11, 0x00, 0x00}, /* 'K' */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f, 0x00, 0x00}, /* 'L' */
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11, 0x00, 0x00}, /* 'M' */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x00, 0x00}, /* 'N' */
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e, 0x00, 0x00}, /* 'O' */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10, 0x00, 0x00}, /* 'P' */
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d, 0x00, 0x00}, /* 'Q' */
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11, 0x00, 0x00}, /* 'R' */
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e, 0x00, 0x00}, /* 'S' */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x00}, /* 'T' */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e, 0x00, 0x00}, /* 'U' */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04, 0x00, 0x00}, /* 'V' */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a, 0x00, 0x00}, /* 'W' */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11, 0x00, 0x00}, /* 'X' */
    {0x11, 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x00, 0x00}, /* 'Y' */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f, 0x00, 0x00}, /* 'Z' */
    {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e, 0x00, 0x00}, /* '[' */
    {0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00, 0x00, 0x00}, /* '\\' */
    {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e, 0x00, 0x00}, /* ']' */
    {0x04, 0x0a, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '^' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00}, /* '_' */
    {0x08, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '`' */
    {0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f, 0x00, 0x00}, /* 'a' */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e, 0x00, 0x00}, /* 'b' */
    {0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e, 0x00, 0x00}, /* 'c' */
    {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f, 0x00, 0x00}, /* 'd' */
    {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e, 0x00, 0x00}, /* 'e' */
    {0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08, 0x00, 0x00}, /* 'f' */
    {0x00, 0x00, 0x0f, 0x11, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* 'g' */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00, 0x00}, /* 'h' */
    {0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e, 0x00, 0x00}, /* 'i' */
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}, /* 'j' */
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12, 0x00, 0x00}, /* 'k' */
    {0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e, 0x00, 0x00}, /* 'l' */
    {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11, 0x00, 0x00}, /* 'm' */
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00, 0x00}, /* 'n' */
    {0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e, 0x00, 0x00}, /* 'o' */
    {0x00, 0x00, 0x1e, 0x11, 0x11, 0x11, 0x1e, 0x10, 0x10}, /* 'p' */
    {0x00, 0x00, 0x0f, 0x11, 0x11, 0x11, 0x0f, 0x01, 0x01}, /* 'q' */
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10, 0x00, 0x00}, /* 'r' */
    {0x00, 0x00, 0x0f, 0x10, 0x0e, 0x01, 0x1e, 0x00, 0x00}, /* 's' */
    {0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06, 0x00, 0x00}, /* 't' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d, 0x00, 0x00}, /* 'u' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04, 0x00, 0x00}, /* 'v' */
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a, 0x00, 0x00}, /* 'w' */
    {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x00, 0x00}, /* 'x' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* 'y' */
    {0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f, 0x00, 0x00}, /* 'z' */
    {0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02, 0x00, 0x00}, /* '{' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x00}, /* '|' */
    {0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08, 0x00, 0x00}, /* '}' */
    {0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00, 0x00, 0x00}, /* '~' */
};

/* Ultralytics' palette (ultralytics/utils/plotting.py Colors), RGB. */
static const uint8_t palette[20][3] = {
    {4, 42, 255},   {11, 219, 235}, {243, 243, 243}, {0, 223, 183},  {17, 31, 104},
    {255, 111, 221}, {255, 68, 79},  {204, 237, 0},   {0, 243, 68},   {189, 0, 255},
    {0, 180, 255},  {221, 0, 186},  {0, 255, 255},   {38, 192, 0},   {1, 255, 179},
    {125, 36, 255}, {123, 0, 104},  {255, 27, 108},  {252, 109, 47}, {162, 255, 11},
};

/* Palette entries Ultralytics labels with dark text (its "dark_colors"
 * set, which lists the light backgrounds); the dark text colour is its
 * (104, 31, 17) BGR. */
static const uint8_t dark_text_on[20] = {0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1};
static const uint8_t dark_text[3] = {17, 31, 104};
static const uint8_t white_text[3] = {255, 255, 255};

void strix_annotate_style_init(strix_annotate_style *s)
{
    s->line_width = 0;
    s->show_score = 1;
    s->show_label = 1;
    s->track_ids = NULL;
}

static int palette_index(int class_id)
{
    int i = class_id % 20;
    return i < 0 ? i + 20 : i;
}

void strix_class_color(int class_id, uint8_t rgb[3])
{
    memcpy(rgb, palette[palette_index(class_id)], 3);
}

/* Fill [x0, x1) x [y0, y1), clipped to the frame. */
static void fill(uint8_t *rgb, int width, int height, int stride, int x0, int y0, int x1, int y1,
                 const uint8_t c[3])
{
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > width) x1 = width;
    if (y1 > height) y1 = height;
    for (int y = y0; y < y1; y++) {
        uint8_t *p = rgb + (size_t)y * stride + (size_t)x0 * 3;
        for (int x = x0; x < x1; x++, p += 3) {
            p[0] = c[0];
            p[1] = c[1];
            p[2] = c[2];
        }
    }
}

/* The glyph of the next character of s, advancing s: a UTF-8 sequence or
 * any byte outside printable ASCII shows as one '?'. */
static const uint8_t *next_glyph(const char **s)
{
    unsigned char ch = (unsigned char)**s;
    (*s)++;
    if (ch >= 0x80)
        while ((**s & 0xC0) == 0x80) (*s)++; /* continuation bytes */
    if (ch < FIRST_GLYPH || ch > LAST_GLYPH) ch = '?';
    return font[ch - FIRST_GLYPH];
}

static int glyph_count(const char *text)
{
    int n = 0;
    while (*text) {
        next_glyph(&text);
        n++;
    }
    return n;
}

int strix_text_width(const char *text, int scale)
{
    if (scale < 1) scale = 1;
    int n = glyph_count(text);
    return n ? (n * GLYPH_ADVANCE - (GLYPH_ADVANCE - GLYPH_W)) * scale : 0;
}

int strix_text_height(int scale) { return GLYPH_H * (scale < 1 ? 1 : scale); }

void strix_draw_text(uint8_t *rgb, int width, int height, int stride, int x, int y,
                     const char *text, int scale, const uint8_t fg[3], const uint8_t *bg)
{
    if (!rgb || width <= 0 || height <= 0 || !text) return;
    if (stride == 0) stride = width * 3;
    if (scale < 1) scale = 1;
    if (bg)
        fill(rgb, width, height, stride, x, y, x + strix_text_width(text, scale),
             y + strix_text_height(scale), bg);
    for (int gx = x; *text && gx < width; gx += GLYPH_ADVANCE * scale) {
        const uint8_t *g = next_glyph(&text);
        for (int r = 0; r < GLYPH_H; r++)
            for (int c = 0; c < GLYPH_W; c++)
                if (g[r] >> (GLYPH_W - 1 - c) & 1)
                    fill(rgb, width, height, stride, gx + c * scale, y + r * scale,
                         gx + (c + 1) * scale, y + (r + 1) * scale, fg);
    }
}

/* A float box coordinate as Python's int() truncates it, kept in a range
 * where the drawing arithmetic cannot overflow (NaN becomes 0). */
static int to_px(float v)
{
    if (!(v == v)) return 0;
    if (v < -1e6f) return -1000000;
    if (v > 1e6f) return 1000000;
    return (int)v;
}

static int line_width_for(int width, int height)
{
    int lw = (int)nearbyint((double)(width + height + 3) / 2 * 0.003);
    return lw < 2 ? 2 : lw;
}

/* A rectangle outline of thickness lw centred on the edges, as cv2.rectangle draws it. */
static void outline(uint8_t *rgb, int width, int height, int stride, int x1, int y1, int x2, int y2,
                    int lw, const uint8_t c[3])
{
    int a = lw / 2;
    fill(rgb, width, height, stride, x1 - a, y1 - a, x2 - a + lw, y1 - a + lw, c); /* top */
    fill(rgb, width, height, stride, x1 - a, y2 - a, x2 - a + lw, y2 - a + lw, c); /* bottom */
    fill(rgb, width, height, stride, x1 - a, y1 - a, x1 - a + lw, y2 - a + lw, c); /* left */
    fill(rgb, width, height, stride, x2 - a, y1 - a, x2 - a + lw, y2 - a + lw, c); /* right */
}

/* The label of detection d ("#7 dog 0.87" and its variants) into label;
 * 0 when the style shows none. */
static int make_label(char *label, size_t size, const strix_detection *d, int id, const char *const *class_names,
                      int n_names, const strix_annotate_style *style)
{
    char tag[16] = "";
    if (id >= 0) snprintf(tag, sizeof tag, "#%d ", id);
    const char *name = d->class_id >= 0 && d->class_id < n_names && class_names ? class_names[d->class_id] : NULL;
    char fallback[24];
    if (!name) {
        snprintf(fallback, sizeof fallback, "class%d", d->class_id);
        name = fallback;
    }
    if (style->show_label && style->show_score)
        snprintf(label, size, "%s%s %.2f", tag, name, (double)d->score);
    else if (style->show_label)
        snprintf(label, size, "%s%s", tag, name);
    else if (style->show_score)
        snprintf(label, size, "%s%.2f", tag, (double)d->score);
    else if (id >= 0)
        snprintf(label, size, "#%d", id);
    else
        return 0;
    return 1;
}

/* A filled label box at (x1, y1) in palette colour pi: above the point
 * when it fits, else below; shifted left when it would leave the frame. */
static void draw_label(uint8_t *rgb, int width, int height, int stride, int x1, int y1, const char *label, int pi,
                       int lw)
{
    int scale = lw;            /* Hershey at scale lw/3 has caps about 7*lw pixels tall */
    int margin = (lw + 1) / 2; /* around the text inside the label box */
    int bw = strix_text_width(label, scale) + 2 * margin;
    int bh = strix_text_height(scale) + 2 * margin;
    int lx = x1, ly = y1 >= bh ? y1 - bh : y1; /* above the box when it fits */
    if (lx > width - bw) lx = width - bw;
    const uint8_t *fg = dark_text_on[pi] ? dark_text : white_text;
    fill(rgb, width, height, stride, lx, ly, lx + bw, ly + bh, palette[pi]);
    strix_draw_text(rgb, width, height, stride, lx + margin, ly + margin, label, scale, fg, NULL);
}

void strix_annotate(uint8_t *rgb, int width, int height, int stride, const strix_detection *dets,
                    int n, const char *const *class_names, int n_names, const strix_annotate_style *style)
{
    strix_annotate_rotated(rgb, width, height, stride, dets, NULL, n, class_names, n_names, style);
}

void strix_annotate_rotated(uint8_t *rgb, int width, int height, int stride, const strix_detection *dets,
                            const float *corners, int n, const char *const *class_names, int n_names,
                            const strix_annotate_style *style)
{
    if (!rgb || width <= 0 || height <= 0 || !dets || n <= 0) return;
    if (stride == 0) stride = width * 3;
    strix_annotate_style def;
    if (!style) {
        strix_annotate_style_init(&def);
        style = &def;
    }
    int lw = style->line_width > 0 ? style->line_width : line_width_for(width, height);

    for (int i = n - 1; i >= 0; i--) { /* lowest score first: the best ends on top */
        const strix_detection *d = &dets[i];
        int id = style->track_ids ? style->track_ids[i] : -1;
        int pi = id >= 0 ? palette_index(id) : palette_index(d->class_id);
        int x1, y1;
        if (corners) { /* cv2.polylines of the 4 corners; the label at the first, as int() truncates it */
            const float *c = corners + 8 * (size_t)i;
            for (int k = 0; k < 4; k++)
                strix_draw_line(rgb, width, height, stride, (float)to_px(c[2 * k]), (float)to_px(c[2 * k + 1]),
                                (float)to_px(c[(2 * k + 2) % 8]), (float)to_px(c[(2 * k + 3) % 8]), lw, palette[pi],
                                1.f);
            x1 = to_px(c[0]);
            y1 = to_px(c[1]);
        } else {
            x1 = to_px(d->x1);
            y1 = to_px(d->y1);
            outline(rgb, width, height, stride, x1, y1, to_px(d->x2), to_px(d->y2), lw, palette[pi]);
        }
        char label[160];
        if (make_label(label, sizeof label, d, id, class_names, n_names, style))
            draw_label(rgb, width, height, stride, x1, y1, label, pi, lw);
    }
}

void strix_annotate_probs(uint8_t *rgb, int width, int height, int stride, const int *top, const float *probs,
                          int k, const char *const *class_names, int n_names)
{
    if (!rgb || width <= 0 || height <= 0 || !top || !probs || k <= 0) return;
    if (stride == 0) stride = width * 3;
    /* Results.plot: PIL text from (x, x), x = round(0.03 h), a font of
     * max(round((w + h) / 2 * 0.035), 12) pixels, white on translucent grey */
    int x = (int)nearbyint(height * 0.03);
    int fs = (int)nearbyint((width + height) / 2.0 * 0.035);
    int scale = (fs < 12 ? 12 : fs) / GLYPH_H;
    if (scale < 1) scale = 1;
    static const uint8_t grey[3] = {64, 64, 64};
    int y = x;
    for (int j = 0; j < k; j++) {
        char line[160], fallback[24];
        int c = top[j];
        const char *name = class_names && c >= 0 && c < n_names ? class_names[c] : NULL;
        if (!name) {
            snprintf(fallback, sizeof fallback, "%d", c);
            name = fallback;
        }
        snprintf(line, sizeof line, "%s %.2f", name, (double)probs[c]);
        int tw = strix_text_width(line, scale), th = strix_text_height(scale) + scale;
        for (int r = y; r < y + th && r < height; r++) /* the box at alpha 128/255 */
            for (int q = x < 0 ? 0 : x; r >= 0 && q < x + tw && q < width; q++) {
                uint8_t *p = rgb + (size_t)r * stride + (size_t)q * 3;
                for (int ch = 0; ch < 3; ch++) p[ch] = (uint8_t)((p[ch] * 127 + grey[ch] * 128) / 255);
            }
        strix_draw_text(rgb, width, height, stride, x, y, line, scale, white_text, NULL);
        y += th;
    }
}

void strix_track_color(int id, uint8_t rgb[3])
{
    memcpy(rgb, palette[palette_index(id)], 3);
}

/* Blend colour over the square of side `size` centred at (cx, cy). */
static void blend_square(uint8_t *rgb, int width, int height, int stride, float cx, float cy, int size,
                         const uint8_t color[3], int a256)
{
    int x0 = (int)floorf(cx - size / 2.0f + 0.5f), y0 = (int)floorf(cy - size / 2.0f + 0.5f);
    int x1 = x0 + size, y1 = y0 + size;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > width) x1 = width;
    if (y1 > height) y1 = height;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            uint8_t *p = rgb + (size_t)y * (size_t)stride + (size_t)x * 3;
            for (int k = 0; k < 3; k++) p[k] = (uint8_t)((p[k] * (256 - a256) + color[k] * a256) >> 8);
        }
}

void strix_draw_line(uint8_t *rgb, int width, int height, int stride, float x0, float y0, float x1, float y1,
                     int thickness, const uint8_t color[3], float alpha)
{
    if (!rgb || width <= 0 || height <= 0 || !isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    if (stride == 0) stride = width * 3;
    if (thickness < 1) thickness = 1;
    int a256 = alpha >= 1 ? 256 : alpha <= 0 ? 0 : (int)(alpha * 256);
    if (!a256) return;
    /* stamp squares one pixel apart along the line; clip the walk to the frame
     * (a far-away endpoint must not cost millions of steps) */
    float len = hypotf(x1 - x0, y1 - y0);
    int steps = len > 1 ? (int)ceilf(len) : 1;
    if (steps > 4 * (width + height)) steps = 4 * (width + height);
    /* a blended stamp must not blend a pixel twice: paint opaque lines in one
     * go, and translucent ones through a per-pixel guard of the previous stamp */
    int last_x = INT_MIN / 2, last_y = INT_MIN / 2;
    for (int i = 0; i <= steps; i++) {
        float t = (float)i / (float)steps, x = x0 + (x1 - x0) * t, y = y0 + (y1 - y0) * t;
        int ix = (int)floorf(x + 0.5f), iy = (int)floorf(y + 0.5f);
        if (a256 < 256 && abs(ix - last_x) < thickness && abs(iy - last_y) < thickness) continue;
        blend_square(rgb, width, height, stride, (float)ix, (float)iy, thickness, color, a256);
        last_x = ix;
        last_y = iy;
    }
}

void strix_draw_trail(uint8_t *rgb, int width, int height, int stride, const float *xy, int n, int thickness,
                      const uint8_t color[3])
{
    for (int i = 1; i < n; i++)
        strix_draw_line(rgb, width, height, stride, xy[2 * i - 2], xy[2 * i - 1], xy[2 * i], xy[2 * i + 1],
                        thickness, color, 0.25f + 0.75f * (float)i / (float)(n - 1));
}

void strix_draw_masks(uint8_t *rgb, int width, int height, int stride, const uint8_t *masks, int n,
                      const int *class_ids, float alpha)
{
    if (!rgb || width <= 0 || height <= 0 || !masks || n <= 0) return;
    if (stride == 0) stride = width * 3;
    alpha = alpha < 0 ? 0 : alpha > 1 ? 1 : alpha;
    size_t plane = (size_t)width * (size_t)height;
    for (int y = 0; y < height; y++) {
        uint8_t *row = rgb + (size_t)y * (size_t)stride;
        for (int x = 0; x < width; x++) {
            size_t at = (size_t)y * (size_t)width + (size_t)x;
            float inv = 1.f, mcs[3] = {0, 0, 0};
            int covered = 0;
            for (int i = 0; i < n; i++) {
                if (!masks[(size_t)i * plane + at]) continue;
                const uint8_t *c = palette[palette_index(class_ids ? class_ids[i] : n - 1 - i)];
                inv *= 1.f - alpha;
                for (int k = 0; k < 3; k++) {
                    float v = (float)c[k] / 255.f * alpha;
                    if (v > mcs[k]) mcs[k] = v;
                }
                covered = 1;
            }
            if (!covered) continue; /* (in/255 * 1 + 0) * 255 truncates back to in */
            uint8_t *p = row + (size_t)x * 3;
            for (int k = 0; k < 3; k++) {
                float v = ((float)p[k] / 255.f * inv + mcs[k]) * 255.f;
                p[k] = (uint8_t)(v >= 255.f ? 255 : v);
            }
        }
    }
}

/* Ultralytics' pose palette entries that COCO's keypoints and limbs use,
 * RGB (plotting.py lists them as the BGR values it draws with):
 * 0 (0, 128, 255), 7 (255, 51, 255), 9 (255, 153, 51), 16 (0, 255, 0). */
static const uint8_t pose_rgb[4][3] = {{0, 128, 255}, {255, 51, 255}, {255, 153, 51}, {0, 255, 0}};
enum { POSE_0, POSE_7, POSE_9, POSE_16 };
static const uint8_t kpt_color[17] = {POSE_16, POSE_16, POSE_16, POSE_16, POSE_16, POSE_0, POSE_0, POSE_0, POSE_0,
                                      POSE_0,  POSE_0,  POSE_9,  POSE_9,  POSE_9,  POSE_9, POSE_9, POSE_9};
static const uint8_t limb_color[19] = {POSE_9, POSE_9, POSE_9, POSE_9, POSE_7, POSE_7, POSE_7,
                                       POSE_0, POSE_0, POSE_0, POSE_0, POSE_0, POSE_16, POSE_16,
                                       POSE_16, POSE_16, POSE_16, POSE_16, POSE_16};
/* COCO's skeleton, 1-based keypoint pairs (Annotator.skeleton) */
static const uint8_t skeleton[19][2] = {{16, 14}, {14, 12}, {17, 15}, {15, 13}, {12, 13}, {6, 12}, {7, 13},
                                        {6, 7},   {6, 8},   {7, 9},   {8, 10},  {9, 11},  {2, 3},  {1, 2},
                                        {1, 3},   {2, 4},   {3, 5},   {4, 6},   {5, 7}};

static void disc(uint8_t *rgb, int width, int height, int stride, int cx, int cy, int r, const uint8_t c[3])
{
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++)
            if (dx * dx + dy * dy <= r * r)
                fill(rgb, width, height, stride, cx + dx, cy + dy, cx + dx + 1, cy + dy + 1, c);
}

/* A keypoint's visibility test: Annotator.kpts skips ndim-3 points below
 * conf_thr and ndim-2 points at (0, 0), which mark missing ones. */
static int kpt_shown(const float *k, int ndim, float conf_thr)
{
    return ndim >= 3 ? !(k[2] < conf_thr) : (k[0] != 0 || k[1] != 0);
}

void strix_draw_keypoints(uint8_t *rgb, int width, int height, int stride, const float *kpts, int nk, int ndim,
                          int line_width, int radius, float conf_thr, const uint8_t *color)
{
    if (!rgb || width <= 0 || height <= 0 || !kpts || nk <= 0 || ndim < 2) return;
    if (stride == 0) stride = width * 3;
    int lw = line_width > 0 ? line_width : line_width_for(width, height);
    int is_pose = nk == 17 && ndim <= 3;
    for (int i = 0; i < nk; i++) {
        const float *k = kpts + (size_t)i * (size_t)ndim;
        if (!kpt_shown(k, ndim, conf_thr)) continue;
        uint8_t other[3];
        const uint8_t *c = color;
        if (!c && is_pose) c = pose_rgb[kpt_color[i]];
        if (!c) { /* colors(i) in RGB order drawn on a BGR image: Ultralytics shows it reversed */
            const uint8_t *p = palette[palette_index(i)];
            other[0] = p[2], other[1] = p[1], other[2] = p[0];
            c = other;
        }
        disc(rgb, width, height, stride, to_px(k[0]), to_px(k[1]), radius, c);
    }
    if (!is_pose) return;
    for (int i = 0; i < 19; i++) {
        const float *a = kpts + (size_t)(skeleton[i][0] - 1) * (size_t)ndim;
        const float *b = kpts + (size_t)(skeleton[i][1] - 1) * (size_t)ndim;
        if (!kpt_shown(a, ndim, conf_thr) || !kpt_shown(b, ndim, conf_thr)) continue;
        int x0 = to_px(a[0]), y0 = to_px(a[1]), x1 = to_px(b[0]), y1 = to_px(b[1]);
        if (x0 < 0 || y0 < 0 || x1 < 0 || y1 < 0) continue;
        strix_draw_line(rgb, width, height, stride, (float)x0, (float)y0, (float)x1, (float)y1, (lw + 1) / 2,
                        color ? color : pose_rgb[limb_color[i]], 1.f);
    }
}
