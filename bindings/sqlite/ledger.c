/*
 * ledger.c: one privacy budget per ledger file, shared by every connection and process that opens it
 * (see ledger.h). Plain POSIX: no SQLite call here.
 */
#define _GNU_SOURCE /* flock */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dp_ledger.h"

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* a + b rounded down (TwoSum): the total never exceeds the exact sum of the grants. */
static double add_down(double a, double b) {
    double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
    return e < 0 ? nextafter(s, -INFINITY) : s;
}

typedef struct replay {
    bool has_budget;
    bool format2; /* the file holds its format record: version-2 records may follow */
    dpmo_budget budget;
    bool format3; /* the file holds its format-3 record: refunds may follow */
    bool pending; /* the last record is a charge (or the format-3 record right after one) */
    dp_ledger_record charge; /* that charge */
    dpmo_budget before;      /* the budget before it */
} replay;

static replay replay_of(const sq_ledger *l) {
    replay s;
    memset(&s, 0, sizeof s);
    s.has_budget = l->has_budget;
    s.format2 = l->format2;
    s.budget = l->budget;
    s.format3 = l->format3;
    s.pending = l->pending;
    s.charge = l->pending_charge;
    s.before = l->pending_before;
    return s;
}

static void keep_replay(sq_ledger *l, const replay *s) {
    l->has_budget = s->has_budget;
    l->format2 = s->format2;
    l->budget = s->budget;
    l->format3 = s->format3;
    l->pending = s->pending;
    l->pending_charge = s->charge;
    l->pending_before = s->before;
}

/*
 * The budget after `refund` settles the pending charge (dp_ledger.h): the budget before the charge, charged
 * the refund's (epsilon, delta), as dpmo_budget's pay-what-you-get settlement. -1 when it cannot be one.
 */
static int settle(const replay *s, const dp_ledger_record *refund, dpmo_budget *out) {
    if (!s->format3 || !s->pending || !dp_ledger_refund_matches(&s->charge, refund)) return -1;
    *out = s->before;
    return dpmo_budget_charge_approx(out, refund->epsilon, refund->delta) == DPMO_OK ? 0 : -1;
}

/* Adds a grant or top-up of (epsilon, delta) to b (initialised when !has): -1 when it cannot be one. */
static int add_grant(dpmo_budget *b, bool has, double epsilon, double delta) {
    if (!has) return dpmo_budget_init_approx(b, epsilon, delta) == DPMO_OK ? 0 : -1;
    double t = add_down(b->total, epsilon), d = add_down(b->delta_total, delta);
    if (!isfinite(t) || !(d < 1.0)) return -1;
    b->total = t;
    b->delta_total = d;
    return 0;
}

static int apply(void *ctx, const dp_ledger_record *r) {
    replay *s = ctx;
    bool pending = s->pending;
    /* A file whose record 1 (its create record) is version 2 needs no format record: a reader older than
     * version 2 refuses it as soon as another record follows (an invalid record that is not the last). */
    if (r->seq == 1 && r->magic == DP_LEDGER_MAGIC_V2) s->format2 = true;
    s->pending = false; /* a refund settles only the charge right before it (the format-3 record aside) */
    switch (r->type) {
    case DP_LEDGER_GRANT:
    case DP_LEDGER_TOP_UP:
        if (add_grant(&s->budget, s->has_budget, r->epsilon, r->delta) != 0) return -1;
        s->has_budget = true;
        return 0;
    case DP_LEDGER_CHARGE:
        if (!s->has_budget) return -1;
        s->before = s->budget;
        if (dpmo_budget_charge_approx(&s->budget, r->epsilon, r->delta) != DPMO_OK) return -1;
        s->charge = *r;
        s->pending = true;
        return 0;
    case DP_LEDGER_REFUND: {
        dpmo_budget after;
        s->pending = pending;
        if (settle(s, r, &after) != 0) return -1;
        s->budget = after;
        s->pending = false;
        return 0;
    }
    case DP_LEDGER_CREATE:
        return r->seq == 1 ? 0 : -1;
    case DP_LEDGER_FORMAT:
        if (s->format2) return -1;
        s->format2 = true;
        return 0;
    case DP_LEDGER_FORMAT3:
        if (r->seq == 1 || !s->format2 || s->format3) return -1;
        s->format3 = true;
        s->pending = pending;
        return 0;
    default:
        return -1;
    }
}

