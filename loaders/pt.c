/* pt.c — an Ultralytics .pt checkpoint read without Python and without
 * running anything from it.  torch.save writes a ZIP (zip.c):
 *   PREFIX/data.pkl         the pickled checkpoint (pickle.c, restricted)
 *   PREFIX/data/KEY         one storage's raw bytes, little-endian
 *   PREFIX/byteorder        "little" (absent in older files: little)
 * The pickle is a dict {"model": DetectionModel, "ema": ..., "train_args":
 * ..., ...} (or a bare DetectionModel, or a bare state_dict).  As Ultralytics
 * (attempt_load_weights), "ema" wins over "model" when set.  A module is a
 * record whose state holds _parameters, _buffers and _modules; walking
 * _modules from the DetectionModel gives exactly its state_dict names
 * (model.0.conv.weight, ...).  Its `yaml` attribute (the model YAML as a dict)
 * is written back out as YAML text for loaders/model_yaml.c, its `names`
 * become the class names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "fileread.h"
#include "pickle.h"
#include "util.h"
#include "zip.h"

#define PT_MAX_DEPTH 64 /* module nesting (Ultralytics: under 10) and YAML value nesting */
/* A pickle can share one value many times (memo references), so a small
 * file can describe a tree of 2^64 modules or a YAML of 2^64 bytes: the walk
 * and the text are bounded.  yolov8x has about 400 modules, a YAML a few KB. */
#define PT_MAX_MODULES 100000
#define PT_MAX_YAML ((size_t)1 << 20)

typedef struct pt {
    const char *path;
    strix_error *err;
    const strix_zip *zip;
    char prefix[256];        /* "best/" */
    strix_ckpt_owner *own;
    strix_st_source *t;
    size_t n, cap;
    char *yaml;              /* growing YAML text */
    size_t ylen, ycap;
    size_t modules;          /* visited, against PT_MAX_MODULES */
    size_t file_len;         /* a gathered view may not outgrow the file */
    int too_long;            /* the YAML text reached PT_MAX_YAML */
} pt;

static strix_status pt_bad(pt *p, const char *what, const char *name)
{
    return strix_fail(p->err, STRIX_E_WEIGHTS, "%s: %s%s%s%s", p->path, what, name ? " '" : "", name ? name : "",
                      name ? "'" : "");
}

static strix_st_dtype st_dtype(strix_pk_dtype d)
{
    switch (d) {
    case STRIX_PK_F32: return STRIX_ST_F32;
    case STRIX_PK_F16: return STRIX_ST_F16;
    case STRIX_PK_BF16: return STRIX_ST_BF16;
    case STRIX_PK_F64: return STRIX_ST_F64;
    case STRIX_PK_I64: return STRIX_ST_I64;
    case STRIX_PK_I32: return STRIX_ST_I32;
    case STRIX_PK_I16: return STRIX_ST_I16;
    case STRIX_PK_I8: return STRIX_ST_I8;
    case STRIX_PK_U8: return STRIX_ST_U8;
    default: return STRIX_ST_BOOL;
    }
}

/* One tensor: its storage's bytes, bounds checked; a dense row-major view
 * points into the mapping, anything else is gathered into a buffer. */
