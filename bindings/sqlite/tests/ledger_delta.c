/*
 * ledger_delta: the (epsilon, delta) ledger of ledger.c and dp_ledger.c, checked without SQL (no SQL function
 * charges delta yet): grants with delta, sequential composition exact as dpmo_budget_charge_approx, the
 * refusal of delta by a pure-epsilon budget (nothing written), replay, files of the version-1 format read as
 * they are, and a model of a version-1 reader (dpmo <= 0.2: its validity rule and SQLite's replay rule,
 * copied) that must stop, failing closed, before any version-2 record. Prints "ok ..." / "FAIL ..." lines
 * and exits 1 on a failure. Usage: ledger_delta DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp_ledger.h"
#include "ledger.h"

static int failures = 0;
static char why[300];

static void check(int cond, const char *name) {
    printf("%s %s%s%s\n", cond ? "ok  " : "FAIL", name, cond ? "" : ": ", cond ? "" : why);
    if (!cond) failures++;
}

static long long size_of(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* The version-1 layout (dpmo <= 0.2), to write old files and to model an old reader. */
typedef struct v1 {
    uint32_t magic, type;
    uint64_t seq;
    int64_t time_us;
    double epsilon;
    uint32_t role, database, grant_id, ngrants, grants[16];
    char role_name[64], dataset[64], mechanism[64];
    uint32_t reserved, crc;
} v1;

static void write_v1(int fd, uint32_t type, uint64_t seq, double eps) {
    v1 r;
    memset(&r, 0, sizeof r);
    r.magic = DP_LEDGER_MAGIC;
    r.type = type;
    r.seq = seq;
    r.epsilon = eps;
    r.grant_id = type == DP_LEDGER_GRANT ? 1 : 0;
    if (type == DP_LEDGER_CHARGE) strcpy(r.mechanism, "dp_select/exponential");
    r.crc = dp_crc32c(&r, offsetof(v1, crc));
    if (pwrite(fd, &r, sizeof r, (off_t)((seq - 1) * sizeof r)) != (ssize_t)sizeof r) abort();
}

/*
 * The version-1 reader: dp_ledger_valid of dpmo 0.2 and SQLite's apply (a create record only as record 1).
 * Returns the number of the record where it stops: 0 when it reads the whole file, -n when record n is an
 * invalid last record (it would cut it off as torn), +n when it refuses the file at record n (fail closed).
 */
static long v1_reader(const char *path) {
    int fd = open(path, O_RDONLY);
    v1 r;
    long n = 0, total = size_of(path) / 312 + (size_of(path) % 312 != 0);
    while (pread(fd, &r, sizeof r, (off_t)(n * 312)) > 0) {
        n++;
        int valid = r.magic == DP_LEDGER_MAGIC && r.crc == dp_crc32c(&r, offsetof(v1, crc)) && r.type >= 1 &&
                    r.type <= 4 &&
                    (r.type == 4 ? (r.epsilon == 0.0 && !signbit(r.epsilon)) : (isfinite(r.epsilon) && r.epsilon > 0));
        if (!valid) {
            close(fd);
            return n == total ? -n : n;
        }
        if (r.type == 4 && r.seq != 1) {
            close(fd);
            return n;
        }
    }
    close(fd);
    return 0;
}

/*
 * The format-2 reader (dpmo 0.3 before refunds, as on main before format 3): its record check (types 1 to 5;
 * create and format records with epsilon and delta +0; a version-1 create record with the format text is
 * a format record) and SQLite's replay rule (a create record only as record 1, one format record), copied.
 * Returns as v1_reader: 0 whole file read, -n record n cut off as torn, +n the file refused at record n.
 */
