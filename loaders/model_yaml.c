/* model_yaml.c — reads an Ultralytics model YAML with libyaml's document API
 * into strix_yaml_model.  Strict by design: an unknown top-level key, a row
 * that is not [from, repeats, module, args], or a value of the wrong type is
 * an error naming the file and line; nothing is silently defaulted except
 * what Ultralytics itself defaults (reg_max 16, multiples 1.0). */
#include "model_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "util.h"

typedef struct ctx {
    yaml_document_t *doc;
    const char *path;
    strix_error *err;
} ctx;

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Strict integer: optional sign, digits only, fits in long long. */
static int parse_int(const char *s, long long *v)
{
    if (!s || !*s) return 0;
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    if (!*p) return 0;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return 0;
    errno = 0;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (errno || *end) return 0;
    *v = x;
    return 1;
}

static int parse_float(const char *s, double *v)
{
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || !isfinite(x)) return 0;
    /* reject things strtod accepts but YAML does not call numbers (hex, inf) */
    for (const char *q = s; *q; q++)
        if (!strchr("0123456789+-.eE", *q)) return 0;
    *v = x;
    return 1;
}

static int parse_bool(const char *s, int *b)
{
    static const char *t[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
    static const char *f[] = {"false", "False", "FALSE", "no", "No", "off", "Off"};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (!strcmp(s, t[i])) { *b = 1; return 1; }
        if (!strcmp(s, f[i])) { *b = 0; return 1; }
    }
    return 0;
}

static strix_status bad(ctx *c, const yaml_node_t *n, const char *what)
{
    return strix_fail(c->err, STRIX_E_MODEL, "%s:%d: %s", c->path, n ? line_of(n) : 0, what);
}

/* One element of a row's args list. */
static strix_status read_arg(ctx *c, yaml_node_t *n, strix_yaml_arg *a)
{
    memset(a, 0, sizeof *a);
    a->line = line_of(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        a->type = STRIX_ARG_LIST;
        snprintf(a->str, sizeof a->str, "[...]");
        return STRIX_OK;
    }
    if (n->type != YAML_SCALAR_NODE) return bad(c, n, "module argument must be a scalar or a list");
    const char *s = scalar(n);
    if (strlen(s) >= sizeof a->str) return bad(c, n, "module argument is too long");
    snprintf(a->str, sizeof a->str, "%s", s);
    int b;
    if (is_plain(n)) {
        if (parse_int(s, &a->i)) { a->type = STRIX_ARG_INT; a->f = (double)a->i; return STRIX_OK; }
        if (parse_float(s, &a->f)) { a->type = STRIX_ARG_FLOAT; return STRIX_OK; }
        if (parse_bool(s, &b)) { a->type = STRIX_ARG_BOOL; a->i = b; return STRIX_OK; }
        if (!strcmp(s, "null") || !strcmp(s, "~") || !*s) { a->type = STRIX_ARG_NONE; return STRIX_OK; }
    }
    /* Ultralytics evaluates strings: "None" becomes None, other text stays. */
    a->type = strcmp(s, "None") ? STRIX_ARG_STR : STRIX_ARG_NONE;
    return STRIX_OK;
}

static strix_status read_int(ctx *c, yaml_node_t *n, const char *what, long long *v)
{
    char msg[160];
    if (n->type != YAML_SCALAR_NODE || !is_plain(n) || !parse_int(scalar(n), v)) {
        snprintf(msg, sizeof msg, "%s must be an integer, got '%s'", what,
                 scalar(n) ? scalar(n) : "a list or mapping");
        return bad(c, n, msg);
    }
    return STRIX_OK;
}

static strix_status read_number(ctx *c, yaml_node_t *n, const char *what, double *v)
{
    char msg[160];
    if (n->type != YAML_SCALAR_NODE || !is_plain(n) || !parse_float(scalar(n), v)) {
        snprintf(msg, sizeof msg, "%s must be a number, got '%s'", what,
                 scalar(n) ? scalar(n) : "a list or mapping");
        return bad(c, n, msg);
    }
    return STRIX_OK;
}

static int seq_len(const yaml_node_t *n) { return (int)(n->data.sequence.items.top - n->data.sequence.items.start); }
static yaml_node_t *seq_at(ctx *c, const yaml_node_t *n, int i)
{
    return yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
}