/* Messages never name the file: SQL shows them to whoever runs it (the host tool adds the path). */
static sq_result fail(char *why, size_t why_len, const char *what) {
    snprintf(why, why_len, "%s: %s", what, strerror(errno));
    return SQ_FAILED;
}

static dp_ledger_record create_record(void) {
    dp_ledger_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = DP_LEDGER_CREATE;
    rec.seq = 1;
    rec.time_us = now_us();
    return rec;
}

/*
 * Creates the ledger file at path when it does not exist, already holding its create record: written to a
 * temporary file next to it, synced, then link(2)ed to path, which fails when path exists. So the file is
 * never empty (an empty file is an empty database to SQLite's ATTACH and VACUUM INTO, which would write
 * into it), and two creators racing leave one file.
 */
static sq_result create_file(const char *path, char *why, size_t why_len) {
    struct stat st;
    if (stat(path, &st) == 0) return SQ_OK;
    if (errno != ENOENT) return fail(why, why_len, "cannot stat the privacy ledger");
    size_t len = strlen(path) + 8;
    char *tmp = malloc(len);
    if (tmp == NULL) {
        snprintf(why, why_len, "out of memory");
        return SQ_FAILED;
    }
    snprintf(tmp, len, "%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
    if (fd < 0) {
        free(tmp);
        return fail(why, why_len, "cannot create the privacy ledger");
    }
    dp_ledger_record rec = create_record();
    sq_result r = SQ_OK;
    if (dp_ledger_append(fd, 0, &rec) != 0) r = fail(why, why_len, "cannot write the privacy ledger");
    close(fd);
    if (r == SQ_OK && link(tmp, path) != 0 && errno != EEXIST) r = fail(why, why_len, "cannot create the privacy ledger");
    unlink(tmp);
    free(tmp);
    if (r == SQ_OK && dp_ledger_sync_dir(path) != 0)
        r = fail(why, why_len, "cannot sync the directory of the privacy ledger");
    return r;
}

static sq_result open_file(sq_ledger *l, bool create, char *why, size_t why_len) {
    struct stat st;
    if (create) {
        sq_result r = create_file(l->path, why, why_len);
        if (r != SQ_OK) return r;
    }
    int fd = open(l->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return SQ_NO_FILE;
        return fail(why, why_len, "cannot open the privacy ledger");
    }
    if (fstat(fd, &st) != 0) {
        close(fd);
        return fail(why, why_len, "cannot stat the privacy ledger");
    }
    l->fd = fd;
    l->pid = getpid();
    l->dev = (uint64_t)st.st_dev;
    l->ino = (uint64_t)st.st_ino;
    l->offset = 0;
    l->next_seq = 1;
    l->has_budget = false;
    l->format2 = false;
    l->format3 = false;
    l->pending = false;
    l->charged_seq = 0;
    return SQ_OK;
}

/*
 * After fork(2): flock(2) locks belong to the open file description, which parent and child share, so both
 * would "hold" LOCK_EX at once and write their records at the same offset. A process that did not open
 * the descriptor opens the file again (its own description) and checks it is still the same file; what
 * was replayed before the fork stays valid (catch_up checks the file did not shrink).
 */
static sq_result reopen_after_fork(sq_ledger *l, char *why, size_t why_len) {
    struct stat st;
    int fd = open(l->path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) return fail(why, why_len, "cannot open the privacy ledger");
    if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_dev != l->dev || (uint64_t)st.st_ino != l->ino) {
        if (fd >= 0) close(fd);
        snprintf(why, why_len, "the privacy ledger was removed or replaced since this connection opened it");
        return SQ_FAILED;
    }
    close(l->fd); /* the parent's copy of the description stays open (and locked, if it was) */
    l->fd = fd;
    l->pid = getpid();
    return SQ_OK;
}

sq_result sq_ledger_open(sq_ledger *l, const char *path, bool create, char *why, size_t why_len) {
    memset(l, 0, sizeof *l);
    l->fd = -1;
    l->path = strdup(path);
    if (l->path == NULL) {
        snprintf(why, why_len, "out of memory");
        return SQ_FAILED;
    }
    sq_result r = open_file(l, create, why, why_len);
    return r == SQ_NO_FILE ? SQ_OK : r; /* a file that does not exist yet is looked for again at each use */
}

