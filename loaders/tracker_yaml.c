/* tracker_yaml.c — reads an Ultralytics tracker YAML (a flat mapping of
 * scalars, as the files in ultralytics/cfg/trackers) with libyaml's document API.
 * Strict: a key the file names must be one Ultralytics' botsort.yaml,
 * bytetrack.yaml, ocsort.yaml, fasttrack.yaml, deepocsort.yaml or
 * tracktrack.yaml defines, with a value of its type; with_reid's model must
 * be auto (the detector's features; strix runs no separate ReID model). */
#include "tracker_yaml.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "util.h"

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }

static int parse_number(const char *s, double *v)
{
    if (!*s) return 0;
    for (const char *q = s; *q; q++)
        if (!strchr("0123456789+-.eE", *q)) return 0; /* no hex, inf, nan */
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

static int parse_bool(const char *s, int *b)
{
    static const char *t[] = {"true", "True", "TRUE"}, *f[] = {"false", "False", "FALSE"};
    for (int i = 0; i < 3; i++) {
        if (!strcmp(s, t[i])) return *b = 1;
        if (!strcmp(s, f[i])) return (*b = 0), 1;
    }
    return 0;
}

typedef enum { K_TYPE, K_FLOAT, K_WEIGHT, K_INT, K_BOOL, K_GMC, K_GREY, K_REID, K_MODEL, K_SCALE, K_UNIT } kind;

static const struct key {
    const char *name;
    kind k;
    size_t off; /* of the float or int in strix_track_options */
} keys[] = {
    {"tracker_type", K_TYPE, 0},
    {"track_high_thresh", K_FLOAT, offsetof(strix_track_options, track_high_thresh)},
    {"track_low_thresh", K_FLOAT, offsetof(strix_track_options, track_low_thresh)},
    {"new_track_thresh", K_FLOAT, offsetof(strix_track_options, new_track_thresh)},
    {"track_buffer", K_INT, offsetof(strix_track_options, track_buffer)},
    {"match_thresh", K_FLOAT, offsetof(strix_track_options, match_thresh)},
    {"fuse_score", K_BOOL, offsetof(strix_track_options, fuse_score)},
    {"gmc_method", K_GMC, 0},
    {"gmc_grey", K_GREY, 0}, /* strix's own: which OpenCV's grey GMC follows */
    {"proximity_thresh", K_FLOAT, offsetof(strix_track_options, proximity_thresh)},
    {"appearance_thresh", K_FLOAT, offsetof(strix_track_options, appearance_thresh)},
    {"with_reid", K_REID, 0},
    {"model", K_MODEL, 0},
    {"delta_t", K_INT, offsetof(strix_track_options, delta_t)},
    {"inertia", K_WEIGHT, offsetof(strix_track_options, inertia)},
    {"use_byte", K_BOOL, offsetof(strix_track_options, use_byte)},
    {"reset_velocity_offset_occ", K_INT, offsetof(strix_track_options, reset_velocity_offset_occ)},
    {"reset_pos_offset_occ", K_INT, offsetof(strix_track_options, reset_pos_offset_occ)},
    {"enlarge_bbox_occ", K_SCALE, offsetof(strix_track_options, enlarge_bbox_occ)},
    {"dampen_motion_occ", K_UNIT, offsetof(strix_track_options, dampen_motion_occ)},
    {"active_occ_to_lost_thresh", K_INT, offsetof(strix_track_options, active_occ_to_lost_thresh)},
    {"occ_cover_thresh", K_FLOAT, offsetof(strix_track_options, occ_cover_thresh)},
    {"occ_reappear_window", K_INT, offsetof(strix_track_options, occ_reappear_window)},
    {"init_iou_suppress", K_FLOAT, offsetof(strix_track_options, init_iou_suppress)},
    {"alpha_fixed_emb", K_FLOAT, offsetof(strix_track_options, alpha_fixed_emb)},
    {"lost_match_thr", K_FLOAT, offsetof(strix_track_options, lost_match_thr)},
    {"iou_weight", K_WEIGHT, offsetof(strix_track_options, iou_weight)},
    {"reid_weight", K_WEIGHT, offsetof(strix_track_options, reid_weight)},
    {"conf_weight", K_WEIGHT, offsetof(strix_track_options, conf_weight)},
    {"angle_weight", K_WEIGHT, offsetof(strix_track_options, angle_weight)},
    {"penalty_p", K_WEIGHT, offsetof(strix_track_options, penalty_p)},
    {"penalty_q", K_WEIGHT, offsetof(strix_track_options, penalty_q)},
    {"reduce_step", K_FLOAT, offsetof(strix_track_options, reduce_step)},
    {"tai_thr", K_FLOAT, offsetof(strix_track_options, tai_thr)},
    {"min_track_len", K_INT, offsetof(strix_track_options, min_track_len)},
};

/* One key's value into o; the type key is handled by the caller. */
static strix_status read_value(const char *path, const struct key *k, const yaml_node_t *v, strix_track_options *o,
                               strix_error *err)
{
    const char *s = (const char *)v->data.scalar.value;
    int line = line_of(v), b;
    double x;
    switch (k->k) {
    case K_FLOAT:
        if (!parse_number(s, &x) || x < 0 || x > 1)
            return strix_fail(err, STRIX_E_ARG, "%s:%d: %s must be a number in 0..1, not '%s'", path, line, k->name, s);
        *(float *)((char *)o + k->off) = (float)x;
        return STRIX_OK;
    case K_WEIGHT: /* a weight, not a threshold: any size */
        if (!parse_number(s, &x) || x < 0 || x > 1e9)
            return strix_fail(err, STRIX_E_ARG, "%s:%d: %s must be a number >= 0, not '%s'", path, line, k->name, s);
        *(float *)((char *)o + k->off) = (float)x;
        return STRIX_OK;
    case K_SCALE: /* a factor on the Kalman state: a double, as Ultralytics' float() */
    case K_UNIT:
        if (!parse_number(s, &x) || x < 0 || x > (k->k == K_UNIT ? 1 : 1e9))
            return strix_fail(err, STRIX_E_ARG, "%s:%d: %s must be a number %s, not '%s'", path, line, k->name,
                              k->k == K_UNIT ? "in 0..1" : ">= 0", s);
        *(double *)((char *)o + k->off) = x;
        return STRIX_OK;
    case K_INT:
        if (!parse_number(s, &x) || x != floor(x) || x < 0 || x > 1e9)
            return strix_fail(err, STRIX_E_ARG, "%s:%d: %s must be a whole number >= 0, not '%s'", path, line, k->name,
                              s);
        *(int *)((char *)o + k->off) = (int)x;
        return STRIX_OK;
    case K_BOOL:
        if (!parse_bool(s, &b))
            return strix_fail(err, STRIX_E_ARG, "%s:%d: %s must be True or False, not '%s'", path, line, k->name, s);
        *(int *)((char *)o + k->off) = b;
        return STRIX_OK;
    case K_GMC:
        if (!strcmp(s, "sparseOptFlow")) o->gmc_method = STRIX_GMC_SPARSE_OPTFLOW;
        else if (!strcmp(s, "none") || !strcmp(s, "None") || !strcmp(s, "null") || !*s) o->gmc_method = STRIX_GMC_NONE;
        else if (!strcmp(s, "orb") || !strcmp(s, "sift") || !strcmp(s, "ecc"))
            return strix_fail(err, STRIX_E_UNSUPPORTED, "%s:%d: gmc_method %s is not implemented in strix; use "
                              "sparseOptFlow (Ultralytics' default) or none", path, line, s);
        else
            return strix_fail(err, STRIX_E_ARG, "%s:%d: unknown gmc_method '%s' (sparseOptFlow or none)", path, line, s);
        return STRIX_OK;
    case K_GREY:
        if (!strcmp(s, "opencv5")) o->gmc_grey = STRIX_GREY_OPENCV5;
        else if (!strcmp(s, "opencv4")) o->gmc_grey = STRIX_GREY_OPENCV4;
        else
            return strix_fail(err, STRIX_E_ARG, "%s:%d: unknown gmc_grey '%s' (opencv5 or opencv4)", path, line, s);
        return STRIX_OK;
    case K_REID: /* Ultralytics reads it for botsort, deepocsort and tracktrack only */
        if (!parse_bool(s, &b))
            return strix_fail(err, STRIX_E_ARG, "%s:%d: with_reid must be True or False, not '%s'", path, line, s);
        o->with_reid = b && (o->tracker_type == STRIX_TRACKER_BOTSORT || o->tracker_type == STRIX_TRACKER_DEEPOCSORT ||
                             o->tracker_type == STRIX_TRACKER_TRACKTRACK);
        return STRIX_OK;
    case K_MODEL: /* the ReID model: checked by read_map once with_reid is known */
    case K_TYPE: return STRIX_OK;
    }
    return STRIX_OK;
}

static strix_status read_map(const char *path, yaml_document_t *doc, yaml_node_t *root, strix_track_options *o,
                             strix_error *err)
{
    if (root->type != YAML_MAPPING_NODE)
        return strix_fail(err, STRIX_E_ARG, "%s:%d: expected a mapping of tracker settings (key: value)", path,
                          line_of(root));
    /* tracker_type first: it picks the defaults */
    yaml_node_t *type = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "tracker_type"))
            type = yaml_document_get_node(doc, p->value);
    }