static long v2_reader(const char *path) {
    int fd = open(path, O_RDONLY);
    unsigned char raw[312];
    long n = 0, total = size_of(path) / 312 + (size_of(path) % 312 != 0);
    int format2 = 0;
    ssize_t got;
    while ((got = pread(fd, raw, sizeof raw, (off_t)(n * 312))) > 0) {
        dp_ledger_record r;
        uint32_t magic, type;
        int valid = got == 312;
        n++;
        memcpy(&magic, raw, 4);
        memcpy(&type, raw + 4, 4);
        if (valid && magic == DP_LEDGER_MAGIC) {
            v1 o;
            memcpy(&o, raw, sizeof o);
            valid = o.crc == dp_crc32c(&o, offsetof(v1, crc)) && type >= 1 && type <= 4;
            if (valid && type == 4 && strcmp(o.mechanism, DP_LEDGER_FORMAT_TEXT) == 0) type = 5;
            memset(&r, 0, sizeof r);
            r.seq = o.seq;
        } else if (valid) {
            memcpy(&r, raw, sizeof r);
            valid = magic == DP_LEDGER_MAGIC_V2 && r.crc == dp_crc32c(&r, offsetof(dp_ledger_record, crc)) &&
                    type >= 1 && type <= 5 && type != 5 && (type != 4 || (r.epsilon == 0.0 && r.delta == 0.0)) &&
                    (type == 4 || (isfinite(r.epsilon) && r.epsilon > 0));
        }
        if (!valid) {
            close(fd);
            return n == total ? -n : n;
        }
        if (n == 1 && magic == DP_LEDGER_MAGIC_V2) format2 = 1;
        if ((type == 4 && r.seq != 1) || (type == 5 && format2)) {
            close(fd);
            return n;
        }
        if (type == 5) format2 = 1;
    }
    close(fd);
    return 0;
}

/* Appends r (its seq the next number) at the end of the file at path, as a writer would (sealed, synced). */
static void append_raw(const char *path, dp_ledger_record *r) {
    int fd = open(path, O_RDWR);
    long long end = size_of(path);
    r->seq = (uint64_t)(end / 312) + 1;
    if (dp_ledger_append(fd, end, r) != 0) abort();
    close(fd);
}

/* The record number n of the file at path, decoded. */
static dp_ledger_record record_at(const char *path, long n) {
    unsigned char raw[312];
    dp_ledger_record r;
    int fd = open(path, O_RDONLY);
    memset(&r, 0, sizeof r);
    if (pread(fd, raw, sizeof raw, (off_t)((n - 1) * 312)) == 312) dp_ledger_decode(raw, &r);
    close(fd);
    return r;
}

static int same_budget(const dpmo_budget *a, const dpmo_budget *b) { return memcmp(a, b, sizeof *a) == 0; }

static sq_result charge(sq_ledger *l, double eps, double delta, double *left, double *dleft) {
    return sq_ledger_charge(l, eps, delta, "test/delta", left, dleft, why, sizeof why);
}

