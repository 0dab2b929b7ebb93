/* strix.h — the one public header of libstrix, a YOLO inference engine in C.
 *
 * Handles are opaque; every fallible call returns a strix_status and, when
 * given a non-NULL strix_error, fills it with one line naming the file and
 * the problem.  The library keeps no global mutable state and never exits:
 * two models in two threads never interfere.
 *
 * Typical use:
 *   strix_model_options o; strix_model_options_init(&o);
 *   o.yaml_path = "weights/yolov8.yaml"; o.scale = 'n';
 *   o.weights_path = "weights/yolov8n.safetensors";
 *   strix_model *m; strix_error e;
 *   if (strix_model_load(&m, &o, &e) != STRIX_OK) { puts(e.message); ... }
 *   strix_detect_options d; strix_detect_options_init(&d);
 *   strix_detections r[1];
 *   strix_model_detect(m, &img, 1, &d, r, &e);   // r[0].items valid until next call
 *   strix_model_free(m);
 */
#ifndef STRIX_H
#define STRIX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRIX_VERSION "0.1.0"

/* The most classes (nc) a model may have.  Every public detection vocabulary
 * fits (LVIS, the largest, has 1203); past a few thousand the head's class
 * branches dominate memory (nc = 100000 plans 6.4 GB of activations for one
 * 640x640 image, nc = 4096 about 265 MB). */
#define STRIX_MAX_CLASSES 4096

/* Status codes.  The CLI tools map each to a documented exit code (README). */
typedef enum strix_status {
    STRIX_OK = 0,
    STRIX_E_ARG,         /* an option or argument has an invalid value */
    STRIX_E_IO,          /* a file is missing, unreadable or unwritable */
    STRIX_E_MODEL,       /* the model YAML is malformed or unsupported */
    STRIX_E_WEIGHTS,     /* the weights file is malformed or does not match the graph */
    STRIX_E_IMAGE,       /* an image cannot be decoded or exceeds the limits */
    STRIX_E_NOMEM,       /* an allocation failed */
    STRIX_E_UNSUPPORTED, /* the request needs something this build lacks */
    STRIX_E_DEVICE,      /* the compute device failed (may be transient) */
    STRIX_E_INTERNAL     /* a bug in strix: please report it */
} strix_status;

typedef struct strix_error {
    strix_status status;
    char message[1024];
} strix_error;

/* A status in a few stable words ("ok", "i/o error", "bad model file", ...). */
const char *strix_status_name(strix_status s);

/* ------------------------------------------------------------------ model */

typedef struct strix_model strix_model;

/* The instruction sets of the CPU convolution's micro-kernels
 * (strix_model_options.cpu_isa): the library picks the widest one the CPU
 * runs when a model is loaded; the others are there for tests and
 * comparisons.  Results agree to the last bits of rounding. */
typedef enum strix_cpu_isa {
    STRIX_CPU_ISA_AUTO = 0,    /* the widest this CPU runs (sanitizer builds: GENERIC) */
    STRIX_CPU_ISA_GENERIC = 1, /* 4-wide vectors: any CPU (SSE2 on x86-64, NEON on aarch64) */
    STRIX_CPU_ISA_AVX2 = 2,    /* x86-64 AVX2 + FMA */
    STRIX_CPU_ISA_AVX512 = 3,  /* x86-64 AVX-512F */
    STRIX_CPU_ISA_NEON = 4,    /* aarch64 Advanced SIMD, the wider register block */
} strix_cpu_isa;
#define STRIX_CPU_ISA_COUNT 5

/* 1 when this build and this CPU can run isa (AUTO: always), else 0. */
int strix_cpu_isa_supported(strix_cpu_isa isa);
/* "auto", "generic", "avx2", "avx512", "neon"; NULL for another value. */
const char *strix_cpu_isa_name(strix_cpu_isa isa);

/* The arithmetic of a model's convolutions (strix_model_options.precision;
 * docs/gpu-cpu-precision.md "Precision": what runs where, and the drift).
 * Everything that is not a dense convolution ending in SiLU (depthwise,
 * the head's last 1x1 convolutions, attention, pooling, decode) stays fp32
 * on the CPU whatever the precision. */
typedef enum strix_precision {
    STRIX_PRECISION_FP32 = 0, /* the default: fp32 everywhere, Ultralytics' numbers */
    STRIX_PRECISION_BF16 = 1, /* CPU: bf16 weights and activations, fp32 sums (aarch64 with
                                 FEAT_BF16: BFDOT); refused on CUDA */
    STRIX_PRECISION_FP16 = 2, /* CUDA: the same as half = 1; the CPU has no fp16 path yet */
    STRIX_PRECISION_INT8 = 3, /* CPU: int8 after strix_model_quantize; until then detect and
                                 forward fail (STRIX_E_ARG), never running fp32 instead; refused on
                                 CUDA */
    STRIX_PRECISION_AUTO = 4, /* the fastest path whose drift the docs bound: bf16 where this CPU
                                 has a bf16 path, else fp32; on CUDA fp32 (or half's fp16).  Never
                                 int8: it needs calibration images and drifts further */
} strix_precision;
#define STRIX_PRECISION_COUNT 5

/* "fp32", "bf16", "fp16", "int8", "auto"; NULL for another value. */
const char *strix_precision_name(strix_precision p);
/* 1 when this build and this machine can load a model on `device` (as
 * strix_model_options.device: "cpu", NULL, "cuda", "cuda:N") with precision
 * p (AUTO and FP32: always), else 0.  A load with an unsupported one fails
 * with STRIX_E_UNSUPPORTED and a line naming what is missing. */
int strix_precision_supported(strix_precision p, const char *device);

