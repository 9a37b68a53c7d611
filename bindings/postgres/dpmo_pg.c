/*
 * dpmo_pg.c: PostgreSQL 15 extension over the dpmo C ABI: differentially private selection as aggregates,
 * paid for from a persistent privacy ledger.
 *
 * The SQL surface (function names, arguments, options, error texts) is the one of bindings/SQL.md,
 * implemented once in bindings/common/dp_sql.c for PostgreSQL and SQLite; this file reads PostgreSQL
 * arguments, keeps the aggregate state, and owns the ledger.
 *
 * The ledger (README.md, "The privacy ledger"): budgets granted by a superuser to roles (optionally per
 * dataset label) live in shared memory, protected by one LWLock, and every grant, top-up and charge is a
 * record appended to $PGDATA/dpmo_ledger and fdatasync'd while the lock is held, before the function that
 * made it returns; then the anchor ($PGDATA/dpmo_ledger.anchor) is rewritten. The postmaster replays the
 * file at startup and after a crash and checks it against its anchor; it never creates it (a superuser does,
 * with dp_ledger_init()). A selection charges every grant that applies to the session user (its own and
 * every role it is a member of) before the data is examined, so its result can only leave the backend once
 * the charge is durable. Without shared_preload_libraries, without a usable ledger, in recovery, on a
 * timeline other than the ledger's, or for a role without a grant, selections are refused.
 *
 * Who pays (README.md, "Who pays"): the session user; selections are refused in triggers (counted by a
 * function manager hook), in security-restricted operations and outside client backends. Group budgets: a
 * ProcessUtility hook keeps non-superusers from ending the memberships that make a budget bind a role.
 */
#include "postgres.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_language_d.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"
#include "port.h"
#include "postmaster/autovacuum.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "dp_ledger.h"
#include "dp_sql.h"
#include "dpmo.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* ------------------------------------------------------------------------------------------------ */
/* Settings                                                                                          */
/* ------------------------------------------------------------------------------------------------ */

static char *guc_dataset = NULL;	/* dpmo.dataset: the dataset label charges are made for */
static bool guc_test_seeding = false;	/* dpmo.test_seeding: postmaster-only; lets dpmo_pg_seed run */
static bool guc_test_crash_before_refund = false;	/* dpmo.test_crash_before_refund: superuser; tests only
													 * (with dpmo.test_seeding): PANIC between a top-k's
													 * charge and its refund */
static bool preloaded = false;		/* _PG_init ran from shared_preload_libraries */

static bool
check_dataset(char **newval, void **extra, GucSource source)
{
	if (*newval != NULL && strlen(*newval) >= DP_LEDGER_NAME)
	{
		GUC_check_errdetail("A dataset label has at most %d bytes.", DP_LEDGER_NAME - 1);
		return false;
	}
	return true;
}

static const char *
current_dataset(void)
{
	return guc_dataset ? guc_dataset : "";
}

/* ------------------------------------------------------------------------------------------------ */
/* The ledger in shared memory                                                                       */
/* ------------------------------------------------------------------------------------------------ */

#define MAX_GRANTS 1024
/* In the data directory, which is every server process's working directory. */
#define LEDGER_FILE "dpmo_ledger"
#define ANCHOR_FILE "dpmo_ledger.anchor"
#define ANCHOR_MAGIC 0x414d5044u	/* "DPMA" little-endian */
#define ANCHOR_SIZE 512			/* written whole and in place, as pg_control is */

typedef struct LedgerGrant
{
	Oid			role;
	uint32		id;				/* 1-based, = index + 1 */
	char		dataset[DP_LEDGER_NAME];	/* "" = every dataset */
	dpmo_budget budget;
} LedgerGrant;

/* Why the ledger cannot be used, and what lifts the refusal (README, "When the ledger is lost"). */
typedef enum LedgerProblem
{
	LEDGER_OK = 0,
	LEDGER_MISSING,				/* no file: a superuser creates one with dp_ledger_init() */
	LEDGER_DAMAGED,				/* unreadable or corrupt: repair the file, restart the server */
	LEDGER_UNANCHORED,			/* out of step with its anchor: put the right file back, or
								 * dp_ledger_accept() */
	LEDGER_REPLACED				/* removed, replaced or truncated while the server ran: restart */
} LedgerProblem;

/*
 * The anchor (ANCHOR_FILE): rewritten and synced after every record is durable, so it never claims more
 * than the ledger holds. It remembers how many records the ledger has, the CRC of the last one, the
 * cluster's system identifier and the WAL timeline the ledger was written on. A ledger with fewer records
 * than its anchor, another last record, another cluster's identifier, or a server that has since moved to
 * another timeline (promoted, restored to a point in time) is refused until a superuser accepts it.
 */
typedef struct LedgerAnchor
{
	uint32		magic;
	uint32		version;		/* 1 */
	uint64		system_id;
	uint64		records;
	uint32		last_crc;		/* the crc field of record number `records` (0 when there is none) */
	uint32		timeline;
	uint32		reserved;
	uint32		crc;			/* CRC-32C of every byte before this field */
} LedgerAnchor;

typedef struct LedgerShared
{
	LWLock	   *lock;
	bool		ok;				/* problem == LEDGER_OK */
	int			problem;		/* LedgerProblem */
	char		why[320];		/* for superusers and the server log */
	uint64		generation;		/* bumped when dp_ledger_init() creates a new file */
	dev_t		dev;			/* the file replayed at startup or created by dp_ledger_init() */
	ino_t		ino;
	uint32		timeline;		/* the timeline the anchor names */
	int64		size;			/* bytes of valid records in the file */
	uint64		next_seq;
	bool		format2;		/* the file holds its format record (dp_ledger.h): version 2 may follow */
	bool		format3;		/* the file holds its format-3 record: refunds may follow */
	bool		pending;		/* the last record is a charge (or the format-3 record right after one) */
	dp_ledger_record pending_charge;	/* that charge (pay what you get: a refund may settle it) */
	dpmo_budget pending_before[DP_LEDGER_MAX_GRANTS_PER_CHARGE];	/* its grants' budgets before it */
	int			ngrants;
	LedgerGrant grants[MAX_GRANTS];
} LedgerShared;

static LedgerShared *ledger = NULL;
static uint64 my_charge_seq = 0;	/* this backend's last charge (0: none): the one it may refund */
static int	ledger_fd = -1;		/* this backend's descriptor of the file */
static uint64 ledger_fd_generation = 0; /* the generation it was opened in */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static create_upper_paths_hook_type prev_upper_paths_hook = NULL;

static int64
now_unix_us(void)
{
	return (int64) GetCurrentTimestamp() +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
}

/* a + b rounded down (TwoSum): the total of a top-up never exceeds the exact sum of the grants. */
static double
add_down(double a, double b)
{
	double		s = a + b;
	double		bb = s - a;
	double		e = (a - (s - bb)) + (b - bb);

	if (e < 0)
		s = nextafter(s, -INFINITY);
	return s;
}

static LedgerGrant *
find_grant(LedgerShared *l, Oid role, const char *dataset)
{
	int			i;

	for (i = 0; i < l->ngrants; i++)
		if (l->grants[i].role == role && strcmp(l->grants[i].dataset, dataset) == 0)
			return &l->grants[i];
	return NULL;
}

/*
 * The budgets of the grants of l's pending charge after `refund` settles it (dp_ledger.h): each put back
 * to what it was before the charge, then charged the refund's (epsilon, delta), as dpmo_budget's
 * pay-what-you-get settlement. False when the refund cannot settle it (then nothing is written to out).
 */
static bool
ledger_settle(const LedgerShared *l, const dp_ledger_record *refund, dpmo_budget *out)
{
	uint32		i;

	if (!l->format3 || !l->pending || !dp_ledger_refund_matches(&l->pending_charge, refund))
		return false;
	for (i = 0; i < refund->ngrants; i++)
	{
		uint32		g = refund->grants[i];

		out[i] = l->pending_before[i];
		if (g < 1 || g > (uint32) l->ngrants ||
			dpmo_budget_charge_approx(&out[i], refund->epsilon, refund->delta) != DPMO_OK)
			return false;
	}
	return true;
}

/* Replay of one record (postmaster, at startup): the same transitions the writers made. */
static int
ledger_apply(void *ctx, const dp_ledger_record *r)
{
	LedgerShared *l = (LedgerShared *) ctx;
	uint32		i;
	bool		pending = l->pending;

	l->pending = false;			/* a refund settles only the charge right before it */
	switch (r->type)
	{
		case DP_LEDGER_GRANT:
			if (r->grant_id != (uint32) l->ngrants + 1 || l->ngrants >= MAX_GRANTS ||
				find_grant(l, r->role, r->dataset) != NULL)
				return -1;
			l->grants[l->ngrants].role = r->role;
			l->grants[l->ngrants].id = r->grant_id;
			strlcpy(l->grants[l->ngrants].dataset, r->dataset, DP_LEDGER_NAME);
			if (dpmo_budget_init_approx(&l->grants[l->ngrants].budget, r->epsilon, r->delta) != DPMO_OK)
				return -1;
			l->ngrants++;
			return 0;
		case DP_LEDGER_TOP_UP:
			{
				double		t,
							d;
				dpmo_budget *b;

				if (r->grant_id < 1 || r->grant_id > (uint32) l->ngrants)
					return -1;
				b = &l->grants[r->grant_id - 1].budget;
				t = add_down(b->total, r->epsilon);
				d = add_down(b->delta_total, r->delta);
				if (!isfinite(t) || !(d < 1.0))
					return -1;
				b->total = t;
				b->delta_total = d;
				return 0;
			}
		case DP_LEDGER_FORMAT:
			if (l->format2)
				return -1;
			l->format2 = true;
			return 0;
		case DP_LEDGER_CHARGE:
			if (r->ngrants < 1)
				return -1;
			for (i = 0; i < r->ngrants; i++)
			{
				uint32		g = r->grants[i];

				if (g < 1 || g > (uint32) l->ngrants)
					return -1;
				l->pending_before[i] = l->grants[g - 1].budget;
				if (dpmo_budget_charge_approx(&l->grants[g - 1].budget, r->epsilon, r->delta) != DPMO_OK)
					return -1;
			}
			l->pending_charge = *r;
			l->pending = true;
			return 0;
		case DP_LEDGER_FORMAT3:
			if (!l->format2 || l->format3)
				return -1;
			l->format3 = true;
			l->pending = pending;
			return 0;
		case DP_LEDGER_REFUND:
			{
				dpmo_budget after[DP_LEDGER_MAX_GRANTS_PER_CHARGE];

				l->pending = pending;
				if (!ledger_settle(l, r, after))
					return -1;
				for (i = 0; i < r->ngrants; i++)
					l->grants[r->grants[i] - 1].budget = after[i];
				l->pending = false;
				return 0;
			}
	}
	return -1;
}

static void ledger_set_problem(LedgerShared *l, LedgerProblem p, const char *fmt,...) pg_attribute_printf(3, 4);

static void
ledger_set_problem(LedgerShared *l, LedgerProblem p, const char *fmt,...)
{
	va_list		ap;

	l->problem = p;
	l->ok = p == LEDGER_OK;
	va_start(ap, fmt);
	vsnprintf(l->why, sizeof l->why, fmt, ap);
	va_end(ap);
}

typedef enum AnchorRead
{
	ANCHOR_READ_OK,
	ANCHOR_READ_MISSING,
	ANCHOR_READ_INVALID
} AnchorRead;