void sq_ledger_close(sq_ledger *l) {
    if (l->fd >= 0) close(l->fd);
    free(l->path);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}

/*
 * With the lock held: the file must still be the one we opened, and at least as long as what we read. With
 * LOCK_EX, a torn last record is cut off, and an empty file (made by an older version) gets its create
 * record.
 */
static sq_result catch_up(sq_ledger *l, bool exclusive, char *why, size_t why_len) {
    struct stat st, cur;
    if (fstat(l->fd, &st) != 0) return fail(why, why_len, "cannot stat the privacy ledger");
    if (stat(l->path, &cur) != 0 || (uint64_t)cur.st_dev != l->dev || (uint64_t)cur.st_ino != l->ino) {
        snprintf(why, why_len, "the privacy ledger was removed or replaced since this connection opened it");
        return SQ_FAILED;
    }
    if ((int64_t)st.st_size < l->offset) {
        snprintf(why, why_len, "the privacy ledger is shorter than the records already read");
        return SQ_FAILED;
    }
    replay s = replay_of(l);
    uint64_t seq = l->next_seq;
    int64_t end = l->offset;
    dp_ledger_scan_result r = dp_ledger_scan(l->fd, l->offset, &seq, &end, exclusive, apply, &s, why, why_len);
    if (r == DP_LEDGER_SCAN_CORRUPT || r == DP_LEDGER_SCAN_IO) {
        char detail[200];
        snprintf(detail, sizeof detail, "%s", why);
        snprintf(why, why_len, "the privacy ledger is unusable: %s", detail);
        return SQ_FAILED;
    }
    if (r == DP_LEDGER_SCAN_TORN && exclusive && fdatasync(l->fd) != 0)
        return fail(why, why_len, "cannot sync the privacy ledger");
    if (exclusive && end == 0) {
        dp_ledger_record rec = create_record();
        int w = dp_ledger_append(l->fd, 0, &rec);
        if (w != 0) {
            if (w == -2) l->broken = true;
            return fail(why, why_len, "cannot write to the privacy ledger");
        }
        end = DP_LEDGER_RECORD_SIZE;
        seq = 2;
        s.format2 = true; /* a version-2 record 1, as apply() would note */
    }
    keep_replay(l, &s);
    l->next_seq = seq;
    l->offset = end;
    return SQ_OK;
}

/*
 * With LOCK_EX held and the file caught up: appends rec (version 2) as record l->next_seq, preceded by the
 * file's format record when it has none yet (dp_ledger.h: a reader older than version 2 stops there and
 * refuses, rather than cutting off a version-2 last record as torn). Returns dp_ledger_append's code;
 * l->offset and l->next_seq count what was written.
 */
static int append_v2(sq_ledger *l, dp_ledger_record *rec) {
    if (!l->format2) {
        dp_ledger_record f;
        memset(&f, 0, sizeof f);
        f.type = DP_LEDGER_FORMAT;
        f.seq = l->next_seq;
        f.time_us = now_us();
        int w = dp_ledger_append(l->fd, l->offset, &f);
        if (w != 0) return w;
        l->format2 = true;
        l->offset += DP_LEDGER_RECORD_SIZE;
        l->next_seq++;
    }
    rec->seq = l->next_seq;
    int w = dp_ledger_append(l->fd, l->offset, rec);
    if (w == 0) {
        l->offset += DP_LEDGER_RECORD_SIZE;
        l->next_seq++;
    }
    return w;
}

static sq_result lock(sq_ledger *l, int how, bool create, char *why, size_t why_len) {
    if (l->fd < 0) {
        sq_result r = open_file(l, create, why, why_len);
        if (r != SQ_OK) return r;
    } else if (l->pid != getpid()) {
        sq_result r = reopen_after_fork(l, why, why_len);
        if (r != SQ_OK) return r;
    }
    while (flock(l->fd, how) != 0)
        if (errno != EINTR) return fail(why, why_len, "cannot lock the privacy ledger");
    sq_result r = catch_up(l, how == LOCK_EX, why, why_len);
    if (r != SQ_OK) flock(l->fd, LOCK_UN);
    return r;
}

