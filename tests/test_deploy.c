/* test_deploy.c — structural checks of what deploy/ ships for the batch
 * engines that cannot run here (tests/cli_slurm.sh runs Slurm for real):
 * the AWS Batch job definition is valid JSON (loaders/json.h) whose
 * retryStrategy retries exactly strix's transient exit codes within AWS
 * Batch's 5 rules and ends on the rest, its command shards by the array
 * size; the Kubernetes Indexed Job is valid YAML (libyaml) with a GPU
 * request, restartPolicy Never, --shards equal to completions and a
 * podFailurePolicy whose FailIndex and Count codes are tools/exitcodes.h's
 * permanent and transient ones; the shell scripts parse (sh -n) and the
 * Slurm script requeues on the transient codes.  Run from the repository
 * root (tests/run.sh does). */
#include <stdlib.h>
#include <yaml.h>

#include "fileread.h"
#include "json.h"
#include "testlib.h"
#include "tools/exitcodes.h"

/* The transient codes (retry) and the permanent ones (do not), as README's table. */
static const int transient[] = {EXIT_NOMEM, EXIT_DEVICE, EXIT_PARTIAL_RETRY, EXIT_INTERRUPTED};
static const int permanent[] = {EXIT_INTERNAL, EXIT_USAGE, EXIT_INPUT,  EXIT_MODEL,
                                EXIT_WEIGHTS,  EXIT_IMAGE, EXIT_OUTPUT, EXIT_PARTIAL};

static char *read_text(const char *path, size_t *n)
{
    char *t = NULL;
    strix_error e;
    size_t len;
    if (strix_file_read(path, 1 << 20, &t, &len, &e)) return NULL;
    if (n) *n = len;
    return t;
}

static void aws_batch_job_definition(void)
{
    size_t n;
    char *t = read_text("deploy/aws-batch/job-definition.json", &n);
    if (!t) {
        tl_skip("deploy/aws-batch/job-definition.json not found (run from the repository root)");
        return;
    }
    char *dst = malloc(n + 1);
    strix_json j;
    strix_json_init(&j, t, n, dst, "file");
    int bad = strix_json_skip(&j) || strix_json_peek(&j) >= 0;
    free(dst);
    const char *why = bad ? "not valid JSON" : NULL;
    int rules = 0;
    for (const char *p = t; (p = strstr(p, "\"action\"")); p++) rules++;
    if (!why && rules > 5) why = "more than 5 evaluateOnExit rules (AWS Batch's limit)";
    static const char *const want[] = {
        "{\"onExitCode\": \"8\", \"action\": \"RETRY\"}",   "{\"onExitCode\": \"9\", \"action\": \"RETRY\"}",
        "{\"onExitCode\": \"13*\", \"action\": \"RETRY\"}", "{\"onExitCode\": \"*\", \"action\": \"EXIT\"}",
        "{\"onStatusReason\": \"Host EC2*\", \"action\": \"RETRY\"}",
        "\"--manifest\", \"Ref::manifest\"",                "\"--shards\", \"Ref::shards\"",
        "{\"type\": \"GPU\", \"value\": \"1\"}"};
    for (size_t i = 0; !why && i < sizeof want / sizeof want[0]; i++)
        if (!strstr(t, want[i])) why = want[i];
    /* the catch-all EXIT must be the last rule: rules match in order */
    const char *all = strstr(t, "\"*\", \"action\": \"EXIT\"");
    if (!why && all && strstr(all, "\"action\"") != strstr(all, "\"action\": \"EXIT\"")) why = "bad order";
    if (!why && strstr(all, "onExitCode")) why = "a rule after the catch-all EXIT";
    free(t);
    /* 8, 9 and 13* (130 and 137) retried: the table's transient codes but 11, which needs a 6th rule */
    TL_CHECK(EXIT_NOMEM == 8 && EXIT_DEVICE == 9 && EXIT_INTERRUPTED / 10 == 13, "exit codes moved: update deploy/");
    TL_CHECK(!why, "job-definition.json: %s", why);
    TL_CHECK(system("sh -n deploy/aws-batch/submit-array.sh") == 0, "submit-array.sh does not parse (sh -n)");
}

/* The YAML as "path=value" lines ("spec.completions=8",
 * "spec.template.spec.containers.0.command.3=--weights"). */
typedef struct ypath {
    char key[16][64];
    int idx[16], seq[16], depth;
} ypath;