static AnchorRead
anchor_read(LedgerAnchor *a)
{
	char		buf[ANCHOR_SIZE];
	int			fd = BasicOpenFile(ANCHOR_FILE, O_RDONLY | PG_BINARY);
	ssize_t		got;

	if (fd < 0)
		return errno == ENOENT ? ANCHOR_READ_MISSING : ANCHOR_READ_INVALID;
	got = pg_pread(fd, buf, sizeof buf, 0);
	close(fd);
	if (got < (ssize_t) sizeof(LedgerAnchor))
		return ANCHOR_READ_INVALID;
	memcpy(a, buf, sizeof *a);
	if (a->magic != ANCHOR_MAGIC || a->version != 1 || a->crc != dp_crc32c(a, offsetof(LedgerAnchor, crc)))
		return ANCHOR_READ_INVALID;
	return ANCHOR_READ_OK;
}

/* Writes the anchor in place and syncs it (with the ledger's lock held, or in the postmaster): 0 or -1. */
static int
anchor_write(uint64 records, uint32 last_crc, uint32 timeline)
{
	char		buf[ANCHOR_SIZE];
	LedgerAnchor a;
	int			fd,
				rc = 0,
				save;
	bool		created = false;

	memset(&a, 0, sizeof a);
	a.magic = ANCHOR_MAGIC;
	a.version = 1;
	a.system_id = GetSystemIdentifier();
	a.records = records;
	a.last_crc = last_crc;
	a.timeline = timeline;
	a.crc = dp_crc32c(&a, offsetof(LedgerAnchor, crc));
	memset(buf, 0, sizeof buf);
	memcpy(buf, &a, sizeof a);
	fd = BasicOpenFile(ANCHOR_FILE, O_RDWR | PG_BINARY);
	if (fd < 0 && errno == ENOENT)
	{
		fd = BasicOpenFile(ANCHOR_FILE, O_RDWR | O_CREAT | O_EXCL | PG_BINARY);
		created = fd >= 0;
	}
	if (fd < 0)
		return -1;
	errno = 0;
	if (pg_pwrite(fd, buf, sizeof buf, 0) != (ssize_t) sizeof buf)
	{
		if (errno == 0)
			errno = ENOSPC;
		rc = -1;
	}
	else if (pg_fdatasync(fd) != 0)
		rc = -1;
	save = errno;
	close(fd);
	errno = save;
	if (rc == 0 && created && dp_ledger_sync_dir(ANCHOR_FILE) != 0)
		rc = -1;
	return rc;
}

/* The crc field of record number n (1-based) of fd, or 0 for n = 0; false when it cannot be read. */
static bool
record_crc(int fd, uint64 n, uint32 *crc)
{
	dp_ledger_record r;

	*crc = 0;
	if (n == 0)
		return true;
	if (pg_pread(fd, &r, sizeof r, (off_t) ((n - 1) * DP_LEDGER_RECORD_SIZE)) != (ssize_t) sizeof r)
		return false;
	*crc = r.crc;
	return true;
}

/*
 * Replays the ledger file into l and checks it against its anchor (the postmaster, at startup and when it
 * reinitialises shared memory after a crash). Never creates the file: a missing ledger is refused until a
 * superuser creates a new one, explicitly, with dp_ledger_init().
 */
static void
ledger_load(LedgerShared *l)
{
	LedgerAnchor a;
	AnchorRead	ar = anchor_read(&a);
	int			fd = BasicOpenFile(LEDGER_FILE, O_RDWR | PG_BINARY);
	struct stat st;
	int64		end = 0;
	dp_ledger_scan_result res;
	uint64		records;
	uint32		crc;

	if (fd < 0)
	{
		if (errno != ENOENT)
			ledger_set_problem(l, LEDGER_DAMAGED, "cannot open %s: %m", LEDGER_FILE);
		else if (ar != ANCHOR_READ_MISSING)
			ledger_set_problem(l, LEDGER_MISSING,
							   "%s is missing but its anchor %s is not (it says the ledger held %llu records): "
							   "put the ledger back with the server stopped; SELECT dpmo.dp_ledger_init() "
							   "starts an empty one instead, and every budget with it",
							   LEDGER_FILE, ANCHOR_FILE,
							   ar == ANCHOR_READ_OK ? (unsigned long long) a.records : 0ULL);
		else
			ledger_set_problem(l, LEDGER_MISSING,
							   "there is no privacy ledger (%s in the data directory): a superuser creates "
							   "one with SELECT dpmo.dp_ledger_init()", LEDGER_FILE);
		return;
	}
	if (fstat(fd, &st) != 0)
	{
		ledger_set_problem(l, LEDGER_DAMAGED, "cannot stat %s: %m", LEDGER_FILE);
		close(fd);
		return;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (dp_ledger_sync_dir(LEDGER_FILE) != 0)
		ereport(LOG, (errmsg("dpmo: could not fsync the data directory: %m")));
	l->problem = LEDGER_OK;
	res = dp_ledger_scan(fd, 0, &l->next_seq, &end, true, ledger_apply, l, l->why, sizeof l->why);
	l->size = end;
	records = l->next_seq - 1;
	if (res == DP_LEDGER_SCAN_TORN)
	{
		ereport(LOG, (errmsg("dpmo: privacy ledger: %s", l->why)));
		if (pg_fdatasync(fd) != 0)
			ledger_set_problem(l, LEDGER_DAMAGED, "cannot sync %s after cutting its torn last record: %m",
							   LEDGER_FILE);
	}
	else if (res != DP_LEDGER_SCAN_OK)
		l->problem = LEDGER_DAMAGED;	/* l->why says why */
	if (l->problem != LEDGER_OK)
		;
	else if (ar == ANCHOR_READ_MISSING)
		ledger_set_problem(l, LEDGER_UNANCHORED,
						   "%s has no anchor (%s): if it holds every record, a superuser accepts it with "
						   "SELECT dpmo.dp_ledger_accept()", LEDGER_FILE, ANCHOR_FILE);
	else if (ar == ANCHOR_READ_INVALID)
		ledger_set_problem(l, LEDGER_UNANCHORED,
						   "the anchor %s cannot be read or is invalid: if %s holds every record, a superuser "
						   "accepts it with SELECT dpmo.dp_ledger_accept()", ANCHOR_FILE, LEDGER_FILE);
	else if (a.system_id != GetSystemIdentifier())
		ledger_set_problem(l, LEDGER_UNANCHORED,
						   "%s was written by another cluster (system identifier %llu, this one's is %llu): "
						   "if it is this cluster's ledger, a superuser accepts it with "
						   "SELECT dpmo.dp_ledger_accept()", LEDGER_FILE,
						   (unsigned long long) a.system_id, (unsigned long long) GetSystemIdentifier());
	else if (a.records > records)
		ledger_set_problem(l, LEDGER_UNANCHORED,
						   "%s holds %llu records but held %llu: it was rolled back (an older copy?); put the "
						   "complete file back with the server stopped, or accept this one with "
						   "SELECT dpmo.dp_ledger_accept()", LEDGER_FILE, (unsigned long long) records,
						   (unsigned long long) a.records);
	else if (!record_crc(fd, a.records, &crc) || crc != a.last_crc)
		ledger_set_problem(l, LEDGER_UNANCHORED,
						   "record %llu of %s is not the one its anchor remembers: the file was replaced; put "
						   "the right file back with the server stopped, or accept this one with "
						   "SELECT dpmo.dp_ledger_accept()", (unsigned long long) a.records, LEDGER_FILE);
	else
	{
		l->timeline = a.timeline;
		ledger_set_problem(l, LEDGER_OK, "%s", "");
	}
	close(fd);
}

static void
ledger_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(LedgerShared)));
	RequestNamedLWLockTranche("dpmo", 1);
}

/* Creates the shared state and replays the ledger file (postmaster, at startup and after a crash). */
static void
ledger_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ledger = ShmemInitStruct("dpmo privacy ledger", sizeof(LedgerShared), &found);
	if (!found)
	{
		memset(ledger, 0, sizeof(LedgerShared));
		ledger->lock = &(GetNamedLWLockTranche("dpmo"))->lock;
		ledger->next_seq = 1;
		ledger->generation = 1;
		ledger_load(ledger);
		if (ledger->ok)
			ereport(LOG,
					(errmsg("dpmo: privacy ledger replayed: %d grants, %llu records",
							ledger->ngrants, (unsigned long long) (ledger->next_seq - 1))));
		else
			ereport(WARNING,
					(errmsg("dpmo: the privacy ledger is unusable, every private selection will be refused: %s",
							ledger->why)));
	}
	LWLockRelease(AddinShmemInitLock);
}

static void ledger_unusable(const char *fname, LedgerProblem problem, const char *why) pg_attribute_noreturn();

/*
 * Refuses because of the ledger's state. The reason (file names, record counts) goes to superusers and to
 * the server log only: other roles learn that selections are refused, not how many records the ledger had.
 */
static void
ledger_unusable(const char *fname, LedgerProblem problem, const char *why)
{
	int			code = problem == LEDGER_MISSING ? ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE : ERRCODE_DATA_CORRUPTED;

	if (superuser_arg(GetSessionUserId()))
		ereport(ERROR, (errcode(code), errmsg("%s: the privacy ledger is unusable: %s", fname, why)));
	ereport(ERROR,
			(errcode(code),
			 errmsg("%s: the privacy ledger is unusable: private selections are refused until an administrator repairs it",
					fname),
			 errdetail_log("%s", why)));
	pg_unreachable();
}

static void
ledger_refuse_timeline(const char *fname, uint32 anchored, uint32 now)
{
	char		why[320];

	snprintf(why, sizeof why,
			 "this server is on WAL timeline %u but the ledger was last written on timeline %u: the server was "
			 "promoted or restored to a point in time since, and %s may lack records of the server it came "
			 "from; put that server's %s in place with this one stopped, then SELECT dpmo.dp_ledger_accept()",
			 now, anchored, LEDGER_FILE, LEDGER_FILE);
	ledger_unusable(fname, LEDGER_UNANCHORED, why);
}

/*
 * Fails closed unless the ledger is loaded and usable, this server is not a standby, and it is still on the
 * timeline its ledger was anchored on. With `inspect` (the superusers' listings), a ledger that replayed
 * but is out of step with its anchor may be read, also on a standby, so that it can be checked before it is
 * accepted.
 */
static void
ledger_require(const char *fname, bool inspect)
{
	char		why[320];
	LedgerProblem problem;
	uint32		timeline;

	if (!preloaded || ledger == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s: the privacy ledger is not loaded: add dpmo to shared_preload_libraries and restart the server",
						fname)));
	LWLockAcquire(ledger->lock, LW_SHARED);
	problem = (LedgerProblem) ledger->problem;
	timeline = ledger->timeline;
	strlcpy(why, ledger->why, sizeof why);
	LWLockRelease(ledger->lock);
	if (inspect && problem == LEDGER_UNANCHORED)
		return;
	if (problem != LEDGER_OK)
		ledger_unusable(fname, problem, why);
	if (inspect)
		return;
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s: private selections are refused on a server in recovery: the privacy ledger lives on the primary",
						fname)));
	if (timeline != GetWALInsertionTimeLine())
		ledger_refuse_timeline(fname, timeline, GetWALInsertionTimeLine());
}

static void ledger_break(uint64 generation, LedgerProblem p, const char *fname, const char *fmt,...) pg_attribute_printf(4, 5) pg_attribute_noreturn();

/* Marks the ledger unusable (unless it was re-created meanwhile) and refuses. */
static void
ledger_break(uint64 generation, LedgerProblem p, const char *fname, const char *fmt,...)
{
	char		why[320];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
	if (ledger->generation == generation && ledger->ok)
		ledger_set_problem(ledger, p, "%s", why);
	LWLockRelease(ledger->lock);
	ereport(LOG_SERVER_ONLY, (errmsg("dpmo: the privacy ledger is unusable: %s", why)));
	ledger_unusable(fname, p, why);
}

/*
 * This backend's descriptor of the ledger file, (re)opened when dp_ledger_init() created a new file. The
 * file must be the one the postmaster replayed: one removed or replaced while the server runs makes the
 * ledger unusable until a restart checks it against its anchor.
 */