typedef struct strix_model_options {
    const char *yaml_path;    /* Ultralytics model YAML; NULL: the one a .pt weights file embeds */
    const char *weights_path; /* .safetensors, Ultralytics .pt (read without running any of its
                                 pickle) or Ultralytics ONNX export (.onnx: without yaml_path,
                                 its family's YAML in yaml_dir); NULL builds the graph only
                                 (inspect) */
    const char *yaml_dir;     /* the directory of the family YAMLs (strix's weights/:
                                 yolov8.yaml, yolo11.yaml, ...) where an Ultralytics ONNX export
                                 given without yaml_path finds its YAML: the family and scale
                                 its description metadata names ("Ultralytics YOLOv8n model":
                                 yolov8.yaml, scale n unless scale is set); NULL: such an
                                 export needs yaml_path */
    char scale;               /* 'n','s','m','l','x'; 0 = from the file name (yolov8n.yaml) */
    int nc;                   /* class count override; 0 = an ONNX export's `names` count, else the YAML's nc */
    int threads;              /* CPU threads; 0 = all available */
    const char *device;       /* "cpu" (default; NULL or "" too), "cuda" (= "cuda:0") or "cuda:N" */
    int half;                 /* 1: fp16 activations and weights with fp32 accumulation (CUDA);
                                 ignored on cpu, as Ultralytics ignores half there */
    int nvtx;                 /* 1: NVTX ranges per pipeline stage and layer (CUDA), for Nsight Systems */
    int cuda_graphs;          /* CUDA: 1 (default) captures the forward once per input shape as a
                                 CUDA graph and replays it; 0 launches every kernel eagerly */
    int cuda_sync;            /* CUDA: 1 synchronises after every op, so that a device error names
                                 its layer (slow; no graphs then: a capture cannot synchronise) */
    int cuda_async;           /* CUDA: 1 runs submitted batches (strix_model_submit) without
                                 waiting: each in-flight batch has its own pinned staging and
                                 detection buffers, its upload runs on a copy stream and its
                                 network on a compute stream of its own, overlapping the other
                                 batch's, events order them (so the activation memory is there
                                 once per in-flight batch: twice the default's); a batch's
                                 frames are letterboxed in one kernel launch (RGB the same bits
                                 as the synchronous path); the forward's CUDA graphs are kept
                                 per batch shape (up to 4 other shapes besides the current one;
                                 all recaptured when a shape needs bigger buffers), so
                                 alternating shapes replay rather than recapture.  Not yet run
                                 on a GPU.  0 (default, the path verified on an H100) completes
                                 each batch inside submit, one letterbox launch per frame and
                                 one graph, of the last shape.  Either way STRIX_PINNED frames
                                 (strix_model_alloc_pinned) are DMA'd straight from their
                                 memory, the host ones copied into the staging first (not yet
                                 run on a GPU either; the strix tools use pinned frames only
                                 with cuda_async) */
    int nms_free;             /* a model with two heads (YOLO26, `end2end: true`): 1 runs the
                                 one-to-one head, top-k selection without NMS, as Ultralytics'
                                 predict(nms=False); 0 (default) the one-to-many head with NMS,
                                 as Ultralytics' default.  A checkpoint holding one head only (an
                                 ONNX export, a fused model) runs that one. */
    int cuda_kernels;         /* CUDA: 2 (default) the tensor-core set (mma.sync implicit-GEMM
                                 convolutions with fused epilogues on sm_80+, direct stem,
                                 vectorised upsample); 1 the first set (WMMA implicit GEMM,
                                 cuBLAS for 1x1). Both verified on an H100.  3: set 2 with
                                 split-K where a convolution's grid has fewer blocks than the
                                 GPU has SMs (batch 1, small images; K slices summed in a
                                 fixed order, so results are the same on every run), the stem
                                 reading its input tile through shared memory, and SPPF's
                                 pools in one pass from x (5/9/13 windows), and each neck
                                 upsample folded into the loads of the convolution that reads
                                 its Concat (no upsample kernel), and no 1x1 convolution
                                 through cuBLAS (fp32 ones too run on the implicit GEMM, their
                                 epilogue fused: no separate epilogue kernel) - built and
                                 unit-checked on the CPU, NOT yet run on a GPU */
    strix_cpu_isa cpu_isa;    /* CPU: AUTO (default) the widest micro-kernels this CPU runs;
                                 another value forces that set (tests, comparisons): a load fails
                                 with STRIX_E_ARG when this build or CPU cannot run it */
    int cpu_spin_us;          /* CPU: the library's own threads (not OpenMP, whose policy is the
                                 process environment's) block as soon as they are idle: 0
                                 (default) never spins; N > 0 polls up to N microseconds first,
                                 saving the wake-ups between an inference's ops at the price of
                                 that much CPU time per thread after each */
    int cpu_exact_conv;       /* CPU: 0 (default) 3x3 stride-1 convolutions through Winograd
                                 F(4,3) where this CPU's build has it and it is faster (AVX2:
                                 engine/cpu/conv_avx2.c; its transformed weights are kept beside
                                 the packed ones, about 3x the packed weights' memory: yolov8n
                                 12.6 -> 41.5 MB; results within docs/performance.md's bound of
                                 the exact ones); 1 the im2col GEMM and direct kernels only (less
                                 memory and load time, strix's numbers before Winograd) */
    strix_precision precision; /* FP32 (default), BF16, FP16, INT8 or AUTO: see strix_precision;
                                  one this build and device cannot run fails the load with
                                  STRIX_E_UNSUPPORTED */
} strix_model_options;

void strix_model_options_init(strix_model_options *o);

/* CUDA devices this build can use: 0 in a CPU-only build or without a
 * driver or device (never fails). */
int strix_device_count(void);
strix_status strix_model_load(strix_model **out, const strix_model_options *o, strix_error *err);
void strix_model_free(strix_model *m);

/* Number of classes, and the name of class i: from the YAML's `names` or a
 * names file; without names, COCO's for an 80-class model and "class<i>"
 * ("class0", "class1", ...: Ultralytics' AutoBackend default) otherwise.
 * NULL only for an id outside 0..nc-1. */
int strix_model_class_count(const strix_model *m);
const char *strix_model_class_name(const strix_model *m, int class_id);
/* The model's task, from its head (the last YAML layer): Detect, Segment /
 * Segment26, Pose / Pose26, OBB / OBB26 or Classify. */
typedef enum strix_task {
    STRIX_TASK_DETECT = 0,
    STRIX_TASK_SEGMENT = 1,
    STRIX_TASK_POSE = 2,
    STRIX_TASK_OBB = 3,
    STRIX_TASK_CLASSIFY = 4
} strix_task;
strix_task strix_model_task(const strix_model *m);
/* "detect", "segment", "pose", "obb", "classify" (Ultralytics' task names);
 * "unknown" for a value outside the enum. */
const char *strix_task_name(strix_task t);
/* Channels a task head adds after the 4 box values and nc scores of each
 * anchor in strix_model_forward's head: 32 mask coefficients (segment,
 * Ultralytics' nm), keypoints * dims decoded keypoint values (pose: x, y in
 * input pixels[, visibility after sigmoid] per keypoint), 1 angle in
 * radians (obb); 0 for detect and classify. */
int strix_model_task_channels(const strix_model *m);
/* Pose: keypoints and dims per keypoint (2 or 3) of kpt_shape; 0, 0 otherwise. */
void strix_model_kpt_shape(const strix_model *m, int *keypoints, int *dims);
/* Replace the class names with the lines of a text file (one name per line). */
strix_status strix_model_load_names(strix_model *m, const char *path, strix_error *err);
/* Largest stride of the network (32 for YOLOv8/11). */
int strix_model_stride(const strix_model *m);
/* A static ONNX export (export(dynamic=False)) runs only at the input size
 * it was exported with: 1 and its height and width, and detect letterboxes
 * every image to exactly that size, whatever imgsz and rect say (as
 * Ultralytics and ONNX Runtime run it: the export's imgsz, rect=False);
 * 0 for any other model (imgsz and rect apply). */
int strix_model_fixed_input(const strix_model *m, int *height, int *width);
/* The CPU convolution's instruction set this model runs with (never AUTO);
 * meaningful on the CPU device only. */
strix_cpu_isa strix_model_cpu_isa(const strix_model *m);
/* The precision m runs (AUTO resolved; FP16 for a CUDA model with half). */
strix_precision strix_model_precision(const strix_model *m);