static strix_status add_tensor(pt *p, const char *name, const strix_pk_value *v)
{
    const strix_pk_value *s = v->storage;
    char ename[512];
    snprintf(ename, sizeof ename, "%sdata/%s", p->prefix, s->s);
    const strix_zip_entry *e = strix_zip_find(p->zip, ename);
    if (!e) return pt_bad(p, "the archive lacks the storage of tensor", name);
    size_t es = strix_pk_dtype_size(s->dtype);
    if ((uint64_t)s->i > e->size / es) return pt_bad(p, "a storage is shorter than its element count says, tensor", name);
    /* the elements the view touches: offset + sum (shape - 1) * stride < storage numel */
    uint64_t last = (uint64_t)v->i, numel = 1;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 0) numel = 0;
        if (v->shape[d] > (1 << 30) || v->stride[d] > ((int64_t)1 << 40))
            return pt_bad(p, "a dimension or stride is out of range in tensor", name);
    }
    for (int d = 0; d < v->ndim && numel; d++) {
        last += (uint64_t)(v->shape[d] - 1) * (uint64_t)v->stride[d];
        numel *= (uint64_t)v->shape[d];
        if (numel > ((uint64_t)1 << 34)) return pt_bad(p, "too many elements in tensor", name);
    }
    if (numel && last >= (uint64_t)s->i) return pt_bad(p, "a view reaches past its storage in tensor", name);
    if (p->n == p->cap) {
        size_t c = p->cap ? 2 * p->cap : 256;
        strix_st_source *t = realloc(p->t, c * sizeof *t);
        if (!t) return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory", p->path);
        p->t = t;
        p->cap = c;
    }
    strix_st_source *t = &p->t[p->n];
    memset(t, 0, sizeof *t);
    char *nm = strix_ckpt_owner_alloc(p->own, strlen(name) + 1);
    char *origin = strix_ckpt_owner_alloc(p->own, strlen(ename) + 80);
    if (!nm || !origin) return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory", p->path);
    t->name = strcpy(nm, name);
    t->dtype = st_dtype(s->dtype);
    t->ndim = v->ndim;
    int dense = 1;
    uint64_t want = 1; /* unsigned: wraps harmlessly for an empty tensor's other huge dimensions */
    for (int d = v->ndim - 1; d >= 0; d--) {
        t->shape[d] = v->shape[d];
        if (v->shape[d] != 1 && (uint64_t)v->stride[d] != want) dense = 0;
        want *= (uint64_t)v->shape[d];
    }
    const uint8_t *base = e->data + (size_t)v->i * es;
    if (dense || !numel) {
        t->data = base;
    } else if (numel * es > p->file_len) { /* stride-0 views could expand a byte to terabytes */
        return pt_bad(p, "a strided view larger than the whole file in tensor", name);
    } else {
        uint8_t *dst = strix_ckpt_owner_alloc(p->own, (size_t)numel * es);
        if (!dst) return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory", p->path);
        int64_t idx[STRIX_PK_MAX_DIMS] = {0};
        for (uint64_t k = 0; k < numel; k++) {
            uint64_t off = 0;
            for (int d = 0; d < v->ndim; d++) off += (uint64_t)idx[d] * (uint64_t)v->stride[d];
            memcpy(dst + k * es, base + off * es, es);
            for (int d = v->ndim - 1; d >= 0 && ++idx[d] == v->shape[d]; d--) idx[d] = 0;
        }
        t->data = dst;
    }
    snprintf(origin, strlen(ename) + 80, "%s at element %lld (%s storage%s)", ename, (long long)v->i,
             strix_pk_dtype_name(s->dtype), dense ? "" : ", strided view gathered");
    t->origin = origin;
    p->n++;
    return STRIX_OK;
}

/* A module record: its parameters and buffers under prefix, then its children. */
static strix_status walk_module(pt *p, const strix_pk_value *m, const char *prefix, int depth)
{
    if (depth > PT_MAX_DEPTH) return pt_bad(p, "modules nest too deeply", NULL);
    if (++p->modules > PT_MAX_MODULES) return pt_bad(p, "more modules than any detection model has", NULL);
    if (m->type != STRIX_PK_OBJECT || !m->state || m->state->type != STRIX_PK_DICT)
        return pt_bad(p, "a submodule is not a torch module, under", prefix);
    static const char *kinds[2] = {"_parameters", "_buffers"};
    const strix_pk_value *skip = strix_pk_get(m->state, "_non_persistent_buffers_set");
    char name[512];
    strix_status st;
    for (int k = 0; k < 2; k++) {
        const strix_pk_value *d = strix_pk_get(m->state, kinds[k]);
        if (!d) continue;
        if (d->type != STRIX_PK_DICT) return pt_bad(p, "a module's tensors are not a dict, under", prefix);
        for (size_t i = 0; i + 1 < d->n; i += 2) {
            const strix_pk_value *key = d->items[i], *v = d->items[i + 1];
            if (key->type != STRIX_PK_STR) return pt_bad(p, "a tensor name is not a string, under", prefix);
            if (v->type == STRIX_PK_NONE) continue;
            int persistent = 1;
            for (size_t j = 0; k == 1 && skip && skip->type == STRIX_PK_SET && j < skip->n; j++)
                if (skip->items[j]->type == STRIX_PK_STR && !strcmp(skip->items[j]->s, key->s)) persistent = 0;
            if (!persistent) continue;
            snprintf(name, sizeof name, "%s%s", prefix, key->s);
            if (v->type != STRIX_PK_TENSOR) return pt_bad(p, "not a tensor:", name);
            if ((st = add_tensor(p, name, v))) return st;
        }
    }
    const strix_pk_value *mods = strix_pk_get(m->state, "_modules");
    if (!mods) return STRIX_OK;
    if (mods->type != STRIX_PK_DICT) return pt_bad(p, "a module's children are not a dict, under", prefix);
    for (size_t i = 0; i + 1 < mods->n; i += 2) {
        const strix_pk_value *key = mods->items[i], *v = mods->items[i + 1];
        if (key->type != STRIX_PK_STR) return pt_bad(p, "a submodule name is not a string, under", prefix);
        if (v->type == STRIX_PK_NONE) continue;
        snprintf(name, sizeof name, "%s%s.", prefix, key->s);
        if ((st = walk_module(p, v, name, depth + 1))) return st;
    }
    return STRIX_OK;
}

