/* pool_lab.c — the kernel lab of the max-pool family (llm.c dev/cuda
 * style): every kept version of the max-pool on the model's pools and on
 * random shapes, checked exactly against the CPU op, then timed.
 *
 * Versions (the kernels live in the library, kernels/pool.cu; this file
 * selects them through the launchers the CUDA backend calls):
 *   1  plain: maxpool2d_nhwc (strix_cuda_maxpool2d), one thread per output
 *      element, any k / stride / pad; an SPPF cascade as one launch per
 *      stage, each reading the previous stage's output;
 *   2  cascade (kernel sets 1 and 2, strix_cuda_maxpool_cascade with
 *      cuda_kernels 2): maxpool_cascade_s1_nhwc, every stage in one launch
 *      on a 16x16 tile of 4 channels with the whole cascade's halo, fp32
 *      shared memory (separate launches, as version 1, where its shared
 *      memory would exceed 48 KB);
 *   3  one-pass (kernel set 3, cuda_kernels 3; not yet run on a GPU before
 *      this lab): maxpool_sppf_v3, each stage straight from the input as one
 *      wider window (kernels/pool_plan.h), a 24x24 tile and one 16-byte
 *      channel group per block; where the views do not allow its vectors or
 *      the halo exceeds STRIX_SPPF_HALO_MAX it runs version 2's kernel, and
 *      its lines say so ("-> v2").
 * Versions 2 and 3 take only cascades of stride-1 'same' pools (SPPF).
 *
 * Build and run (a CUDA build, on a machine with an NVIDIA GPU):
 *   make kernel-lab                         # builds build/perf/cuda/pool_lab
 *   build/perf/cuda/pool_lab                # yolov8n 640: check, then batch 64
 *   build/perf/cuda/pool_lab --scale x --batch 256 --versions 2,3
 *   build/perf/cuda/pool_lab --random 5000 --seed 7 --runs 5
 *
 * The check: the model's pools (their views as the backend lays them out,
 * engine/plan.c: SPPF's input and its three outputs are channel slices of
 * one concat buffer) at --check-batch, and --random random shapes (default
 * 200; batch 1-3, 1x1 to 100x100, 1-96 channels, k 1-9, 1-4 stages, concat
 * slices with and without 16-byte alignment, spare channels and batch
 * padding; one in five a single plain pool with stride 1-3 and any pad), each
 * in fp16 and fp32, against strix_cpu_maxpool2d stage by stage.  Max-pool
 * picks values, so the bound is exact: every output element equal to the
 * CPU's bit for bit, and every other element of the buffer (poisoned with
 * NaN first) unchanged (perf/cuda/lab.h).  A failure names the shape and the
 * seed: rerun with --seed.  The line after the check says how many cases
 * version 3 ran its one-pass kernel on.
 * The timing: each of the model's pools at batch --batch, fp16 and fp32:
 * three warm-up launches, then the median of --runs launches between CUDA
 * events.  GB/s counts the fewest bytes: the input read once and every
 * stage's output written once ((1 + stages) x N x H x W x C x element size),
 * as % of the H100 SXM's 3350 GB/s.
 * Exit status: 0, 1 a check failed, 2 usage, 8 out of memory, 9 no CUDA
 * device or a CUDA call failed. */
#define LAB_NAME "pool_lab"

#include "cpu/ops.h"
#include "kernels/pool_plan.h"
#include "lab.h"

#define N_VERSIONS 3
#define MAX_STAGES 8

static const char *const version_name[N_VERSIONS + 1] = {"", "v1 plain", "v2 cascade", "v3 one-pass"};

/* One pool op: view 0 the input, views 1..stages the outputs (stage i reads
 * view i: the input, then stage i - 1's output), all in one span. */
typedef struct pool_case {
    strix_pool_params p;
    int stages;
    strix_dtype dt;
    lab_layout L;
    lab_span s;
    strix_dview in, outs[MAX_STAGES];
    cudaStream_t st;
} pool_case;

/* A cascade of stride-1 'same' pools: what versions 2 and 3 take. */
static int is_cascade(const pool_case *pc) { return pc->p.stride == 1 && 2 * pc->p.pad == pc->p.k - 1; }

/* Whether version 3 runs its one-pass kernel on the case (pool.cu's
 * condition: 16-byte channel groups in every view, the halo in range). */
static int one_pass(const pool_case *pc)
{
    const size_t ch = 16 / lab_esz(pc->dt);
    if (!is_cascade(pc) || pc->stages * pc->p.pad > STRIX_SPPF_HALO_MAX) return 0;
    for (int i = 0; i <= pc->stages; i++) {
        const strix_view *v = &pc->L.view[i];
        if (v->c % ch || v->pix_stride % ch || v->batch_stride % ch || pc->L.off[i] % ch) return 0;
    }
    return 1;
}

static const char *note(void *ctx, int v) { return v == 3 && !one_pass(ctx) ? "  -> v2" : ""; }

