/*
 * dpmo-ledger: the host's command-line tool for the SQLite binding's privacy ledger files.
 *
 *   dpmo-ledger grant LEDGER EPSILON [DELTA]   add (EPSILON, DELTA) to the budget (creates the file; DELTA
 *                                              0 by default: a budget granted without delta is pure-ε and
 *                                              refuses every charge with delta > 0)
 *   dpmo-ledger show LEDGER             total, spent and remaining epsilon (and delta, when any was granted)
 *   dpmo-ledger audit LEDGER            every record: number, time (UTC), kind, epsilon, mechanism, delta
 *                                       (a refund's epsilon and delta are what the charge just before it
 *                                       settles at: what the call spent, pay what you get)
 *
 * The ledger a connection uses by default is "<database file>.dpmo-ledger". Whoever can write that file is
 * the authority that grants budgets (the host), not the SQL that an analyst runs.
 */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp_ledger.h"
#include "dp_sql.h"
#include "ledger.h"

static int usage(void) {
    fprintf(stderr, "usage: dpmo-ledger grant LEDGER EPSILON [DELTA] | show LEDGER | audit LEDGER\n");
    return 2;
}

static int print_record(void *ctx, const dp_ledger_record *r) {
    static const char *const kinds[] = {"", "grant", "top-up", "charge", "created", "format", "refund", "format"};
    char eps[40], del[40], when[40];
    time_t secs = (time_t)(r->time_us / 1000000);
    struct tm tm;
    (void)ctx;
    gmtime_r(&secs, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    dp_format_double(r->epsilon, eps, sizeof eps);
    dp_format_double(r->delta, del, sizeof del);
    printf("%llu|%s.%06lld|%s|%s|%s|%s\n", (unsigned long long)r->seq, when, (long long)(r->time_us % 1000000),
           kinds[r->type], eps, r->mechanism, del);
    return 0;
}

int main(int argc, char **argv) {
    char why[300];
    if (argc < 3) return usage();
    const char *cmd = argv[1], *path = argv[2];
    if (strcmp(cmd, "grant") == 0 && (argc == 4 || argc == 5)) {
        char *end;
        double delta = 0.0;
        errno = 0;
        double eps = strtod(argv[3], &end);
        if (end == argv[3] || *end != '\0' || errno != 0) {
            fprintf(stderr, "dpmo-ledger: EPSILON must be a number\n");
            return 2;
        }
        if (argc == 5) {
            errno = 0;
            delta = strtod(argv[4], &end);
            if (end == argv[4] || *end != '\0' || errno != 0) {
                fprintf(stderr, "dpmo-ledger: DELTA must be a number\n");
                return 2;
            }
        }
        if (sq_ledger_grant(path, eps, delta, why, sizeof why) != SQ_OK) {
            fprintf(stderr, "dpmo-ledger: %s: %s\n", path, why);
            return 1;
        }
        return 0;
    }
    if (strcmp(cmd, "show") == 0 && argc == 3) {
        sq_ledger l;
        double left = 0, total = 0, dleft = 0, dtotal = 0;
        char t[40], s[40], r[40];
        if (sq_ledger_open(&l, path, false, why, sizeof why) != SQ_OK) {
            fprintf(stderr, "dpmo-ledger: %s: %s\n", path, why);
            return 1;
        }
        sq_result res = sq_ledger_remaining(&l, &left, &total, &dleft, &dtotal, why, sizeof why);
        if (res == SQ_FAILED) {
            fprintf(stderr, "dpmo-ledger: %s: %s\n", path, why);
            sq_ledger_close(&l);
            return 1;
        }
        dp_format_double(total, t, sizeof t);
        dp_format_double(l.has_budget ? l.budget.spent : 0, s, sizeof s);
        dp_format_double(left, r, sizeof r);
        printf("total %s spent %s remaining %s", t, s, r);
        if (dtotal > 0.0) { /* a pure-ε budget's line is as it always was */
            dp_format_double(dtotal, t, sizeof t);
            dp_format_double(l.budget.delta_spent, s, sizeof s);
            dp_format_double(dleft, r, sizeof r);
            printf(" delta total %s spent %s remaining %s", t, s, r);
        }
        printf("\n");
        sq_ledger_close(&l);
        return 0;
    }
    if (strcmp(cmd, "audit") == 0 && argc == 3) {
        sq_result res = sq_ledger_each(path, print_record, NULL, why, sizeof why);
        if (res == SQ_NO_FILE) return 0;
        if (res != SQ_OK) {
            fprintf(stderr, "dpmo-ledger: %s: %s\n", path, why);
            return 1;
        }
        return 0;
    }
    return usage();
}