/* ------------------------------------------------------- YAML text out */

/* 0 when out of memory or past PT_MAX_YAML (put_yaml then says which). */
static int put(pt *p, const char *s, size_t n)
{
    if (p->ylen + n + 1 > PT_MAX_YAML) return !(p->too_long = 1);
    if (p->ylen + n + 1 > p->ycap) {
        size_t c = (p->ylen + n + 1) * 2;
        char *y = realloc(p->yaml, c);
        if (!y) return 0;
        p->yaml = y;
        p->ycap = c;
    }
    memcpy(p->yaml + p->ylen, s, n);
    p->ylen += n;
    p->yaml[p->ylen] = 0;
    return 1;
}

static int puts_(pt *p, const char *s) { return put(p, s, strlen(s)); }

static strix_status put_fail(pt *p)
{
    if (p->too_long)
        return pt_bad(p, "the embedded model YAML is larger than any model's (a pickle sharing one value many times?)",
                      NULL);
    return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory", p->path);
}

/* A string as a YAML double-quoted scalar. */
static int put_quoted(pt *p, const char *s, size_t n)
{
    if (!puts_(p, "\"")) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        if (ch == '"' || ch == '\\') snprintf(esc, sizeof esc, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f) snprintf(esc, sizeof esc, "\\x%02x", ch);
        else esc[0] = (char)ch, esc[1] = 0;
        if (!puts_(p, esc)) return 0;
    }
    return puts_(p, "\"");
}

static strix_status put_value(pt *p, const strix_pk_value *v, int depth)
{
    char num[64];
    int ok = 1;
    if (depth > PT_MAX_DEPTH) return pt_bad(p, "the model YAML nests too deeply", NULL);
    switch (v->type) {
    case STRIX_PK_NONE: ok = puts_(p, "null"); break;
    case STRIX_PK_BOOL: ok = puts_(p, v->i ? "true" : "false"); break;
    case STRIX_PK_INT:
        snprintf(num, sizeof num, "%lld", (long long)v->i);
        ok = puts_(p, num);
        break;
    case STRIX_PK_FLOAT:
        if (!isfinite(v->f)) return pt_bad(p, "the model YAML holds a number that is not finite", NULL);
        snprintf(num, sizeof num, "%.17g", v->f);
        if (!strpbrk(num, ".e")) strcat(num, ".0"); /* stays a float, as in Python */
        ok = puts_(p, num);
        break;
    case STRIX_PK_STR: ok = put_quoted(p, v->s, v->len); break;
    case STRIX_PK_LIST: case STRIX_PK_TUPLE:
        ok = puts_(p, "[");
        for (size_t i = 0; ok && i < v->n; i++) {
            if (i && !puts_(p, ", ")) return put_fail(p);
            strix_status st = put_value(p, v->items[i], depth + 1);
            if (st) return st;
        }
        ok = ok && puts_(p, "]");
        break;
    case STRIX_PK_DICT:
        ok = puts_(p, "{");
        for (size_t i = 0; ok && i + 1 < v->n; i += 2) {
            if (i && !puts_(p, ", ")) return put_fail(p);
            strix_status st = put_value(p, v->items[i], depth + 1);
            if (!st && !puts_(p, ": ")) return put_fail(p);
            if (!st) st = put_value(p, v->items[i + 1], depth + 1);
            if (st) return st;
        }
        ok = ok && puts_(p, "}");
        break;
    default: return pt_bad(p, "the model YAML holds a value that is not plain data", NULL);
    }
    return ok ? STRIX_OK : put_fail(p);
}

/* The `yaml` dict, one top-level key a line; backbone and head one row a
 * line, so that model_yaml.c's errors point at a row. */
