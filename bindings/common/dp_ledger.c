/*
 * dp_ledger.c: the privacy ledger file (see dp_ledger.h).
 */
#if !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700
#endif
#include "dp_ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(dp_ledger_record) == 312, "the ledger record layout is part of the file format");
_Static_assert(offsetof(dp_ledger_record, crc) == sizeof(dp_ledger_record) - 4, "crc is the last field");

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bytewise with a table built on first use. */
uint32_t dp_crc32c(const void *data, size_t len) {
    static uint32_t table[256];
    static volatile int ready = 0;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int j = 0; j < 8; j++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c; /* idempotent: racing threads write the same values */
        }
        ready = 1;
    }
    const unsigned char *p = data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

void dp_ledger_set_name(char *field, const char *value) {
    memset(field, 0, DP_LEDGER_NAME);
    if (value) strncpy(field, value, DP_LEDGER_NAME - 1);
}

void dp_ledger_seal(dp_ledger_record *r) {
    r->magic = DP_LEDGER_MAGIC;
    r->crc = dp_crc32c(r, offsetof(dp_ledger_record, crc));
}

static bool terminated(const char *s) { return memchr(s, '\0', DP_LEDGER_NAME) != NULL; }

bool dp_ledger_valid(const dp_ledger_record *r) {
    if (r->magic != DP_LEDGER_MAGIC || r->crc != dp_crc32c(r, offsetof(dp_ledger_record, crc))) return false;
    if (r->type < DP_LEDGER_GRANT || r->type > DP_LEDGER_CREATE) return false;
    if (r->type == DP_LEDGER_CREATE ? !(r->epsilon == 0.0 && !signbit(r->epsilon))
                                    : !(isfinite(r->epsilon) && r->epsilon > 0.0))
        return false;
    if (r->ngrants > DP_LEDGER_MAX_GRANTS_PER_CHARGE) return false;
    return terminated(r->role_name) && terminated(r->dataset) && terminated(r->mechanism);
}

static ssize_t read_full(int fd, void *buf, size_t len, int64_t off) {
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + (int64_t)got));
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

dp_ledger_scan_result dp_ledger_scan(int fd, int64_t from, uint64_t *next_seq, int64_t *end, bool cut_torn,
                                     dp_ledger_apply_fn apply, void *ctx, char *why, size_t why_len) {
    struct stat st;
    dp_ledger_record rec;
    int64_t off = from;
    *end = from;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_len, "cannot stat the ledger: %s", strerror(errno));
        return DP_LEDGER_SCAN_IO;
    }
    int64_t size = (int64_t)st.st_size;
    while (off < size) {
        ssize_t got = read_full(fd, &rec, sizeof rec, off);
        if (got < 0) {
            snprintf(why, why_len, "cannot read the ledger: %s", strerror(errno));
            return DP_LEDGER_SCAN_IO;
        }
        bool whole = got == (ssize_t)sizeof rec;
        bool last = off + DP_LEDGER_RECORD_SIZE >= size;
        if (!whole || !dp_ledger_valid(&rec)) {
            if (!last) {
                snprintf(why, why_len, "record %llu (byte %lld) is invalid and is not the last one",
                         (unsigned long long)*next_seq, (long long)off);
                return DP_LEDGER_SCAN_CORRUPT;
            }
            if (cut_torn && ftruncate(fd, (off_t)off) != 0) {
                snprintf(why, why_len, "cannot cut the torn last record: %s", strerror(errno));
                return DP_LEDGER_SCAN_IO;
            }
            snprintf(why, why_len, "the last record (byte %lld, %lld bytes) was incomplete%s", (long long)off,
                     (long long)(size - off), cut_torn ? " and was cut off" : "");
            return DP_LEDGER_SCAN_TORN;
        }
        if (rec.seq != *next_seq) {
            snprintf(why, why_len, "record at byte %lld has number %llu, expected %llu", (long long)off,
                     (unsigned long long)rec.seq, (unsigned long long)*next_seq);
            return DP_LEDGER_SCAN_CORRUPT;
        }
        if (apply(ctx, &rec) != 0) {
            snprintf(why, why_len, "record %llu does not fit the ledger's state", (unsigned long long)rec.seq);
            return DP_LEDGER_SCAN_CORRUPT;
        }
        off += DP_LEDGER_RECORD_SIZE;
        *end = off;
        (*next_seq)++;
    }
    return DP_LEDGER_SCAN_OK;
}

int dp_ledger_append(int fd, int64_t offset, dp_ledger_record *r) {
    size_t done = 0;
    dp_ledger_seal(r);
    while (done < sizeof *r) {
        ssize_t w = pwrite(fd, (const char *)r + done, sizeof *r - done, (off_t)(offset + (int64_t)done));
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        done += (size_t)w;
    }
    if (fdatasync(fd) != 0) return -2;
    return 0;
}

int dp_ledger_sync_dir(const char *path) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        strcpy(dir, ".");
    } else {
        size_t len = (size_t)(slash - path);
        if (len == 0) len = 1;
        if (len >= sizeof dir) return -1;
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}