static int
ledger_file(const char *fname)
{
	uint64		generation;
	dev_t		dev;
	ino_t		ino;
	int			fd;
	struct stat st;

	LWLockAcquire(ledger->lock, LW_SHARED);
	generation = ledger->generation;
	dev = ledger->dev;
	ino = ledger->ino;
	LWLockRelease(ledger->lock);
	if (ledger_fd >= 0 && ledger_fd_generation == generation)
		return ledger_fd;
	if (ledger_fd >= 0)
	{
		close(ledger_fd);
		ReleaseExternalFD();
		ledger_fd = -1;
	}
	/* A descriptor kept for the backend's life: counted as PostgreSQL asks of such descriptors. */
	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("dpmo: no file descriptor left to open the privacy ledger")));
	/* No O_CREAT: only dp_ledger_init() creates the file. */
	fd = BasicOpenFile(LEDGER_FILE, O_RDWR | PG_BINARY);
	if (fd < 0)
	{
		int			save = errno;

		ReleaseExternalFD();
		if (save == ENOENT)
			ledger_break(generation, LEDGER_REPLACED, fname,
						 "%s was removed while the server was running: restart the server", LEDGER_FILE);
		errno = save;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("dpmo: could not open the privacy ledger: %m")));
	}
	if (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino)
	{
		close(fd);
		ReleaseExternalFD();
		ledger_break(generation, LEDGER_REPLACED, fname,
					 "%s was replaced while the server was running: restart the server", LEDGER_FILE);
	}
	ledger_fd = fd;
	ledger_fd_generation = generation;
	return ledger_fd;
}

/*
 * With the lock held in exclusive mode, after ledger_require() and ledger_file(): checks again what may have
 * changed since (the state, the file's generation); on failure releases the lock and raises an ERROR.
 */
static void
ledger_check_locked(const char *fname)
{
	uint32		timeline = ledger->timeline;

	if (ledger->ok && ledger_fd_generation == ledger->generation && timeline == GetWALInsertionTimeLine())
		return;
	LWLockRelease(ledger->lock);
	ledger_require(fname, false);
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("%s: the privacy ledger was re-created meanwhile; nothing was charged", fname),
			 errhint("Retry.")));
}

/*
 * With the lock held in exclusive mode: stamps r with the next sequence number and the time and appends it
 * to fd (dp_ledger_append's result); a failed fdatasync PANICs, as PostgreSQL does for its own files, so that
 * the state is rebuilt from what the disk really holds.
 */
static int
append_stamped_locked(int fd, dp_ledger_record *r)
{
	int			rc;

	r->seq = ledger->next_seq;
	r->time_us = now_unix_us();
	rc = dp_ledger_append(fd, ledger->size, r);
	if (rc == -2)
		ereport(PANIC,
				(errcode_for_file_access(),
				 errmsg("dpmo: could not fdatasync the privacy ledger: %m")));
	return rc;
}

/*
 * Appends r (its seq set here) with the lock held in exclusive mode, then updates the anchor. On a failed
 * write it releases the lock and raises an ERROR (nothing is counted); on a failed fdatasync it PANICs, as
 * PostgreSQL does for its own files, so that the state is rebuilt from what the disk really holds. A failed
 * anchor update is logged: the record is durable, and the anchor only lags behind it.
 */
static void
append_one_locked(dp_ledger_record *r, const char *fname)
{
	int			fd = ledger_fd;		/* opened by the caller, before it took the lock */
	int			rc;
	struct stat st;

	if (fstat(fd, &st) != 0 || st.st_size < ledger->size)
	{
		char		why[320];

		snprintf(why, sizeof why,
				 "%s is shorter than the %lld bytes the server wrote: it was truncated or overwritten while "
				 "the server was running: restart the server", LEDGER_FILE, (long long) ledger->size);
		ledger_set_problem(ledger, LEDGER_REPLACED, "%s", why);
		LWLockRelease(ledger->lock);
		ereport(LOG_SERVER_ONLY, (errmsg("dpmo: the privacy ledger is unusable: %s", why)));
		ledger_unusable(fname, LEDGER_REPLACED, why);
	}
	rc = append_stamped_locked(fd, r);
	if (rc != 0)
	{
		int			save = errno;

		LWLockRelease(ledger->lock);
		errno = save;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("dpmo: could not write to the privacy ledger (nothing was charged): %m")));
	}
	ledger->size += DP_LEDGER_RECORD_SIZE;
	ledger->next_seq++;
	if (anchor_write(r->seq, r->crc, ledger->timeline) != 0)
		ereport(LOG_SERVER_ONLY,
				(errcode_for_file_access(),
				 errmsg("dpmo: could not update the privacy ledger's anchor %s after record %llu: %m",
						ANCHOR_FILE, (unsigned long long) r->seq)));
}

/*
 * Appends r (version 2), preceded by the file's format record when it has none yet: a server built before
 * version 2 then stops at the format record and refuses the ledger (dp_ledger.h) instead of cutting off a
 * version-2 last record as torn.
 */
static void
ledger_append_locked(dp_ledger_record *r, const char *fname)
{
	if (!ledger->format2)
	{
		dp_ledger_record f;

		memset(&f, 0, sizeof f);
		f.type = DP_LEDGER_FORMAT;
		append_one_locked(&f, fname);
		ledger->format2 = true;
	}
	append_one_locked(r, fname);
}

typedef struct GrantRef
{
	uint32		id;
	Oid			role;
	char		dataset[DP_LEDGER_NAME];
} GrantRef;

/*
 * The grants that bind the session user for the current dataset: its own and those of every role it is a
 * member of (directly or not, whatever INHERIT says), for this dataset or for every dataset.
 */
static int
applicable_grants(Oid user, const char *dataset, uint32 *ids, int max, const char *fname)
{
	GrantRef   *refs;
	int			n,
				i,
				found = 0;

	refs = palloc(sizeof(GrantRef) * MAX_GRANTS);
	LWLockAcquire(ledger->lock, LW_SHARED);
	n = ledger->ngrants;
	for (i = 0; i < n; i++)
	{
		refs[i].id = ledger->grants[i].id;
		refs[i].role = ledger->grants[i].role;
		memcpy(refs[i].dataset, ledger->grants[i].dataset, DP_LEDGER_NAME);
	}
	LWLockRelease(ledger->lock);
	/* Membership needs the catalogs: resolved without the lock (grants are never removed). */
	for (i = 0; i < n; i++)
	{
		if (refs[i].dataset[0] != '\0' && strcmp(refs[i].dataset, dataset) != 0)
			continue;
		if (!is_member_of_role_nosuper(user, refs[i].role))
			continue;
		if (found == max)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s: more than %d privacy budgets apply to role \"%s\"", fname, max,
							GetUserNameFromId(user, false))));
		ids[found++] = refs[i].id;
	}
	pfree(refs);
	return found;
}

/* Charges ε to every grant that binds the session user, durably, or raises an ERROR charging nothing. */
static void
ledger_charge(const dp_params *p)
{
	const char *fname = dp_functions[p->function].name;
	Oid			user = GetSessionUserId();
	const char *dataset = current_dataset();
	uint32		ids[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
	dpmo_budget next[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
	int			n,
				i,
				short_i = -1;
	dp_ledger_record rec;
	char	   *user_name;

	ledger_require(fname, false);
	/* Opened first: the grant ids found below belong to the file's generation, checked under the lock. */
	ledger_file(fname);
	n = applicable_grants(user, dataset, ids, DP_LEDGER_MAX_GRANTS_PER_CHARGE, fname);
	user_name = GetUserNameFromId(user, false);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: no privacy budget applies to role \"%s\"%s%s%s", fname, user_name,
						dataset[0] ? " for dataset \"" : "", dataset, dataset[0] ? "\"" : ""),
				 errhint("A superuser grants one with dp_budget_grant().")));

	memset(&rec, 0, sizeof rec);
	rec.type = DP_LEDGER_CHARGE;
	rec.epsilon = p->epsilon;
	rec.delta = p->delta;
	rec.role = user;
	rec.database = MyDatabaseId;
	rec.ngrants = (uint32) n;
	memcpy(rec.grants, ids, sizeof(uint32) * n);
	dp_ledger_set_name(rec.role_name, user_name);
	dp_ledger_set_name(rec.dataset, dataset);
	dp_mechanism_label(p, rec.mechanism, sizeof rec.mechanism);

	LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
	ledger_check_locked(fname);
	for (i = 0; i < n; i++)
	{
		next[i] = ledger->grants[ids[i] - 1].budget;
		if (dpmo_budget_charge_approx(&next[i], p->epsilon, p->delta) != DPMO_OK && short_i < 0)
			short_i = i;
	}
	if (short_i >= 0)
	{
		LedgerGrant g = ledger->grants[ids[short_i] - 1];
		double		left = 0,
					dleft = 0;
		char		lft[40],
					dl[40],
					dt[40],
					dpart[100] = "",
					msg[DP_MSG_LEN];
		bool		no_delta;

		LWLockRelease(ledger->lock);
		dpmo_budget_remaining_approx(&g.budget, &left, &dleft);
		no_delta = p->delta > 0 && g.budget.delta_total == 0;
		dp_budget_refusal(msg, sizeof msg, fname, no_delta, p->epsilon, p->delta, left, dleft);
		dp_format_double(left, lft, sizeof lft);
		if (g.budget.delta_total > 0)
		{
			dp_format_double(dleft, dl, sizeof dl);
			dp_format_double(g.budget.delta_total, dt, sizeof dt);
			snprintf(dpart, sizeof dpart, ", and delta %s left of %s", dl, dt);
		}
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s", msg),
				 errdetail("The budget granted to role \"%s\"%s%s%s has %s left of %g%s.",
						   GetUserNameFromId(g.role, true) ? GetUserNameFromId(g.role, true) : "?",
						   g.dataset[0] ? " for dataset \"" : "", g.dataset, g.dataset[0] ? "\"" : "",
						   lft, g.budget.total, dpart)));
	}
	ledger_append_locked(&rec, fname);
	for (i = 0; i < n; i++)
	{
		ledger->pending_before[i] = ledger->grants[ids[i] - 1].budget;	/* as replay notes it */
		ledger->grants[ids[i] - 1].budget = next[i];
	}
	ledger->pending_charge = rec;
	ledger->pending = true;
	my_charge_seq = rec.seq;
	LWLockRelease(ledger->lock);
}

/*
 * With the lock held in exclusive mode: appends r (its seq set here) for a refund, like append_one_locked
 * but without raising an ERROR (the result the charge paid for is ready: a failed refund keeps the full
 * charge, the safe side). False when nothing was written; a failed fdatasync PANICs, as for every record.
 */
static bool
append_refund_locked(dp_ledger_record *r)
{
	struct stat st;
	int			rc;

	if (fstat(ledger_fd, &st) != 0 || st.st_size < ledger->size)
		return false;			/* the next charge finds out and refuses */
	rc = append_stamped_locked(ledger_fd, r);
	if (rc != 0)
	{
		ereport(LOG_SERVER_ONLY,
				(errcode_for_file_access(),
				 errmsg("dpmo: could not write a refund to the privacy ledger (the full charge stays): %m")));
		return false;
	}
	ledger->size += DP_LEDGER_RECORD_SIZE;
	ledger->next_seq++;
	if (anchor_write(r->seq, r->crc, ledger->timeline) != 0)
		ereport(LOG_SERVER_ONLY,
				(errcode_for_file_access(),
				 errmsg("dpmo: could not update the privacy ledger's anchor %s after record %llu: %m",
						ANCHOR_FILE, (unsigned long long) r->seq)));
	return true;
}