static int yaml_flatten(const char *text, size_t n, char **out)
{
    yaml_parser_t p;
    yaml_event_t ev;
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f || !yaml_parser_initialize(&p)) return -1;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
    ypath y;
    memset(&y, 0, sizeof y);
    int want_key[17] = {0}, ok = 1, done = 0;
    while (ok && !done) {
        if (!yaml_parser_parse(&p, &ev)) {
            ok = 0;
            break;
        }
        int d = y.depth;
        switch (ev.type) {
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (d >= 15) {
                ok = 0;
                break;
            }
            y.depth++;
            y.seq[y.depth] = ev.type == YAML_SEQUENCE_START_EVENT;
            y.idx[y.depth] = 0;
            want_key[y.depth] = !y.seq[y.depth];
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            y.depth--;
            if (y.depth > 0) {
                if (y.seq[y.depth]) y.idx[y.depth]++;
                else want_key[y.depth] = 1;
            }
            break;
        case YAML_SCALAR_EVENT:
            if (d > 0 && !y.seq[d] && want_key[d]) {
                snprintf(y.key[d], sizeof y.key[d], "%s", (const char *)ev.data.scalar.value);
                want_key[d] = 0;
                break;
            }
            for (int k = 1; k <= d; k++) {
                if (y.seq[k]) fprintf(f, "%s%d", k > 1 ? "." : "", y.idx[k]);
                else fprintf(f, "%s%s", k > 1 ? "." : "", y.key[k]);
            }
            fprintf(f, "=%s\n", (const char *)ev.data.scalar.value);
            if (y.seq[d]) y.idx[d]++;
            else want_key[d] = 1;
            break;
        case YAML_STREAM_END_EVENT: done = 1; break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    fclose(f);
    return ok ? 0 : -1;
}

/* The values of the sequence at prefix ("...values.") as ints, into v; count. */
static int int_list(const char *flat, const char *prefix, int *v, int cap)
{
    int n = 0;
    for (const char *p = flat; (p = strstr(p, prefix)) && n < cap; p++)
        if (p == flat || p[-1] == '\n') {
            const char *eq = strchr(p, '=');
            if (eq) v[n++] = atoi(eq + 1);
        }
    return n;
}

static int same_set(const int *a, int na, const int *b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; i++) {
        int found = 0;
        for (int k = 0; k < nb; k++) found |= a[i] == b[k];
        if (!found) return 0;
    }
    return 1;
}

static void k8s_indexed_job(void)
{
    size_t n;
    char *t = read_text("deploy/k8s/indexed-job.yaml", &n);
    if (!t) {
        tl_skip("deploy/k8s/indexed-job.yaml not found (run from the repository root)");
        return;
    }
    char *flat = NULL;
    int rc = yaml_flatten(t, n, &flat);
    free(t);
    if (rc) free(flat);
    TL_CHECK(!rc, "indexed-job.yaml is not valid YAML");
    const char *why = NULL;
    static const char *const want[] = {"kind=Job\n", "spec.completionMode=Indexed\n",
                                       "spec.template.spec.restartPolicy=Never\n",
                                       "spec.template.spec.containers.0.resources.limits.nvidia.com/gpu=1\n",
                                       "spec.podFailurePolicy.rules.0.action=FailIndex\n",
                                       "spec.podFailurePolicy.rules.1.onPodConditions.0.type=DisruptionTarget\n",
                                       "spec.podFailurePolicy.rules.2.action=Count\n"};
    for (size_t i = 0; i < sizeof want / sizeof want[0] && !why; i++)
        if (!strstr(flat, want[i])) why = want[i];
    /* --shards N == completions */
    const char *c = strstr(flat, "spec.completions=");
    int completions = c ? atoi(c + 17) : -1, shards = -2;
    for (int k = 0; k < 64 && !why; k++) {
        char key[96];
        snprintf(key, sizeof key, "spec.template.spec.containers.0.command.%d=--shards\n", k);
        const char *s = strstr(flat, key);
        if (!s) continue;
        snprintf(key, sizeof key, "spec.template.spec.containers.0.command.%d=", k + 1);
        const char *v = strstr(flat, key);
        shards = v ? atoi(v + strlen(key)) : -2;
    }
    if (!why && shards != completions) why = "--shards in the command is not spec.completions";
    int fail_codes[32], count_codes[32];
    int nf = int_list(flat, "spec.podFailurePolicy.rules.0.onExitCodes.values.", fail_codes, 32);
    int nc = int_list(flat, "spec.podFailurePolicy.rules.2.onExitCodes.values.", count_codes, 32);
    free(flat);
    TL_CHECK(!why, "indexed-job.yaml: %s", why);
    TL_CHECK(same_set(fail_codes, nf, permanent, (int)(sizeof permanent / sizeof *permanent)),
             "FailIndex codes (%d of them) are not exitcodes.h's permanent ones", nf);
    /* Count: the transient ones, and 137 (SIGKILL after the grace period) */
    int want_count[8];
    int nw = 0;
    for (size_t i = 0; i < sizeof transient / sizeof *transient; i++) want_count[nw++] = transient[i];
    want_count[nw++] = 137;
    TL_CHECK(same_set(count_codes, nc, want_count, nw), "Count codes (%d of them) are not the transient ones", nc);
}

static void slurm_script(void)
{
    char *t = read_text("deploy/slurm/strix-array.sbatch", NULL);
    if (!t) {
        tl_skip("deploy/slurm/strix-array.sbatch not found (run from the repository root)");
        return;
    }
    char line[64];
    snprintf(line, sizeof line, "\n%d | %d | %d | %d)\n", transient[0], transient[1], transient[2], transient[3]);
    int ok = strstr(t, "#SBATCH --requeue\n") && strstr(t, line) && strstr(t, "scontrol requeue");
    free(t);
    TL_CHECK(ok, "strix-array.sbatch lacks #SBATCH --requeue or the requeue on the transient codes (%s)", line + 1);
    TL_CHECK(system("sh -n deploy/slurm/strix-array.sbatch") == 0, "strix-array.sbatch does not parse (sh -n)");
}

int main(int argc, char **argv)
{
    tl_init();
    TL_RUN(aws_batch_job_definition);
    TL_RUN(k8s_indexed_job);
    TL_RUN(slurm_script);
    TL_MAIN_END();
}
