/* seeds_safetensors.c — writes the seeds of fuzz_safetensors into a folder
 * (run by tests/fuzz/run.sh before the target), so no tensor file sits in
 * git.  Each is a safetensors file: an 8-byte little-endian header length,
 * the JSON header (padded with spaces as the Python writer pads it), then
 * the raw tensor bytes:
 *   f32.safetensors     one F32 [2,1,1,1] conv weight (1.5, -2) and
 *                       __metadata__ {"format": "pt"}, as torch writes it;
 *   dtypes.safetensors  one tensor of each dtype the reader knows (F16, BF16,
 *                       F64 scalar, I64, an empty F32 [0,3], U8, BOOL,
 *                       F8_E4M3 under an escaped non-ASCII name) and
 *                       metadata with escaped quotes and backslashes.
 *   seeds_safetensors DIR */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int write_seed(const char *dir, const char *name, const char *header, size_t pad, const uint8_t *data,
                      size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "seeds_safetensors: %s: cannot create\n", path);
        return 0;
    }
    uint64_t len = strlen(header) + pad;
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(len >> (8 * i));
    int ok = fwrite(le, 1, 8, f) == 8 && fwrite(header, 1, strlen(header), f) == strlen(header);
    for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fwrite(data, 1, n, f) == n;
    if (fclose(f) || !ok) {
        fprintf(stderr, "seeds_safetensors: %s: write error\n", path);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seeds_safetensors DIR\n");
        return 2;
    }
    /* 1.5f, -2.0f little-endian */
    static const uint8_t f32[] = {0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0};
    /* f16 1, inf; bf16 1, -inf; f64 0.1; i64 -5; u8 1 2 3; bool 1; e4m3 1, 1.5 */
    static const uint8_t mixed[] = {0x00, 0x3c, 0x00, 0x7c, 0x80, 0x3f, 0x80, 0xff, 0x9a, 0x99,
                                    0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, 0xfb, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03, 0x01, 0x38, 0x40};
    int ok = write_seed(argv[1], "f32.safetensors",
                        "{\"model.0.conv.weight\":{\"dtype\":\"F32\",\"shape\":[2,1,1,1],\"data_offsets\":[0,8]},"
                        "\"__metadata__\":{\"format\":\"pt\"}}",
                        3, f32, sizeof f32);
    ok = ok && write_seed(argv[1], "dtypes.safetensors",
                          "{\"a.f16\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]},"
                          "\"b.bf16\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[4,8]},"
                          "\"c.f64\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[8,16]},"
                          "\"d.i64\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[16,24]},"
                          "\"e.empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[24,24]},"
                          "\"f.u8\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[24,27]},"
                          "\"g.bool\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[27,28]},"
                          "\"h.\\u00e9\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[28,30]},"
                          "\"__metadata__\":{\"k\":\"v\",\"w\\\"q\":\"x\\\\y\"}}",
                          0, mixed, sizeof mixed);
    return ok ? 0 : 1;
}