/*
 * Pay what you get (dp_discover_top_k), after a successful run: settles this backend's last charge at
 * (epsilon, delta), what the run spent, with a refund record (preceded by the file's format-3 record when
 * it has none; dp_ledger.h) — only while that charge is still the ledger's last record, in the same file
 * generation and timeline, and when the grants' budgets before the charge can pay (epsilon, delta).
 * Otherwise nothing is written and the full charge stays. Never raises an ERROR.
 */
static void
ledger_refund(double epsilon, double delta)
{
	uint64		mine = my_charge_seq;
	dp_ledger_record rec;
	dpmo_budget after[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
	uint32		i;

	my_charge_seq = 0;			/* one refund per charge, whatever happens below */
	if (mine == 0 || ledger == NULL || ledger_fd < 0)
		return;
	LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
	if (!ledger->ok || ledger_fd_generation != ledger->generation ||
		ledger->timeline != GetWALInsertionTimeLine() || !ledger->pending ||
		ledger->pending_charge.seq != mine || ledger->next_seq != mine + 1)
	{
		LWLockRelease(ledger->lock);
		return;
	}
	dp_ledger_refund_record(&ledger->pending_charge, epsilon, delta, &rec);
	{
		bool		had3 = ledger->format3;

		ledger->format3 = true; /* for the check: appended below when missing */
		if (!ledger_settle(ledger, &rec, after))
		{
			ledger->format3 = had3;
			LWLockRelease(ledger->lock);
			return;
		}
		ledger->format3 = had3;
	}
	if (!ledger->format3)
	{
		dp_ledger_record f;

		memset(&f, 0, sizeof f);
		f.type = DP_LEDGER_FORMAT3;
		if (!append_refund_locked(&f))
		{
			LWLockRelease(ledger->lock);
			return;
		}
		ledger->format3 = true;
	}
	if (append_refund_locked(&rec))
	{
		for (i = 0; i < rec.ngrants; i++)
			ledger->grants[rec.grants[i] - 1].budget = after[i];
		ledger->pending = false;
	}
	LWLockRelease(ledger->lock);
}


/* ------------------------------------------------------------------------------------------------ */
/* Who pays: contexts in which no role can be charged correctly                                      */
/* ------------------------------------------------------------------------------------------------ */

/*
 * Trigger functions (row, statement, constraint and event triggers, deferred or not) running in this
 * backend: the calls are kept on a stack by the function manager hook below, which PostgreSQL calls around
 * every call of a function for which needs_fmgr_hook says yes (here: those returning trigger or
 * event_trigger). The stack holds the FmgrInfo of each call, so that the end of a call (also its abort,
 * while an error unwinds) is matched without a catalog lookup.
 */
static FmgrInfo **trigger_calls = NULL;
static int	trigger_depth = 0;
static int	trigger_calls_cap = 0;
static needs_fmgr_hook_type prev_needs_fmgr_hook = NULL;
static fmgr_hook_type prev_fmgr_hook = NULL;

static bool
is_trigger_function(Oid fn)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	bool		trigger = false;

	if (HeapTupleIsValid(tup))
	{
		Oid			rettype = ((Form_pg_proc) GETSTRUCT(tup))->prorettype;

		trigger = rettype == TRIGGEROID || rettype == EVENT_TRIGGEROID;
		ReleaseSysCache(tup);
	}
	return trigger;
}

static bool
dpmo_needs_fmgr_hook(Oid fn)
{
	if (prev_needs_fmgr_hook && prev_needs_fmgr_hook(fn))
		return true;
	return is_trigger_function(fn);
}

/*
 * FHET_START comes before the function runs, and exactly one of FHET_END, FHET_ABORT after it, in nested
 * (last in, first out) order; an ERROR raised at FHET_START gets neither, so a call is pushed only once the
 * previous hook returned, and popped before the previous hook is called at its end.
 */
static void
dpmo_fmgr_hook(FmgrHookEventType event, FmgrInfo *flinfo, Datum *arg)
{
	if (event == FHET_START)
	{
		if (prev_fmgr_hook)
			prev_fmgr_hook(event, flinfo, arg);
		if (!is_trigger_function(flinfo->fn_oid))
			return;
		if (trigger_depth == trigger_calls_cap)
		{
			int			cap = trigger_calls_cap > 0 ? trigger_calls_cap * 2 : 16;

			trigger_calls = trigger_calls == NULL
				? MemoryContextAlloc(TopMemoryContext, sizeof(FmgrInfo *) * cap)
				: repalloc(trigger_calls, sizeof(FmgrInfo *) * cap);
			trigger_calls_cap = cap;
		}
		trigger_calls[trigger_depth++] = flinfo;
		return;
	}
	if (trigger_depth > 0 && trigger_calls[trigger_depth - 1] == flinfo)
		trigger_depth--;
	if (prev_fmgr_hook)
		prev_fmgr_hook(event, flinfo, arg);
}

/* No trigger runs once the top-level transaction has ended: a safety net for the count. */
static void
dpmo_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE)
		trigger_depth = 0;
}

/*
 * The ledger charges the session user: the role whose statement the selection is part of and whose client
 * receives the result. Where that is not so, the selection is refused, before anything is charged:
 *   - in any process but a client backend (autovacuum workers, background and parallel workers, WAL
 *     senders): nobody's statement runs there; autovacuum's session user is the bootstrap superuser;
 *   - in a security-restricted operation (ANALYZE and autovacuum, VACUUM FULL, CLUSTER, CREATE INDEX,
 *     REINDEX, CREATE / REFRESH MATERIALIZED VIEW): PostgreSQL runs the table owner's expressions (index
 *     expressions, expression statistics, a view's query) on behalf of whoever started the operation, and
 *     their results go to catalogs (pg_stats_ext_exprs, an index, a materialised view), not to a client;
 *   - in a trigger: its result reaches the trigger's author, not the role whose statement fired it.
 * InLocalUserIdChange() is no criterion: every SECURITY DEFINER function, the recommended wrappers
 * included, runs with it set.
 */
static void
refuse_foreign_context(const char *fname)
{
	Oid			user;
	int			sec;

	if (IsParallelWorker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s: a private selection cannot be finalised in a parallel worker", fname)));
	if (MyBackendType != B_BACKEND || IsAutoVacuumWorkerProcess())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: private selections are refused outside client sessions (here: %s); nothing was charged",
						fname, GetBackendTypeDesc(MyBackendType))));
	GetUserIdAndSecContext(&user, &sec);
	if (sec & SECURITY_RESTRICTED_OPERATION)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: private selections are refused in security-restricted operations (ANALYZE, VACUUM, CLUSTER, CREATE INDEX, REINDEX, materialized views); nothing was charged",
						fname)));
	if (trigger_depth > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: private selections are refused in triggers; nothing was charged", fname),
				 errdetail("A trigger's result reaches the trigger's author, not the role whose statement fired it and would pay.")));
}

/* ------------------------------------------------------------------------------------------------ */
/* Group budgets: nobody but a superuser takes a role out of a budget's reach                       */
/* ------------------------------------------------------------------------------------------------ */

static ProcessUtility_hook_type prev_process_utility = NULL;

typedef struct Binding
{
	Oid			member;
	Oid			granted;
	const char *granted_name;	/* as it was before the statement */
} Binding;

/* Statements that can end a membership: REVOKE role, ALTER GROUP ... DROP USER, DROP ROLE. */
static bool
may_end_membership(Node *stmt)
{
	if (IsA(stmt, GrantRoleStmt))
		return !((GrantRoleStmt *) stmt)->is_grant;
	if (IsA(stmt, AlterRoleStmt))
		return ((AlterRoleStmt *) stmt)->action < 0;
	return IsA(stmt, DropRoleStmt);
}

/* Every (role, role holding a grant) pair such that the first is a member of the second, now. */
static Binding *
budget_bindings(int *count)
{
	Oid		   *granted = palloc(sizeof(Oid) * MAX_GRANTS);
	const char **names;
	int			ngranted = 0,
				i,
				j,
				n = 0,
				cap = 64;
	Binding    *out = palloc(sizeof(Binding) * cap);
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;

	LWLockAcquire(ledger->lock, LW_SHARED);
	for (i = 0; i < ledger->ngrants; i++)
	{
		for (j = 0; j < ngranted && granted[j] != ledger->grants[i].role; j++)
			;
		if (j == ngranted)
			granted[ngranted++] = ledger->grants[i].role;
	}
	LWLockRelease(ledger->lock);
	names = palloc(sizeof(char *) * Max(ngranted, 1));
	for (j = 0; j < ngranted; j++)
		names[j] = GetUserNameFromId(granted[j], true);
	if (ngranted > 0)
	{
		rel = table_open(AuthIdRelationId, AccessShareLock);
		scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
		while ((tup = systable_getnext(scan)) != NULL)
		{
			Oid			member = ((Form_pg_authid) GETSTRUCT(tup))->oid;

			for (j = 0; j < ngranted; j++)
			{
				if (!is_member_of_role_nosuper(member, granted[j]))
					continue;
				if (n == cap)
				{
					cap *= 2;
					out = repalloc(out, sizeof(Binding) * cap);
				}
				out[n].member = member;
				out[n].granted = granted[j];
				out[n].granted_name = names[j] ? names[j] : "?";
				n++;
			}
		}
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	pfree(granted);
	*count = n;
	return out;
}

/*
 * A budget granted to a role binds its members; a member must not escape it by leaving the role (a member
 * WITH ADMIN OPTION can revoke her own membership), nor by the removal of a role in between. Statements
 * that can end a membership are checked when run by anyone but a superuser: every pair (member, budgeted
 * role) that held before must hold after, or the statement fails and rolls back. A member that no longer
 * exists is no longer bound (its sessions cannot be charged: the charge looks up its name and fails).
 */
static void
dpmo_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					 ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;
	bool		check = ledger != NULL && may_end_membership(stmt) && !superuser();
	Binding    *before = NULL;
	int			n = 0,
				i;

	if (check)
		before = budget_bindings(&n);
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	if (!check)
		return;
	CommandCounterIncrement();
	for (i = 0; i < n; i++)
	{
		char	   *member;

		if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(before[i].member)) ||
			is_member_of_role_nosuper(before[i].member, before[i].granted))
			continue;
		member = GetUserNameFromId(before[i].member, false);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dpmo: role \"%s\" would no longer be a member of role \"%s\", whose privacy budget binds it",
						member, before[i].granted_name),
				 errdetail("Only a superuser can take a role out of the reach of a privacy budget.")));
	}
	pfree(before);
}

/* ------------------------------------------------------------------------------------------------ */
/* Budget administration (superusers) and inspection                                                 */
/* ------------------------------------------------------------------------------------------------ */

static void
require_superuser(const char *fname)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: only a superuser can grant privacy budgets", fname)));
}

static const char *
dataset_arg(FunctionCallInfo fcinfo, int i, const char *fname)
{
	char	   *d;

	if (PG_NARGS() <= i || PG_ARGISNULL(i))
		return "";
	d = text_to_cstring(PG_GETARG_TEXT_PP(i));
	if (strlen(d) >= DP_LEDGER_NAME)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: a dataset label has at most %d bytes", fname, DP_LEDGER_NAME - 1)));
	return d;
}