/* Write deterministic synthetic weights for m's graph (tests, benchmarks):
 * Ultralytics state_dict names and shapes, seeded uniform convolution weights,
 * non-trivial BatchNorm statistics (unless fused: convolution + bias), class
 * biases spread so that random inputs give a real number of candidate boxes.
 * f16 != 0 stores F16.  BatchNorm statistics are calibrated on one forward
 * pass, so activations stay O(1) as in a trained network; a seed gives the same
 * raw weights everywhere (calibrated statistics may differ in the last bits).
 * overwrite == 0 refuses an existing path. */
strix_status strix_model_write_synthetic_weights(const strix_model *m, const char *path,
                                                 uint64_t seed, int fused, int f16, int overwrite,
                                                 strix_error *err);

/* ---------------------------------------------------------------- inspect */

typedef struct strix_layer_info {
    int index;
    char from[64];       /* as in the YAML: "-1", "[-1, 6]" */
    int repeats;         /* after depth scaling */
    long long params;    /* unfused (BatchNorm kept) */
    char module[32];     /* "Conv", "C2f", ... */
    char args[128];      /* resolved arguments as Ultralytics prints them */
    int out_c, out_h, out_w;
    int cascade;         /* max-pools the program runs as one fused cascade op (SPPF), 0 if none */
} strix_layer_info;

typedef struct strix_model_summary {
    int layers;                /* YAML layers */
    int modules_unfused;       /* torch modules, as Ultralytics counts "layers" */
    int modules_fused;
    long long params_unfused;
    long long params_fused;
    double gflops_unfused;     /* 2 x MACs (BatchNorm counted as Ultralytics/thop does) */
    double gflops_fused;       /* 2 x convolution MACs, at the given input size */
    size_t peak_activation_bytes; /* planned arena for batch 1 at the given size */
    size_t weight_bytes;       /* fused fp32 weights held by the engine */
} strix_model_summary;

int strix_model_layer_count(const strix_model *m);
strix_status strix_model_layer_info(const strix_model *m, int i, int height, int width,
                                    strix_layer_info *out, strix_error *err);
strix_status strix_model_summarize(const strix_model *m, int height, int width,
                                   strix_model_summary *out, strix_error *err);

/* ----------------------------------------------------------------- detect */

/* STRIX_RGB / STRIX_BGR: packed uint8 HWC, three channels.
 * STRIX_NV12: a video decoder's YUV 4:2:0 (NVDEC's output): `data` is the Y
 * plane (width bytes a row), `uv` the interleaved U,V plane at half
 * resolution ((width + 1) / 2 pairs a row, (height + 1) / 2 rows).  It is
 * converted to RGB per source pixel with the chroma of its 2x2 block
 * (nearest, as swscale's and NVIDIA's unscaled converters), in 16-bit fixed
 * point with the colour matrix and range below, then letterboxed exactly as
 * an RGB image with those pixels would be. */
typedef enum strix_pixel_format { STRIX_RGB = 0, STRIX_BGR = 1, STRIX_NV12 = 2 } strix_pixel_format;
typedef enum strix_colorspace { STRIX_BT601 = 0, STRIX_BT709 = 1 } strix_colorspace;
/* Where the pixels are:
 * STRIX_HOST   any host memory.  On a CUDA device they are copied into the
 *              model's own page-locked staging, from which they are DMA'd.
 * STRIX_DEVICE (CUDA backend only) device memory of the model's device, e.g.
 *              an NVDEC frame, letterboxed without a copy.  Device pixels
 *              must be complete when detect or submit is called (work queued
 *              on the legacy default stream, where FFmpeg's NVDEC copies its
 *              frames, is waited for; any other stream that wrote them must
 *              be synchronised).
 * STRIX_PINNED host memory from strix_model_alloc_pinned (a decoder writes
 *              its frames there): on a CUDA device it is page-locked and DMA'd
 *              to the device straight from where it is, with no CPU copy into
 *              the staging.  On the CPU backend exactly as STRIX_HOST.  Other
 *              host memory marked STRIX_PINNED is still read correctly (CUDA
 *              copies pageable memory through its own staging before the
 *              copy call returns) but gains nothing.
 * Device and pinned pixels are read while the batch runs, not staged: they
 * must stay unchanged until detect returns or the submitted batch is
 * collected or released.  Detections do not depend on the memory kind: the
 * same pixels give the same bits as STRIX_HOST, kinds mixed freely in a
 * batch. */
typedef enum strix_memory { STRIX_HOST = 0, STRIX_DEVICE = 1, STRIX_PINNED = 2 } strix_memory;

/* Frame memory for STRIX_PINNED images: bytes (> 0) of host memory the CPU
 * reads and writes, aligned to STRIX_PINNED_ALIGN bytes, page-locked on a
 * CUDA device (cudaHostAlloc, portable: usable with every device), plain
 * memory on the CPU backend.  Free it with strix_model_free_pinned on the
 * same model, before strix_model_free.  Unlike the model's other calls
 * these two may run on any thread, concurrently with the model's calls on
 * another (a decoder thread allocates its frames while detection runs):
 * they use nothing of the model but its device.  Page-locked memory is
 * taken from the machine's RAM and cannot be swapped: allocate the frames
 * a pipeline holds, not one per frame decoded.  Errors: STRIX_E_ARG (bytes
 * 0, out NULL, a model loaded without weights), STRIX_E_NOMEM,
 * STRIX_E_DEVICE. */
#define STRIX_PINNED_ALIGN 256
strix_status strix_model_alloc_pinned(strix_model *m, size_t bytes, void **out, strix_error *err);
/* p: from strix_model_alloc_pinned on m, or NULL (nothing to free). */
void strix_model_free_pinned(strix_model *m, void *p);

/* A borrowed uint8 image; zero-initialise the fields a format does not use. */
typedef struct strix_image {
    const uint8_t *data;
    int width, height;
    int stride;                /* bytes per row of data; 0 = width * 3 (RGB/BGR) or width (NV12) */
    strix_pixel_format format;
    const uint8_t *uv;         /* NV12: the U,V plane */
    int uv_stride;             /* NV12: bytes per row of uv; 0 = 2 * ((width + 1) / 2) */
    strix_colorspace colorspace; /* NV12: the colour matrix (BT.601 default) */
    int full_range;            /* NV12: 1 = full (JPEG) range, 0 = limited (16-235) */
    strix_memory memory;
} strix_image;

/* Still images from files, decoded as the strix tools decode them, with the
 * limits and error lines a batch job needs.  strix_image_load refuses images
 * with more pixels than this unless the caller asks for more: a hostile
 * header can claim gigapixels and exhaust memory. */
#define STRIX_IMAGE_MAX_PIXELS ((size_t)1 << 28)

typedef struct strix_owned_image {
    uint8_t *data;  /* dense [height, width, 3] RGB, malloc()ed */
    int width, height;
} strix_owned_image;

