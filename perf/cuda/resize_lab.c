/* resize_lab.c — the kernel lab of the upsample / copy family (llm.c
 * dev/cuda style): every kept version on the model's upsamples and copies
 * and on random shapes, checked exactly against the CPU op, then timed.
 *
 * Versions (the kernels live in the library, kernels/resize.cu; this file
 * selects them through the launchers the CUDA backend calls):
 *   1  upsample, kernel set 1 (strix_cuda_upsample_nearest, cuda_kernels 1):
 *      upsample_nearest_nhwc, one thread per output element;
 *   2  upsample, kernel sets 2 and 3 (cuda_kernels 2; set 3 runs the same
 *      kernel): upsample_nearest_nhwc_vec16, one thread per 16-byte vector
 *      of an input pixel, written to its scale x scale outputs; where the
 *      views do not allow 16-byte vectors it runs version 1's kernel, and
 *      its lines say so ("-> v1");
 *   3  copy (strix_cuda_copy, every set): copy_view_nhwc, one thread per
 *      element, the op that lands a tensor in a second concat buffer.
 * Versions 1 and 2 take the upsamples, version 3 the copies.
 *
 * Build and run (a CUDA build, on a machine with an NVIDIA GPU):
 *   make kernel-lab                          # builds build/perf/cuda/resize_lab
 *   build/perf/cuda/resize_lab               # yolov8n 640: check, then batch 64
 *   build/perf/cuda/resize_lab --model weights/yolo11.yaml --batch 256 --versions 1,2
 *   build/perf/cuda/resize_lab --random 5000 --seed 7 --runs 5
 *
 * The check: the model's upsamples and copies (their views as the backend
 * lays them out, engine/plan.c: an upsample writes its channel slice of the
 * following concat) at --check-batch, and --random random shapes (default
 * 200; seven in eight upsamples by 1-4, one in eight copies; batch 1-3,
 * outputs 1x1 to 48x48, 1-96 channels, channel slices of wider buffers
 * with and without 16-byte alignment, batch padding), each in fp16 and
 * fp32, against strix_cpu_upsample_nearest / strix_cpu_copy.  Both only
 * move values, so
 * the bound is exact: every output element equal to the CPU's bit for bit,
 * every other element of the buffers (poisoned with NaN first) unchanged
 * (perf/cuda/lab.h).  A failure names the shape and the seed: rerun with
 * --seed.  The line after the check says how many of the upsamples checked
 * take version 2's vector kernel.
 * The timing: each of the model's upsamples and copies at batch --batch,
 * fp16 and fp32: three warm-up launches, then the median of --runs
 * launches between CUDA events.  GB/s counts the fewest bytes: the input
 * read once and the output written once, as % of the H100 SXM's 3350 GB/s.
 * Exit status: 0, 1 a check failed, 2 usage, 8 out of memory, 9 no CUDA
 * device or a CUDA call failed. */
#define LAB_NAME "resize_lab"

#include "cpu/ops.h"
#include "lab.h"

#define N_VERSIONS 3
#define MAX_MOVES 64

static const char *const version_name[N_VERSIONS + 1] = {"", "v1 upsample", "v2 upsample16", "v3 copy"};

/* One op: view 0 the input, view 1 the output, in one span; scale 0 for a
 * copy. */
typedef struct move_case {
    lab_case b;
    int scale;
    lab_layout L;
    strix_dview in, out;
} move_case;

/* The lab: the model's upsample and copy nodes, the case, the check's coverage. */
typedef struct resize_lab {
    strix_model *m;
    int n_moves, node[MAX_MOVES];
    cudaStream_t st;
    move_case c;
    int upsamples, vec; /* upsamples checked; those v2 runs with 16-byte vectors */
} resize_lab;

/* Whether version 2 runs its vector kernel (resize.cu's vec16_ok on both views). */
static int vec16(const move_case *mc)
{
    return mc->scale && lab_layout_vec16(&mc->L, 2, mc->b.dt);
}

static const char *note(void *c, int v) { return v == 2 && !vec16(c) ? "  -> v1" : ""; }

static int launch(void *c, int v)
{
    const move_case *mc = c;
    const strix_stream st = (strix_stream)mc->b.st;
    if ((v == 3) != !mc->scale) return LAB_NA;
    if (v == 3) return strix_cuda_copy(&mc->out, &mc->in, mc->b.dt, st);
    return strix_cuda_upsample_nearest(&mc->out, &mc->in, mc->scale, mc->b.dt,
                                       v == 2 ? STRIX_CUDA_KERNELS_V2 : STRIX_CUDA_KERNELS_V1, st);
}

/* A random case (see the header): the input a channel slice of one buffer,
 * the output of another (a concat); aligned cases keep both on 16-byte
 * channel groups, the others shift and pad them by odd amounts. */