static strix_status read_row(ctx *c, yaml_node_t *n, strix_yaml_row *r)
{
    memset(r, 0, sizeof *r);
    r->line = line_of(n);
    if (n->type != YAML_SEQUENCE_NODE || seq_len(n) != 4)
        return bad(c, n, "a layer must be [from, repeats, module, args]");
    yaml_node_t *from = seq_at(c, n, 0), *rep = seq_at(c, n, 1), *mod = seq_at(c, n, 2),
                *args = seq_at(c, n, 3);
    long long v;
    strix_status st;
    if (from->type == YAML_SEQUENCE_NODE) {
        r->from_is_list = 1;
        r->n_from = seq_len(from);
        if (r->n_from < 1 || r->n_from > STRIX_YAML_MAX_FROM)
            return bad(c, from, "'from' list must hold 1 to 16 layer indices");
        for (int i = 0; i < r->n_from; i++) {
            if ((st = read_int(c, seq_at(c, from, i), "'from' index", &v))) return st;
            if (v < -1000000 || v > 1000000) return bad(c, from, "'from' index out of range");
            r->from[i] = (int)v;
        }
    } else {
        if ((st = read_int(c, from, "'from'", &v))) return st;
        if (v < -1000000 || v > 1000000) return bad(c, from, "'from' index out of range");
        r->from[0] = (int)v;
        r->n_from = 1;
    }
    if ((st = read_int(c, rep, "repeats", &v))) return st;
    if (v < 1 || v > 1000) return bad(c, rep, "repeats must be between 1 and 1000");
    r->repeats = (int)v;
    const char *m = scalar(mod);
    if (!m || !*m) return bad(c, mod, "module must be a name such as Conv or C2f");
    if (strlen(m) >= sizeof r->module) return bad(c, mod, "module name is too long");
    snprintf(r->module, sizeof r->module, "%s", m);
    if (args->type != YAML_SEQUENCE_NODE) return bad(c, args, "module arguments must be a list");
    r->n_args = seq_len(args);
    if (r->n_args > STRIX_YAML_MAX_ARGS) return bad(c, args, "too many module arguments");
    for (int i = 0; i < r->n_args; i++)
        if ((st = read_arg(c, seq_at(c, args, i), &r->args[i]))) return st;
    return STRIX_OK;
}

static strix_status read_rows(ctx *c, yaml_node_t *n, strix_yaml_model *m, const char *key)
{
    char msg[128];
    if (n->type != YAML_SEQUENCE_NODE) {
        snprintf(msg, sizeof msg, "'%s' must be a list of layers", key);
        return bad(c, n, msg);
    }
    int k = seq_len(n);
    strix_yaml_row *rows = realloc(m->rows, sizeof *rows * (size_t)(m->n_rows + k + 1));
    if (!rows) return strix_fail(c->err, STRIX_E_NOMEM, "%s: out of memory", c->path);
    m->rows = rows;
    for (int i = 0; i < k; i++) {
        strix_status st = read_row(c, seq_at(c, n, i), &m->rows[m->n_rows]);
        if (st) return st;
        m->n_rows++;
    }
    return STRIX_OK;
}

static strix_status read_scales(ctx *c, yaml_node_t *n, strix_yaml_model *m)
{
    if (n->type != YAML_MAPPING_NODE) return bad(c, n, "'scales' must map a letter to [depth, width, max_channels]");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        const char *letter = scalar(k);
        if (!letter || strlen(letter) != 1) return bad(c, k, "a scale name must be one letter (n, s, m, l, x)");
        if (m->n_scales == STRIX_YAML_MAX_SCALES) return bad(c, k, "too many scales");
        if (v->type != YAML_SEQUENCE_NODE || seq_len(v) != 3)
            return bad(c, v, "a scale must be [depth, width, max_channels]");
        strix_yaml_scale *s = &m->scales[m->n_scales];
        s->letter = letter[0];
        s->line = line_of(k);
        for (int i = 0; i < m->n_scales; i++)
            if (m->scales[i].letter == s->letter) return bad(c, k, "scale listed twice");
        long long mc;
        strix_status st;
        if ((st = read_number(c, seq_at(c, v, 0), "scale depth", &s->depth))) return st;
        if ((st = read_number(c, seq_at(c, v, 1), "scale width", &s->width))) return st;
        if ((st = read_int(c, seq_at(c, v, 2), "scale max_channels", &mc))) return st;
        if (s->depth <= 0 || s->depth > 100 || s->width <= 0 || s->width > 100)
            return bad(c, v, "scale depth and width must be in (0, 100]");
        if (mc < 1 || mc > 1 << 20) return bad(c, v, "scale max_channels must be in [1, 1048576]");
        s->max_channels = (int)mc;
        m->n_scales++;
    }
    return STRIX_OK;
}