sq_result sq_ledger_remaining(sq_ledger *l, double *remaining, double *total, double *delta_remaining,
                              double *delta_total, char *why, size_t why_len) {
    *remaining = 0.0;
    *total = 0.0;
    *delta_remaining = 0.0;
    *delta_total = 0.0;
    sq_result r = lock(l, LOCK_SH, false, why, why_len);
    if (r != SQ_OK) return r;
    if (l->has_budget) {
        dpmo_budget_remaining_approx(&l->budget, remaining, delta_remaining);
        *total = l->budget.total;
        *delta_total = l->budget.delta_total;
    }
    flock(l->fd, LOCK_UN);
    return l->has_budget ? SQ_OK : SQ_NO_BUDGET;
}

sq_result sq_ledger_charge(sq_ledger *l, double epsilon, double delta, const char *mechanism, double *left,
                           double *delta_left, char *why, size_t why_len) {
    dp_ledger_record rec;
    *left = 0.0;
    *delta_left = 0.0;
    if (l->broken) {
        snprintf(why, why_len, "the privacy ledger could not be synced earlier; reopen the connection");
        return SQ_FAILED;
    }
    sq_result r = lock(l, LOCK_EX, false, why, why_len);
    if (r != SQ_OK) return r;
    if (!l->has_budget) {
        flock(l->fd, LOCK_UN);
        return SQ_NO_BUDGET;
    }
    dpmo_budget next = l->budget;
    if (dpmo_budget_charge_approx(&next, epsilon, delta) != DPMO_OK) {
        dpmo_budget_remaining_approx(&l->budget, left, delta_left);
        bool pure = l->budget.delta_total == 0.0;
        flock(l->fd, LOCK_UN);
        return pure && delta > 0.0 ? SQ_NO_DELTA : SQ_EXHAUSTED;
    }
    memset(&rec, 0, sizeof rec);
    rec.type = DP_LEDGER_CHARGE;
    rec.time_us = now_us();
    rec.epsilon = epsilon;
    rec.delta = delta;
    dp_ledger_set_name(rec.mechanism, mechanism);
    int w = append_v2(l, &rec);
    if (w != 0) {
        if (w == -2) l->broken = true; /* its fate is unknown: refuse until reopened */
        fail(why, why_len, w == -2 ? "cannot sync the privacy ledger" : "cannot write to the privacy ledger");
        flock(l->fd, LOCK_UN);
        return SQ_FAILED;
    }
    l->pending_before = l->budget; /* as replay would note */
    l->pending_charge = rec;
    l->pending = true;
    l->charged_seq = rec.seq;
    l->budget = next;
    dpmo_budget_remaining_approx(&l->budget, left, delta_left);
    flock(l->fd, LOCK_UN);
    return SQ_OK;
}

sq_result sq_ledger_refund(sq_ledger *l, double epsilon, double delta, bool *refunded, char *why, size_t why_len) {
    dp_ledger_record rec;
    dpmo_budget after;
    uint64_t mine = l->charged_seq;
    *refunded = false;
    l->charged_seq = 0; /* one refund per charge, whatever happens below */
    if (mine == 0 || l->broken) return SQ_OK;
    sq_result r = lock(l, LOCK_EX, false, why, why_len);
    if (r != SQ_OK) return r;
    /* only while this connection's charge is still the last record of the file */
    if (!l->pending || l->pending_charge.seq != mine || l->next_seq != mine + 1) {
        flock(l->fd, LOCK_UN);
        return SQ_OK;
    }
    dp_ledger_refund_record(&l->pending_charge, epsilon, delta, &rec);
    replay s = replay_of(l);
    s.format3 = true; /* appended below when missing */
    if (settle(&s, &rec, &after) != 0) {
        flock(l->fd, LOCK_UN);
        return SQ_OK;
    }
    int w = 0;
    if (!l->format3) {
        dp_ledger_record f;
        memset(&f, 0, sizeof f);
        f.type = DP_LEDGER_FORMAT3;
        f.seq = l->next_seq;
        f.time_us = now_us();
        w = dp_ledger_append(l->fd, l->offset, &f);
        if (w == 0) {
            l->format3 = true;
            l->offset += DP_LEDGER_RECORD_SIZE;
            l->next_seq++;
        }
    }
    if (w == 0) {
        rec.seq = l->next_seq;
        rec.time_us = now_us();
        w = dp_ledger_append(l->fd, l->offset, &rec);
    }
    if (w != 0) {
        if (w == -2) l->broken = true; /* its fate is unknown: refuse until reopened */
        fail(why, why_len, w == -2 ? "cannot sync the privacy ledger" : "cannot write to the privacy ledger");
        flock(l->fd, LOCK_UN);
        return SQ_FAILED;
    }
    l->offset += DP_LEDGER_RECORD_SIZE;
    l->next_seq++;
    l->budget = after;
    l->pending = false;
    *refunded = true;
    flock(l->fd, LOCK_UN);
    return SQ_OK;
}

