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
#include <sys/stat.h>
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

    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
