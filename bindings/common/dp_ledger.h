/*
 * dp_ledger.h: the privacy ledger file shared by the PostgreSQL and SQLite bindings.
 *
 * An append-only file of fixed-size records (grants, top-ups, charges; SQLite's files start with a create
 * record), each sealed by a CRC-32C and numbered 1, 2, 3, ... The file is the truth; every in-memory budget
 * is a replay of it.
 *
 * Durability rule: a writer holds the ledger's lock (an LWLock in PostgreSQL, flock(2) in SQLite) while it
 * appends one record with pwrite(2) at the end of the valid records and fdatasync(2)s it, and only then
 * lets the result that the record pays for leave the process. Hence at most the last record of a file
 * can be incomplete (the writer crashed before its fdatasync returned, so nothing it paid for was
 * released): replay cuts it off. Any other invalid record is corruption, and the ledger then refuses every
 * charge (fail closed) until an administrator repairs it.
 *
 * Two record formats, told apart by their magic, both 312 bytes sealed by a CRC-32C of their first 308:
 *   - version 1 ("DPML", dpmo <= 0.2): epsilon only. Read as records with delta = 0.
 *   - version 2 ("DPM2"): the layout of dp_ledger_record below, with delta. Every record written now.
 * A reader built before version 2 takes a "DPM2" record for an invalid one, and would cut it off as a torn
 * last record. So before the first version-2 record of a file, a writer appends a format record: a
 * version-1 record of type 4 (create) with the text DP_LEDGER_FORMAT_TEXT, which such a reader accepts as
 * well formed and then refuses to apply (PostgreSQL's replay has no create record; SQLite's accepts one as
 * record 1 only, and the format record never is): it stops there and fails closed, before any version-2
 * record, which it therefore never cuts. Readers now decode it as DP_LEDGER_FORMAT. A SQLite file created
 * with a version-2 create record needs none: an older reader refuses its record 1 once another follows.
 *
 * Format 3 (dpmo 0.3, pay what you get): refund records (DP_LEDGER_REFUND). A reader of format 2 takes a
 * version-2 record of an unknown type for an invalid one, and would cut a refund off as a torn last record
 * (silently, and destroying it for the newer reader too). So before the first refund of a file, a writer
 * appends the format-3 record: a version-2 record of type 4 (create), epsilon and delta 0, with the text
 * DP_LEDGER_FORMAT3_TEXT, which a format-2 reader decodes as well formed and then refuses to apply (SQLite's
 * replay accepts a create record as record 1 only, PostgreSQL's none): it stops there and fails closed,
 * before any refund. Readers now decode it as DP_LEDGER_FORMAT3. It may only follow the file's format-2
 * state (a format record, or a version-2 record 1).
 *
 * Pay what you get (dp_discover_top_k): the call charges its full (epsilon, delta) before the run (a charge
 * record), and after the run, when it spent less (it stopped at ⊥), appends a refund record that settles
 * that charge at what the run spent. Replay applies it as the C budget's pay-what-you-get does: the
 * budgets the charge touched are put back to what they were before the charge, then charged the refund's
 * (epsilon, delta) — exactly as if only that had been charged. A refund is valid only as the record right
 * after its charge (the format-3 record may come between), with the charge's grants, role, database,
 * dataset and mechanism, epsilon ≤ the charge's and delta ≤ the charge's (one of them smaller); any other
 * refund is corruption (fail closed). So a refund never exceeds its charge, and never applies twice. A
 * writer that finds any other record after its charge (another connection charged meanwhile) writes no
 * refund: the full charge stays (the safe side), as dpmo_budget's settlement when the budget changed
 * meanwhile. A crash between the charge and the refund leaves the full charge.
 */
#ifndef DP_LEDGER_H
#define DP_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_LEDGER_MAGIC 0x4c4d5044u    /* "DPML" little-endian: a version-1 record */
#define DP_LEDGER_MAGIC_V2 0x324d5044u /* "DPM2" little-endian: a version-2 record */
#define DP_LEDGER_FORMAT_TEXT "dpmo ledger format 2: readers before dpmo 0.3 refuse this file"
#define DP_LEDGER_FORMAT3_TEXT "dpmo ledger format 3: refunds follow; older readers refuse"
#define DP_LEDGER_MAX_GRANTS_PER_CHARGE 16
#define DP_LEDGER_NAME 64

enum dp_ledger_type {
    DP_LEDGER_GRANT = 1,  /* a budget of (`epsilon`, `delta`) granted (PostgreSQL: to `role` for `dataset`, as grant `grant_id`) */
    DP_LEDGER_TOP_UP = 2, /* (`epsilon`, `delta`) added to grant `grant_id` (SQLite: to the file's budget) */
    DP_LEDGER_CHARGE = 3, /* (`epsilon`, `delta`) charged to each grant in `grants` (SQLite: to the file's budget) */
    DP_LEDGER_CREATE = 4, /* SQLite: record 1 of a file, written with the file (epsilon 0): a ledger is never an
                           * empty file, which SQLite's ATTACH or VACUUM INTO would take for an empty database
                           * and write into; a non-empty file that is not a database they refuse */
    DP_LEDGER_FORMAT = 5, /* the format record (see above): written as a version-1 create record, epsilon and
                           * delta 0, mechanism DP_LEDGER_FORMAT_TEXT; at most one per file */
    DP_LEDGER_REFUND = 6, /* settles the charge record just before it at (`epsilon`, `delta`), what the run
                           * spent (see above); its other fields are the charge's */
    DP_LEDGER_FORMAT3 = 7 /* the format-3 record (see above): written as a version-2 create record, epsilon and
                           * delta 0, mechanism DP_LEDGER_FORMAT3_TEXT; at most one per file */
};