/* Load a JPEG (libjpeg-turbo: grey, YCbCr, CMYK and YCCK, EXIF orientation
 * applied; the pixels cv2.imread gives) or any other format stb_image reads
 * (PNG, BMP, TGA, GIF's first frame, PSD, HDR/PNM) as 8-bit RGB.  Errors:
 * STRIX_E_IO (missing/unreadable), STRIX_E_IMAGE (empty, corrupt, truncated,
 * 0x0, over max_pixels).  0 = the default limit. */
strix_status strix_image_load(const char *path, size_t max_pixels, strix_owned_image *out,
                              strix_error *err);
/* The same from len bytes in memory (what strix_image_load read); name
 * stands for the file in messages.  buf is only read. */
strix_status strix_image_decode(const char *name, const uint8_t *buf, size_t len, size_t max_pixels,
                                strix_owned_image *out, strix_error *err);
void strix_image_free(strix_owned_image *img);

/* A borrowed view of an owned image. */
strix_image strix_image_view(const strix_owned_image *img);

typedef struct strix_detect_options {
    float conf;       /* minimum class score, default 0.25 */
    float iou;        /* NMS IoU threshold, default 0.7 */
    int max_det;      /* at most this many boxes per image, default 300 */
    int imgsz;        /* target long side, default 640 (rounded up to the stride) */
    int rect;         /* 1 (default): minimal stride-aligned padding when all images
                         of the batch share one size; 0: always imgsz x imgsz
                         (a static ONNX export ignores both: strix_model_fixed_input) */
    int agnostic;     /* 1: class-agnostic NMS; default 0 (class-aware) */
    const unsigned char *classes; /* NULL (default) keeps every class; otherwise nc flags: an
                                     anchor whose best class c has classes[c] == 0 is dropped
                                     before NMS and max_det, as Ultralytics' classes= */
    int recovered;    /* 1: also TrackTrack's recovered detections (strix_model_recovered); default 0 */
} strix_detect_options;

typedef struct strix_detection {
    float x1, y1, x2, y2; /* source-image pixels, clipped to the image */
    float score;
    int class_id;
} strix_detection;

typedef struct strix_detections {
    int count;
    const strix_detection *items; /* model-owned; valid until the next detect or free */
} strix_detections;

void strix_detect_options_init(strix_detect_options *o);

/* Detect objects in n images (any sizes).  out[i] receives image i's
 * detections, sorted by decreasing score. */
strix_status strix_model_detect(strix_model *m, const strix_image *images, int n,
                                const strix_detect_options *o, strix_detections *out,
                                strix_error *err);

/* Classify n images (any sizes; RGB or BGR in host or pinned memory) with a
 * classify model, as Ultralytics' ClassificationPredictor: its
 * classify_transforms(size) (torchvision's Resize: the shortest side to size
 * by Pillow's 8-bit bilinear resize; CenterCrop(size); /255), the network,
 * its softmax: probs[i * nc + c], nc = strix_model_class_count(m).  size =
 * strix_model_classify_size(m, imgsz): imgsz rounded up as the predictor's
 * check_imgsz rounds it, to a multiple of 32 (AutoBackend's stride,
 * max(model stride, 32)) or of an ONNX export's `stride` metadata; a static
 * ONNX export's own size.  STRIX_E_ARG for a model of another task, an
 * image in device memory or NV12, a size outside 32..8192. */
strix_status strix_model_classify(strix_model *m, const strix_image *images, int n, int imgsz, float *probs,
                                  strix_error *err);
int strix_model_classify_size(const strix_model *m, int imgsz);

/* The task values of a segment, pose or obb model's detections from the
 * last strix_model_detect, image `image` of its batch: values[k * stride +
 * j] belongs to detection k of out[image].items (count of them), as
 * Ultralytics' predictors give them:
 *   segment: stride = 4 + nm (nm = strix_model_task_channels, 32): the
 *            box x1, y1, x2, y2 in the letterboxed input's pixels, not
 *            clipped (the box NMS gave, before it is mapped to the source
 *            and clipped into out's), then the nm mask coefficients; the
 *            masks are sigmoid(coefficients . protos) (strix_model_protos:
 *            the letterboxed input at a quarter of its size), upsampled to
 *            the input and cropped to this box as Ultralytics' process_mask
 *            does, the letterbox then undone (retina masks,
 *            process_mask_native: upsampled to the source and cropped to
 *            out's box); Ultralytics' predictor then drops the detections
 *            whose mask is empty, as infer does: out keeps them (no masks
 *            are made here), so a caller that builds the masks drops them
 *            too;
 *   pose:    stride = keypoints x dims: per keypoint x, y in source pixels
 *            (clipped to the image) and, with dims 3, its visibility;
 *   obb:     stride = 5: cx, cy, w, h in source pixels (not clipped) and the
 *            angle r in radians; the detection's box is the axis-aligned
 *            bounds of those corners (clipped), its NMS the rotated one
 *            (probiou) Ultralytics uses.
 * Valid until the next detect or free.  STRIX_E_ARG for detect and classify
 * models and for an image outside the last batch.  strix_model_submit runs
 * detect models only so far (STRIX_E_UNSUPPORTED for the others), and a
 * classify model finds no boxes (strix_model_detect: STRIX_E_ARG; it runs
 * through strix_model_classify). */
typedef struct strix_task_values {
    int count;            /* detections of the image */
    int stride;           /* floats per detection */
    const float *values;  /* count x stride, model-owned */
} strix_task_values;
strix_status strix_model_task_values(const strix_model *m, int image, strix_task_values *out, strix_error *err);

/* Native ReID features (Ultralytics' with_reid with model: auto, which the
 * trackers' strix_tracker_features take).  keep = 1: from the next
 * strix_model_detect on, each detection's feature vector is kept (the
 * Detect head's input maps then stay in memory to the end of a run); 0
 * (the default) stops it.  STRIX_E_ARG for a classify model;
 * STRIX_E_UNSUPPORTED for an end-to-end head (YOLO26: Ultralytics then
 * runs a separate ReID model) and on the CUDA backend. */
strix_status strix_model_keep_features(strix_model *m, int keep, strix_error *err);
/* The features of the last strix_model_detect's detections of image
 * `image`: values[k * stride + j] is feature j of detection k of
 * out[image].items (count of them), as Ultralytics' get_obj_feats: stride =
 * s, the fewest channels among Detect's input maps (P3, P4, P5); at the
 * cell of the detection's anchor in its level's map of C channels, feature
 * j is the mean of channels j*(C/s) .. j*(C/s) + C/s - 1.  Not normalised.
 * Valid until the next detect or free.  STRIX_E_ARG when none are kept or
 * for an image outside the last batch. */
strix_status strix_model_features(const strix_model *m, int image, strix_task_values *out, strix_error *err);

