/* team.h — the CPU backend's threads: a team of worker threads owned by a
 * CPU backend (no global state), running the ops' parallel loops.
 *
 * Why not OpenMP: how idle OpenMP threads wait is libgomp's process-wide
 * setting, read from the environment (OMP_WAIT_POLICY) at start-up and
 * fixed from then on; by default they spin for a while after every parallel
 * loop, which on a shared or small machine takes the cores from the video
 * decoder, the encoder or another process (infer measured 2 fps spinning
 * against 23 fps passive on a 2-core host beside a busy neighbour).  A
 * library must not read or set the environment, so the policy is here, per
 * team: by default workers block on a condition variable as soon as they
 * run out of work (no spinning), and the caller's thread takes its share of
 * every loop.  Waking a blocked worker costs some microseconds per loop
 * (a forward pass has about a hundred loops, each of tens of microseconds to
 * milliseconds); a team may instead poll for up to spin_us microseconds
 * before blocking (strix_model_options.cpu_spin_us), which saves the
 * wake-ups between back-to-back loops and costs at most that much CPU time
 * per worker after the last one.
 *
 * A loop is a task count and a function: tasks are claimed one at a time
 * from a shared counter (dynamic scheduling), each by exactly one thread,
 * so as long as a task's result depends only on its index the result does
 * not depend on the thread count.  The function also gets the worker's
 * index (0 = the calling thread), for per-thread scratch. */
#ifndef STRIX_CPU_TEAM_H
#define STRIX_CPU_TEAM_H

#include "../strix.h"

typedef struct strix_cpu_team strix_cpu_team;

/* A team of `threads` threads in all (the caller's counts: threads - 1
 * workers are started); threads <= 1 starts none.  spin_us: how long an idle
 * thread polls before blocking (0: it blocks at once). */
strix_status strix_cpu_team_create(strix_cpu_team **out, int threads, int spin_us, strix_error *err);
/* Stops and joins the workers; NULL is fine. */
void strix_cpu_team_free(strix_cpu_team *t);
/* Threads in the team, the caller's included; 1 for NULL. */
int strix_cpu_team_threads(const strix_cpu_team *t);

typedef void (*strix_cpu_task_fn)(void *ctx, int task, int worker);

/* fn(ctx, i, worker) for every i in [0, tasks), on the team's threads
 * (NULL team: all on the caller's), worker < strix_cpu_team_threads(t).
 * Returns when every task has run; not reentrant (one loop at a time per
 * team, never from inside fn). */
void strix_cpu_team_run(strix_cpu_team *t, int tasks, strix_cpu_task_fn fn, void *ctx);

#endif
