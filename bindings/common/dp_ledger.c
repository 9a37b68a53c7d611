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

/* A version-1 record ("DPML", dpmo <= 0.2), as it is on disk. */
typedef struct record_v1 {
    uint32_t magic;
    uint32_t type;
    uint64_t seq;
    int64_t time_us;
    double epsilon;
    uint32_t role;
    uint32_t database;
    uint32_t grant_id;
    uint32_t ngrants;
    uint32_t grants[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
    char role_name[DP_LEDGER_NAME];
    char dataset[DP_LEDGER_NAME];
    char mechanism[DP_LEDGER_NAME];
    uint32_t reserved;
    uint32_t crc;
} record_v1;

_Static_assert(sizeof(dp_ledger_record) == 312, "the ledger record layout is part of the file format");
_Static_assert(sizeof(record_v1) == 312, "the version-1 record layout is part of the file format");
_Static_assert(offsetof(dp_ledger_record, crc) == sizeof(dp_ledger_record) - 4, "crc is the last field");
_Static_assert(offsetof(record_v1, crc) == sizeof(record_v1) - 4, "crc is the last field");
_Static_assert(offsetof(dp_ledger_record, seq) == offsetof(record_v1, seq), "seq is where version 1 has it");
_Static_assert(sizeof(DP_LEDGER_FORMAT_TEXT) <= DP_LEDGER_NAME, "the format text fits the mechanism field");
_Static_assert(sizeof(DP_LEDGER_FORMAT3_TEXT) <= DP_LEDGER_NAME, "the format-3 text fits the mechanism field");

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

static bool terminated(const char *s) { return memchr(s, '\0', DP_LEDGER_NAME) != NULL; }

static bool is_pos_zero(double x) { return x == 0.0 && !signbit(x); }

static bool checked(const dp_ledger_record *r) {
    if (r->type < DP_LEDGER_GRANT || r->type > DP_LEDGER_FORMAT3) return false;
    if (r->type == DP_LEDGER_CREATE || r->type == DP_LEDGER_FORMAT || r->type == DP_LEDGER_FORMAT3) {
        if (!is_pos_zero(r->epsilon) || !is_pos_zero(r->delta)) return false;
    } else if (!(isfinite(r->epsilon) && r->epsilon > 0.0)) {
        return false;
    }
    if (!(r->delta >= 0.0 && r->delta < 1.0) || signbit(r->delta)) return false; /* NaN fails too */
    if (r->ngrants > DP_LEDGER_MAX_GRANTS_PER_CHARGE) return false;
    if (!(terminated(r->role_name) && terminated(r->dataset) && terminated(r->mechanism))) return false;
    /* the format record is version 1 only (decode); a version-2 record of its type is not one */
    if (r->type == DP_LEDGER_FORMAT) return r->magic == DP_LEDGER_MAGIC;
    /* a refund or format-3 record is version 2 only; a version-1 record has neither */
    if (r->type == DP_LEDGER_REFUND || r->type == DP_LEDGER_FORMAT3) return r->magic == DP_LEDGER_MAGIC_V2;
    return true;
}

static bool is_format3(const dp_ledger_record *r) {
    return r->type == DP_LEDGER_CREATE && strncmp(r->mechanism, DP_LEDGER_FORMAT3_TEXT, DP_LEDGER_NAME) == 0;
}

/* r as on disk: a version-2 record; the format-3 record is stored with type create (never type 7). */
bool dp_ledger_valid(const dp_ledger_record *r) {
    return r->magic == DP_LEDGER_MAGIC_V2 && r->crc == dp_crc32c(r, offsetof(dp_ledger_record, crc)) &&
           r->type != DP_LEDGER_FORMAT3 && checked(r);
}

void dp_ledger_refund_record(const dp_ledger_record *charge, double epsilon, double delta, dp_ledger_record *out) {
    *out = *charge;
    out->type = DP_LEDGER_REFUND;
    out->seq = 0;
    out->time_us = 0;
    out->epsilon = epsilon;
    out->delta = delta;
    out->crc = 0;
}

bool dp_ledger_refund_matches(const dp_ledger_record *charge, const dp_ledger_record *refund) {
    if (charge->type != DP_LEDGER_CHARGE || refund->type != DP_LEDGER_REFUND) return false;
    if (charge->role != refund->role || charge->database != refund->database || charge->grant_id != refund->grant_id ||
        charge->ngrants != refund->ngrants || charge->ngrants > DP_LEDGER_MAX_GRANTS_PER_CHARGE)
        return false;
    if (memcmp(charge->grants, refund->grants, sizeof charge->grants) != 0 ||
        memcmp(charge->role_name, refund->role_name, DP_LEDGER_NAME) != 0 ||
        memcmp(charge->dataset, refund->dataset, DP_LEDGER_NAME) != 0 ||
        memcmp(charge->mechanism, refund->mechanism, DP_LEDGER_NAME) != 0)
        return false;
    /* never more than the charge; a refund of nothing is never written */
    if (!(refund->epsilon <= charge->epsilon && refund->delta <= charge->delta)) return false;
    return refund->epsilon < charge->epsilon || refund->delta < charge->delta;
}

bool dp_ledger_decode(const void *raw, dp_ledger_record *out) {
    uint32_t magic;
    memcpy(&magic, raw, sizeof magic);
    if (magic != DP_LEDGER_MAGIC) {
        memcpy(out, raw, sizeof *out);
        if (!dp_ledger_valid(out)) return false;
        if (is_format3(out)) out->type = DP_LEDGER_FORMAT3; /* a version-2 create record with its text */
        return true;
    }
    record_v1 v;
    memcpy(&v, raw, sizeof v);
    memset(out, 0, sizeof *out);
    out->magic = v.magic;
    out->type = v.type;
    out->seq = v.seq;
    out->time_us = v.time_us;
    out->epsilon = v.epsilon;
    out->delta = 0.0;
    out->role = v.role;
    out->database = v.database;
    out->grant_id = (uint16_t)v.grant_id;
    out->ngrants = (uint16_t)v.ngrants;
    memcpy(out->grants, v.grants, sizeof out->grants);
    memcpy(out->role_name, v.role_name, DP_LEDGER_NAME);
    memcpy(out->dataset, v.dataset, DP_LEDGER_NAME);
    memcpy(out->mechanism, v.mechanism, DP_LEDGER_NAME);
    out->crc = v.crc;
    if (v.crc != dp_crc32c(&v, offsetof(record_v1, crc)) || v.grant_id > UINT16_MAX || v.ngrants > UINT16_MAX)
        return false;
    /* version 1's create record: epsilon exactly +0; the format record is a create record with its text */
    if (v.type == DP_LEDGER_CREATE && strncmp(v.mechanism, DP_LEDGER_FORMAT_TEXT, DP_LEDGER_NAME) == 0)
        out->type = DP_LEDGER_FORMAT;
    else if (v.type == DP_LEDGER_FORMAT)
        return false; /* version 1 had no type 5 */
    return checked(out);
}

/* Encodes r into raw (version 2, version 1 for the format record, a version-2 create record for the format-3
 * record) and sets r->magic and r->crc. */
static void encode(dp_ledger_record *r, unsigned char raw[sizeof(dp_ledger_record)]) {
    if (r->type == DP_LEDGER_FORMAT3) { /* on disk: a version-2 create record with its text */
        dp_ledger_record d;
        memset(&d, 0, sizeof d);
        d.magic = DP_LEDGER_MAGIC_V2;
        d.type = DP_LEDGER_CREATE;
        d.seq = r->seq;
        d.time_us = r->time_us;
        dp_ledger_set_name(d.mechanism, DP_LEDGER_FORMAT3_TEXT);
        d.crc = dp_crc32c(&d, offsetof(dp_ledger_record, crc));
        memcpy(raw, &d, sizeof d);
        d.type = DP_LEDGER_FORMAT3;
        *r = d;
        return;
    }
    if (r->type != DP_LEDGER_FORMAT) {
        r->magic = DP_LEDGER_MAGIC_V2;
        r->crc = dp_crc32c(r, offsetof(dp_ledger_record, crc));
        memcpy(raw, r, sizeof *r);
        return;
    }
    record_v1 v;
    memset(&v, 0, sizeof v);
    v.magic = DP_LEDGER_MAGIC;
    v.type = DP_LEDGER_CREATE;
    v.seq = r->seq;
    v.time_us = r->time_us;
    v.epsilon = 0.0;
    dp_ledger_set_name(v.mechanism, DP_LEDGER_FORMAT_TEXT);
    v.crc = dp_crc32c(&v, offsetof(record_v1, crc));
    memcpy(raw, &v, sizeof v);
    r->magic = DP_LEDGER_MAGIC;
    r->epsilon = 0.0;
    r->delta = 0.0;
    dp_ledger_set_name(r->mechanism, DP_LEDGER_FORMAT_TEXT);
    r->crc = v.crc;
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
    unsigned char raw[sizeof(dp_ledger_record)];
    int64_t off = from;
    *end = from;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_len, "cannot stat the ledger: %s", strerror(errno));
        return DP_LEDGER_SCAN_IO;
    }
    int64_t size = (int64_t)st.st_size;
    while (off < size) {
        ssize_t got = read_full(fd, raw, sizeof raw, off);
        if (got < 0) {
            snprintf(why, why_len, "cannot read the ledger: %s", strerror(errno));
            return DP_LEDGER_SCAN_IO;
        }
        bool whole = got == (ssize_t)sizeof raw;
        bool last = off + DP_LEDGER_RECORD_SIZE >= size;
        if (!whole || !dp_ledger_decode(raw, &rec)) {
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
    unsigned char raw[sizeof(dp_ledger_record)];
    encode(r, raw);
    while (done < sizeof raw) {
        ssize_t w = pwrite(fd, raw + done, sizeof raw - done, (off_t)(offset + (int64_t)done));
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
