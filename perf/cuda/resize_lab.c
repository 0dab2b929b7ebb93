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
 * 200; three in four upsamples by 1-4, one in four copies; batch 1-3, 1x1 to
 * 48x48, 1-96 channels, channel slices of wider buffers with and without
 * 16-byte alignment, batch padding), each in fp16 and fp32, against
 * strix_cpu_upsample_nearest / strix_cpu_copy.  Both only move values, so
 * the bound is exact: every output element equal to the CPU's bit for bit,
 * every other element of the buffers (poisoned with NaN first) unchanged
 * (perf/cuda/lab.h).  A failure names the shape and the seed: rerun with
 * --seed.  The line after the check says how many upsamples version 2 ran
 * its vector kernel on.
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

static const char *const version_name[N_VERSIONS + 1] = {"", "v1 upsample", "v2 upsample16", "v3 copy"};

/* One op: view 0 the input, view 1 the output, in one span; scale 0 for a
 * copy. */
typedef struct move_case {
    int scale;
    strix_dtype dt;
    lab_layout L;
    lab_span s;
    strix_dview in, out;
    cudaStream_t st;
} move_case;

/* Whether version 2 runs its vector kernel (resize.cu's vec16_ok on both views). */
static int vec16(const move_case *mc)
{
    const size_t vec = 16 / lab_esz(mc->dt);
    if (!mc->scale) return 0;
    for (int i = 0; i < 2; i++) {
        const strix_view *v = &mc->L.view[i];
        if (v->c % vec || v->pix_stride % vec || v->batch_stride % vec || mc->L.off[i] % vec) return 0;
    }
    return 1;
}

static const char *note(void *ctx, int v) { return v == 2 && !vec16(ctx) ? "  -> v1" : ""; }

static int launch(void *ctx, int v)
{
    const move_case *mc = ctx;
    const strix_stream st = (strix_stream)mc->st;
    if ((v == 3) != !mc->scale) return LAB_NA;
    if (v == 3) return strix_cuda_copy(&mc->out, &mc->in, mc->dt, st);
    return strix_cuda_upsample_nearest(&mc->out, &mc->in, mc->scale, mc->dt,
                                       v == 2 ? STRIX_CUDA_KERNELS_V2 : STRIX_CUDA_KERNELS_V1, st);
}

/* The span and device views of a laid-out case, its input random. */
static void case_bind(move_case *mc)
{
    lab_span_make(&mc->s, mc->L.span, mc->dt);
    lab_layout_bind(&mc->L, &mc->s);
    lab_span_fill(&mc->s, &mc->L.view[0], 4.0f);
    mc->in = lab_span_dview(&mc->s, &mc->L.view[0]);
    mc->out = lab_span_dview(&mc->s, &mc->L.view[1]);
}

static void op_name(const move_case *mc, char *buf, size_t cap)
{
    if (mc->scale) snprintf(buf, cap, "up x%d", mc->scale);
    else snprintf(buf, cap, "copy");
}

/* The CPU op, then every selected version against it; the failures. */
static int check_case(move_case *mc, const lab_opts *o, const char *what)
{
    lab_span_start_expect(&mc->s);
    if (mc->scale) strix_cpu_upsample_nearest(&mc->L.view[1], &mc->L.view[0], mc->scale, NULL);
    else strix_cpu_copy(&mc->L.view[1], &mc->L.view[0], NULL);
    lab_span_expect(&mc->s, &mc->L.view[1]);
    const strix_view *v = &mc->L.view[0], *u = &mc->L.view[1];
    char desc[160], op[16];
    op_name(mc, op, sizeof op);
    snprintf(desc, sizeof desc, "%s n%d %dx%d c%d %s (strides in %zu/%zu at %zu, out %zu/%zu at %zu)",
             lab_dtype_name(mc->dt), v->n, v->h, v->w, v->c, op, v->pix_stride, v->batch_stride, mc->L.off[0], u->pix_stride, u->batch_stride, mc->L.off[1]);
    return lab_check_versions(&mc->s, mc->st, o, N_VERSIONS, version_name, launch, mc, what, desc);
}

/* A random case (see the header): the input a channel slice of one buffer,
 * the output of another (a concat); aligned cases keep both on 16-byte
 * channel groups, the others shift and pad them by odd amounts. */