static int launch(void *ctx, int v)
{
    const pool_case *pc = ctx;
    const strix_stream st = (strix_stream)pc->st;
    if (v == 1) {
        for (int i = 0; i < pc->stages; i++) {
            const int rc = strix_cuda_maxpool2d(&pc->outs[i], i ? &pc->outs[i - 1] : &pc->in, &pc->p, pc->dt, st);
            if (rc) return rc;
        }
        return 0;
    }
    if (!is_cascade(pc)) return LAB_NA;
    return strix_cuda_maxpool_cascade(pc->outs, pc->stages, &pc->in, &pc->p, pc->dt,
                                      v == 3 ? STRIX_CUDA_KERNELS_V3 : STRIX_CUDA_KERNELS_V2, st);
}

/* The span and device views of a laid-out case, its input random. */
static void case_bind(pool_case *pc)
{
    lab_span_make(&pc->s, pc->L.span, pc->dt);
    lab_layout_bind(&pc->L, &pc->s);
    lab_span_fill(&pc->s, &pc->L.view[0], 4.0f);
    pc->in = lab_span_dview(&pc->s, &pc->L.view[0]);
    for (int i = 0; i < pc->stages; i++) pc->outs[i] = lab_span_dview(&pc->s, &pc->L.view[1 + i]);
}

/* The CPU's stages, then every selected version against them; the failures. */
static int check_case(pool_case *pc, const lab_opts *o, const char *what)
{
    lab_span_start_expect(&pc->s);
    for (int i = 0; i < pc->stages; i++) strix_cpu_maxpool2d(&pc->L.view[1 + i], &pc->L.view[i], &pc->p, NULL);
    for (int i = 0; i < pc->stages; i++) lab_span_expect(&pc->s, &pc->L.view[1 + i]);
    const strix_view *v = &pc->L.view[0];
    char desc[160];
    snprintf(desc, sizeof desc, "%s n%d %dx%d c%d k%d s%d p%d x%d (strides %zu/%zu)", lab_dtype_name(pc->dt), v->n,
             v->h, v->w, v->c, pc->p.k, pc->p.stride, pc->p.pad, pc->stages, v->pix_stride, v->batch_stride);
    return lab_check_versions(&pc->s, pc->st, o, N_VERSIONS, version_name, launch, pc, what, desc);
}

/* View i of a random case: [n, h, w, c] at element off, strides given. */
static void set_view(lab_layout *L, int i, int n, int h, int w, int c, size_t pix, size_t batch, size_t off)
{
    strix_view v = {NULL, n, h, w, c, pix, batch};
    L->view[i] = v;
    L->off[i] = off;
}

/* A random case (see the header): a cascade with the input and every stage
 * as channel slices of one buffer (SPPF's layout), or one plain pool from a
 * buffer into a buffer of its own.  Aligned cases keep every view on
 * 16-byte channel groups, the others shift and pad them by odd amounts. */
static void random_case(pool_case *pc, strix_dtype dt)
{
    static const int ks[] = {1, 3, 5, 5, 5, 7, 9};
    memset(pc, 0, sizeof *pc);
    pc->dt = dt;
    const int ch = (int)(16 / lab_esz(dt)), aligned = lab_int(0, 1);
    const int n = lab_int(1, 3), h = lab_int(0, 7) ? lab_int(1, 40) : lab_int(41, 100),
              w = lab_int(0, 7) ? lab_int(1, 40) : lab_int(41, 100);
    const int c = aligned ? ch * lab_int(1, 96 / ch) : lab_int(1, 40);
    const int plain = lab_int(0, 4) == 0;
    pc->p.k = ks[lab_int(0, 6)];
    pc->p.stride = plain ? lab_int(1, 3) : 1;
    pc->p.pad = plain ? lab_int(0, pc->p.k / 2) : pc->p.k / 2;
    if (h + 2 * pc->p.pad < pc->p.k || w + 2 * pc->p.pad < pc->p.k) pc->p.pad = pc->p.k / 2; /* no output otherwise */
    pc->stages = plain ? 1 : lab_int(1, 4);
    const int oh = (h + 2 * pc->p.pad - pc->p.k) / pc->p.stride + 1, ow = (w + 2 * pc->p.pad - pc->p.k) / pc->p.stride + 1;
    const size_t lead = aligned ? 0 : (size_t)lab_int(0, 3);
    lab_layout *L = &pc->L;
    L->count = 1 + pc->stages;
    if (plain) {
        const size_t pin = (size_t)c + (aligned ? ch * lab_int(0, 2) : lab_int(0, 5));
        const size_t pout = (size_t)c + (aligned ? ch * lab_int(0, 2) : lab_int(0, 5));
        const size_t bin = (size_t)h * w * pin + (aligned ? 0 : lab_int(0, 3)), bout = (size_t)oh * ow * pout;
        set_view(L, 0, n, h, w, c, pin, bin, lead);
        const size_t out_at = ((size_t)n * bin + lead + 63) / 64 * 64;
        set_view(L, 1, n, oh, ow, c, pout, bout, out_at + lead);
        L->span = out_at + (size_t)n * bout + lead;
        return;
    }
    const size_t pix = (size_t)(pc->stages + 1) * c + (aligned ? ch * lab_int(0, 2) : lab_int(0, 5)) + lead;
    const size_t batch = (size_t)h * w * pix + (aligned ? ch * lab_int(0, 1) : lab_int(0, 3));
    for (int i = 0; i <= pc->stages; i++) set_view(L, i, n, h, w, c, pix, batch, lead + (size_t)i * c);
    L->span = (size_t)n * batch;
}