/* TrackTrack's recovered detections (Ultralytics' compute_dets_del, its
 * TRACKTRACK's dets_del; strix_tracker_recovered takes them): with the
 * detect options' recovered = 1, strix_model_detect of a detect or obb
 * model also selects its candidates again (the same conf, classes,
 * agnostic and max_det) with NMS at IoU 0.95, and keeps those boxes whose
 * largest IoU (float32; obb: of the bounds of the rotated boxes' corners,
 * not clipped) with the image's detections is below 0.97: the boxes the
 * NMS at the asked IoU dropped.  None for an image without detections,
 * nor from an end-to-end head (its selection ignores the IoU).  out:
 * image `image`'s, by decreasing score, boxes as strix_model_detect's
 * (source pixels, clipped); obb (may be NULL): an obb model's xywhr of
 * them, stride 5, as strix_model_task_values'.  Valid until the next
 * detect or free.  recovered = 1 is STRIX_E_ARG for segment, pose and
 * classify models (Ultralytics recovers none for them) and
 * STRIX_E_UNSUPPORTED on the CUDA backend and in strix_model_submit;
 * strix_model_recovered is STRIX_E_ARG for an image outside the last
 * detect or when it did not compute them. */
strix_status strix_model_recovered(const strix_model *m, int image, strix_detections *out, strix_task_values *obb,
                                   strix_error *err);

/* Asynchronous detection: submit a batch now, collect its detections later,
 * with up to STRIX_MAX_IN_FLIGHT batches submitted and not yet released.
 * Host images may be reused as soon as submit returns (their pixels are
 * staged); device and pinned ones only once the batch is collected or
 * released (strix_memory).  Results equal strix_model_detect's on the same images.  On the
 * CPU, and on CUDA without cuda_async, the batch completes inside submit;
 * with cuda_async its copies and kernels run while the caller goes on.
 * A batch handle is the model's: collect it (as often as wanted), then
 * release it; releasing an uncollected batch waits for it and drops its
 * results.  A detect or a submit of another shape waits for the batches
 * in flight first.  Like every model call, not for two threads at once.
 *
 *   strix_batch *a, *b;
 *   strix_model_submit(m, frames0, n, &d, &a, &e);   // queued
 *   strix_model_submit(m, frames1, n, &d, &b, &e);   // queued behind it
 *   strix_batch_collect(a, r, &e);                   // waits for a only
 *   ...use r[0..n-1]...
 *   strix_batch_release(a);
 */
#define STRIX_MAX_IN_FLIGHT 2
typedef struct strix_batch strix_batch;

/* STRIX_E_ARG when STRIX_MAX_IN_FLIGHT batches are already out (release one
 * first), or for the arguments strix_model_detect refuses. */
strix_status strix_model_submit(strix_model *m, const strix_image *images, int n,
                                const strix_detect_options *o, strix_batch **out, strix_error *err);
/* Wait for the batch; out[i] (n of them) receives image i's detections,
 * valid until the batch is released.  The batch's status: a failure while
 * it ran is reported here. */
strix_status strix_batch_collect(strix_batch *b, strix_detections *out, strix_error *err);
void strix_batch_release(strix_batch *b);

/* int8 (CPU only, opt-in, never the default): for a model loaded with
 * precision STRIX_PRECISION_INT8 (another: STRIX_E_ARG), calibrate on n
 * images, then run the model's convolutions in int8 from then on.  The
 * images go through strix_model_detect with o (their letterbox, in fp32)
 * while the range of x at each convolution's input is recorded; then every
 * dense convolution ending in SiLU is quantised: weights per output
 * channel, symmetric, at this call; activations per tensor, unsigned bytes
 * with a zero point, from the range calibration saw.  The int8 GEMM
 * accumulates in int32 (AVX-512 VNNI, AVX2, NEON SDOT or portable C,
 * whichever this CPU runs best); bias, SiLU and residual stay fp32, as do
 * depthwise convolutions, the head's last convolutions and everything that
 * is not a convolution, and on the AVX2 path (no VNNI) the layers fp32 runs
 * as Winograd and those with fewer than 32 input channels (slower in int8
 * there).  Calling it again recalibrates from fp32.  The images must cover
 * what will be run: activations beyond the ranges they show are clamped
 * (docs/gpu-cpu-precision.md "int8 on the CPU": the drift).
 * A failed calibration leaves the model uncalibrated: it refuses to run. */
strix_status strix_model_quantize(strix_model *m, const strix_image *images, int n,
                                  const strix_detect_options *o, strix_error *err);
/* Lower-level stages, for tools, tests and benchmarks.
 * Input tensor layout: [n, h, w, 3] fp32 NHWC, RGB, values in [0, 1].
 * Head layout: [n, A, 4 + nc + t] fp32: per anchor (cx, cy, w, h) in input
 * pixels followed by sigmoid class scores, then the task's t =
 * strix_model_task_channels(m) values (Ultralytics' eval-mode head output
 * [n, 4 + nc + t, A] transposed; for obb, (cx, cy) is the rotated box's
 * centre and (w, h) its sides); A = sum over levels of (h/s) * (w/s).  A
 * classify model's head is [n, nc]: the softmax probabilities. */
strix_status strix_model_forward(strix_model *m, const float *input, int n, int h, int w,
                                 float *head, strix_error *err);
/* A segment model's prototype masks from its last forward (or detect) run:
 * [n, ph, pw, nm] fp32 NHWC with ph = h/4, pw = w/4, nm =
 * strix_model_task_channels(m) (Ultralytics' proto [n, nm, ph, pw]
 * transposed), written to out when it holds `floats` floats (*ph, *pw set
 * either way).  STRIX_E_ARG for another task, before any run, or a too small
 * out; STRIX_E_UNSUPPORTED on a backend that cannot read them back. */
strix_status strix_model_protos(strix_model *m, float *out, size_t floats, int *ph, int *pw, strix_error *err);
size_t strix_model_anchor_count(const strix_model *m, int h, int w);

/* --------------------------------------------------------------- tracking */

/* Multi-object trackers as Ultralytics defines them (`yolo track`,
 * ultralytics/trackers 8.4.190): TRACKTRACK, its default (Shim et al.,
 * CVPR 2025; STRIX_TRACKER_TRACKTRACK below), BYTETracker (Zhang et al.,
 * ECCV 2022), OCSORT (Cao et al., CVPR 2023), FASTTRACK and Deep OC-SORT
 * (below) and BOTSORT (Aharon et al., 2022), which is BYTETracker with a Kalman state
 * over (cx, cy, w, h) instead of (cx, cy, w/h, h) and global motion
 * compensation (GMC): the frame-to-frame camera motion, a similarity
 * transform estimated from sparse optical flow on a half-size grey frame,
 * warps every track's prediction before matching.  In ByteTrack and
 * BoT-SORT, each frame the detections scoring >= track_high_thresh are matched to the tracked and
 * lost tracks by 1 - IoU (times the score when fuse_score), the remaining
 * tracked ones to the detections between track_low_thresh and
 * track_high_thresh by 1 - IoU, a new track starts from a leftover
 * detection scoring >= new_track_thresh, and a lost track is kept for
 * track_buffer updates.  Class-agnostic, as Ultralytics' are.  Identities
 * equal Ultralytics' on the test streams (tests/test_track.c). */
typedef struct strix_tracker strix_tracker;