static Datum
grant_or_top_up(FunctionCallInfo fcinfo, bool top_up)
{
	const char *fname = top_up ? "dp_budget_top_up" : "dp_budget_grant";
	Oid			role;
	double		eps,
				delta;
	const char *dataset;
	char	   *role_name;
	LedgerGrant *g;
	dp_ledger_record rec;
	double		total,
				dtotal;

	require_superuser(fname);
	ledger_require(fname, false);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: the role, epsilon and delta must not be NULL", fname)));
	role = PG_GETARG_OID(0);
	eps = PG_GETARG_FLOAT8(1);
	dataset = dataset_arg(fcinfo, 2, fname);
	role_name = OidIsValid(role) ? GetUserNameFromId(role, true) : NULL;
	if (role_name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("%s: role %u does not exist", fname, role)));
	if (!(isfinite(eps) && eps > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: epsilon must be a finite number greater than zero", fname)));
	delta = PG_GETARG_FLOAT8(3);
	if (!(delta >= 0 && delta < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: delta must be a number from 0 (included) to 1 (excluded)", fname)));
	delta += 0.0;				/* -0 is +0 */

	memset(&rec, 0, sizeof rec);
	rec.type = top_up ? DP_LEDGER_TOP_UP : DP_LEDGER_GRANT;
	rec.epsilon = eps;
	rec.delta = delta;
	rec.role = role;
	dp_ledger_set_name(rec.role_name, role_name);
	dp_ledger_set_name(rec.dataset, dataset);

	ledger_file(fname);
	LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
	ledger_check_locked(fname);
	g = find_grant(ledger, role, dataset);
	if (top_up)
	{
		if (g == NULL)
		{
			LWLockRelease(ledger->lock);
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("%s: role \"%s\" has no budget%s%s%s to top up", fname, role_name,
							dataset[0] ? " for dataset \"" : "", dataset, dataset[0] ? "\"" : ""),
					 errhint("Grant one with dp_budget_grant().")));
		}
		total = add_down(g->budget.total, eps);
		dtotal = add_down(g->budget.delta_total, delta);
		if (!isfinite(total))
		{
			LWLockRelease(ledger->lock);
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s: the total would not be finite", fname)));
		}
		if (!(dtotal < 1))
		{
			LWLockRelease(ledger->lock);
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s: the total delta would not be below 1", fname)));
		}
		rec.grant_id = g->id;
		ledger_append_locked(&rec, fname);
		g->budget.total = total;
		g->budget.delta_total = dtotal;
	}
	else
	{
		if (g != NULL)
		{
			LWLockRelease(ledger->lock);
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("%s: role \"%s\" already has a budget%s%s%s", fname, role_name,
							dataset[0] ? " for dataset \"" : "", dataset, dataset[0] ? "\"" : ""),
					 errhint("Raise it with dp_budget_top_up().")));
		}
		if (ledger->ngrants >= MAX_GRANTS)
		{
			LWLockRelease(ledger->lock);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s: the ledger holds %d grants, its maximum", fname, MAX_GRANTS)));
		}
		rec.grant_id = (uint16) (ledger->ngrants + 1);
		ledger_append_locked(&rec, fname);
		g = &ledger->grants[ledger->ngrants];
		g->role = role;
		g->id = rec.grant_id;
		strlcpy(g->dataset, dataset, DP_LEDGER_NAME);
		dpmo_budget_init_approx(&g->budget, eps, delta);
		ledger->ngrants++;
		total = eps;
	}
	LWLockRelease(ledger->lock);
	PG_RETURN_FLOAT8(total);
}

PG_FUNCTION_INFO_V1(dpmo_pg_budget_grant);
Datum
dpmo_pg_budget_grant(PG_FUNCTION_ARGS)
{
	return grant_or_top_up(fcinfo, false);
}

PG_FUNCTION_INFO_V1(dpmo_pg_budget_top_up);
Datum
dpmo_pg_budget_top_up(PG_FUNCTION_ARGS)
{
	return grant_or_top_up(fcinfo, true);
}

/*
 * dp_budget_remaining() and dp_budget_remaining_delta(): the ε (δ) the session user may still spend on the
 * current dataset: the least left among the grants that bind it (0 without grant; δ 0 when one of them is
 * pure-ε).
 */
static double
budget_remaining(const char *fname, bool delta)
{
	uint32		ids[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
	int			n,
				i;
	double		least = INFINITY;

	ledger_require(fname, false);
	ledger_file(fname);
	n = applicable_grants(GetSessionUserId(), current_dataset(), ids, DP_LEDGER_MAX_GRANTS_PER_CHARGE, fname);
	LWLockAcquire(ledger->lock, LW_SHARED);
	if (ledger_fd_generation != ledger->generation)
	{
		LWLockRelease(ledger->lock);
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("%s: the privacy ledger was re-created meanwhile", fname),
				 errhint("Retry.")));
	}
	for (i = 0; i < n; i++)
	{
		double		r = 0,
					d = 0;

		dpmo_budget_remaining_approx(&ledger->grants[ids[i] - 1].budget, &r, &d);
		least = Min(least, delta ? d : r);
	}
	LWLockRelease(ledger->lock);
	return n == 0 ? 0.0 : least;
}

PG_FUNCTION_INFO_V1(dpmo_pg_budget_remaining);
Datum
dpmo_pg_budget_remaining(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(budget_remaining("dp_budget_remaining", false));
}

PG_FUNCTION_INFO_V1(dpmo_pg_budget_remaining_delta);
Datum
dpmo_pg_budget_remaining_delta(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(budget_remaining("dp_budget_remaining_delta", true));
}

/* dp_budget_grants(): every grant (EXECUTE revoked from PUBLIC). */
PG_FUNCTION_INFO_V1(dpmo_pg_budget_grants);
Datum
dpmo_pg_budget_grants(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LedgerGrant *copy;
	int			n,
				i;

	ledger_require("dp_budget_grants", true);
	InitMaterializedSRF(fcinfo, 0);
	copy = palloc(sizeof(LedgerGrant) * MAX_GRANTS);
	LWLockAcquire(ledger->lock, LW_SHARED);
	n = ledger->ngrants;
	memcpy(copy, ledger->grants, sizeof(LedgerGrant) * n);
	LWLockRelease(ledger->lock);
	for (i = 0; i < n; i++)
	{
		Datum		v[9];
		bool		nulls[9] = {false, false, false, false, false, false, false, false, false};
		char	   *name = GetUserNameFromId(copy[i].role, true);
		double		left = 0,
					dleft = 0;

		dpmo_budget_remaining_approx(&copy[i].budget, &left, &dleft);
		v[0] = Int32GetDatum((int32) copy[i].id);
		if (name)
			v[1] = DirectFunctionCall1(namein, CStringGetDatum(name));
		else
			nulls[1] = true;
		if (copy[i].dataset[0])
			v[2] = CStringGetTextDatum(copy[i].dataset);
		else
			nulls[2] = true;
		v[3] = Float8GetDatum(copy[i].budget.total);
		v[4] = Float8GetDatum(copy[i].budget.spent);
		v[5] = Float8GetDatum(left);
		v[6] = Float8GetDatum(copy[i].budget.delta_total);
		v[7] = Float8GetDatum(copy[i].budget.delta_spent);
		v[8] = Float8GetDatum(dleft);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

/* dp_ledger(): every record of the ledger file, oldest first (EXECUTE revoked from PUBLIC). */
PG_FUNCTION_INFO_V1(dpmo_pg_ledger);
Datum
dpmo_pg_ledger(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		size,
				off;
	int			fd;
	static const char *const kinds[] = {"", "grant", "top-up", "charge", "created", "format", "refund", "format"};

	ledger_require("dp_ledger", true);
	InitMaterializedSRF(fcinfo, 0);
	fd = ledger_file("dp_ledger");
	LWLockAcquire(ledger->lock, LW_SHARED);
	size = ledger->size;		/* the records before it never change */
	LWLockRelease(ledger->lock);
	for (off = 0; off < size; off += DP_LEDGER_RECORD_SIZE)
	{
		dp_ledger_record r;
		unsigned char raw[DP_LEDGER_RECORD_SIZE];
		Datum		v[10];
		bool		nulls[10] = {false, false, false, false, false, false, false, false, false, false};
		Datum		g[DP_LEDGER_MAX_GRANTS_PER_CHARGE];
		uint32		i;
		char	   *dbname;

		if (pg_pread(fd, raw, sizeof raw, (off_t) off) != (ssize_t) sizeof raw || !dp_ledger_decode(raw, &r))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("dp_ledger: record at byte %lld cannot be read", (long long) off)));
		v[0] = Int64GetDatum((int64) r.seq);
		v[1] = TimestampTzGetDatum((TimestampTz) (r.time_us -
												 (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY));
		v[2] = CStringGetTextDatum(kinds[r.type]);
		v[3] = DirectFunctionCall1(namein, CStringGetDatum(r.role_name));
		if (r.dataset[0])
			v[4] = CStringGetTextDatum(r.dataset);
		else
			nulls[4] = true;
		v[5] = Float8GetDatum(r.epsilon);
		v[9] = Float8GetDatum(r.delta);
		if (r.type == DP_LEDGER_CHARGE || r.type == DP_LEDGER_REFUND)
		{
			v[6] = CStringGetTextDatum(r.mechanism);
			dbname = get_database_name(r.database);
			if (dbname)
				v[7] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
			else
				nulls[7] = true;
			for (i = 0; i < r.ngrants; i++)
				g[i] = Int32GetDatum((int32) r.grants[i]);
			v[8] = PointerGetDatum(construct_array(g, (int) r.ngrants, INT4OID, 4, true, TYPALIGN_INT));
		}
		else if (r.type == DP_LEDGER_FORMAT || r.type == DP_LEDGER_FORMAT3)
		{
			v[6] = CStringGetTextDatum(r.mechanism);
			nulls[7] = nulls[8] = true;
		}
		else
		{
			nulls[6] = nulls[7] = true;
			g[0] = Int32GetDatum((int32) r.grant_id);
			v[8] = PointerGetDatum(construct_array(g, 1, INT4OID, 4, true, TYPALIGN_INT));
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

static void
require_ledger_admin(const char *fname)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: only a superuser can create or accept the privacy ledger", fname)));
	if (!preloaded || ledger == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s: the privacy ledger is not loaded: add dpmo to shared_preload_libraries and restart the server",
						fname)));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s: the privacy ledger cannot be changed on a server in recovery", fname)));
}

/*
 * dp_ledger_init(): superusers only. Creates a new, empty ledger file and its anchor, and makes the server
 * use it. Refused when a file exists (it is never overwritten): the only way to start budgets from zero is
 * to remove the old file with the server stopped and call this, explicitly.
 */
PG_FUNCTION_INFO_V1(dpmo_pg_ledger_init);
Datum
dpmo_pg_ledger_init(PG_FUNCTION_ARGS)
{
	const char *fname = "dp_ledger_init";
	int			fd;
	struct stat st;
	uint32		timeline;
	uint64		had;

	require_ledger_admin(fname);
	timeline = GetWALInsertionTimeLine();
	LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
	fd = BasicOpenFile(LEDGER_FILE, O_RDWR | O_CREAT | O_EXCL | PG_BINARY);
	if (fd < 0)
	{
		int			save = errno;

		LWLockRelease(ledger->lock);
		errno = save;
		if (save == EEXIST)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("%s: the privacy ledger exists (%s in the data directory); it is never overwritten",
							fname, LEDGER_FILE),
					 errhint("To start every budget from zero, stop the server, move the file away, start it and call %s() again.",
							 fname)));
		ereport(ERROR, (errcode_for_file_access(), errmsg("%s: could not create %s: %m", fname, LEDGER_FILE)));
	}
	if (pg_fsync(fd) != 0 || fstat(fd, &st) != 0 || dp_ledger_sync_dir(LEDGER_FILE) != 0 ||
		anchor_write(0, 0, timeline) != 0)
	{
		int			save = errno;

		close(fd);
		unlink(LEDGER_FILE);
		LWLockRelease(ledger->lock);
		errno = save;
		ereport(ERROR, (errcode_for_file_access(), errmsg("%s: could not create the privacy ledger: %m", fname)));
	}
	close(fd);
	had = ledger->next_seq - 1;
	ledger->generation++;
	ledger->dev = st.st_dev;
	ledger->ino = st.st_ino;
	ledger->timeline = timeline;
	ledger->size = 0;
	ledger->next_seq = 1;
	ledger->format2 = false;	/* the new file gets its own format record */
	ledger->format3 = false;
	ledger->pending = false;
	ledger->ngrants = 0;
	memset(ledger->grants, 0, sizeof ledger->grants);
	ledger_set_problem(ledger, LEDGER_OK, "%s", "");
	LWLockRelease(ledger->lock);
	ereport(LOG,
			(errmsg("dpmo: role \"%s\" created a new, empty privacy ledger%s",
					GetUserNameFromId(GetUserId(), false),
					had > 0 ? " in place of one this server had replayed" : "")));
	PG_RETURN_VOID();
}