#define TYPES "botsort, bytetrack, ocsort, fasttrack, deepocsort or tracktrack"
    if (!type) return strix_fail(err, STRIX_E_ARG, "%s: no tracker_type (" TYPES ")", path);
    const char *ts = type->type == YAML_SCALAR_NODE ? (const char *)type->data.scalar.value : "";
    static const strix_tracker_type types[] = {STRIX_TRACKER_BOTSORT,   STRIX_TRACKER_BYTETRACK,
                                               STRIX_TRACKER_OCSORT,    STRIX_TRACKER_FASTTRACK,
                                               STRIX_TRACKER_DEEPOCSORT, STRIX_TRACKER_TRACKTRACK};
    size_t ti = 0;
    while (ti < sizeof types / sizeof types[0] && strcmp(ts, strix_tracker_type_name(types[ti]))) ti++;
    if (ti == sizeof types / sizeof types[0])
        return strix_fail(err, STRIX_E_ARG, "%s:%d: unknown tracker_type '%s' (" TYPES ")", path, line_of(type), ts);
    strix_track_options_init(o, types[ti]);
    yaml_node_t *model = NULL;
#undef TYPES
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
        if (k->type != YAML_SCALAR_NODE)
            return strix_fail(err, STRIX_E_ARG, "%s:%d: a key must be a plain name", path, line_of(k));
        const char *name = (const char *)k->data.scalar.value;
        const struct key *key = NULL;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (!strcmp(name, keys[i].name)) key = &keys[i];
        if (!key)
            return strix_fail(err, STRIX_E_ARG, "%s:%d: unknown key '%s' (Ultralytics' botsort.yaml, bytetrack.yaml, "
                              "ocsort.yaml, fasttrack.yaml, deepocsort.yaml and tracktrack.yaml define tracker_type, "
                              "track_high_thresh, track_low_thresh, new_track_thresh, track_buffer, match_thresh, "
                              "fuse_score, gmc_method, proximity_thresh, appearance_thresh, with_reid, model, delta_t, "
                              "inertia, use_byte, reset_velocity_offset_occ, reset_pos_offset_occ, enlarge_bbox_occ, "
                              "dampen_motion_occ, active_occ_to_lost_thresh, occ_cover_thresh, occ_reappear_window, "
                              "init_iou_suppress, alpha_fixed_emb, lost_match_thr, iou_weight, reid_weight, "
                              "conf_weight, angle_weight, penalty_p, penalty_q, reduce_step, tai_thr, min_track_len; "
                              "and strix's gmc_grey)",
                              path, line_of(k), name);
        if (v->type != YAML_SCALAR_NODE)
            return strix_fail(err, STRIX_E_ARG, "%s:%d: %s must be a single value", path, line_of(v), name);
        strix_status st = read_value(path, key, v, o, err);
        if (st) return st;
        if (key->k == K_MODEL) model = v;
    }
    /* ReID's model: auto, the detector's own features; Ultralytics' default when the key is absent */
    const char *ms = model ? (const char *)model->data.scalar.value : "auto";
    if (o->with_reid && strcmp(ms, "auto"))
        return strix_fail(err, STRIX_E_UNSUPPORTED, "%s:%d: model '%s': strix runs no separate ReID model; set model: "
                          "auto (the detector's own features) or with_reid: False", path, line_of(model), ms);
    return STRIX_OK;
}

strix_status strix_tracker_yaml_read(const char *path, strix_track_options *o, strix_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strix_fail(err, STRIX_E_IO, "%s: cannot open the tracker file: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return strix_fail(err, STRIX_E_IO, "%s: is a directory; give a tracker YAML file", path);
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return strix_fail(err, STRIX_E_NOMEM, "%s: cannot initialise the YAML parser", path);
    }
    yaml_parser_set_input_file(&parser, f);
    strix_status st;
    if (!yaml_parser_load(&parser, &doc)) {
        if (parser.error == YAML_READER_ERROR && ferror(f))
            st = strix_fail(err, STRIX_E_IO, "%s: cannot read the tracker file: %s", path, strerror(errno));
        else
            st = strix_fail(err, STRIX_E_ARG, "%s:%d: malformed YAML: %s", path, (int)parser.problem_mark.line + 1,
                            parser.problem ? parser.problem : "syntax error");
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        st = root ? read_map(path, &doc, root, o, err)
                  : strix_fail(err, STRIX_E_ARG, "%s: the file is empty (expected a tracker YAML)", path);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return st;
}