/* A record as replay sees it, and the layout of a version-2 record on disk. */
typedef struct dp_ledger_record {
    uint32_t magic;   /* DP_LEDGER_MAGIC_V2; DP_LEDGER_MAGIC for a record decoded from version 1 */
    uint32_t type;
    uint64_t seq;     /* 1, 2, 3, ...: the record's position */
    int64_t time_us;  /* microseconds since 1970-01-01 UTC */
    double epsilon;   /* grant: total; top-up: amount added; charge: ε; refund: ε spent; create, formats: 0 */
    double delta;     /* grant: total δ (0: a pure-ε budget); top-up: δ added; charge: δ; refund: δ spent;
                       * all in [0, 1) */
    uint32_t role;    /* PostgreSQL: the grantee (grant, top-up) or the session user charged; SQLite: 0 */
    uint32_t database;/* PostgreSQL: the database of a charge; SQLite: 0 */
    uint16_t grant_id;/* grant, top-up: the grant (1-based) */
    uint16_t ngrants; /* charge: how many grants were charged */
    uint32_t grants[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
    char role_name[DP_LEDGER_NAME]; /* NUL-terminated */
    char dataset[DP_LEDGER_NAME];   /* "" = every dataset */
    char mechanism[DP_LEDGER_NAME]; /* charge: e.g. "dp_select/exponential" */
    uint32_t crc; /* CRC-32C of every byte before this field (of the record as it is on disk) */
} dp_ledger_record;

#define DP_LEDGER_RECORD_SIZE ((int64_t)sizeof(dp_ledger_record))

uint32_t dp_crc32c(const void *data, size_t len);

/*
 * Decodes the DP_LEDGER_RECORD_SIZE bytes at raw, a version-1 or version-2 record, into *out. True when
 * magic, crc, type, epsilon (> 0, finite; exactly +0 for create and format records), delta (in [0, 1),
 * exactly +0 for create and format records, and for every version-1 record), counts and strings are well
 * formed. *out is written whole either way.
 */
bool dp_ledger_decode(const void *raw, dp_ledger_record *out);

/* True when r (a record written by this version, magic DP_LEDGER_MAGIC_V2) is well formed, as above. */
bool dp_ledger_valid(const dp_ledger_record *r);

/*
 * The refund record that settles `charge` (a DP_LEDGER_CHARGE record) at (epsilon, delta): the charge's
 * fields with type DP_LEDGER_REFUND and these amounts (seq and time are the writer's). *out written whole.
 */
void dp_ledger_refund_record(const dp_ledger_record *charge, double epsilon, double delta, dp_ledger_record *out);

/*
 * True when `refund` may settle `charge` (see above): the same grants, role, database, names and mechanism,
 * epsilon ≤ the charge's and delta ≤ the charge's, one of them smaller. Replay checks it; so does a writer
 * before it appends one.
 */
bool dp_ledger_refund_matches(const dp_ledger_record *charge, const dp_ledger_record *refund);

typedef int (*dp_ledger_apply_fn)(void *ctx, const dp_ledger_record *r); /* 0: ok; else stop (corrupt) */

typedef enum dp_ledger_scan_result {
    DP_LEDGER_SCAN_OK = 0,   /* every record from `from` to the end applied */
    DP_LEDGER_SCAN_TORN,     /* ... except a torn last record, cut off when `cut_torn` (else left as is) */
    DP_LEDGER_SCAN_CORRUPT,  /* an invalid record that is not the last, a sequence gap, or apply() refused */
    DP_LEDGER_SCAN_IO        /* read(2), fstat(2) or ftruncate(2) failed */
} dp_ledger_scan_result;

/*
 * Reads the records of fd from byte `from` (a multiple of the record size; record number *next_seq) to
 * the end of the file, calling apply() on each valid one in order. On return *end is the offset after the
 * last applied record and *next_seq the number the next record must have. A torn last record (short, or
 * failing its CRC) is cut off with ftruncate(2) when cut_torn is set; the caller must hold the lock.
 */
dp_ledger_scan_result dp_ledger_scan(int fd, int64_t from, uint64_t *next_seq, int64_t *end, bool cut_torn,
                                     dp_ledger_apply_fn apply, void *ctx, char *why, size_t why_len);

/*
 * Seals r (with r->seq set by the caller; a DP_LEDGER_FORMAT record as a version-1 create record, a
 * DP_LEDGER_FORMAT3 record as a version-2 create record with its text, any other as version 2, setting r->magic and r->crc to what was written) and writes it at byte `offset` with pwrite(2), then
 * fdatasync(2). Returns 0, -1 when the write failed or was short (nothing durable: the caller must not
 * count the record; the next append at the same offset overwrites any partial bytes), or -2 when the
 * write succeeded but fdatasync failed (the record's fate is unknown: the caller must stop, see
 * PostgreSQL's PANIC on fsync failure). errno is kept.
 */
int dp_ledger_append(int fd, int64_t offset, dp_ledger_record *r);

/* fsync(2)s the directory containing path (after creating the file, so that its name is durable). */
int dp_ledger_sync_dir(const char *path);

/* Copies a string into a fixed field, truncated, NUL-terminated, zero-filled. */
void dp_ledger_set_name(char *field, const char *value);

#endif
