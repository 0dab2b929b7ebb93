/* checkpoint.h — a weights file of any format strix reads, as one set of
 * named tensors under Ultralytics' state_dict names:
 *   .safetensors  (loaders/safetensors.c)
 *   .pt           a torch.save zip (loaders/zip.c) whose pickle (loaders/pickle.c,
 *                 restricted: nothing is executed) holds an Ultralytics
 *                 DetectionModel; its model YAML and class names come along
 *   .onnx         an Ultralytics ONNX export (loaders/onnx.c): each Conv's
 *                 initializers under the module path its node name gives
 *                 (/model.22/cv2.0/cv2.0.2/Conv -> model.22.cv2.0.2.weight);
 *                 BatchNorm is already folded (a fused checkpoint)
 * The format is told by content: a ZIP signature is a .pt, the .onnx suffix
 * an ONNX file, anything else is read as safetensors. */
#ifndef STRIX_CHECKPOINT_H
#define STRIX_CHECKPOINT_H

#include "safetensors.h"
#include "strix.h"

#define STRIX_CKPT_MAX_BYTES ((size_t)16 << 30) /* 16 GiB: ten times the largest YOLO checkpoint */

typedef struct strix_checkpoint {
    const char *format;     /* "safetensors", "pt" or "onnx" */
    strix_st_file *tensors; /* by state_dict name; each .pt / ONNX tensor's origin says where it came from */
    char *yaml;             /* .pt: the embedded model YAML, as YAML text; NULL otherwise */
    char **names;           /* class names the file carries (.pt: model.names, ONNX: metadata); NULL if none */
    int n_names;
    char *description;      /* ONNX: its `description` metadata ("Ultralytics YOLOv8n model"), or NULL */
    char producer[64];      /* ONNX: its producer_name and producer_version ("pytorch 2.3.0"), or "" */
    int input_h, input_w;   /* ONNX: a static export's fixed input height and width; 0 when dynamic */
    int stride;             /* ONNX: its `stride` metadata (Ultralytics' int(max(model.stride))), 1..1024; 0: none */
} strix_checkpoint;

/* Errors: STRIX_E_IO (missing, unreadable), STRIX_E_WEIGHTS (malformed, or
 * not an Ultralytics detection model; one line naming the file and what is
 * wrong), STRIX_E_NOMEM.  c is zeroed on failure. */
strix_status strix_checkpoint_open(strix_checkpoint *c, const char *path, strix_error *err);
void strix_checkpoint_close(strix_checkpoint *c);

/* From an Ultralytics ONNX export's description ("Ultralytics YOLOv8n model
 * trained on coco.yaml": the exporter's pretty name, the stem of the model's
 * YAML with yolo written YOLO), the stem of the one-file-per-family YAML it
 * was made from (yolov8n -> yolov8, yolov5n6u -> yolov5-p6, yolov8s-p2 ->
 * yolov8-p2, yolov3u -> yolov3) into family[cap] and its scale letter
 * (0 when the name gives none); 0 when the description is not of that form. */
int strix_onnx_family(const char *description, char *family, size_t cap, char *scale);

/* The per-format readers behind strix_checkpoint_open (the fuzzers call
 * them directly): c->tensors points into buf[0..len).  owns_map: buf is a
 * strix_file_map mapping the tensor set unmaps when closed (and the reader
 * at once on a failure); 0: buf outlives c (the caller frees it). */
strix_status strix_pt_read(strix_checkpoint *c, const char *path, const uint8_t *buf, size_t len, int owns_map,
                           strix_error *err);
strix_status strix_onnx_read(strix_checkpoint *c, const char *path, const uint8_t *buf, size_t len, int owns_map,
                             strix_error *err);

/* Shared by the readers: what a tensor set keeps alive (the mapping and the
 * buffers of tensors that had to be converted or gathered). */
typedef struct strix_ckpt_owner {
    const uint8_t *map;
    size_t len;
    int owns_map;
    void **bufs;
    size_t n, cap;
} strix_ckpt_owner;

strix_ckpt_owner *strix_ckpt_owner_new(const uint8_t *map, size_t len, int owns_map);
/* A new buffer of n bytes the owner frees; NULL when out of memory. */
void *strix_ckpt_owner_alloc(strix_ckpt_owner *o, size_t n);
void strix_ckpt_owner_release(void *owner);

#endif