static strix_status put_yaml(pt *p, const strix_pk_value *y)
{
    if (y->type != STRIX_PK_DICT) return pt_bad(p, "the model's `yaml` attribute is not a dict", NULL);
    char head[300];
    snprintf(head, sizeof head, "# the model YAML embedded in %s\n", p->path);
    if (!puts_(p, head)) return put_fail(p);
    for (size_t i = 0; i + 1 < y->n; i += 2) {
        const strix_pk_value *k = y->items[i], *v = y->items[i + 1];
        if (k->type != STRIX_PK_STR) return pt_bad(p, "the model YAML has a key that is not a string", NULL);
        if (!strcmp(k->s, "yaml_file")) continue; /* where Ultralytics read it from: no graph in it */
        if (!strcmp(k->s, "scale") && v->type == STRIX_PK_STR && !v->len)
            continue; /* no scale letter in the YAML's file name: Ultralytics then takes the first scale */
        strix_status st;
        if (!put_quoted(p, k->s, k->len) || !puts_(p, ":"))
            return put_fail(p);
        if ((!strcmp(k->s, "backbone") || !strcmp(k->s, "head")) && v->type == STRIX_PK_LIST) {
            if (!puts_(p, "\n")) return put_fail(p);
            for (size_t r = 0; r < v->n; r++) {
                if (!puts_(p, "  - ")) return put_fail(p);
                if ((st = put_value(p, v->items[r], 1))) return st;
                if (!puts_(p, "\n")) return put_fail(p);
            }
            if (!v->n && !puts_(p, " []\n")) return put_fail(p);
            continue;
        }
        if (!puts_(p, " ")) return put_fail(p);
        if ((st = put_value(p, v, 1))) return st;
        if (!puts_(p, "\n")) return put_fail(p);
    }
    /* no scale letter: Ultralytics (parse_model) built the model at the first scale listed */
    const strix_pk_value *scale = strix_pk_get(y, "scale"), *scales = strix_pk_get(y, "scales");
    if ((!scale || (scale->type == STRIX_PK_STR && !scale->len)) && scales && scales->type == STRIX_PK_DICT &&
        scales->n >= 2 && scales->items[0]->type == STRIX_PK_STR) {
        if (!puts_(p, "scale: ") || !put_quoted(p, scales->items[0]->s, scales->items[0]->len) || !puts_(p, "\n"))
            return put_fail(p);
    }
    return STRIX_OK;
}

/* model.names: {0: "person", ...} or ["person", ...], ids 0..n-1. */
static strix_status take_names(pt *p, const strix_pk_value *v, strix_checkpoint *c)
{
    int dict = v->type == STRIX_PK_DICT;
    if (!dict && v->type != STRIX_PK_LIST && v->type != STRIX_PK_TUPLE)
        return pt_bad(p, "the model's class names are not a dict or list", NULL);
    size_t n = dict ? v->n / 2 : v->n;
    if (n > STRIX_MAX_CLASSES) return pt_bad(p, "the model names more classes than strix supports", NULL);
    if (!n) return STRIX_OK;
    if (!(c->names = calloc(n, sizeof *c->names))) return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory", p->path);
    c->n_names = (int)n;
    for (size_t i = 0; i < n; i++) {
        const strix_pk_value *id = dict ? v->items[2 * i] : NULL, *name = dict ? v->items[2 * i + 1] : v->items[i];
        int64_t k = dict ? (id->type == STRIX_PK_INT ? id->i : -1) : (int64_t)i;
        if (k < 0 || (size_t)k >= n || c->names[k] || name->type != STRIX_PK_STR || strlen(name->s) != name->len)
            return pt_bad(p, "the model's class names are not ids 0..n-1 with one text each", NULL);
        if (!(c->names[k] = strdup(name->s))) return strix_fail(p->err, STRIX_E_NOMEM, "%s: out of memory", p->path);
    }
    return STRIX_OK;
}

static int is_state_dict(const strix_pk_value *v)
{
    if (v->type != STRIX_PK_DICT || !v->n) return 0;
    for (size_t i = 0; i + 1 < v->n; i += 2)
        if (v->items[i]->type != STRIX_PK_STR || v->items[i + 1]->type != STRIX_PK_TENSOR) return 0;
    return 1;
}