/* OC-SORT (oc_sort.py) is ByteTrack's association and Kalman filter plus:
 * the first association's cost adds inertia x the angle (/ pi) between a
 * track's direction of motion, taken from its own detections delta_t frames
 * apart, and the direction from its last detection to the candidate;
 * detections left over are matched by IoU with the unmatched tracks' last
 * detections (still tracked tracks first, then lost ones); a lost track
 * found so has its Kalman state re-run along a straight line from its last
 * detection to the new one; the low-score association runs only with
 * use_byte.  No camera-motion compensation.
 *
 * FastTrack (fast_tracker.py) is ByteTrack plus occlusion handling: a
 * tracked track left unmatched stays tracked (not output) for two more
 * updates; one whose box another matched track covers by more than
 * occ_cover_thresh of its area is declared occluded, its Kalman state
 * rolled back to reset_pos_offset_occ (position, covariance) and
 * reset_velocity_offset_occ (velocity) updates before, its height scaled
 * by enlarge_bbox_occ and its velocity by dampen_motion_occ, and it stays
 * tracked up to active_occ_to_lost_thresh updates; once lost it is kept
 * occ_reappear_window updates after its occlusion even past track_buffer;
 * a new track is not started on a detection whose IoU with a live track
 * is >= init_iou_suppress (1: never suppressed).
 *
 * Deep OC-SORT (deep_oc_sort.py) is OC-SORT plus camera-motion
 * compensation (gmc_method, default none; it moves the positions, their
 * velocities and the last detections, not the aspect and height) and,
 * with ReID, appearance.
 *
 * ReID (with_reid, Ultralytics' model: auto): BoT-SORT, Deep OC-SORT and
 * TrackTrack take each detection's native feature from the detector
 * (strix_model_features, handed over with strix_tracker_features).  A
 * track keeps a smoothed, unit-length feature (BoT-SORT: 0.9 x old + 0.1 x
 * new; Deep OC-SORT: alpha_fixed_emb, less for confident detections above
 * track_high_thresh, unchanged at or below it; TrackTrack: 0.95 + 0.05 x
 * (1 - score)).  BoT-SORT and Deep OC-SORT take for each pair the smaller
 * of the motion cost and half the cosine distance (1 where that is above 1
 * - appearance_thresh or the IoU distance above 1 - proximity_thresh);
 * TrackTrack weighs 1 - HMIoU by iou_weight and the cosine distance by
 * reid_weight, for its high-score detections. */
typedef enum strix_tracker_type {
    STRIX_TRACKER_BOTSORT = 0,
    STRIX_TRACKER_BYTETRACK = 1,
    STRIX_TRACKER_OCSORT = 2,
    STRIX_TRACKER_FASTTRACK = 3,
    STRIX_TRACKER_DEEPOCSORT = 4,
    /* TrackTrack (track_tracker.py; Shim et al., CVPR 2025), Ultralytics'
     * default and `infer --track`'s: BoT-SORT's Kalman state and GMC with
     * NSA-Kalman's confidence-scaled measurement noise; the high- and
     * low-score detections matched to the tracks in one iterative
     * assignment (mutually nearest pairs under a threshold that shrinks by
     * reduce_step a round) on 1 - HMIoU (IoU x vertical IoU) +
     * conf_weight x |extrapolated track score - score| + angle_weight x the
     * angle between the track's corner velocities and its corners' motion,
     * low-score detections penalty_p dearer; optionally (lost_match_thr >
     * 0) a looser pass for lost tracks; a new track only from a leftover
     * scoring above new_track_thresh that overlaps (IoU > tai_thr) no
     * confirmed track and no better leftover; confirmed after
     * min_track_len updates.  Ultralytics' loose-NMS extra detections
     * come through strix_tracker_recovered (what `--detections` replays
     * has none). */
    STRIX_TRACKER_TRACKTRACK = 5
} strix_tracker_type;
/* The camera-motion compensation of BoT-SORT, Deep OC-SORT and TrackTrack:
 * none, or Ultralytics' sparseOptFlow
 * (its orb, sift and ecc are not implemented). */
typedef enum strix_gmc_method { STRIX_GMC_SPARSE_OPTFLOW = 0, STRIX_GMC_NONE = 1 } strix_gmc_method;
/* The grey frame GMC reads, as cv2.cvtColor's fixed point makes it: OpenCV
 * 5's (R 9798 + G 19235 + B 3735 + 2^14) >> 15, what `pip install
 * ultralytics` installs today, or OpenCV 4's (R 4899 + G 9617 + B 1868 +
 * 2^13) >> 14, to follow an Ultralytics run on OpenCV 4.  One grey level
 * apart on some colours, enough to move corners and so the camera motion. */
typedef enum strix_grey_rounding { STRIX_GREY_OPENCV5 = 0, STRIX_GREY_OPENCV4 = 1 } strix_grey_rounding;

/* The keys of Ultralytics' botsort.yaml / bytetrack.yaml / ocsort.yaml /
 * fasttrack.yaml / deepocsort.yaml / tracktrack.yaml, same names, same
 * defaults (strix_track_options_init).  Without with_reid, as in
 * Ultralytics, proximity_thresh, appearance_thresh, alpha_fixed_emb,
 * iou_weight and reid_weight change nothing. */
typedef struct strix_track_options {
    strix_tracker_type tracker_type; /* the type given to strix_track_options_init */
    float track_high_thresh;         /* first association, default 0.25 (tracktrack 0.6) */
    float track_low_thresh;          /* second association takes scores above it, default 0.1 (tracktrack 0.25) */
    float new_track_thresh;          /* a new track needs this score, default 0.25 (tracktrack: above 0.7) */
    int track_buffer;                /* updates a lost track is kept, default 30 */
    float match_thresh;              /* first association: highest accepted cost, default 0.8 (tracktrack 0.7) */
    int fuse_score;                  /* 1 (default): cost 1 - IoU * score; 0: 1 - IoU */
    strix_gmc_method gmc_method;     /* BoT-SORT and TrackTrack (default sparseOptFlow), Deep OC-SORT (default none) */
    strix_grey_rounding gmc_grey;    /* its grey frame, default OpenCV 5's (strix's key, not Ultralytics') */
    float proximity_thresh;          /* BoT-SORT ReID gate, default 0.5 */
    float appearance_thresh;         /* ReID gate, default 0.8 (Deep OC-SORT 0.9) */
    int with_reid;                   /* 1: ReID (BoT-SORT, Deep OC-SORT, TrackTrack), default 0 */
    int delta_t;                     /* OC-SORT: frames between the detections a direction is taken from, 0..10000,
                                      * default 3 */
    float inertia;                   /* OC-SORT: weight of the direction cost, >= 0, default 0.2 */
    int use_byte;                    /* OC-SORT: 1: the low-score association too; default 0 */
    /* FastTrack (above), defaults 5, 3, 1.1, 0.5, 10, 0.7, 40, 0.7; the offsets 0..100 (0: the oldest state kept) */
    int reset_velocity_offset_occ;
    int reset_pos_offset_occ;
    double enlarge_bbox_occ;         /* >= 0 */
    double dampen_motion_occ;        /* 0..1 */
    int active_occ_to_lost_thresh;   /* >= 0 */
    float occ_cover_thresh;          /* 0..1 */
    int occ_reappear_window;         /* >= 0 */
    float init_iou_suppress;         /* 0..1 */
    float alpha_fixed_emb;           /* Deep OC-SORT's ReID embedding update, 0..1, default 0.95 */
    /* TrackTrack (tracktrack.yaml) */
    float lost_match_thr; /* gate of the lost tracks' looser pass, 0..1; 0 (default): no such pass */
    float iou_weight;     /* ReID only (weight of 1 - HMIoU), default 0.5 */
    float reid_weight;    /* ReID only (weight of the cosine distance), default 0.5 */
    float conf_weight;    /* weight of the confidence distance, >= 0, default 0.1 */
    float angle_weight;   /* weight of the corner-angle distance, >= 0, default 0.05 */
    float penalty_p;      /* added to the cost of low-score detections, >= 0, default 0.2 */
    float penalty_q;      /* added to the cost of recovered detections (strix_tracker_recovered), >= 0, default 0.4 */
    float reduce_step;    /* threshold reduction per assignment round, 0..1, default 0.05 */
    float tai_thr;        /* track-aware initialisation's IoU, 0..1, default 0.55 */
    int min_track_len;    /* updates before a track is confirmed (<= 1: at once), default 3 */
} strix_track_options;

