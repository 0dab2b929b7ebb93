/* team.c — the CPU backend's worker threads (see team.h): pthreads, one
 * mutex and two condition variables; a loop is published as a generation
 * number, workers claim tasks from an atomic counter, the caller waits
 * until every worker has checked out of the generation, so no worker
 * touches a loop's context after strix_cpu_team_run returns.  With a spin
 * time, both sides poll the generation / the count of busy workers for up
 * to that long before blocking. */
#include "team.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"

typedef struct worker_arg {
    strix_cpu_team *team;
    int index; /* 1..threads-1 */
} worker_arg;

struct strix_cpu_team {
    int threads;  /* the caller's included */
    int started;  /* workers running */
    long spin_ns; /* poll this long before blocking (0: block at once) */
    pthread_t *tid;
    worker_arg *args;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* a new generation, or stop */
    pthread_cond_t done; /* the last worker left the generation */
    /* written under mu; gen and busy also polled without it */
    atomic_ulong gen;
    int stop;
    atomic_int busy; /* workers not yet checked out of the current generation */
    strix_cpu_task_fn fn;
    void *ctx;
    int tasks;
    /* claimed without the lock */
    atomic_int next;
};

static void claim_all(strix_cpu_team *t, strix_cpu_task_fn fn, void *ctx, int tasks, int worker)
{
    for (;;) {
        int i = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
        if (i >= tasks) return;
        fn(ctx, i, worker);
    }
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Polls until *v != unchanged (gen) or *v == 0 (busy), for at most spin_ns. */
static void spin_while(const strix_cpu_team *t, const atomic_ulong *gen, unsigned long seen, const atomic_int *busy)
{
    if (t->spin_ns <= 0) return;
    long end = now_ns() + t->spin_ns;
    for (int i = 0;; i++) {
        if (gen && atomic_load_explicit(gen, memory_order_acquire) != seen) return;
        if (busy && atomic_load_explicit(busy, memory_order_acquire) == 0) return;
        cpu_relax();
        if ((i & 63) == 63 && now_ns() > end) return;
    }
}

static void *worker_main(void *p)
{
    worker_arg *a = p;
    strix_cpu_team *t = a->team;
    unsigned long seen = 0;
    for (;;) {
        spin_while(t, &t->gen, seen, NULL);
        pthread_mutex_lock(&t->mu);
        while (atomic_load(&t->gen) == seen && !t->stop) pthread_cond_wait(&t->wake, &t->mu);
        if (t->stop) break;
        seen = atomic_load(&t->gen);
        strix_cpu_task_fn fn = t->fn;
        void *ctx = t->ctx;
        int tasks = t->tasks;
        pthread_mutex_unlock(&t->mu);
        claim_all(t, fn, ctx, tasks, a->index);
        if (atomic_fetch_sub(&t->busy, 1) == 1) { /* the last one out wakes the caller */
            pthread_mutex_lock(&t->mu);
            pthread_cond_signal(&t->done);
            pthread_mutex_unlock(&t->mu);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

strix_status strix_cpu_team_create(strix_cpu_team **out, int threads, int spin_us, strix_error *err)
{
    *out = NULL;
    strix_cpu_team *t = calloc(1, sizeof *t);
    if (!t) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CPU threads");
    t->threads = threads < 1 ? 1 : threads;
    t->spin_ns = spin_us > 0 ? spin_us * 1000L : 0;
    atomic_init(&t->next, 0);
    atomic_init(&t->gen, 0);
    atomic_init(&t->busy, 0);
    if (pthread_mutex_init(&t->mu, NULL)) {
        free(t);
        return strix_fail(err, STRIX_E_NOMEM, "cannot create a mutex for the CPU threads");
    }
    if (pthread_cond_init(&t->wake, NULL)) {
        pthread_mutex_destroy(&t->mu);
        free(t);
        return strix_fail(err, STRIX_E_NOMEM, "cannot create a condition variable for the CPU threads");
    }
    if (pthread_cond_init(&t->done, NULL)) {
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return strix_fail(err, STRIX_E_NOMEM, "cannot create a condition variable for the CPU threads");
    }
    if (t->threads > 1) {
        t->tid = calloc((size_t)t->threads - 1, sizeof *t->tid);
        t->args = calloc((size_t)t->threads - 1, sizeof *t->args);
        if (!t->tid || !t->args) {
            strix_cpu_team_free(t);
            return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CPU threads");
        }
        for (int i = 0; i < t->threads - 1; i++) {
            t->args[i].team = t;
            t->args[i].index = i + 1;
            if (pthread_create(&t->tid[i], NULL, worker_main, &t->args[i])) {
                int want = t->threads;
                strix_cpu_team_free(t);
                return strix_fail(err, STRIX_E_NOMEM,
                                  "cannot start %d CPU threads (the system refused thread %d): ask for fewer threads",
                                  want, i + 2);
            }
            t->started++;
        }
    }
    *out = t;
    return STRIX_OK;
}

void strix_cpu_team_free(strix_cpu_team *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < t->started; i++) pthread_join(t->tid[i], NULL);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->mu);
    free(t->tid);
    free(t->args);
    free(t);
}

int strix_cpu_team_threads(const strix_cpu_team *t) { return t ? t->threads : 1; }

void strix_cpu_team_run(strix_cpu_team *t, int tasks, strix_cpu_task_fn fn, void *ctx)
{
    if (tasks <= 0) return;
    if (!t || t->started == 0 || tasks == 1) {
        for (int i = 0; i < tasks; i++) fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&t->mu);
    t->fn = fn;
    t->ctx = ctx;
    t->tasks = tasks;
    atomic_store_explicit(&t->next, 0, memory_order_relaxed);
    atomic_store(&t->busy, t->started);
    atomic_fetch_add(&t->gen, 1); /* seq_cst: after every field above */
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    claim_all(t, fn, ctx, tasks, 0);
    spin_while(t, NULL, 0, &t->busy);
    pthread_mutex_lock(&t->mu);
    while (atomic_load(&t->busy) > 0) pthread_cond_wait(&t->done, &t->mu);
    pthread_mutex_unlock(&t->mu);
}