static strix_status add_name(ctx *c, strix_yaml_model *m, yaml_node_t *v, long long id)
{
    const char *s = scalar(v);
    if (!s) return bad(c, v, "a class name must be a string");
    if (id < 0 || id > 100000) return bad(c, v, "class id out of range");
    if (id >= m->n_names) {
        char **nn = realloc(m->names, sizeof *nn * (size_t)(id + 1));
        if (!nn) return strix_fail(c->err, STRIX_E_NOMEM, "%s: out of memory", c->path);
        for (long long i = m->n_names; i <= id; i++) nn[i] = NULL;
        m->names = nn;
        m->n_names = (int)id + 1;
    }
    if (m->names[id]) return bad(c, v, "class id named twice");
    m->names[id] = strdup(s);
    if (!m->names[id]) return strix_fail(c->err, STRIX_E_NOMEM, "%s: out of memory", c->path);
    return STRIX_OK;
}

static strix_status read_names(ctx *c, yaml_node_t *n, strix_yaml_model *m)
{
    strix_status st;
    if (n->type == YAML_SEQUENCE_NODE) {
        for (int i = 0; i < seq_len(n); i++)
            if ((st = add_name(c, m, seq_at(c, n, i), i))) return st;
    } else if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            long long id;
            if ((st = read_int(c, yaml_document_get_node(c->doc, p->key), "class id", &id))) return st;
            if ((st = add_name(c, m, yaml_document_get_node(c->doc, p->value), id))) return st;
        }
    } else {
        return bad(c, n, "'names' must be a list or a mapping of id to name");
    }
    for (int i = 0; i < m->n_names; i++)
        if (!m->names[i]) return bad(c, n, "'names' skips a class id");
    return STRIX_OK;
}

static strix_status read_top(ctx *c, yaml_node_t *root, strix_yaml_model *m)
{
    if (!root || root->type != YAML_MAPPING_NODE)
        return bad(c, root, "a model YAML must be a mapping with nc, backbone and head");
    yaml_node_t *backbone = NULL, *head = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        const char *key = scalar(k);
        long long iv;
        strix_status st = STRIX_OK;
        char msg[200];
        if (!key) return bad(c, k, "top-level keys must be names");
        for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < p; q++) {
            const char *prev = scalar(yaml_document_get_node(c->doc, q->key));
            if (prev && !strcmp(prev, key)) {
                snprintf(msg, sizeof msg, "key '%s' appears twice", key);
                return bad(c, k, msg);
            }
        }
        if (!strcmp(key, "nc")) {
            if ((st = read_int(c, v, "nc", &iv))) return st;
            if (iv < 1 || iv > STRIX_MAX_CLASSES) {
                snprintf(msg, sizeof msg, "nc %lld is out of range: strix supports 1 to %d classes",
                         (long long)iv, STRIX_MAX_CLASSES);
                return bad(c, v, msg);
            }
            m->nc = (int)iv;
            m->nc_line = line_of(k);
        } else if (!strcmp(key, "scales")) {
            st = read_scales(c, v, m);
        } else if (!strcmp(key, "backbone")) {
            backbone = v;
        } else if (!strcmp(key, "head")) {
            head = v;
        } else if (!strcmp(key, "depth_multiple") || !strcmp(key, "width_multiple")) {
            /* the same (0, 100] bound as a scale's depth and width: a depth of
             * millions would ask the graph for millions of modules */
            double *mult = key[0] == 'd' ? &m->depth_multiple : &m->width_multiple;
            if ((st = read_number(c, v, key, mult))) return st;
            if (*mult <= 0 || *mult > 100) return bad(c, v, "depth_multiple and width_multiple must be in (0, 100]");
        } else if (!strcmp(key, "scale")) {
            const char *s = scalar(v);
            if (!s || strlen(s) != 1) return bad(c, v, "'scale' must be one letter (n, s, m, l, x)");
            m->scale = s[0];
        } else if (!strcmp(key, "reg_max")) {
            if ((st = read_int(c, v, "reg_max", &iv))) return st;
            if (iv < 1 || iv > 64) return bad(c, v, "reg_max must be between 1 and 64"); /* 1: no DFL (YOLO26) */
            m->reg_max = (int)iv;
        } else if (!strcmp(key, "names")) {
            st = read_names(c, v, m);
        } else if (!strcmp(key, "ch") || !strcmp(key, "channels")) {
            if ((st = read_int(c, v, key, &iv))) return st;
            if (iv != 3) return bad(c, v, "only 3-channel (RGB) input is supported");
        } else if (!strcmp(key, "activation")) {
            const char *s = scalar(v);
            if (!s || (strcmp(s, "nn.SiLU()") && strcmp(s, "torch.nn.SiLU()")))
                return strix_fail(c->err, STRIX_E_MODEL,
                                  "%s:%d: activation '%s' is not supported (strix implements nn.SiLU())",
                                  c->path, line_of(v), s ? s : "?");
        } else if (!strcmp(key, "kpt_shape")) {
            /* [keypoints, dims]: Pose's layout, dims 2 (x, y) or 3 (x, y, visibility) */
            if (v->type != YAML_SEQUENCE_NODE || seq_len(v) != 2)
                return bad(c, v, "kpt_shape must be [keypoints, dims], e.g. [17, 3]");
            long long kn = 0, kd = 0;
            if ((st = read_int(c, seq_at(c, v, 0), "kpt_shape's keypoints", &kn)) ||
                (st = read_int(c, seq_at(c, v, 1), "kpt_shape's dims", &kd)))
                return st;
            if (kn < 1 || kn > 1024 || (kd != 2 && kd != 3))
                return bad(c, v, "kpt_shape must be [1 to 1024 keypoints, 2 or 3 dims]");
            m->kpt_n = (int)kn;
            m->kpt_d = (int)kd;
        } else if (!strcmp(key, "end2end")) {
            int b = 0;
            if (!scalar(v) || (!parse_bool(scalar(v), &b) && strcmp(scalar(v), "null")))
                return bad(c, v, "end2end must be true, false or null");
            m->end2end = b;
        } else {
            snprintf(msg, sizeof msg,
                     "unknown key '%s' (expected nc, scales, backbone, head, names, ...)", key);
            return bad(c, k, msg);
        }
        if (st) return st;
    }
    if (!m->nc_line) return bad(c, root, "missing 'nc' (number of classes)");
    if (!backbone) return bad(c, root, "missing 'backbone'");
    if (!head) return bad(c, root, "missing 'head'");
    strix_status st;
    if ((st = read_rows(c, backbone, m, "backbone"))) return st;
    m->n_backbone = m->n_rows;
    if ((st = read_rows(c, head, m, "head"))) return st;
    if (m->n_rows == 0) return bad(c, root, "the model has no layers");
    return STRIX_OK;
}

