/* zip.c — the central-directory walk of a STORED-only ZIP archive (what
 * torch.save writes; see zip.h for why this is not libzip).  Layout, from
 * PKWARE's APPNOTE.TXT, all little-endian:
 *   end of central directory (EOCD, 22 bytes + comment) at the end of the file;
 *   zip64: an EOCD locator (20 bytes) just before it pointing at a zip64 EOCD;
 *   central directory: one 46-byte header + name + extra + comment per entry;
 *   local header: 30 bytes + name + extra, then the entry's bytes. */
#include "zip.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define ZIP_EOCD 0x06054b50u
#define ZIP_EOCD64 0x06064b50u
#define ZIP_LOC64 0x07064b50u
#define ZIP_CENTRAL 0x02014b50u
#define ZIP_LOCAL 0x04034b50u
#define ZIP_MAX_ENTRIES 1000000 /* a checkpoint has one entry per storage: thousands, not millions */

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

void strix_zip_close(strix_zip *z)
{
    for (size_t i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    z->entries = NULL;
    z->n = 0;
}

/* The zip64 fields of a central header's extra block (tag 1): each value the
 * 32-bit header holds as 0xFFFFFFFF follows in order usize, csize, offset. */
static int zip64_extra(const uint8_t *x, size_t n, uint64_t *usize, uint64_t *csize, uint64_t *off)
{
    while (n >= 4) {
        uint32_t tag = rd16(x), len = rd16(x + 2);
        if (len > n - 4) return 0;
        if (tag == 1) {
            const uint8_t *p = x + 4, *e = x + 4 + len;
            uint64_t *v[3] = {usize, csize, off};
            for (int i = 0; i < 3; i++)
                if (*v[i] == 0xFFFFFFFFu) {
                    if (e - p < 8) return 0;
                    *v[i] = rd64(p);
                    p += 8;
                }
            return 1;
        }
        x += 4 + len;
        n -= 4 + len;
    }
    return 1;
}

strix_status strix_zip_open(strix_zip *z, const uint8_t *buf, size_t len, const char *path, strix_error *err)
{
    memset(z, 0, sizeof *z);
    if (len < 22 || rd32(buf) != ZIP_LOCAL)
        return strix_fail(err, STRIX_E_WEIGHTS, "%s: not a ZIP archive (a .pt file saved by torch >= 1.6 is one); "
                          "re-save it with torch.save", path);
    /* the EOCD: the last signature within the last 64 KiB + 22 bytes (the comment is at most 65535) */
    size_t eocd = 0;
    int found = 0;
    for (size_t i = len - 22 + 1; i-- > 0 && len - i <= 22 + 65535;)
        if (rd32(buf + i) == ZIP_EOCD && i + 22 + rd16(buf + i + 20) == len) {
            eocd = i;
            found = 1;
            break;
        }
    if (!found) return strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP archive without its end record (truncated?)", path);
    const uint8_t *e = buf + eocd;
    uint64_t n = rd16(e + 10), cd_size = rd32(e + 12), cd_off = rd32(e + 16);
    if (rd16(e + 4) || rd16(e + 6) || rd16(e + 8) != rd16(e + 10))
        return strix_fail(err, STRIX_E_WEIGHTS, "%s: multi-disk ZIP archives are not supported", path);
    if (n == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
        if (eocd < 20 || rd32(e - 20) != ZIP_LOC64)
            return strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP64 archive without its locator (corrupt)", path);
        uint64_t o = rd64(e - 20 + 8);
        if (o > len || len - o < 56 || rd32(buf + o) != ZIP_EOCD64)
            return strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP64 end record out of the file (corrupt)", path);
        n = rd64(buf + o + 32);
        cd_size = rd64(buf + o + 40);
        cd_off = rd64(buf + o + 48);
    }
    if (cd_off > len || cd_size > len - cd_off)
        return strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP central directory out of the file (truncated?)", path);
    if (n > ZIP_MAX_ENTRIES || n > cd_size / 46)
        return strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP directory claims %llu entries in %llu bytes (corrupt)", path,
                          (unsigned long long)n, (unsigned long long)cd_size);
    z->entries = calloc(n ? n : 1, sizeof *z->entries);
    if (!z->entries) return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
    const uint8_t *p = buf + cd_off, *end = p + cd_size;
    for (uint64_t i = 0; i < n; i++) {
        if (end - p < 46 || rd32(p) != ZIP_CENTRAL) goto corrupt;
        uint32_t flags = rd16(p + 8), method = rd16(p + 10);
        uint64_t csize = rd32(p + 20), usize = rd32(p + 24), off = rd32(p + 42);
        size_t nl = rd16(p + 28), xl = rd16(p + 30), cl = rd16(p + 32);
        if ((size_t)(end - p) - 46 < nl + xl + cl) goto corrupt;
        if (!zip64_extra(p + 46 + nl, xl, &usize, &csize, &off)) goto corrupt;
        if (memchr(p + 46, 0, nl)) goto corrupt;
        strix_zip_entry *en = &z->entries[z->n];
        if (!(en->name = malloc(nl + 1))) {
            strix_zip_close(z);
            return strix_fail(err, STRIX_E_NOMEM, "%s: out of memory", path);
        }
        memcpy(en->name, p + 46, nl);
        en->name[nl] = 0;
        z->n++;
        if (flags & 1) {
            strix_status st = strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP entry '%s' is encrypted", path, en->name);
            strix_zip_close(z);
            return st;
        }
        if (method != 0 || csize != usize) {
            strix_status st = strix_fail(err, STRIX_E_WEIGHTS,
                                         "%s: ZIP entry '%s' is compressed (method %u); torch.save stores entries "
                                         "uncompressed: re-save the checkpoint with torch.save",
                                         path, en->name, method);
            strix_zip_close(z);
            return st;
        }
        if (off > len || len - off < 30 || rd32(buf + off) != ZIP_LOCAL) goto corrupt;
        uint64_t data = off + 30 + rd16(buf + off + 26) + rd16(buf + off + 28);
        if (data > len || usize > len - data) goto corrupt;
        en->data = buf + data;
        en->size = usize;
        en->offset = data;
        p += 46 + nl + xl + cl;
    }
    return STRIX_OK;
corrupt:;
    strix_status st = strix_fail(err, STRIX_E_WEIGHTS, "%s: ZIP directory entry %zu is corrupt or points out of the file "
                                 "(truncated download?)", path, z->n);
    strix_zip_close(z);
    return st;
}

const strix_zip_entry *strix_zip_find(const strix_zip *z, const char *name)
{
    for (size_t i = 0; i < z->n; i++)
        if (!strcmp(z->entries[i].name, name)) return &z->entries[i];
    return NULL;
}
