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
 * seed: rerun with --seed.  The line after the check says how many of the
 * cascades checked take version 3's one-pass kernel.
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
#define MAX_POOLS 16

static const char *const version_name[N_VERSIONS + 1] = {"", "v1 plain", "v2 cascade", "v3 one-pass"};

/* One pool op: view 0 the input, views 1..stages the outputs (stage i reads
 * view i: the input, then stage i - 1's output), all in one span. */
typedef struct pool_case {
    lab_case b;
    strix_pool_params p;
    int stages;
    lab_layout L;
    strix_dview in, outs[MAX_STAGES];
} pool_case;

/* The lab: the model's pool ops (a cascade once, at its first node: node,
 * stages, value ids in then outputs), the case, the check's coverage. */
typedef struct pool_lab {
    strix_model *m;
    int n_pools, node[MAX_POOLS], stages[MAX_POOLS], vals[MAX_POOLS][LAB_MAX_VIEWS];
    cudaStream_t st;
    pool_case c;
    int cascades, one_pass; /* cascades checked; those v3 runs in one pass */
} pool_lab;

/* A cascade of stride-1 'same' pools: what versions 2 and 3 take. */
static int is_cascade(const pool_case *pc) { return pc->p.stride == 1 && 2 * pc->p.pad == pc->p.k - 1; }

/* Whether version 3 runs its one-pass kernel on the case (pool.cu's
 * condition: 16-byte channel groups in every view, the halo in range). */
static int one_pass(const pool_case *pc)
{
    return is_cascade(pc) && pc->stages * pc->p.pad <= STRIX_SPPF_HALO_MAX &&
           lab_layout_vec16(&pc->L, 1 + pc->stages, pc->b.dt);
}

static const char *note(void *c, int v) { return v == 3 && !one_pass(c) ? "  -> v2" : ""; }

static int launch(void *c, int v)
{
    const pool_case *pc = c;
    const strix_stream st = (strix_stream)pc->b.st;
    if (v == 1) {
        for (int i = 0; i < pc->stages; i++) {
            const int rc = strix_cuda_maxpool2d(&pc->outs[i], i ? &pc->outs[i - 1] : &pc->in, &pc->p, pc->b.dt, st);
            if (rc) return rc;
        }
        return 0;
    }
    if (!is_cascade(pc)) return LAB_NA;
    return strix_cuda_maxpool_cascade(pc->outs, pc->stages, &pc->in, &pc->p, pc->b.dt,
                                      v == 3 ? STRIX_CUDA_KERNELS_V3 : STRIX_CUDA_KERNELS_V2, st);
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
static void random_case(pool_case *pc)
{
    static const int ks[] = {1, 3, 5, 5, 5, 7, 9};
    const int ch = (int)(16 / lab_esz(pc->b.dt)), aligned = lab_int(0, 1);
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

/* Case k: the model's pool k at the check or timing batch, or a random one. */
static void make(lab_family *f, int k, strix_dtype dt, int timing, char *label, char *shape)
{
    pool_lab *lab = f->lab;
    pool_case *pc = &lab->c;
    memset(pc, 0, sizeof *pc);
    pc->b.dt = dt, pc->b.st = lab->st;
    if (k < lab->n_pools) {
        const strix_node *nd = &lab->m->prog.nodes[lab->node[k]];
        pc->stages = lab->stages[k], pc->p = nd->pool;
        lab_layout_make(&pc->L, lab->m, lab->vals[k], 1 + pc->stages, timing ? f->o->batch : f->o->check_batch,
                        f->o->imgsz);
        snprintf(label, LAB_LABEL, "layer %d", nd->layer);
    } else {
        random_case(pc);
        snprintf(label, LAB_LABEL, "random %d", k - lab->n_pools);
    }
    lab_layout_span(&pc->L, &pc->b.s, dt, 1);
    pc->in = lab_span_dview(&pc->b.s, &pc->L.view[0]);
    for (int i = 0; i < pc->stages; i++) pc->outs[i] = lab_span_dview(&pc->b.s, &pc->L.view[1 + i]);
    const strix_view *v = &pc->L.view[0];
    snprintf(shape, LAB_SHAPE, "%dx%dx%d %d k%d x%d", v->n, v->h, v->w, v->c, pc->p.k, pc->stages);
}

/* The CPU's stages, stage by stage. */
static void expect(lab_family *f, char *desc, size_t cap)
{
    pool_lab *lab = f->lab;
    pool_case *pc = &lab->c;
    for (int i = 0; i < pc->stages; i++) {
        strix_cpu_maxpool2d(&pc->L.view[1 + i], &pc->L.view[i], &pc->p, NULL);
        lab_span_expect(&pc->b.s, &pc->L.view[1 + i]);
    }
    lab->cascades += is_cascade(pc);
    lab->one_pass += one_pass(pc);
    const strix_view *v = &pc->L.view[0];
    snprintf(desc, cap, "%s n%d %dx%d c%d k%d s%d p%d x%d (strides %zu/%zu)", lab_dtype_name(pc->b.dt), v->n, v->h,
             v->w, v->c, pc->p.k, pc->p.stride, pc->p.pad, pc->stages, v->pix_stride, v->batch_stride);
}

/* The input read once, every stage's output written once. */
static double bytes(const void *c)
{
    const pool_case *pc = c;
    return (double)lab_esz(pc->b.dt) *
           ((double)lab_view_count(&pc->L.view[0]) + pc->stages * (double)lab_view_count(&pc->L.view[1]));
}

static void drop(void *c) { lab_span_free(&((pool_case *)c)->b.s); }

/* The model's max-pool nodes (a cascade counts once, at its first node). */
static void model_pools(pool_lab *lab)
{
    const strix_program *p = &lab->m->prog;
    for (int i = 0; i < p->n_nodes && lab->n_pools < MAX_POOLS; i++) {
        const strix_node *nd = &p->nodes[i];
        if (nd->op != STRIX_OP_MAXPOOL || nd->fused) continue;
        const int k = lab->n_pools++, len = nd->cascade > 1 ? nd->cascade : 1;
        lab->node[k] = i;
        lab->stages[k] = len;
        lab->vals[k][0] = nd->in;
        for (int j = 0; j < len; j++) lab->vals[k][1 + j] = p->nodes[i + j].out;
    }
}

int main(int argc, char **argv)
{
    lab_opts o;
    struct cudaDeviceProp prop;
    lab_start(argc, argv, &o, N_VERSIONS, 200, 0, &prop);
    static pool_lab lab;
    lab.m = lab_model(&o);
    model_pools(&lab);
    CU(cudaStreamCreate(&lab.st));
    lab_banner(&o, &prop, lab.n_pools, "pool op(s)");
    lab_family f = {&o,   N_VERSIONS, version_name, launch, note,   "shape (NxHxW C k x stages)",
                    lab.n_pools, lab.n_pools, &lab, &lab.c, make, expect, bytes, drop};
    int failed = lab_check_all(&f);
    printf("# check: %d failed; %d of the %d cascades checked take version 3's one-pass kernel\n", failed,
           lab.one_pass, lab.cascades);
    failed += lab_time_all(&f);
    strix_model_free(lab.m);
    cudaStreamDestroy(lab.st);
    return lab_end(failed);
}