sq_result sq_ledger_grant(const char *path, double epsilon, double delta, char *why, size_t why_len) {
    sq_ledger l;
    dp_ledger_record rec;
    if (!(isfinite(epsilon) && epsilon > 0.0)) {
        snprintf(why, why_len, "epsilon must be a finite number greater than zero");
        return SQ_FAILED;
    }
    if (!(delta >= 0.0 && delta < 1.0)) {
        snprintf(why, why_len, "delta must be a number from 0 (included) to 1 (excluded)");
        return SQ_FAILED;
    }
    delta += 0.0; /* -0 is +0 */
    sq_result r = sq_ledger_open(&l, path, true, why, why_len);
    if (r == SQ_OK) r = lock(&l, LOCK_EX, true, why, why_len);
    if (r != SQ_OK) {
        sq_ledger_close(&l);
        return r;
    }
    dpmo_budget after = l.budget;
    if (l.has_budget && !isfinite(add_down(l.budget.total, epsilon))) {
        snprintf(why, why_len, "the total would not be finite");
        r = SQ_FAILED;
    } else if (add_grant(&after, l.has_budget, epsilon, delta) != 0) {
        snprintf(why, why_len, "the total delta would not be below 1");
        r = SQ_FAILED;
    } else {
        memset(&rec, 0, sizeof rec);
        rec.type = l.has_budget ? DP_LEDGER_TOP_UP : DP_LEDGER_GRANT;
        rec.time_us = now_us();
        rec.epsilon = epsilon;
        rec.delta = delta;
        rec.grant_id = 1;
        if (append_v2(&l, &rec) != 0) r = fail(why, why_len, "cannot write to the privacy ledger");
    }
    flock(l.fd, LOCK_UN);
    sq_ledger_close(&l);
    return r;
}

typedef struct each_ctx {
    int (*fn)(void *, const dp_ledger_record *);
    void *ctx;
    replay s;
} each_ctx;

static int each_apply(void *ctx, const dp_ledger_record *r) {
    each_ctx *e = ctx;
    if (apply(&e->s, r) != 0) return -1;
    return e->fn(e->ctx, r);
}

sq_result sq_ledger_each(const char *path, int (*fn)(void *ctx, const dp_ledger_record *r), void *ctx, char *why,
                         size_t why_len) {
    sq_ledger l;
    each_ctx e;
    memset(&e, 0, sizeof e);
    e.fn = fn;
    e.ctx = ctx;
    uint64_t seq = 1;
    int64_t end = 0;
    sq_result r = sq_ledger_open(&l, path, false, why, why_len);
    if (r != SQ_OK) return r;
    if (l.fd < 0) {
        sq_ledger_close(&l);
        return SQ_NO_FILE;
    }
    while (flock(l.fd, LOCK_SH) != 0)
        if (errno != EINTR) {
            r = fail(why, why_len, "cannot lock the privacy ledger");
            sq_ledger_close(&l);
            return r;
        }
    dp_ledger_scan_result s = dp_ledger_scan(l.fd, 0, &seq, &end, false, each_apply, &e, why, why_len);
    if (s == DP_LEDGER_SCAN_CORRUPT || s == DP_LEDGER_SCAN_IO) r = SQ_FAILED;
    flock(l.fd, LOCK_UN);
    sq_ledger_close(&l);
    return r;
}