/* Ultralytics' defaults for the given tracker (botsort.yaml, bytetrack.yaml,
 * ocsort.yaml, fasttrack.yaml, deepocsort.yaml: track_high_thresh and
 * new_track_thresh 0.3, gmc_method none; tracktrack.yaml). */
void strix_track_options_init(strix_track_options *o, strix_tracker_type type);
strix_status strix_tracker_create(strix_tracker **out, const strix_track_options *o, strix_error *err);
/* Advance by one frame with its detections (any order).  frame: the decoded
 * frame the detections came from, RGB or BGR in host memory (STRIX_HOST or
 * STRIX_PINNED), for the motion compensation of BoT-SORT, Deep OC-SORT and
 * TrackTrack (NULL: no camera motion this frame; ignored by the others and
 * gmc none).  ids[i]
 * receives the identity of the confirmed track detection i updated, or -1
 * (a low-score box no track took, a track's first frame after the first
 * frame of the stream: confirmation needs a second hit).  Identities start
 * at 1 and are never reused; as Ultralytics', they are drawn when a track
 * starts, so a track that never confirms leaves a gap.  A detection whose
 * box has no area (x2 <= x1 or y2 <= y1: clipped inside the letterbox
 * padding, say) or a non-finite corner is ignored (id -1) and counted; a
 * score outside 0..1 is an error. */
strix_status strix_tracker_update(strix_tracker *t, const strix_image *frame, const strix_detection *dets, int n,
                                  int *ids, strix_error *err);
/* With with_reid: the native ReID features of the detections of the next
 * update (strix_model_features' values), feats [n][dim], n the update's
 * detection count, dim the same for the whole stream; copied.  An update
 * without them treats its detections as featureless (as Ultralytics' given
 * no feats).  STRIX_E_ARG for a tracker without with_reid, a non-finite
 * value or another dim; the update refuses another n. */
strix_status strix_tracker_features(strix_tracker *t, const float *feats, int n, int dim, strix_error *err);
/* TrackTrack only: the recovered detections of the next update
 * (strix_model_recovered's, Ultralytics' dets_del), n of them; xywhr [n][5]
 * their oriented boxes when that update is strix_tracker_update_obb (dets
 * then give the scores), else NULL; copied.  As Ultralytics' TRACKTRACK
 * takes them: those scoring above track_high_thresh join the tracked and
 * lost tracks' association after the high- and low-score detections, at
 * penalty_q more cost; they never start a track, never go to the
 * unconfirmed tracks and carry no ReID feature.  A box is ignored and
 * counted as a detection's is.  After that update, recovered detection j
 * is detection n_update + j for strix_tracker_box and
 * strix_tracker_box_xywhr (a track it updated is one of Ultralytics'
 * output rows, its idx -1) and strix_tracker_recovered_id gives its
 * identity.  An update without them has none.  STRIX_E_ARG for another
 * tracker type (Ultralytics' other trackers take none), a score outside
 * 0..1, or oriented ones for an axis-aligned update (and the reverse). */
strix_status strix_tracker_recovered(strix_tracker *t, const strix_detection *dets, const float *xywhr, int n,
                                     strix_error *err);
/* The identity of recovered detection j of the last update (as ids[] of
 * strix_tracker_update), -1 when none or j is not one of them. */
int strix_tracker_recovered_id(const strix_tracker *t, int j);
/* BoT-SORT's motion compensation reads each frame as a grey image of half
 * its size, (width / 2) x (height / 2) bytes (Ultralytics' GMC input:
 * OpenCV's grey, then INTER_LINEAR to half size).  strix_tracker_update
 * makes it from the frame it is given, reading all of the frame's pixels,
 * which by then have usually left the CPU's caches (a 1080p frame is 6 MB).
 * A video pipeline can make it where the frame is decoded, band by band as
 * the decoder writes the frame (strix_track_grey), and hand it over
 * instead (strix_tracker_update_grey): the same identities, the same
 * numbers, without the frame read back from memory.
 * strix_track_grey: frame rows *done..y1-1 (RGB or BGR in host memory) are
 * written since the last call (top down; *done = 0 for a new frame): their
 * grey rows into grey [height / 2][width / 2] as far as whole row pairs go
 * (a frame of odd height, whose half-size rows mix three rows, waits for
 * its last row and is then made whole), and *done advances to the rows
 * made; the image is complete when *done == height.  Whatever the bands,
 * the bytes are the whole frame's.  kind: the tracker's gmc_grey (the
 * image is only good for a tracker with the same one).  Errors:
 * STRIX_E_ARG, STRIX_E_NOMEM (a few kB of scratch). */
strix_status strix_track_grey(const strix_image *frame, int *done, int y1, uint8_t *grey, strix_grey_rounding kind,
                              strix_error *err);
/* strix_tracker_update with the frame given as its grey half-size image
 * (strix_track_grey's, complete) of a width x height frame: what
 * strix_tracker_update on that frame does. */
strix_status strix_tracker_update_grey(strix_tracker *t, const uint8_t *grey, int width, int height,
                                       const strix_detection *dets, int n, int *ids, strix_error *err);