static void random_case(move_case *mc)
{
    static const int scales[] = {0, 1, 2, 2, 2, 3, 4, 2};
    mc->scale = scales[lab_int(0, 7)];
    const int ch = (int)(16 / lab_esz(mc->b.dt)), aligned = lab_int(0, 1), s = mc->scale ? mc->scale : 1;
    const int n = lab_int(1, 3), h = lab_int(1, 48 / s), w = lab_int(1, 48 / s);
    const int c = aligned ? ch * lab_int(1, 96 / ch) : lab_int(1, 40);
    lab_layout *L = &mc->L;
    size_t at = 0;
    L->count = 2;
    for (int i = 0; i < 2; i++) {
        const int vh = i ? h * s : h, vw = i ? w * s : w;
        const size_t lead = aligned ? (size_t)ch * lab_int(0, 2) : (size_t)lab_int(0, 5);
        const size_t pix = lead + c + (aligned ? (size_t)ch * lab_int(0, 2) : (size_t)lab_int(0, 5));
        const size_t batch = (size_t)vh * vw * pix + (aligned ? (size_t)ch * lab_int(0, 1) : (size_t)lab_int(0, 3));
        strix_view v = {NULL, n, vh, vw, c, pix, batch};
        L->view[i] = v;
        L->off[i] = at + lead;
        at = (at + (size_t)n * batch + 63) / 64 * 64;
    }
    L->span = at;
}

/* Case k: the model's op k at the check or timing batch, or a random one. */
static void make(lab_family *f, int k, strix_dtype dt, int timing, char *label, char *shape)
{
    resize_lab *lab = f->lab;
    move_case *mc = &lab->c;
    memset(mc, 0, sizeof *mc);
    mc->b.dt = dt, mc->b.st = lab->st;
    if (k < lab->n_moves) {
        const strix_node *nd = &lab->m->prog.nodes[lab->node[k]];
        const int vals[2] = {nd->in, nd->out};
        mc->scale = nd->op == STRIX_OP_UPSAMPLE ? nd->scale : 0;
        lab_layout_make(&mc->L, lab->m, vals, 2, timing ? f->o->batch : f->o->check_batch, f->o->imgsz);
        snprintf(label, LAB_LABEL, "layer %d", nd->layer);
    } else {
        random_case(mc);
        snprintf(label, LAB_LABEL, "random %d", k - lab->n_moves);
    }
    lab_layout_span(&mc->L, &mc->b.s, dt, 1);
    mc->in = lab_span_dview(&mc->b.s, &mc->L.view[0]);
    mc->out = lab_span_dview(&mc->b.s, &mc->L.view[1]);
    const strix_view *v = &mc->L.view[0];
    if (mc->scale) snprintf(shape, LAB_SHAPE, "%dx%dx%d %d up x%d", v->n, v->h, v->w, v->c, mc->scale);
    else snprintf(shape, LAB_SHAPE, "%dx%dx%d %d copy", v->n, v->h, v->w, v->c);
}

/* The CPU op. */
static void expect(lab_family *f, char *desc, size_t cap)
{
    resize_lab *lab = f->lab;
    move_case *mc = &lab->c;
    const strix_view *v = &mc->L.view[0], *u = &mc->L.view[1];
    if (mc->scale) strix_cpu_upsample_nearest(u, v, mc->scale, NULL);
    else strix_cpu_copy(u, v, NULL);
    lab_span_expect(&mc->b.s, u);
    lab->upsamples += mc->scale > 0;
    lab->vec += vec16(mc);
    snprintf(desc, cap, "%s n%d %dx%d c%d %s x%d (in strides %zu/%zu at %zu, out %zu/%zu at %zu)",
             lab_dtype_name(mc->b.dt), v->n, v->h, v->w, v->c, mc->scale ? "upsample" : "copy", mc->scale ? mc->scale : 1,
             v->pix_stride, v->batch_stride, mc->L.off[0], u->pix_stride, u->batch_stride, mc->L.off[1]);
}

/* The input read once, the output written once. */
static double bytes(const void *c)
{
    const move_case *mc = c;
    return (double)lab_esz(mc->b.dt) * ((double)lab_view_count(&mc->L.view[0]) + (double)lab_view_count(&mc->L.view[1]));
}

static void drop(void *c) { lab_span_free(&((move_case *)c)->b.s); }

int main(int argc, char **argv)
{
    lab_opts o;
    struct cudaDeviceProp prop;
    lab_start(argc, argv, &o, N_VERSIONS, 200, 0, &prop);
    static resize_lab lab;
    lab.m = lab_model(&o);
    for (int i = 0; i < lab.m->prog.n_nodes && lab.n_moves < MAX_MOVES; i++) {
        const strix_op op = lab.m->prog.nodes[i].op;
        if (op == STRIX_OP_UPSAMPLE || op == STRIX_OP_COPY) lab.node[lab.n_moves++] = i;
    }
    CU(cudaStreamCreate(&lab.st));
    lab_banner(&o, &prop, lab.n_moves, "upsample/copy op(s)");
    lab_family f = {&o,          N_VERSIONS, version_name, launch, note, "shape (NxHxW C op)",
                    lab.n_moves, lab.n_moves, &lab,        &lab.c, make, expect, bytes, drop};
    int failed = lab_check_all(&f);
    printf("# check: %d failed; %d of the %d upsamples checked take version 2's vector kernel\n", failed, lab.vec,
           lab.upsamples);
    failed += lab_time_all(&f);
    strix_model_free(lab.m);
    cudaStreamDestroy(lab.st);
    return lab_end(failed);
}
