/*
 * ledger.h: the SQLite binding's privacy ledger, one budget per ledger file (bindings/common/dp_ledger.h
 * gives the record format). Used by the extension (dpmo_sqlite.c) and the host tool (dpmo_ledger.c).
 *
 * Every connection keeps a replay of the file (offset, budget). A charge takes flock(LOCK_EX) on the
 * file, replays what other connections or processes appended since, checks the budget, appends its record
 * and fdatasyncs it, and only then returns: the result it pays for is produced afterwards. A grant does the
 * same with a grant record. Reading the remaining budget takes LOCK_SH. SQL transactions never touch the
 * file, so ROLLBACK cannot undo a charge, and a new connection replays the same file.
 *
 * A file is created holding its create record (never empty: see DP_LEDGER_CREATE). A process that uses a
 * ledger opened before a fork(2) opens the file again first (flock locks belong to the open file
 * description, which a fork shares). The messages in `why` never name the file (SQL shows them).
 */
#ifndef DPMO_SQLITE_LEDGER_H
#define DPMO_SQLITE_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dp_ledger.h"
#include "dpmo.h"

typedef enum sq_result {
    SQ_OK = 0,
    SQ_NO_FILE,   /* the ledger file does not exist (no budget was ever granted) */
    SQ_NO_BUDGET, /* the file holds no grant */
    SQ_EXHAUSTED, /* the budget left is smaller than the (epsilon, delta) requested: nothing charged */
    SQ_NO_DELTA,  /* delta > 0 requested from a pure-epsilon budget (delta total 0): nothing charged */
    SQ_FAILED     /* I/O error, corruption, replaced file: nothing charged, message in why */
} sq_result;

typedef struct sq_ledger {
    char *path; /* malloc'd */
    int fd;     /* -1 until the file exists */
    pid_t pid;  /* the process that opened fd */
    uint64_t dev, ino;
    int64_t offset; /* bytes replayed */
    uint64_t next_seq;
    bool has_budget;
    bool format2; /* the file holds its format record (dp_ledger.h) */
    dpmo_budget budget; /* (epsilon, delta): delta_total 0 for a pure-epsilon budget */
    bool broken; /* after an fdatasync failure: every charge refused until reopened */
    bool format3; /* the file holds its format-3 record (refunds may follow) */
    bool pending; /* the last record replayed is a charge (or the format-3 record right after one) */
    dp_ledger_record pending_charge; /* that charge, valid while `pending` */
    dpmo_budget pending_before; /* the budget before that charge */
    uint64_t charged_seq; /* the record number of this connection's last charge (0: none) */
} sq_ledger;

/* Prepares a ledger for path (copied). create: create the file when missing, holding its create record (and
 * sync its directory). */
sq_result sq_ledger_open(sq_ledger *l, const char *path, bool create, char *why, size_t why_len);
void sq_ledger_close(sq_ledger *l);

/* The budget left and its total, epsilon and delta (0 without file or grant; delta 0 for a pure-ε budget). */
sq_result sq_ledger_remaining(sq_ledger *l, double *remaining, double *total, double *delta_remaining,
                              double *delta_total, char *why, size_t why_len);

/*
 * Charges (epsilon, delta) for `mechanism` (sequential composition, exact as dpmo_budget_charge_approx),
 * durably, or charges nothing. SQ_EXHAUSTED and SQ_NO_DELTA set *left and *delta_left. On success the
 * record is on disk (fdatasync returned) before this returns.
 */
sq_result sq_ledger_charge(sq_ledger *l, double epsilon, double delta, const char *mechanism, double *left,
                           double *delta_left, char *why, size_t why_len);

/*
 * Pay what you get: settles this connection's last charge at (epsilon, delta), what the run it paid for
 * spent, by appending a refund record (preceded by the file's format-3 record when it has none), durably
 * (dp_ledger.h). Done only when that charge is still the last record of the file, (epsilon, delta) is at
 * most the charge and below it, and the budget before the charge can pay (epsilon, delta); otherwise
 * nothing is written and the full charge stays (*refunded false). The budget afterwards is exactly what
 * dpmo_budget's settlement gives: the budget before the charge, charged (epsilon, delta). SQ_FAILED (with
 * why) only on a lock, replay or write failure: the full charge stays then too.
 */
sq_result sq_ledger_refund(sq_ledger *l, double epsilon, double delta, bool *refunded, char *why, size_t why_len);

/* Adds (epsilon, delta) to the budget of the ledger at path (creating the file), durably. epsilon finite
 * and > 0, delta in [0, 1) (0: none added), the total delta below 1. */
sq_result sq_ledger_grant(const char *path, double epsilon, double delta, char *why, size_t why_len);

/* Calls fn for every record of the ledger at path, in order (under LOCK_SH). */
sq_result sq_ledger_each(const char *path, int (*fn)(void *ctx, const struct dp_ledger_record *r), void *ctx,
                         char *why, size_t why_len);

#endif