/* Oriented boxes (an obb model's detections), tracked as Ultralytics tracks
 * them (STrack with an angle, the rows [x, y, w, h, angle, id, ...]):
 * strix_tracker_update with detection i's rotated box xywhr[5 i .. 5 i + 4]
 * = (cx, cy, w, h, r in radians; strix_model_task_values' obb values) in
 * place of its axis-aligned one (dets give the scores; their x1 .. y2 are
 * not read).  grey: the frame's half-size grey image (width x height the
 * frame's; as strix_tracker_update_grey), else frame (as
 * strix_tracker_update; both NULL: no camera motion).  A box is held in its
 * long-edge form (w < h: the sides swapped, r + pi/2); a track's angle
 * takes its detection's in the half-turn form (r or r +- pi) nearest its
 * own, so it never flips, and turns with the camera; tracks and detections
 * match on 1 - probiou of the rotated boxes (OC-SORT's recovery on the
 * tracks' predicted ones, as Ultralytics'), while FastTrack's occlusions
 * and TrackTrack's HMIoU, corner motion and track-aware initialisation use
 * the unrotated long-edge boxes, as Ultralytics' do.  A tracker's updates
 * with detections are all oriented or all axis-aligned (STRIX_E_ARG
 * otherwise); a box whose w, h are not > 0 or with a non-finite value is
 * ignored (id -1) and counted, as in strix_tracker_update. */
strix_status strix_tracker_update_obb(strix_tracker *t, const strix_image *frame, const uint8_t *grey, int width,
                                     int height, const strix_detection *dets, const float *xywhr, int n, int *ids,
                                     strix_error *err);
/* Short name of a tracker type ("botsort", "bytetrack", "ocsort", "fasttrack", "deepocsort", "tracktrack"). */
const char *strix_tracker_type_name(strix_tracker_type t);
/* The tracker's box of detection i of the last update, as Ultralytics'
 * tracker.update returns it for a tracked detection (STrack.xyxy: the
 * Kalman state after this frame's update, x1 = cx - w / 2, x2 = x1 + w in
 * double, stored as float32), into xyxy (x1, y1, x2, y2): 1; 0 when
 * detection i got no identity (xyxy untouched).  Not clipped: Ultralytics'
 * results clip it to the image (Results.update), as `infer` does. */
int strix_tracker_box(const strix_tracker *t, int i, float xyxy[4]);
/* After strix_tracker_update_obb: the tracker's rotated box of detection i,
 * as Ultralytics' row for it (x, y, w, h, angle: the Kalman state's
 * centre and long-edge sides after this frame's update, x = (cx - w / 2)
 * + w / 2 in double, and the track's angle, stored as float32), into
 * xywhr: 1; 0 when detection i got no identity (xywhr untouched).
 * strix_tracker_box gives the bounds of its 4 corners (Ultralytics'
 * OBB.xyxy from xywhr2xyxyxyxy in float32). */
int strix_tracker_box_xywhr(const strix_tracker *t, int i, float xywhr[5]);
/* Detections ignored so far for a degenerate box (see strix_tracker_update). */
long strix_tracker_degenerate(const strix_tracker *t);
void strix_tracker_free(strix_tracker *t);

/* ---------------------------------------------------- task post-processing */

/* Ultralytics 8.4's post-processing of a segment or obb model's task values
 * (strix_model_task_values) on plain host arrays, as infer runs it
 * (engine/tasks.c; the Python binding calls these).  Every array is
 * row-major. */

/* Masks at the letterboxed input, as SegmentationPredictor's default path:
 * process_mask(protos, coeffs, boxes, (in_h, in_w), upsample=True).
 *   protos [c, mh, mw] fp32: one image of the Proto output (NCHW, mh = in_h/4;
 *          strix_model_protos gives NHWC: transpose it)
 *   coeffs [n, c]: each kept box's mask coefficients
 *   boxes  [n, 4]: x1 y1 x2 y2 in input (tensor) pixels, before scale_boxes
 *          (a source box times gain = min(in_h / src_h, in_w / src_w), plus
 *          the padding round((in - round(src * gain)) / 2 - 0.1) per axis)
 *   masks  [n, in_h, in_w] uint8 out: 1 inside the mask, else 0
 * Per box: logits = coeffs x protos, bilinear upsample to the input
 * (F.interpolate, align_corners=False), > 0, then cropped to the box
 * (columns x1 <= x < x2, rows likewise).  Ultralytics then drops the
 * boxes whose mask came out empty; nonempty (may be NULL) gets a 0/1 per box
 * for that.  Errors: STRIX_E_ARG, STRIX_E_NOMEM. */
strix_status strix_process_mask(const float *protos, int c, int mh, int mw, const float *coeffs,
                                const float *boxes, int n, int in_h, int in_w, uint8_t *masks,
                                uint8_t *nonempty, strix_error *err);

/* Masks at the source image (--retina-masks): process_mask_native.
 *   boxes [n, 4]: x1 y1 x2 y2 already in source pixels (the detections')
 *   masks [n, src_h, src_w] uint8 out
 * The logits are upsampled by f (1, 2 or 4, the smallest that crops the
 * letterbox padding on whole pixels), the padding cropped and the rest
 * resized to the source (scale_masks), > 0, cropped to the box. */
strix_status strix_process_mask_native(const float *protos, int c, int mh, int mw, const float *coeffs,
                                       const float *boxes, int n, int src_h, int src_w, uint8_t *masks,
                                       uint8_t *nonempty, strix_error *err);

/* Contours or polygons: n points xy[2 * n] (growable, owned; zero it before
 * the first use, free it with strix_polygon_free). */
typedef struct strix_polygon {
    float *xy;
    int n, cap;
} strix_polygon;
void strix_polygon_free(strix_polygon *p);

typedef enum strix_segment_strategy {
    STRIX_SEGMENT_ALL = 0, /* Results.masks.xy: every contour, merged by merge_multi_segment */
    STRIX_SEGMENT_LARGEST  /* the contour with the most points */
} strix_segment_strategy;

/* masks2segments of one mask [h, w] (nonzero = inside): the external
 * contours as cv2.findContours(RETR_EXTERNAL, CHAIN_APPROX_SIMPLE) finds
 * them, then one polygon per strategy, in mask pixels (integers).  No
 * contour: out->n = 0.  Errors: STRIX_E_ARG, STRIX_E_NOMEM. */
strix_status strix_mask_segment(const uint8_t *mask, int h, int w, strix_segment_strategy strategy,
                                strix_polygon *out, strix_error *err);

/* scale_coords(img1=(in_h, in_w), coords, img0=(src_h, src_w)): n points
 * of stride floats each (x, y first: polygons stride 2, keypoints 2 or 3),
 * in place: minus the letterbox padding, divided by the per-axis gain,
 * clipped to [0, src_w] x [0, src_h]; other channels (visibility) kept.
 * normalize: then divided by src_w, src_h (the xyn of save_txt). */
void strix_scale_coords(float *coords, int n, int stride, int in_w, int in_h, int src_w, int src_h,
                        int normalize);

/* xywhr2xyxyxyxy: the 4 corners of each box, corners [n, 4, 2] (pt1 =
 * c + v1 + v2, pt2 = c + v1 - v2, pt3 = c - v1 - v2, pt4 = c - v1 + v2,
 * v1 = w/2 (cos r, sin r), v2 = h/2 (-sin r, cos r)). */
void strix_xywhr_corners(const float *xywhr, int n, float *corners);

#ifdef __cplusplus
}
#endif
#endif