static strix_status read_root(pt *p, const strix_pk_value *root, strix_checkpoint *c)
{
    strix_status st;
    const strix_pk_value *model = root;
    if (is_state_dict(root)) { /* torch.save(model.state_dict()): tensors only, the YAML comes from --model */
        for (size_t i = 0; i + 1 < root->n; i += 2)
            if ((st = add_tensor(p, root->items[i]->s, root->items[i + 1]))) return st;
        return STRIX_OK;
    }
    if (root->type == STRIX_PK_DICT) {
        const strix_pk_value *ema = strix_pk_get(root, "ema");
        model = ema && ema->type == STRIX_PK_OBJECT ? ema : strix_pk_get(root, "model");
        if (!model) return pt_bad(p, "the checkpoint has no 'model' (not an Ultralytics checkpoint)", NULL);
    }
    if (model->type != STRIX_PK_OBJECT)
        return pt_bad(p, "the checkpoint's model is not a torch module (not an Ultralytics checkpoint)", NULL);
    /* the task is the graph's (its head module, in the embedded YAML); these are the classes that hold them */
    static const char *const models[] = {"DetectionModel", "SegmentationModel", "PoseModel", "OBBModel",
                                         "ClassificationModel"};
    int known = 0;
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        known |= !strncmp(model->s, "ultralytics.nn.tasks.", 21) && !strcmp(model->s + 21, models[i]);
    if (!known)
        return strix_fail(p->err, STRIX_E_WEIGHTS, "%s: the checkpoint holds a %s; strix runs Ultralytics' "
                          "DetectionModel, SegmentationModel, PoseModel, OBBModel and ClassificationModel only",
                          p->path, model->s);
    if ((st = walk_module(p, model, "", 0))) return st;
    const strix_pk_value *y = strix_pk_get(model->state, "yaml"), *names = strix_pk_get(model->state, "names");
    if (!y) return pt_bad(p, "the model has no `yaml` attribute (its graph)", NULL);
    if ((st = put_yaml(p, y))) return st;
    if (names && names->type != STRIX_PK_NONE && (st = take_names(p, names, c))) return st;
    return STRIX_OK;
}

strix_status strix_pt_read(strix_checkpoint *c, const char *path, const uint8_t *buf, size_t len, int owns_map,
                           strix_error *err)
{
    memset(c, 0, sizeof *c);
    c->format = "pt";
    pt p = {0};
    p.path = path;
    p.err = err;
    p.file_len = len;
    strix_zip z;
    strix_pickle *pk = NULL;
    const strix_pk_value *root;
    strix_status st;
    if (!(p.own = strix_ckpt_owner_new(buf, len, owns_map))) {
        if (owns_map) strix_file_unmap(buf, len);
        return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    }
    if ((st = strix_zip_open(&z, buf, len, path, err))) {
        strix_ckpt_owner_release(p.own);
        return st;
    }
    p.zip = &z;
    const strix_zip_entry *pkl = NULL;
    for (size_t i = 0; i < z.n; i++) {
        const char *s = strchr(z.entries[i].name, '/');
        if (s && !strcmp(s, "/data.pkl") && (size_t)(s - z.entries[i].name) + 2 < sizeof p.prefix) {
            if (pkl) {
                st = pt_bad(&p, "the archive holds two data.pkl entries", NULL);
                goto done;
            }
            pkl = &z.entries[i];
            snprintf(p.prefix, sizeof p.prefix, "%.*s/", (int)(s - pkl->name), pkl->name);
        }
    }
    if (!pkl) {
        st = pt_bad(&p, "a ZIP archive without PREFIX/data.pkl: not a torch.save checkpoint", NULL);
        goto done;
    }
    char bo[300];
    snprintf(bo, sizeof bo, "%sbyteorder", p.prefix);
    const strix_zip_entry *order = strix_zip_find(&z, bo);
    if (order && !(order->size == 6 && !memcmp(order->data, "little", 6))) {
        st = pt_bad(&p, "the checkpoint was saved big-endian; strix reads little-endian checkpoints", NULL);
        goto done;
    }
    if ((st = strix_pickle_load(&pk, &root, pkl->data, (size_t)pkl->size, path, err))) goto done;
    if ((st = read_root(&p, root, c))) goto done;
    c->yaml = p.yaml;
    p.yaml = NULL;
    st = strix_st_from_memory(&c->tensors, path, p.t, p.n, strix_ckpt_owner_release, p.own, err);
    p.own = NULL; /* released by the set, or by from_memory on failure */
done:
    strix_pickle_free(pk);
    strix_zip_close(&z);
    strix_ckpt_owner_release(p.own);
    free(p.t);
    free(p.yaml);
    if (st) strix_checkpoint_close(c);
    return st;
}