/* Parse with a set-up parser; f (may be NULL) is the file, for read errors. */
static strix_status parse(yaml_parser_t *parser, FILE *f, const char *path, strix_yaml_model *m, strix_error *err)
{
    yaml_document_t doc;
    strix_status st = STRIX_OK;
    if (!yaml_parser_load(parser, &doc)) {
        if (f && parser->error == YAML_READER_ERROR && ferror(f))
            st = strix_fail(err, STRIX_E_IO, "%s: cannot read the model file: %s", path, strerror(errno));
        else
            st = strix_fail(err, STRIX_E_MODEL, "%s:%d: malformed YAML: %s%s%s", path,
                            (int)parser->problem_mark.line + 1, parser->problem ? parser->problem : "syntax error",
                            parser->context ? " " : "", parser->context ? parser->context : "");
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            st = strix_fail(err, STRIX_E_MODEL, "%s: the file is empty (expected a model YAML)", path);
        } else {
            ctx c = {&doc, path, err};
            st = read_top(&c, root, m);
        }
        yaml_document_delete(&doc);
    }
    return st;
}

static void init_model(strix_yaml_model *m, const char *path)
{
    memset(m, 0, sizeof *m);
    m->depth_multiple = m->width_multiple = 1.0;
    m->reg_max = 16;
    snprintf(m->path, sizeof m->path, "%s", path);
}

strix_status strix_yaml_model_load(const char *path, strix_yaml_model *m, strix_error *err)
{
    init_model(m, path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return strix_fail(err, STRIX_E_IO, "%s: cannot open model file: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) { /* libyaml would say only "input error" */
        fclose(f);
        return strix_fail(err, STRIX_E_IO, "%s: is a directory, not a model file; give the path of a model YAML "
                          "file", path);
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return strix_fail(err, STRIX_E_NOMEM, "%s: cannot initialise the YAML parser", path);
    }
    yaml_parser_set_input_file(&parser, f);
    strix_status st = parse(&parser, f, path, m, err);
    if (!st && ferror(f))
        st = strix_fail(err, STRIX_E_IO, "%s: read error", path);
    yaml_parser_delete(&parser);
    fclose(f);
    if (st) strix_yaml_model_free(m);
    return st;
}

strix_status strix_yaml_model_parse(const char *text, size_t len, const char *label, strix_yaml_model *m,
                                    strix_error *err)
{
    init_model(m, label);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return strix_fail(err, STRIX_E_NOMEM, "%s: cannot initialise the YAML parser", label);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    strix_status st = parse(&parser, NULL, label, m, err);
    yaml_parser_delete(&parser);
    if (st) strix_yaml_model_free(m);
    return st;
}

void strix_yaml_model_free(strix_yaml_model *m)
{
    for (int i = 0; i < m->n_names; i++) free(m->names[i]);
    free(m->names);
    free(m->rows);
    m->names = NULL;
    m->rows = NULL;
    m->n_names = m->n_rows = 0;
}