static void case_free(pool_case *pc) { lab_span_free(&pc->s); }

/* The model's max-pool nodes (a cascade counts once, at its first node),
 * with their input and output value ids: vals[k][0] in, [1..] outputs. */
static int model_pools(const strix_model *m, int *node, int (*vals)[LAB_MAX_VIEWS], int *stages, int cap)
{
    int count = 0;
    for (int i = 0; i < m->prog.n_nodes && count < cap; i++) {
        const strix_node *nd = &m->prog.nodes[i];
        if (nd->op != STRIX_OP_MAXPOOL || nd->fused) continue;
        const int len = nd->cascade > 1 ? nd->cascade : 1;
        node[count] = i;
        stages[count] = len;
        vals[count][0] = nd->in;
        for (int k = 0; k < len; k++) vals[count][1 + k] = m->prog.nodes[i + k].out;
        count++;
    }
    return count;
}

static void usage(void)
{
    fprintf(stderr, "usage: pool_lab " LAB_OPTS_USAGE " [--versions 1,2,3]\n");
    exit(EXIT_USAGE);
}

/* The case of the model's pool op (its node, stages and values) laid out at batch n. */
static void model_case(pool_case *pc, const strix_model *m, int node, int stages, const int *vals, strix_dtype dt,
                       int n, int imgsz, cudaStream_t st)
{
    memset(pc, 0, sizeof *pc);
    pc->dt = dt, pc->st = st, pc->stages = stages, pc->p = m->prog.nodes[node].pool;
    lab_layout_make(&pc->L, m, vals, 1 + stages, n, imgsz);
    case_bind(pc);
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
    enum { MAX_POOLS = 16 };
    int node[MAX_POOLS], vals[MAX_POOLS][LAB_MAX_VIEWS], stages[MAX_POOLS];
    const int n_pools = model_pools(m, node, vals, stages, MAX_POOLS);
    cudaStream_t st;
    CU(cudaStreamCreate(&st));
    printf("# pool_lab: %s scale %c at %dx%d on %s (%d SMs); seed %" PRIu64 "; check: the model's %d pool op(s) at batch "
           "%d and %d random shapes, fp16 and fp32, exact; timing batch %d, median of %d\n",
           o.yaml, o.scale, o.imgsz, o.imgsz, prop.name, prop.multiProcessorCount, o.seed, n_pools, o.check_batch,
           o.random, o.batch, o.runs);
    lab_seed(o.seed);
    int failed = 0, one_pass_cases = 0, v3_cases = 0;
    for (int d = 0; d < 2; d++) {
        const strix_dtype dt = d ? STRIX_F32 : STRIX_F16;
        for (int k = 0; k < n_pools + o.random; k++) {
            pool_case pc;
            char what[32];
            if (k < n_pools) {
                model_case(&pc, m, node[k], stages[k], vals[k], dt, o.check_batch, o.imgsz, st);
                snprintf(what, sizeof what, "layer %d", m->prog.nodes[node[k]].layer);
            } else {
                random_case(&pc, dt);
                pc.st = st;
                case_bind(&pc);
                snprintf(what, sizeof what, "random %d", k - n_pools);
            }
            v3_cases += o.on[3] && is_cascade(&pc);
            one_pass_cases += o.on[3] && one_pass(&pc);
            failed += check_case(&pc, &o, what);
            case_free(&pc);
        }
    }
    printf("# check: %d failed; version 3 ran its one-pass kernel on %d of the %d cascades it took\n", failed,
           one_pass_cases, v3_cases);
    lab_table_header("shape (NxHxW C k x stages)");
    for (int k = 0; k < n_pools; k++)
        for (int d = 0; d < 2; d++) {
            pool_case pc;
            model_case(&pc, m, node[k], stages[k], vals[k], d ? STRIX_F32 : STRIX_F16, o.batch, o.imgsz, st);
            lab_span_reset(&pc.s, st);
            const strix_view *in = &pc.L.view[0], *out = &pc.L.view[1];
            const double bytes =
                (double)lab_esz(pc.dt) * ((double)lab_view_count(in) + pc.stages * (double)lab_view_count(out));
            char row[96], desc[64];
            snprintf(desc, sizeof desc, "%dx%dx%d %d k%d x%d", in->n, in->h, in->w, in->c, pc.p.k, pc.stages);
            snprintf(row, sizeof row, "%-5d %-32s %-5s", m->prog.nodes[node[k]].layer, desc, lab_dtype_name(pc.dt));
            failed += lab_time_versions(st, &o, N_VERSIONS, version_name, launch, &pc, row, bytes, note);
            case_free(&pc);
        }
    strix_model_free(m);
    cudaStreamDestroy(st);
    printf("%s: %d failed checks\n", failed ? "FAIL" : "ok", failed);
    return failed ? 1 : 0;
}