int main(int argc, char **argv) {
    char path[4096];
    sq_ledger l;
    double left, dleft, total, dtotal;
    if (argc != 2) return 2;
    why[0] = '\0';

    /* 1. A grant with delta; charges compose (dyadic amounts: exact sums); one more is refused. */
    snprintf(path, sizeof path, "%s/approx.ledger", argv[1]);
    check(sq_ledger_grant(path, 1.0, ldexp(1, -20), why, sizeof why) == SQ_OK, "grant (1, 2^-20)");
    sq_ledger_open(&l, path, false, why, sizeof why);
    sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
    check(left == 1.0 && dleft == ldexp(1, -20) && dtotal == ldexp(1, -20), "remaining after the grant: (1, 2^-20)");
    int all = 1;
    for (int i = 0; i < 4; i++) all &= charge(&l, 0.25, ldexp(1, -22), &left, &dleft) == SQ_OK;
    check(all && left == 0.0 && dleft == 0.0, "four charges of (0.25, 2^-22) compose to the whole budget");
    long long before = size_of(path);
    check(charge(&l, ldexp(1, -30), 0.0, &left, &dleft) == SQ_EXHAUSTED && size_of(path) == before,
          "an epsilon charge beyond the total is refused, nothing written");
    sq_ledger_close(&l);
    /* δ alone exhausted */
    check(sq_ledger_grant(path, 1.0, 0.0, why, sizeof why) == SQ_OK, "top-up (1, 0)");
    sq_ledger_open(&l, path, false, why, sizeof why);
    before = size_of(path);
    check(charge(&l, 0.5, ldexp(1, -40), &left, &dleft) == SQ_EXHAUSTED && size_of(path) == before && left == 1.0 &&
              dleft == 0.0,
          "a delta charge beyond the delta total is refused (epsilon left 1), nothing written");
    check(charge(&l, 0.5, 0.0, &left, &dleft) == SQ_OK && left == 0.5, "a pure charge still passes");
    sq_ledger_close(&l);
    /* replay from the file by a new reader */
    sq_ledger_open(&l, path, false, why, sizeof why);
    sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
    check(left == 0.5 && total == 2.0 && dleft == 0.0 && dtotal == ldexp(1, -20) &&
              l.budget.delta_spent == ldexp(1, -20),
          "a new connection replays (epsilon, delta) spent and totals");
    sq_ledger_close(&l);

    /* 2. Exact as the C budget, no tolerance: ten charges of delta 0.05 (the double is above 1/20) against a
     * total of 0.5: the tenth is refused, by the ledger and by dpmo_budget_charge_approx alike. */
    snprintf(path, sizeof path, "%s/tenth.ledger", argv[1]);
    sq_ledger_grant(path, 1.0, 0.5, why, sizeof why);
    sq_ledger_open(&l, path, false, why, sizeof why);
    dpmo_budget ref;
    dpmo_budget_init_approx(&ref, 1.0, 0.5);
    int same = 1, refused = 0;
    for (int i = 0; i < 10; i++) {
        int a = charge(&l, 0.0625, 0.05, &left, &dleft) == SQ_OK;
        int b = dpmo_budget_charge_approx(&ref, 0.0625, 0.05) == DPMO_OK;
        same &= a == b;
        refused += !a;
    }
    snprintf(why, sizeof why, "refused %d", refused);
    check(same && refused == 1, "ten delta charges of 0.05 against 0.5: the tenth refused, as dpmo_budget_charge_approx");
    sq_ledger_close(&l);

    /* 3. A pure-epsilon budget refuses delta > 0, nothing written; epsilon charges pass. */
    snprintf(path, sizeof path, "%s/pure.ledger", argv[1]);
    sq_ledger_grant(path, 1.0, 0.0, why, sizeof why);
    sq_ledger_open(&l, path, false, why, sizeof why);
    before = size_of(path);
    check(charge(&l, 0.125, 1e-9, &left, &dleft) == SQ_NO_DELTA && size_of(path) == before && left == 1.0,
          "a pure-epsilon grant refuses a delta charge (SQ_NO_DELTA), nothing written");
    check(charge(&l, 0.125, 0.0, &left, &dleft) == SQ_OK && left == 0.875, "and accepts an epsilon charge");
    sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
    check(dleft == 0.0 && dtotal == 0.0, "its delta left is 0");
    sq_ledger_close(&l);

    /* 4. Grant arguments: delta outside [0, 1) refused before the file is made; a total delta reaching 1. */
    snprintf(path, sizeof path, "%s/bad.ledger", argv[1]);
    check(sq_ledger_grant(path, 1.0, -0.1, why, sizeof why) == SQ_FAILED &&
              sq_ledger_grant(path, 1.0, 1.0, why, sizeof why) == SQ_FAILED &&
              sq_ledger_grant(path, 1.0, NAN, why, sizeof why) == SQ_FAILED && size_of(path) == -1,
          "delta -0.1, 1, NaN refused, no file made");
    sq_ledger_grant(path, 1.0, 0.5, why, sizeof why);
    before = size_of(path);
    check(sq_ledger_grant(path, 1.0, 0.5, why, sizeof why) == SQ_FAILED && size_of(path) == before,
          "a top-up taking the total delta to 1 is refused, nothing written");

    /* 5. A version-1 file (dpmo <= 0.2) is read as it is, and upgraded by the first new record. */
    snprintf(path, sizeof path, "%s/old.ledger", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    write_v1(fd, DP_LEDGER_CREATE, 1, 0.0);
    write_v1(fd, DP_LEDGER_GRANT, 2, 1.0);
    write_v1(fd, DP_LEDGER_CHARGE, 3, 0.25);
    close(fd);
    check(v1_reader(path) == 0, "the version-1 reader model reads a version-1 file whole");
    sq_ledger_open(&l, path, false, why, sizeof why);
    sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
    check(left == 0.75 && total == 1.0 && dtotal == 0.0, "a version-1 file is read: (1, 0) granted, 0.25 spent");
    check(charge(&l, 0.25, 1e-9, &left, &dleft) == SQ_NO_DELTA && size_of(path) == 3 * 312,
          "its grant is pure-epsilon: delta refused, nothing written");
    check(charge(&l, 0.25, 0.0, &left, &dleft) == SQ_OK && left == 0.5 && size_of(path) == 5 * 312,
          "a charge appends the format record, then a version-2 record");
    sq_ledger_close(&l);
    sq_ledger_open(&l, path, false, why, sizeof why);
    sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
    check(left == 0.5 && l.next_seq == 6, "the mixed file replays");
    check(charge(&l, 0.25, 0.0, &left, &dleft) == SQ_OK && size_of(path) == 6 * 312, "one format record per file");
    sq_ledger_close(&l);
    snprintf(why, sizeof why, "v1 reader: %ld", v1_reader(path));
    check(v1_reader(path) == 4, "a version-1 reader refuses the upgraded file at its format record (fail closed)");
    /* the same with the format record last: the old reader still refuses rather than cutting it */
    truncate(path, 4 * 312);
    snprintf(why, sizeof why, "v1 reader: %ld", v1_reader(path));
    check(v1_reader(path) == 4, "... also when the format record is the last one");
    /* a file made by this version: record 1 is version 2 */
    snprintf(path, sizeof path, "%s/approx.ledger", argv[1]);
    snprintf(why, sizeof why, "v1 reader: %ld", v1_reader(path));
    check(v1_reader(path) == 1, "a version-1 reader refuses a new file at its record 1 (invalid, not the last)");

    /* 6. A version-2 record damaged: the last one is cut (torn), another one refuses every charge. */
    snprintf(path, sizeof path, "%s/pure.ledger", argv[1]);
    before = size_of(path);
    fd = open(path, O_WRONLY | O_APPEND);
    if (write(fd, "torn record", 11) != 11) abort();
    close(fd);
    sq_ledger_open(&l, path, false, why, sizeof why);
    check(charge(&l, 0.125, 0.0, &left, &dleft) == SQ_OK && size_of(path) == before + 312 && left == 0.75,
          "a torn version-2 tail is cut off by the next charge");
    sq_ledger_close(&l);
    fd = open(path, O_WRONLY);
    if (pwrite(fd, "X", 1, 312 + 40) != 1) abort(); /* inside record 2 (the grant's delta) */
    close(fd);
    sq_ledger_open(&l, path, false, why, sizeof why);
    check(charge(&l, 0.125, 0.0, &left, &dleft) == SQ_FAILED && strstr(why, "is invalid and is not the last one"),
          "a damaged version-2 record that is not the last refuses every charge");
    sq_ledger_close(&l);

    /* 7. Pay what you get: a refund settles the charge right before it at what the run spent; the budget
     * is then exactly dpmo_budget's after its settlement (the budget before the charge, charged the amount
     * spent), in memory and replayed. Amounts a top-k with k = 3 at (0.75, 2^-20) spends after ℓ = 0, 1. */
    {
        const double eps = 0.75, del = ldexp(1, -20), third = 0.75 / 3; /* ε/k·(ℓ + 1) as the core: ε₀ = ε/k */
        dpmo_budget ref, snap;
        bool refunded = false;
        snprintf(path, sizeof path, "%s/refund.ledger", argv[1]);
        sq_ledger_grant(path, 4.0, ldexp(1, -10), why, sizeof why);
        dpmo_budget_init_approx(&ref, 4.0, ldexp(1, -10));
        sq_ledger_open(&l, path, false, why, sizeof why);
        check(charge(&l, eps, del, &left, &dleft) == SQ_OK, "charge (0.75, 2^-20) before the run");
        snap = ref;
        dpmo_budget_charge_approx(&ref, eps, del);
        check(same_budget(&l.budget, &ref), "charged: the budget is the C budget's after the full charge");
        long long at_charge = size_of(path);
        check(sq_ledger_refund(&l, third, del, &refunded, why, sizeof why) == SQ_OK && refunded &&
                  size_of(path) == at_charge + 2 * 312,
              "the run stopped at ⊥ with ℓ = 0: refunded (the format-3 record, then the refund record)");
        ref = snap; /* dpmo_budget's settlement: the budget before the charge, charged what was spent */
        dpmo_budget_charge_approx(&ref, third, del);
        check(same_budget(&l.budget, &ref), "the budget is the C budget's after the settlement, to the bit");
        sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
        double rl, rd;
        dpmo_budget_remaining_approx(&ref, &rl, &rd);
        check(left == rl && dleft == rd, "remaining epsilon and delta equal the C budget's (exact, no tolerance)");
        dp_ledger_record f3 = record_at(path, at_charge / 312 + 1), rf = record_at(path, at_charge / 312 + 2);
        check(f3.type == DP_LEDGER_FORMAT3 && rf.type == DP_LEDGER_REFUND && rf.epsilon == third && rf.delta == del &&
                  strcmp(rf.mechanism, "test/delta") == 0,
              "the records: format 3, then the refund (the amount spent, the charge's mechanism)");
        check(sq_ledger_refund(&l, third, del, &refunded, why, sizeof why) == SQ_OK && !refunded &&
                  size_of(path) == at_charge + 2 * 312,
              "a second refund of the same charge writes nothing");
        /* a second call, ℓ = 1: one format-3 record per file */
        check(charge(&l, eps, del, &left, &dleft) == SQ_OK, "a second charge");
        snap = ref;
        dpmo_budget_charge_approx(&ref, eps, del);
        check(sq_ledger_refund(&l, 2 * third, del, &refunded, why, sizeof why) == SQ_OK && refunded &&
                  size_of(path) == at_charge + 4 * 312,
              "its refund (ℓ = 1) is one record: no second format-3 record");
        ref = snap;
        dpmo_budget_charge_approx(&ref, 2 * third, del);
        check(same_budget(&l.budget, &ref), "the budget is the C budget's after both settlements");
        /* refunds never exceed the charge: more than charged, or nothing less, is not written */
        check(charge(&l, 0.125, del, &left, &dleft) == SQ_OK, "a third charge (0.125, 2^-20)");
        long long at3 = size_of(path);
        snap = l.budget;
        check(sq_ledger_refund(&l, 0.25, del, &refunded, why, sizeof why) == SQ_OK && !refunded &&
                  size_of(path) == at3 && same_budget(&l.budget, &snap),
              "a refund above its charge is not written (the full charge stays)");
        check(charge(&l, 0.125, del, &left, &dleft) == SQ_OK, "a fourth charge");
        at3 = size_of(path);
        snap = l.budget;
        check(sq_ledger_refund(&l, 0.125, del, &refunded, why, sizeof why) == SQ_OK && !refunded &&
                  size_of(path) == at3,
              "a refund of nothing (the amount charged) is not written");
        sq_ledger_close(&l);
        /* replay after a restart: a new connection gives the same budget, to the bit */
        dpmo_budget now = snap;
        sq_ledger_open(&l, path, false, why, sizeof why);
        sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
        check(same_budget(&l.budget, &now), "a new connection replays the refunds: the same budget, to the bit");
        /* another connection's charge after ours: our refund is not written (the full charge stays) */
        sq_ledger other;
        sq_ledger_open(&other, path, false, why, sizeof why);
        check(charge(&l, 0.0625, del, &left, &dleft) == SQ_OK, "a charge by connection 1");
        check(charge(&other, 0.0625, del, &left, &dleft) == SQ_OK, "then one by connection 2");
        at3 = size_of(path);
        check(sq_ledger_refund(&l, 0.03125, del, &refunded, why, sizeof why) == SQ_OK && !refunded &&
                  size_of(path) == at3,
              "connection 1's charge is no longer the last record: no refund (the full charge stays)");
        check(sq_ledger_refund(&other, 0.03125, del, &refunded, why, sizeof why) == SQ_OK && refunded,
              "connection 2's is: refunded");
        sq_ledger_close(&other);
        sq_ledger_close(&l);

        /* a crash between the charge and the refund: the full charge stays, and nobody can refund it later */
        sq_ledger_open(&l, path, false, why, sizeof why);
        sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
        double left_before = left;
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            sq_ledger c;
            double a, b;
            sq_ledger_open(&c, path, false, why, sizeof why);
            if (sq_ledger_charge(&c, 0.5, del, "test/crash", &a, &b, why, sizeof why) != SQ_OK) _exit(3);
            raise(SIGKILL); /* killed after the charge is durable, before the refund */
            _exit(4);
        }
        int status = 0;
        waitpid(child, &status, 0);
        check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "a process charges 0.5 and is killed before its refund");
        sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
        snprintf(why, sizeof why, "left %.17g before %.17g", left, left_before);
        check(left < left_before - 0.49, "the full charge stays (conservative)");
        at3 = size_of(path);
        check(sq_ledger_refund(&l, 0.25, del, &refunded, why, sizeof why) == SQ_OK && !refunded && size_of(path) == at3,
              "another connection cannot refund it (not its charge)");
        sq_ledger_close(&l);

        /* format-2 readers (before refunds) stop at the format-3 record and refuse: they never cut a refund */
        snprintf(why, sizeof why, "v2 reader: %ld", v2_reader(path));
        check(v2_reader(path) == at_charge / 312 + 1, "a format-2 reader refuses the file at its format-3 record");
        check(truncate(path, at_charge + 312) == 0, "(cut after the format-3 record)");
        snprintf(why, sizeof why, "v2 reader: %ld", v2_reader(path));
        check(v2_reader(path) == at_charge / 312 + 1, "... also when it is the last record (refused, not cut)");
        check(truncate(path, at_charge) == 0, "(cut before it)");
        check(v2_reader(path) == 0, "the model reads the file without refunds whole (it is a reader of format 2)");
    }

    /* 8. Refund records are checked on replay: one that does not settle the charge right before it is
     * corruption, and the ledger refuses every charge (fail closed). */
    {
        static const char *const names[] = {"a refund after a grant (no charge before it)",
                                            "a refund above its charge",
                                            "a second refund of the same charge",
                                            "a refund naming another mechanism",
                                            "a refund without the format-3 record",
                                            "a refund after another record (a top-up) that follows the charge",
                                            "a refund of nothing (the amount charged)",
                                            "a second format-3 record",
                                            "a refund above its charge in epsilon (below it in delta)"};
        for (int v = 0; v < 9; v++) {
            dp_ledger_record c, f, r;
            snprintf(path, sizeof path, "%s/corrupt%d.ledger", argv[1], v);
            sq_ledger_grant(path, 1.0, ldexp(1, -10), why, sizeof why);
            memset(&c, 0, sizeof c);
            c.type = DP_LEDGER_CHARGE;
            c.epsilon = 0.5;
            c.delta = ldexp(1, -20);
            dp_ledger_set_name(c.mechanism, "dp_discover_top_k/units");
            memset(&f, 0, sizeof f);
            f.type = DP_LEDGER_FORMAT3;
            if (v != 0) append_raw(path, &c);
            if (v != 4) append_raw(path, &f);
            if (v == 5) {
                dp_ledger_record t;
                memset(&t, 0, sizeof t);
                t.type = DP_LEDGER_TOP_UP;
                t.epsilon = 1.0;
                t.grant_id = 1;
                append_raw(path, &t);
            }
            dp_ledger_refund_record(&c, v == 1 ? 0.75 : v == 6 ? 0.5 : 0.25, c.delta, &r);
            if (v == 3) dp_ledger_set_name(r.mechanism, "dp_select/exponential");
            if (v == 8) {
                r.epsilon = 0.75;
                r.delta = c.delta / 2;
            }
            if (v == 7) {
                dp_ledger_record f2;
                memset(&f2, 0, sizeof f2);
                f2.type = DP_LEDGER_FORMAT3;
                append_raw(path, &f2);
            } else {
                append_raw(path, &r);
            }
            if (v == 2) {
                dp_ledger_refund_record(&c, 0.25, c.delta, &r);
                append_raw(path, &r);
            }
            /* a valid record after it, so that it is never a torn last record */
            dp_ledger_record t;
            memset(&t, 0, sizeof t);
            t.type = DP_LEDGER_TOP_UP;
            t.epsilon = 1.0;
            t.grant_id = 1;
            append_raw(path, &t);
            long long sz = size_of(path);
            sq_ledger_open(&l, path, false, why, sizeof why);
            sq_result rr = charge(&l, 0.125, 0.0, &left, &dleft);
            check(rr == SQ_FAILED && strstr(why, "does not fit the ledger's state") && size_of(path) == sz, names[v]);
            sq_ledger_close(&l);
        }
        /* the well-formed control: the same file with a matching refund replays */
        dp_ledger_record c, f, r;
        snprintf(path, sizeof path, "%s/control.ledger", argv[1]);
        sq_ledger_grant(path, 1.0, ldexp(1, -10), why, sizeof why);
        memset(&c, 0, sizeof c);
        c.type = DP_LEDGER_CHARGE;
        c.epsilon = 0.5;
        c.delta = ldexp(1, -20);
        dp_ledger_set_name(c.mechanism, "dp_discover_top_k/units");
        memset(&f, 0, sizeof f);
        f.type = DP_LEDGER_FORMAT3;
        append_raw(path, &c);
        append_raw(path, &f);
        dp_ledger_refund_record(&c, 0.25, c.delta, &r);
        append_raw(path, &r);
        sq_ledger_open(&l, path, false, why, sizeof why);
        check(charge(&l, 0.125, 0.0, &left, &dleft) == SQ_OK && left == 0.625,
              "control: a matching refund replays (1 − 0.25 − 0.125 left)");
        sq_ledger_close(&l);
    }

    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