/*
 * dp_ledger_accept(): superusers only. Declares the ledger file, as the server replayed it, complete:
 * rewrites its anchor (records, last record, this cluster, this timeline) and lifts the refusal. For a
 * ledger out of step with its anchor only; a missing, damaged or replaced file is refused.
 */
PG_FUNCTION_INFO_V1(dpmo_pg_ledger_accept);
Datum
dpmo_pg_ledger_accept(PG_FUNCTION_ARGS)
{
	const char *fname = "dp_ledger_accept";
	uint32		timeline,
				crc;
	uint64		records;
	LedgerProblem problem;
	char		why[320];
	int			fd;

	require_ledger_admin(fname);
	timeline = GetWALInsertionTimeLine();
	LWLockAcquire(ledger->lock, LW_SHARED);
	problem = (LedgerProblem) ledger->problem;
	strlcpy(why, ledger->why, sizeof why);
	LWLockRelease(ledger->lock);
	if (problem != LEDGER_OK && problem != LEDGER_UNANCHORED)
		ledger_unusable(fname, problem, why);
	fd = ledger_file(fname);
	LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
	if (ledger->problem != problem || ledger_fd_generation != ledger->generation)
	{
		LWLockRelease(ledger->lock);
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("%s: the privacy ledger changed meanwhile; nothing was accepted", fname),
				 errhint("Retry.")));
	}
	records = ledger->next_seq - 1;
	if (!record_crc(fd, records, &crc) || anchor_write(records, crc, timeline) != 0)
	{
		int			save = errno;

		LWLockRelease(ledger->lock);
		errno = save;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("%s: could not write the privacy ledger's anchor: %m", fname)));
	}
	ledger->timeline = timeline;
	ledger_set_problem(ledger, LEDGER_OK, "%s", "");
	LWLockRelease(ledger->lock);
	ereport(LOG,
			(errmsg("dpmo: role \"%s\" accepted the privacy ledger as complete: %llu records, timeline %u%s%s",
					GetUserNameFromId(GetUserId(), false), (unsigned long long) records, timeline,
					problem == LEDGER_UNANCHORED ? "; it had been refused: " : "", problem == LEDGER_UNANCHORED ? why : "")));
	PG_RETURN_INT64((int64) records);
}

/* ------------------------------------------------------------------------------------------------ */
/* The generator                                                                                     */
/* ------------------------------------------------------------------------------------------------ */

static dpmo_rng session_rng;
static bool session_rng_ready = false;

/* This backend's ChaCha20 generator, seeded from pg_strong_random (32 bytes) on first use. */
static dpmo_rng *
rng_get(void)
{
	if (!session_rng_ready)
	{
		uint8_t		seed[32];

		if (!pg_strong_random(seed, sizeof seed))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("dpmo: could not obtain 32 random bytes to seed the generator")));
		if (dpmo_rng_init(&session_rng, DPMO_RNG_CHACHA20, seed) != DPMO_OK)
			elog(ERROR, "dpmo: could not seed the generator");
		explicit_bzero(seed, sizeof seed);
		session_rng_ready = true;
	}
	return &session_rng;
}

/*
 * For tests only, and not part of the extension's SQL: makes this backend's draws reproducible (ChaCha20
 * keyed by SHA-256 of the text). Runs only for a superuser on a server started with dpmo.test_seeding =
 * on (a postmaster setting); the test suite creates the SQL function itself.
 */
PG_FUNCTION_INFO_V1(dpmo_pg_seed);
Datum
dpmo_pg_seed(PG_FUNCTION_ARGS)
{
	text	   *t;
	pg_cryptohash_ctx *ctx;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (!preloaded || !guc_test_seeding || !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dp_seed: seeding is for tests only: it needs a superuser on a server started with dpmo.test_seeding = on")));
	t = PG_GETARG_TEXT_PP(0);
	ctx = pg_cryptohash_create(PG_SHA256);
	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof digest) < 0)
	{
		if (ctx)
			pg_cryptohash_free(ctx);
		elog(ERROR, "dp_seed: could not hash the seed");
	}
	pg_cryptohash_free(ctx);
	if (dpmo_rng_init(&session_rng, DPMO_RNG_CHACHA20, digest) != DPMO_OK)
		elog(ERROR, "dp_seed: could not seed the generator");
	session_rng_ready = true;
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dpmo_pg_version);
Datum
dpmo_pg_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(dpmo_version()));
}

/* ------------------------------------------------------------------------------------------------ */
/* Errors of the shared surface                                                                      */
/* ------------------------------------------------------------------------------------------------ */

static void raise_dp(const dp_error *err) pg_attribute_noreturn();

static void
raise_dp(const dp_error *err)
{
	int			code;

	switch (err->cls)
	{
		case DP_ERR_ARGUMENT:
			code = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case DP_ERR_NOMEM:
			code = ERRCODE_OUT_OF_MEMORY;
			break;
		default:
			code = ERRCODE_INTERNAL_ERROR;
			break;
	}
	ereport(ERROR, (errcode(code), errmsg_internal("%s", err->msg)));
	pg_unreachable();
}

static void *
pg_alloc(void *ctx, size_t bytes)
{
	return palloc_extended(bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
pg_free(void *ctx, void *p)
{
	pfree(p);
}

static const dp_alloc PG_ALLOC = {NULL, pg_alloc, pg_free};

/* ------------------------------------------------------------------------------------------------ */
/* Reading the arguments of a row                                                                    */
/* ------------------------------------------------------------------------------------------------ */

#define MAX_ARGS 11

/* Per call site (flinfo->fn_extra): which SQL function this is and the types of its arguments. */
typedef struct CallInfo
{
	const dp_function *f;
	int32		index;
	int			nargs;			/* SQL arguments (the state excluded) */
	Oid			types[MAX_ARGS];
} CallInfo;

static void refuse_window(void) pg_attribute_noreturn();

/* (A window aggregate's support functions cannot see which aggregate they serve: no name in the text.) */
static void
refuse_window(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("dpmo: a private selection cannot be used as a window function"),
			 errhint("Use it as a plain aggregate (with GROUP BY for one selection per group).")));
	pg_unreachable();
}

/* The name of argument i of f, from its signature (the optional last: options, mechanism or k_bar). */
static void
arg_name(const dp_function *f, int i, char *out, size_t size)
{
	const char *p = f->signature;
	int			j;
	size_t		len;

	if (i >= f->nargs)
	{
		strlcpy(out, f->kind == DP_DISCOVER ? "mechanism" : f->kind == DP_DISCOVER_TOP_K ? "k_bar" : "options",
				size);
		return;
	}
	for (j = 0; j < i && p != NULL; j++)
	{
		p = strchr(p, ',');
		if (p != NULL)
			p += 2;				/* ", " */
	}
	if (p == NULL)
	{
		snprintf(out, size, "argument %d", i + 1);
		return;
	}
	len = strcspn(p, ",");
	snprintf(out, size, "%.*s", (int) Min(len, size - 1), p);
}

/* The grouping columns of the aggregate's plan node (outer-plan attribute numbers), for reads_rows. */
typedef struct GroupKeys
{
	int			n;
	AttrNumber *cols;
} GroupKeys;

/* True when an expression reads the rows: a column other than a GROUP BY key of this aggregate (one
 * value per group, public by SQL.md's rule), a subquery (SubPlan or its PARAM_EXEC result), an aggregate
 * or a window function. */
static bool
reads_rows(Node *node, void *context)
{
	GroupKeys  *keys = context;

	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		int			i;

		for (i = 0; i < keys->n && v->varno == OUTER_VAR; i++)
			if (keys->cols[i] == v->varattno)
				return false;
		return true;
	}
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) || IsA(node, Aggref) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc) || IsA(node, SubLink))
		return true;
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN)
		return true;
	return expression_tree_walker(node, reads_rows, context);
}

/*
 * The public arguments (ε, k, weights, sensitivities, δ, L, C, lo, hi, k̄, options) must not depend on the
 * private rows: an expression over a column — or a subquery — would make a refusal of its value a free
 * answer about the data (SQL.md, "The group is a public argument"). Other engines can only check that
 * every row repeats the same value; PostgreSQL shows the planned call, so a public argument that reads
 * the rows (a column other than a GROUP BY key, a subquery, an aggregate, a window function) is refused.
 * Constants, query parameters ($n, PL/pgSQL variables, an SQL function's parameters), GROUP BY keys and
 * functions of them pass: a function the caller may call could read the data itself anyway. Checked at
 * the first row, from the plan alone, before anything is charged.
 */
static void
require_public_constants(FunctionCallInfo fcinfo, Aggref *agg, const dp_function *f)
{
	ListCell   *lc;
	int			i = 0;
	GroupKeys	keys = {0, NULL};

	if (fcinfo->context != NULL && IsA(fcinfo->context, AggState))
	{
		Agg		   *node = (Agg *) ((AggState *) fcinfo->context)->ss.ps.plan;

		/* Grouping sets run phases with other keys: only the plain GROUP BY's keys are trusted here. */
		if (node != NULL && node->groupingSets == NIL)
		{
			keys.n = node->numCols;
			keys.cols = node->grpColIdx;
		}
	}
	foreach(lc, agg->args)
	{
		Node	   *e = (Node *) lfirst_node(TargetEntry, lc)->expr;

		if (dp_is_public_arg(f, i) && reads_rows(e, &keys))
		{
			char		name[64];

			arg_name(f, i, name, sizeof name);
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: %s must not be computed from the rows (a column or a subquery): it is a public argument",
							f->name, name),
					 errdetail("Its refusals would answer questions about the data for free; nothing was charged."),
					 errhint("Write the value, pass it as a parameter ($1, a function's argument), or group by it.")));
		}
		i++;
	}
}

/* The SQL function behind this aggregate call (by the aggregate's name), cached per call site. */
static CallInfo *
call_info(FunctionCallInfo fcinfo, bool transition)
{
	CallInfo   *ci = (CallInfo *) fcinfo->flinfo->fn_extra;
	Aggref	   *agg;
	char	   *name;
	Oid			ext;
	int			i;

	if (ci != NULL)
		return ci;
	agg = AggGetAggref(fcinfo);
	if (agg == NULL)
		elog(ERROR, "dpmo: aggregate support function called outside a plain aggregate");
	name = get_func_name(agg->aggfnoid);
	ext = get_extension_oid("dpmo", true);
	if (!OidIsValid(ext) || getExtensionOfObject(ProcedureRelationId, agg->aggfnoid) != ext)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dpmo: \"%s\" is not one of the dpmo aggregates: the support functions serve those only",
						name ? name : "?")));
	ci = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallInfo));
	ci->f = name ? dp_function_find(name) : NULL;
	if (ci->f == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dpmo: \"%s\" is not one of the dpmo aggregates", name ? name : "?")));
	ci->index = (int32) (ci->f - dp_functions);
	if (transition)
	{
		require_public_constants(fcinfo, agg, ci->f);
		ci->nargs = PG_NARGS() - 1;
		if (ci->nargs > MAX_ARGS)
			elog(ERROR, "dpmo: too many arguments");
		for (i = 0; i < ci->nargs; i++)
			ci->types[i] = get_fn_expr_argtype(fcinfo->flinfo, i + 1);
	}
	fcinfo->flinfo->fn_extra = ci;
	return ci;
}