static void random_case(move_case *mc, strix_dtype dt)
{
    static const int scales[] = {0, 1, 2, 2, 2, 3, 4, 2};
    memset(mc, 0, sizeof *mc);
    mc->dt = dt;
    mc->scale = scales[lab_int(0, 7)];
    const int ch = (int)(16 / lab_esz(dt)), aligned = lab_int(0, 1), s = mc->scale ? mc->scale : 1;
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

static void case_free(move_case *mc) { lab_span_free(&mc->s); }

/* The model's upsample and copy nodes. */
static int model_moves(const strix_model *m, int *node, int cap)
{
    int count = 0;
    for (int i = 0; i < m->prog.n_nodes && count < cap; i++) {
        const strix_op op = m->prog.nodes[i].op;
        if (op == STRIX_OP_UPSAMPLE || op == STRIX_OP_COPY) node[count++] = i;
    }
    return count;
}

/* The case of node nd laid out at batch n. */
static void model_case(move_case *mc, const strix_model *m, const strix_node *nd, strix_dtype dt, int n, int imgsz,
                       cudaStream_t st)
{
    memset(mc, 0, sizeof *mc);
    mc->dt = dt, mc->st = st, mc->scale = nd->op == STRIX_OP_UPSAMPLE ? nd->scale : 0;
    const int vals[2] = {nd->in, nd->out};
    lab_layout_make(&mc->L, m, vals, 2, n, imgsz);
    case_bind(mc);
}

static void usage(void)
{
    fprintf(stderr, "usage: resize_lab " LAB_OPTS_USAGE " [--versions 1,2,3]\n");
    exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
    lab_opts o;
    lab_opts_init(&o, N_VERSIONS, 200);
    for (int i = 1; i < argc; i += 2)
        if (lab_opt(argv[i], i + 1 < argc ? argv[i + 1] : NULL, &o, N_VERSIONS) != 1) usage();
    struct cudaDeviceProp prop;
    lab_device(&prop);
    strix_model *m = lab_model(&o);
    enum { MAX_MOVES = 64 };
    int node[MAX_MOVES];
    const int n_moves = model_moves(m, node, MAX_MOVES);
    cudaStream_t st;
    CU(cudaStreamCreate(&st));
    printf("# resize_lab: %s scale %c at %dx%d on %s (%d SMs); seed %" PRIu64 "; check: the model's %d upsample/copy "
           "op(s) at batch %d and %d random shapes, fp16 and fp32, exact; timing batch %d, median of %d\n",
           o.yaml, o.scale, o.imgsz, o.imgsz, prop.name, prop.multiProcessorCount, o.seed, n_moves, o.check_batch,
           o.random, o.batch, o.runs);
    lab_seed(o.seed);
    int failed = 0, vec_cases = 0, v2_cases = 0;
    for (int d = 0; d < 2; d++) {
        const strix_dtype dt = d ? STRIX_F32 : STRIX_F16;
        for (int k = 0; k < n_moves + o.random; k++) {
            move_case mc;
            char what[32];
            if (k < n_moves) {
                model_case(&mc, m, &m->prog.nodes[node[k]], dt, o.check_batch, o.imgsz, st);
                snprintf(what, sizeof what, "layer %d", m->prog.nodes[node[k]].layer);
            } else {
                random_case(&mc, dt);
                mc.st = st;
                case_bind(&mc);
                snprintf(what, sizeof what, "random %d", k - n_moves);
            }
            v2_cases += o.on[2] && mc.scale;
            vec_cases += o.on[2] && vec16(&mc);
            failed += check_case(&mc, &o, what);
            case_free(&mc);
        }
    }
    printf("# check: %d failed; version 2 ran its vector kernel on %d of the %d upsamples it took\n", failed,
           vec_cases, v2_cases);
    lab_table_header("shape (NxHxW C op)");
    for (int k = 0; k < n_moves; k++)
        for (int d = 0; d < 2; d++) {
            const strix_node *nd = &m->prog.nodes[node[k]];
            move_case mc;
            model_case(&mc, m, nd, d ? STRIX_F32 : STRIX_F16, o.batch, o.imgsz, st);
            lab_span_reset(&mc.s, st);
            const strix_view *in = &mc.L.view[0], *out = &mc.L.view[1];
            const double bytes = (double)lab_esz(mc.dt) * ((double)lab_view_count(in) + (double)lab_view_count(out));
            char row[96], desc[64], op[16];
            op_name(&mc, op, sizeof op);
            snprintf(desc, sizeof desc, "%dx%dx%d %d %s", in->n, in->h, in->w, in->c, op);
            snprintf(row, sizeof row, "%-5d %-32s %-5s", nd->layer, desc, lab_dtype_name(mc.dt));
            failed += lab_time_versions(st, &o, N_VERSIONS, version_name, launch, &mc, row, bytes, note);
            case_free(&mc);
        }
    strix_model_free(m);
    cudaStreamDestroy(st);
    printf("%s: %d failed checks\n", failed ? "FAIL" : "ok", failed);
    return failed ? 1 : 0;
}
