/* team.c — the CPU backend's worker threads (see team.h): pthreads, one
 * mutex and two condition variables.
 *
 * A loop is published under the mutex as a new generation g (its function,
 * context and task count).  Tasks are claimed from one 64-bit ticket,
 * (g << 32) | next task, by compare-and-swap: a claim succeeds only while the
 * ticket still names g, so a worker that wakes late, after the loop is over
 * (or another has started), can never run a task with a stale context.  The
 * caller takes tasks too, then waits until all g's tasks are done — not for
 * every worker to have woken: on a machine whose cores are busy with other
 * processes an unscheduled worker costs the loop nothing, the caller just
 * does its share.  With a spin time, idle workers poll the generation, and
 * the caller the done count, that long before blocking. */
#include "team.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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
    pthread_cond_t done; /* the current generation's last task finished */
    /* written under mu (gen also read without it, to poll) */
    atomic_uint gen;
    int stop;
    strix_cpu_task_fn fn;
    void *ctx;
    int tasks;
    /* without the lock */
    atomic_uint_least64_t ticket; /* (generation << 32) | next unclaimed task */
    atomic_int finished;          /* tasks of the current generation done */
};

/* Runs tasks of generation g while any is left; the thread that finishes
 * the last one wakes the caller. */
static void claim_all(strix_cpu_team *t, unsigned g, strix_cpu_task_fn fn, void *ctx, int tasks, int worker)
{
    uint64_t cur = atomic_load(&t->ticket);
    for (;;) {
        if ((unsigned)(cur >> 32) != g || (int)(uint32_t)cur >= tasks) return;
        if (!atomic_compare_exchange_weak(&t->ticket, &cur, cur + 1)) continue; /* cur reloaded */
        fn(ctx, (int)(uint32_t)cur, worker);
        if (atomic_fetch_add(&t->finished, 1) + 1 == tasks && worker != 0) {
            pthread_mutex_lock(&t->mu);
            pthread_cond_signal(&t->done);
            pthread_mutex_unlock(&t->mu);
        }
        cur = atomic_load(&t->ticket);
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

/* Polls for at most the team's spin time until the generation is no longer
 * `seen` (gen != NULL) or `tasks` tasks are finished (gen == NULL). */
static void spin_until(strix_cpu_team *t, const atomic_uint *gen, unsigned seen, int tasks)
{
    if (t->spin_ns <= 0) return;
    long end = now_ns() + t->spin_ns;
    for (int i = 0;; i++) {
        if (gen ? atomic_load(gen) != seen : atomic_load(&t->finished) >= tasks) return;
        cpu_relax();
        if ((i & 63) == 63 && now_ns() > end) return;
    }
}

static void *worker_main(void *p)
{
    worker_arg *a = p;
    strix_cpu_team *t = a->team;
    unsigned seen = 0;
    for (;;) {
        spin_until(t, &t->gen, seen, 0);
        pthread_mutex_lock(&t->mu);
        while (atomic_load(&t->gen) == seen && !t->stop) pthread_cond_wait(&t->wake, &t->mu);
        if (t->stop) {
            pthread_mutex_unlock(&t->mu);
            return NULL;
        }
        seen = atomic_load(&t->gen);
        strix_cpu_task_fn fn = t->fn;
        void *ctx = t->ctx;
        int tasks = t->tasks;
        pthread_mutex_unlock(&t->mu);
        claim_all(t, seen, fn, ctx, tasks, a->index);
    }
}

strix_status strix_cpu_team_create(strix_cpu_team **out, int threads, int spin_us, strix_error *err)
{
    *out = NULL;
    strix_cpu_team *t = calloc(1, sizeof *t);
    if (!t) return strix_fail(err, STRIX_E_NOMEM, "out of memory for the CPU threads");
    t->threads = threads < 1 ? 1 : threads;
    t->spin_ns = spin_us > 0 ? spin_us * 1000L : 0;
    atomic_init(&t->gen, 0);
    atomic_init(&t->ticket, 0);
    atomic_init(&t->finished, 0);
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
    unsigned g = atomic_load(&t->gen) + 1;
    t->fn = fn;
    t->ctx = ctx;
    t->tasks = tasks;
    atomic_store(&t->finished, 0);
    atomic_store(&t->ticket, (uint64_t)g << 32);
    atomic_store(&t->gen, g);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    claim_all(t, g, fn, ctx, tasks, 0);
    spin_until(t, NULL, 0, tasks);
    if (atomic_load(&t->finished) < tasks) {
        pthread_mutex_lock(&t->mu);
        while (atomic_load(&t->finished) < tasks) pthread_cond_wait(&t->done, &t->mu);
        pthread_mutex_unlock(&t->mu);
    }
}