typedef struct PgReader
{
	FunctionCallInfo fcinfo;
	CallInfo   *ci;
	double	   *buf[MAX_ARGS];	/* arrays with NULL elements, copied with NaN in their place */
} PgReader;

static dp_arg_type
pg_type(void *ctx, int i)
{
	PgReader   *r = ctx;
	Oid			t = r->ci->types[i];

	if (r->fcinfo->args[i + 1].isnull)
		return DP_ARG_NULL;
	if (t == FLOAT8OID || t == INT8OID || t == INT4OID)
		return DP_ARG_NUMBER;
	if (t == FLOAT8ARRAYOID)
		return DP_ARG_ARRAY;
	if (t == TEXTOID)
		return DP_ARG_TEXT;
	return DP_ARG_OTHER;
}

static double
pg_number(void *ctx, int i)
{
	PgReader   *r = ctx;
	Datum		d = r->fcinfo->args[i + 1].value;

	switch (r->ci->types[i])
	{
		case INT8OID:
			return (double) DatumGetInt64(d);
		case INT4OID:
			return (double) DatumGetInt32(d);
		default:
			return DatumGetFloat8(d);
	}
}

static bool
pg_integer(void *ctx, int i, int64_t *out)
{
	PgReader   *r = ctx;
	Datum		d = r->fcinfo->args[i + 1].value;

	switch (r->ci->types[i])
	{
		case INT8OID:
			*out = DatumGetInt64(d);
			return true;
		case INT4OID:
			*out = DatumGetInt32(d);
			return true;
		default:
			return false;
	}
}

static dp_err_class
pg_array(void *ctx, int i, dp_array *out, dp_error *err)
{
	PgReader   *r = ctx;
	ArrayType  *a = DatumGetArrayTypeP(r->fcinfo->args[i + 1].value);
	int			nd = ARR_NDIM(a);
	int64		n;

	memset(out, 0, sizeof *out);
	if (ARR_ELEMTYPE(a) != FLOAT8OID || nd > 2)
		return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: arrays must be float8[] with at most two dimensions",
					   r->ci->f->name);
	out->ndim = nd;
	n = nd == 0 ? 0 : ArrayGetNItems(nd, ARR_DIMS(a));
	out->dims[0] = nd >= 1 ? ARR_DIMS(a)[0] : 0;
	out->dims[1] = nd == 2 ? ARR_DIMS(a)[1] : 0;
	out->len = n;
	if (!ARR_HASNULL(a))
	{
		out->vals = (const double *) ARR_DATA_PTR(a);
		return DP_OK;
	}
	{
		bits8	   *bitmap = ARR_NULLBITMAP(a);
		const double *src = (const double *) ARR_DATA_PTR(a);
		double	   *dst = palloc(sizeof(double) * Max(n, 1));
		int64		j;

		for (j = 0; j < n; j++)
		{
			if (bitmap[j / 8] & (1 << (j % 8)))
				dst[j] = *src++;
			else
			{
				dst[j] = NAN;
				out->has_null = true;
			}
		}
		r->buf[i] = dst;
		out->vals = dst;
	}
	return DP_OK;
}

static const char *
pg_text(void *ctx, int i, size_t *len)
{
	PgReader   *r = ctx;
	text	   *t = DatumGetTextPP(r->fcinfo->args[i + 1].value);

	*len = VARSIZE_ANY_EXHDR(t);
	return VARDATA_ANY(t);
}

/* ------------------------------------------------------------------------------------------------ */
/* Transition state                                                                                  */
/* ------------------------------------------------------------------------------------------------ */

/* The group's constants and size; serialised as is. */
typedef struct DpHeader
{
	dp_params	p;
	int64		n;
} DpHeader;

typedef struct DpState
{
	DpHeader	h;
	int64		cap;
	int64	   *ids;
	double	   *vals;			/* n × m */
	double	   *dels;			/* n × m × width (each row objective-major) */
} DpState;

/* Doubles per row: 0 while the group does not know its shape (dp_row_vals; those rows are NaN). */
static int64
row_vals(const DpHeader *h)
{
	return dp_row_vals(&h->p);
}

static int64
row_dels(const DpHeader *h)
{
	return dp_row_dels(&h->p);
}

static void *
huge_array(MemoryContext cx, void *old, int64 count, int64 per, size_t size)
{
	if (per == 0)
		return old;
	if (count < 1)
		count = 1;
	if ((uint64) count > MaxAllocHugeSize / ((uint64) per * size))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("dpmo: the group is too large")));
	if (old == NULL)
		return MemoryContextAllocHuge(cx, (Size) (count * per) * size);
	return repalloc_huge(old, (Size) (count * per) * size);
}

static void
grow(DpState *s, MemoryContext cx, int64 want)
{
	int64		cap;

	if (want <= s->cap)
		return;
	if (dp_is_discovery(&dp_functions[s->h.p.function]) && s->h.n > 0)
	{
		/* a full discovery buffer is compacted first (bounded memory: dp_discover_compact) */
		dp_error	err;
		int64_t		kept;
		int64		extra = want - s->h.n;

		if (dp_discover_compact(&s->h.p, s->h.n, s->ids, s->vals, &PG_ALLOC, &kept, &err) != DP_OK)
			raise_dp(&err);
		s->h.n = kept;
		want = kept + extra;
		if (dp_discover_next_cap(kept, s->cap, want) == s->cap)
			return;
		cap = dp_discover_next_cap(kept, s->cap, want);
		if (cap > DP_MAX_ROWS && want <= DP_MAX_ROWS)
			cap = DP_MAX_ROWS;
	}
	else
		cap = 0;
	if (want > DP_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s: a group has more than %lld candidates", dp_functions[s->h.p.function].name,
						(long long) DP_MAX_ROWS)));
	if (cap == 0)
	{
		cap = s->cap > 0 ? s->cap : 64;
		while (cap < want)
			cap *= 2;
	}
	s->ids = huge_array(cx, s->ids, cap, 1, sizeof(int64));
	s->vals = huge_array(cx, s->vals, cap, row_vals(&s->h), sizeof(double));
	s->dels = huge_array(cx, s->dels, cap, row_dels(&s->h), sizeof(double));
	s->cap = cap;
}

/*
 * The group learnt its shape (m, or the δ width) after rows whose arrays were NULL: those rows had no
 * storage, and their values are NaN (the public rule: lowest score, δ = Δ). Called with the strides from
 * before the shape changed.
 */
static void
restride(DpState *s, MemoryContext cx, int64 old_vals, int64 old_dels)
{
	if (row_vals(&s->h) != old_vals && s->cap > 0)
	{
		s->vals = huge_array(cx, s->vals, s->cap, row_vals(&s->h), sizeof(double));
		dp_fill_nan(s->vals, s->h.n * row_vals(&s->h));
	}
	if (row_dels(&s->h) != old_dels && s->cap > 0)
	{
		s->dels = huge_array(cx, s->dels, s->cap, row_dels(&s->h), sizeof(double));
		dp_fill_nan(s->dels, s->h.n * row_dels(&s->h));
	}
}

/* The transition function of every dpmo aggregate: one row, one candidate. */
PG_FUNCTION_INFO_V1(dpmo_pg_trans);
Datum
dpmo_pg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcx;
	int			how = AggCheckCallContext(fcinfo, &aggcx);
	CallInfo   *ci;
	PgReader	rd;
	dp_reader	reader;
	dp_params	row;
	dp_error	err;
	DpState    *s;
	int64_t		id = 0;

	if (how == 0)
		elog(ERROR, "dpmo: transition function called outside an aggregate");
	if (how == AGG_CONTEXT_WINDOW)
		refuse_window();
	ci = call_info(fcinfo, true);
	memset(&rd, 0, sizeof rd);
	rd.fcinfo = fcinfo;
	rd.ci = ci;
	reader.ctx = &rd;
	reader.nargs = ci->nargs;
	reader.type = pg_type;
	reader.number = pg_number;
	reader.integer = pg_integer;
	reader.array = pg_array;
	reader.text = pg_text;
	reader.per_value_types = false;

	if (dp_read_params(ci->f, ci->index, &reader, &row, &err) != DP_OK)
		raise_dp(&err);
	s = PG_ARGISNULL(0) ? NULL : (DpState *) PG_GETARG_POINTER(0);
	if (s == NULL)
	{
		s = MemoryContextAllocZero(aggcx, sizeof(DpState));
		s->h.p = row;
	}
	else
	{
		int64		old_vals = row_vals(&s->h),
					old_dels = row_dels(&s->h);

		if (dp_params_merge(ci->f, &s->h.p, &row, &err) != DP_OK)
			raise_dp(&err);
		restride(s, aggcx, old_vals, old_dels);
	}
	/* discovery: an event with a NULL unit or item is dropped (the public rule), its arguments checked */
	if (dp_row_dropped(ci->f, &reader))
		PG_RETURN_POINTER(s);
	grow(s, aggcx, s->h.n + 1);
	if (dp_read_row(ci->f, &s->h.p, &reader, &id,
					row_vals(&s->h) ? s->vals + s->h.n * row_vals(&s->h) : NULL,
					row_dels(&s->h) ? s->dels + s->h.n * row_dels(&s->h) : NULL, &err) != DP_OK)
		raise_dp(&err);
	s->ids[s->h.n++] = id;
	PG_RETURN_POINTER(s);
}

/* ------------------------------------------------------------------------------------------------ */
/* Combine, serialize, deserialize (parallel partial aggregation)                                    */
/* ------------------------------------------------------------------------------------------------ */

