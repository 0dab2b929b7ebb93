/* model_yaml.h — the Ultralytics model-YAML schema read with libyaml into
 * plain structs (no interpretation of modules: that is engine/graph.c).
 * Every row and value keeps its 1-based line so later errors can name it. */
#ifndef STRIX_MODEL_YAML_H
#define STRIX_MODEL_YAML_H

#include "strix.h"

#define STRIX_YAML_MAX_ARGS 12
#define STRIX_YAML_MAX_FROM 16
#define STRIX_YAML_MAX_SCALES 8

typedef enum strix_yaml_arg_type {
    STRIX_ARG_INT,
    STRIX_ARG_FLOAT,
    STRIX_ARG_BOOL,
    STRIX_ARG_NONE,
    STRIX_ARG_STR,   /* a quoted string, or a bare word Ultralytics resolves (nc) */
    STRIX_ARG_LIST   /* a nested list: kept only for error messages */
} strix_yaml_arg_type;

typedef struct strix_yaml_arg {
    strix_yaml_arg_type type;
    long long i;     /* INT, BOOL (0/1) */
    double f;        /* FLOAT, and INT converted */
    char str[32];    /* STR: the text; others: the source text, for printing */
    int line;
} strix_yaml_arg;

typedef struct strix_yaml_row {
    int line;
    int from[STRIX_YAML_MAX_FROM];
    int n_from;
    int from_is_list;  /* [-1, 6] rather than -1 */
    int repeats;
    char module[48];
    strix_yaml_arg args[STRIX_YAML_MAX_ARGS];
    int n_args;
} strix_yaml_row;

typedef struct strix_yaml_scale {
    char letter;
    double depth, width;
    int max_channels;
    int line;
} strix_yaml_scale;

typedef struct strix_yaml_model {
    char path[512];
    int nc, nc_line;               /* nc_line 0: key absent */
    strix_yaml_scale scales[STRIX_YAML_MAX_SCALES];
    int n_scales;
    double depth_multiple, width_multiple; /* used when there is no `scales` */
    char scale;                    /* the optional `scale:` key */
    int reg_max;                   /* optional, default 16 */
    int end2end;                   /* `end2end: true`: the one-to-one, NMS-free head (YOLO26) */
    int kpt_n, kpt_d;              /* `kpt_shape: [keypoints, dims]` (Pose); 0 when absent */
    strix_yaml_row *rows;          /* backbone then head */
    int n_rows, n_backbone;
    char **names;                  /* optional `names` (list or {id: name}) */
    int n_names;
} strix_yaml_model;

/* Parse path.  Errors name the file and line: STRIX_E_IO when the file cannot
 * be read, STRIX_E_MODEL for anything malformed or unknown. */
strix_status strix_yaml_model_load(const char *path, strix_yaml_model *out, strix_error *err);
/* The same from text in memory (a .pt checkpoint's embedded YAML); label
 * stands for the path in messages. */
strix_status strix_yaml_model_parse(const char *text, size_t len, const char *label, strix_yaml_model *m,
                                    strix_error *err);
void strix_yaml_model_free(strix_yaml_model *m);

#endif
