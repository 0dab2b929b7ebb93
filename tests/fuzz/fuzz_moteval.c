/* fuzz_moteval.c — libFuzzer target: a MOTChallenge text file through
 * moteval's reader (strix_mot_parse) and, for small files, the evaluator
 * scoring it against itself and against its first half (what it reads, it
 * must be able to score). */
#include <stdio.h>
#include <stdlib.h>

#include "moteval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strix_mot_box *b;
    long n;
    strix_error err;
    if (strix_mot_parse("fuzz.txt", data, size, &b, &n, &err) != STRIX_OK) return 0;
    if (n <= 256) {
        strix_mot_metrics m;
        if (strix_mot_evaluate(b, n, b, n, 0.5, &m, &err) != STRIX_OK ||
            strix_mot_evaluate(b, n, b, n / 2, 0.5, &m, &err) != STRIX_OK) {
            fprintf(stderr, "read but cannot score: %s\n", err.message);
            abort();
        }
    }
    free(b);
    return 0;
}