PG_FUNCTION_INFO_V1(dpmo_pg_combine);
Datum
dpmo_pg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcx;
	DpState    *a = PG_ARGISNULL(0) ? NULL : (DpState *) PG_GETARG_POINTER(0);
	DpState    *b = PG_ARGISNULL(1) ? NULL : (DpState *) PG_GETARG_POINTER(1);
	dp_error	err;
	int64		n;

	if (!AggCheckCallContext(fcinfo, &aggcx))
		elog(ERROR, "dpmo: combine function called outside an aggregate");
	/*
	 * A partial state without rows exists only for discovery (every event of the part dropped): its
	 * constants still make the group, so that a parallel plan charges and releases as a serial one does.
	 */
	if (b == NULL || (b->h.n == 0 && a != NULL && !dp_is_discovery(&dp_functions[a->h.p.function])))
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
	{
		a = MemoryContextAllocZero(aggcx, sizeof(DpState));
		a->h = b->h;
		a->h.n = 0;
	}
	else
	{
		int64		old_vals = row_vals(&a->h),
					old_dels = row_dels(&a->h);

		if (dp_params_merge(&dp_functions[a->h.p.function], &a->h.p, &b->h.p, &err) != DP_OK)
			raise_dp(&err);
		restride(a, aggcx, old_vals, old_dels);
	}
	n = b->h.n;
	if (n == 0)
		PG_RETURN_POINTER(a);
	grow(a, aggcx, a->h.n + n);
	memcpy(a->ids + a->h.n, b->ids, sizeof(int64) * n);
	/* b's strides are a's or 0 (b never saw the shape: its rows are NaN) */
	if (row_vals(&a->h) > 0)
	{
		double	   *dst = a->vals + a->h.n * row_vals(&a->h);

		if (row_vals(&b->h) == row_vals(&a->h))
			memcpy(dst, b->vals, sizeof(double) * n * row_vals(&a->h));
		else
			dp_fill_nan(dst, n * row_vals(&a->h));
	}
	if (row_dels(&a->h) > 0)
	{
		double	   *dst = a->dels + a->h.n * row_dels(&a->h);

		if (row_dels(&b->h) == row_dels(&a->h))
			memcpy(dst, b->dels, sizeof(double) * n * row_dels(&a->h));
		else
			dp_fill_nan(dst, n * row_dels(&a->h));
	}
	a->h.n += n;
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(dpmo_pg_serialize);
Datum
dpmo_pg_serialize(PG_FUNCTION_ARGS)
{
	DpState    *s;
	Size		ids,
				vals,
				dels,
				total;
	bytea	   *out;
	char	   *p;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "dpmo: serialize function called outside an aggregate");
	s = (DpState *) PG_GETARG_POINTER(0);
	ids = (Size) s->h.n * sizeof(int64);
	vals = (Size) (s->h.n * row_vals(&s->h)) * sizeof(double);
	dels = (Size) (s->h.n * row_dels(&s->h)) * sizeof(double);
	total = VARHDRSZ + sizeof(DpHeader) + ids + vals + dels;
	if (total > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("dpmo: a partial aggregate state of %lld candidates is too large to pass between "
						"parallel processes", (long long) s->h.n),
				 errhint("SET max_parallel_workers_per_gather = 0 for this query.")));
	out = palloc(total);
	SET_VARSIZE(out, total);
	p = VARDATA(out);
	memcpy(p, &s->h, sizeof(DpHeader));
	p += sizeof(DpHeader);
	if (ids)
		memcpy(p, s->ids, ids);
	p += ids;
	if (vals)
		memcpy(p, s->vals, vals);
	p += vals;
	if (dels)
		memcpy(p, s->dels, dels);
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(dpmo_pg_deserialize);
Datum
dpmo_pg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	DpState    *s;
	const char *p;
	Size		len;
	int64		n;
	const dp_params *q;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "dpmo: deserialize function called outside an aggregate");
	in = PG_GETARG_BYTEA_PP(0);
	len = VARSIZE_ANY_EXHDR(in);
	p = VARDATA_ANY(in);
	if (len < sizeof(DpHeader))
		elog(ERROR, "dpmo: corrupt partial aggregate state");
	s = palloc0(sizeof(DpState));
	memcpy(&s->h, p, sizeof(DpHeader));
	p += sizeof(DpHeader);
	q = &s->h.p;
	n = s->h.n;
	if (q->function < 0 || (size_t) q->function >= dp_function_count || q->m < 0 || q->m > DP_MAX_OBJECTIVES ||
		q->width < -1 || q->width > DP_MAX_DISTANCE || n < 0 || n > DP_MAX_ROWS ||
		len != sizeof(DpHeader) + (Size) n * (sizeof(int64) +
											  sizeof(double) * (row_vals(&s->h) + row_dels(&s->h))))
		elog(ERROR, "dpmo: corrupt partial aggregate state");
	s->h.n = 0;
	grow(s, CurrentMemoryContext, Max(n, 1));
	memcpy(s->ids, p, (size_t) n * sizeof(int64));
	p += (size_t) n * sizeof(int64);
	if (row_vals(&s->h) > 0)
		memcpy(s->vals, p, (size_t) (n * row_vals(&s->h)) * sizeof(double));
	p += (size_t) (n * row_vals(&s->h)) * sizeof(double);
	if (row_dels(&s->h) > 0)
		memcpy(s->dels, p, (size_t) (n * row_dels(&s->h)) * sizeof(double));
	s->h.n = n;
	PG_RETURN_POINTER(s);
}

/* ------------------------------------------------------------------------------------------------ */
/* Final functions: checks, charge, selection                                                        */
/* ------------------------------------------------------------------------------------------------ */

/*
 * Public checks (nothing charged when they fail), then the durable charge, then the selection (a failure
 * caused by the data keeps the charge). Returns the chosen ids.
 */
static int64 *
finalize(FunctionCallInfo fcinfo, int64 *k_out)
{
	int			how = AggCheckCallContext(fcinfo, NULL);
	CallInfo   *ci;
	DpState    *s;
	dp_group	g;
	dp_error	err;
	int64	   *picks,
			   *ids;
	int64		i;
	dp_params	p;
	double	   *vals,
			   *dels;

	if (how == 0)
		elog(ERROR, "dpmo: final function called outside an aggregate");
	if (how == AGG_CONTEXT_WINDOW)
		refuse_window();
	ci = call_info(fcinfo, false);
	refuse_foreign_context(ci->f->name);
	s = PG_ARGISNULL(0) ? NULL : (DpState *) PG_GETARG_POINTER(0);
	if (s == NULL || (s->h.n == 0 && !dp_is_discovery(ci->f)))
	{
		dp_fail(&err, DP_ERR_ARGUMENT, DPMO_EMPTY_INPUT, "%s: the group has no rows", ci->f->name);
		raise_dp(&err);
	}
	if (s->h.p.function != ci->index) /* a state of another aggregate (never shared: see dpmo--0.2.0.sql) */
		elog(ERROR, "dpmo: %s: the transition state belongs to another aggregate", ci->f->name);
	if (dp_is_discovery(ci->f))
	{
		/* events (every one dropped: an empty dataset); allocation and checks, charge, release */
		dp_discovery d;

		if (dp_discover_prepare(&s->h.p, s->h.n, s->ids, s->vals, &PG_ALLOC, &d, &err) != DP_OK)
			raise_dp(&err);
		ledger_charge(&s->h.p);
		if (dp_discover_run(&s->h.p, &d, rng_get(), &err) != DP_OK)
			raise_dp(&err);
		{
			double		spent_epsilon,
						spent_delta;

			/* pay what you get: settle the charge at what the run spent (dp_ledger.h) */
			if (dp_discover_refund_due(&s->h.p, &d, &spent_epsilon, &spent_delta))
			{
				if (guc_test_seeding && guc_test_crash_before_refund)
					ereport(PANIC, (errmsg("dpmo: test crash between a charge and its refund")));
				ledger_refund(spent_epsilon, spent_delta);
			}
		}
		ids = palloc(sizeof(int64) * Max(d.count, 1));
		for (i = 0; i < (int64) d.count; i++)
			ids[i] = (int64) d.out[i];
		*k_out = (int64) d.count;
		dp_discover_free(&d, &PG_ALLOC);
		return ids;
	}
	/* A shape never seen (every row NULL): m = 1, width 1, every value NaN. The state stays read-only. */
	p = s->h.p;
	dp_params_settle(&p);
	vals = s->vals;
	dels = s->dels;
	if (dp_row_vals(&p) != row_vals(&s->h))
	{
		vals = huge_array(CurrentMemoryContext, NULL, s->h.n, dp_row_vals(&p), sizeof(double));
		dp_fill_nan(vals, s->h.n * dp_row_vals(&p));
	}
	if (dp_row_dels(&p) != row_dels(&s->h))
	{
		dels = huge_array(CurrentMemoryContext, NULL, s->h.n, dp_row_dels(&p), sizeof(double));
		dp_fill_nan(dels, s->h.n * dp_row_dels(&p));
	}
	if (dp_group_prepare(&p, s->h.n, s->ids, vals, dels, &PG_ALLOC, &g, &err) != DP_OK)
		raise_dp(&err);
	ledger_charge(&p);
	picks = palloc(sizeof(int64) * p.k);
	if (dp_group_run(&p, &g, rng_get(), &PG_ALLOC, picks, &err) != DP_OK)
		raise_dp(&err);
	ids = palloc(sizeof(int64) * p.k);
	for (i = 0; i < p.k; i++)
		ids[i] = g.ids[picks[i]];
	dp_group_free(&g, &PG_ALLOC);
	*k_out = p.k;
	return ids;
}

PG_FUNCTION_INFO_V1(dpmo_pg_final_one);
Datum
dpmo_pg_final_one(PG_FUNCTION_ARGS)
{
	int64		k;
	int64	   *ids = finalize(fcinfo, &k);

	PG_RETURN_INT64(ids[0]);
}

PG_FUNCTION_INFO_V1(dpmo_pg_final_many);
Datum
dpmo_pg_final_many(PG_FUNCTION_ARGS)
{
	int64		k,
				i;
	int64	   *ids = finalize(fcinfo, &k);
	Datum	   *elems = palloc(sizeof(Datum) * k);

	for (i = 0; i < k; i++)
		elems[i] = Int64GetDatum(ids[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) k, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
										  TYPALIGN_DOUBLE));
}

/* ------------------------------------------------------------------------------------------------ */
/* Planner: finalisation in the leader only                                                          */
/* ------------------------------------------------------------------------------------------------ */

/* True for the final functions of this extension (C functions dpmo_pg_final_*). */
static bool
is_dpmo_final(Oid fn)
{
	HeapTuple	tup;
	bool		ours = false;

	if (!OidIsValid(fn))
		return false;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);

		if (proc->prolang == ClanguageId && proc->proparallel != PROPARALLEL_SAFE)
		{
			bool		isnull;
			Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);

			if (!isnull)
			{
				char	   *s = TextDatumGetCString(src);

				ours = strcmp(s, "dpmo_pg_final_one") == 0 || strcmp(s, "dpmo_pg_final_many") == 0;
				pfree(s);
			}
		}
		ReleaseSysCache(tup);
	}
	return ours;
}

/*
 * The aggregates are PARALLEL SAFE so that workers may build partial states (Partial Aggregate below a
 * Gather, Finalize Aggregate above it, in the leader). A PARALLEL SAFE aggregate could also be computed
 * whole inside a worker (e.g. a grouped subquery on the inner side of a parallel hash join, run by every
 * worker), which would finalise, draw and charge in each worker. After the grouping paths of a query level
 * that computes a dpmo aggregate are built, this marks them parallel-restricted, so no plan places them
 * below a Gather; the partial paths beneath the Finalize steps are untouched.
 */
static void
dpmo_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	ListCell   *lc;
	bool		ours = false;

	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG)
		return;
	foreach(lc, root->agginfos)
	{
		AggInfo    *ai = (AggInfo *) lfirst(lc);

		if (is_dpmo_final(ai->finalfn_oid))
		{
			ours = true;
			break;
		}
	}
	if (!ours)
		return;
	output_rel->consider_parallel = false;
	output_rel->partial_pathlist = NIL;
	foreach(lc, output_rel->pathlist)
		((Path *) lfirst(lc))->parallel_safe = false;
}

/* ------------------------------------------------------------------------------------------------ */
/* Module load                                                                                       */
/* ------------------------------------------------------------------------------------------------ */

void
_PG_init(void)
{
	DefineCustomStringVariable("dpmo.dataset",
							   "Dataset label of the private selections: grants for this dataset apply, besides "
							   "grants for every dataset.",
							   "Fix it in the wrappers that expose a dataset (CREATE FUNCTION ... SET dpmo.dataset "
							   "= 'label'); it can only narrow which grants apply, never widen one.",
							   &guc_dataset, "", PGC_USERSET, 0, check_dataset, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomBoolVariable("dpmo.test_seeding",
								 "Lets a superuser make the generator reproducible (tests only).",
								 NULL, &guc_test_seeding, false, PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomBoolVariable("dpmo.test_crash_before_refund",
								 "On a server started with dpmo.test_seeding: dp_discover_top_k PANICs after its "
								 "run, between its charge and its refund (tests only).",
								 NULL, &guc_test_crash_before_refund, false, PGC_SUSET, 0, NULL, NULL, NULL);
		preloaded = true;
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = ledger_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = ledger_shmem_startup;
		prev_upper_paths_hook = create_upper_paths_hook;
		create_upper_paths_hook = dpmo_upper_paths;
		prev_needs_fmgr_hook = needs_fmgr_hook;
		needs_fmgr_hook = dpmo_needs_fmgr_hook;
		prev_fmgr_hook = fmgr_hook;
		fmgr_hook = dpmo_fmgr_hook;
		prev_process_utility = ProcessUtility_hook;
		ProcessUtility_hook = dpmo_process_utility;
		RegisterXactCallback(dpmo_xact_callback, NULL);
	}
	MarkGUCPrefixReserved("dpmo");
}
