/*
 * dpmo_pg.c: PostgreSQL 15 extension over the dpmo C ABI (include/dpmo.h, libdpmo.a).
 *
 * Differentially private selection as aggregates. Every aggregate collects its group's candidates
 * (id, utilities, optional local sensitivities) in an internal transition state that lives in the
 * aggregate memory context; combine/serialize/deserialize functions let PostgreSQL aggregate in parallel
 * workers. Only the final function draws randomness and charges the per-session privacy budget, and it
 * refuses to run inside a parallel worker (its generator and budget belong to the session's backend).
 *
 * Candidates are sorted by id before selection (duplicate ids are an error), so a result depends only on
 * the group's contents and the generator, never on the scan order or the parallel plan.
 *
 * Every dpmo status is checked; every failure is an ereport(ERROR) whose message is "dpmo: " followed by
 * the library's sentence (dpmo_status_message) or the binding's own. All memory comes from palloc.
 */
#include "postgres.h"

#include <math.h>
#include <string.h>

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "dpmo.h"

PG_MODULE_MAGIC;

/*
 * Local sensitivities: a scalar delta per candidate holds for distances t < LOCAL_COLUMNS (Δ from there on,
 * which is always admissible when delta is); δ^PS and δ_agg are tabulated for t < LOCAL_COLUMNS. A finite
 * horizon keeps the shifted dampening exact (its closed form is offset by about t_max).
 */
#define LOCAL_COLUMNS 64
#define MAXM DPMO_MAX_OBJECTIVES

/* ------------------------------------------------------------------------------------------------ */
/* Errors                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

static int
errcode_for(dpmo_status st)
{
	switch (st)
	{
		case DPMO_BUDGET_EXHAUSTED:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case DPMO_OVERFLOW:
			return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		case DPMO_CAPACITY_EXCEEDED:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case DPMO_NULL_POINTER:
		case DPMO_SCRATCH_TOO_SMALL:
		case DPMO_INVALID_GENERATOR:
		case DPMO_OVERLAPPING_BUFFERS:
			return ERRCODE_INTERNAL_ERROR;
		default:
			return ERRCODE_INVALID_PARAMETER_VALUE;
	}
}

/* Raises the library's sentence for st, with an optional detail. Never returns. */
static void dp_fail(dpmo_status st, const char *detail) pg_attribute_noreturn();

static void
dp_fail(dpmo_status st, const char *detail)
{
	ereport(ERROR,
			(errcode(errcode_for(st)),
			 errmsg("dpmo: %s", dpmo_status_message((uint32_t) st)),
			 detail ? errdetail_internal("%s", detail) : 0));
	pg_unreachable();
}

static void
dp_check(dpmo_status st, const char *what)
{
	if (st != DPMO_OK)
		dp_fail(st, what);
}

/* ------------------------------------------------------------------------------------------------ */
/* Session state: generator and budget                                                               */
/* ------------------------------------------------------------------------------------------------ */

static dpmo_rng session_rng;
static bool session_rng_ready = false;

static dpmo_budget session_budget;
static bool session_budget_set = false;
static bool session_budget_guc_applied = false;
static double guc_session_budget = 0.0;
static int	guc_dampening = DPMO_DAMPENING_PLAIN;

static const struct config_enum_entry dampening_options[] = {
	{"plain", DPMO_DAMPENING_PLAIN, false},
	{"shifted", DPMO_DAMPENING_SHIFTED, false},
	{NULL, 0, false}
};

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomRealVariable("dpmo.session_budget",
							 "Privacy budget (total epsilon) every session starts with; 0 means no budget.",
							 "Applied at the first private selection or budget call of a session. Only "
							 "superusers can set it (e.g. ALTER ROLE analyst SET dpmo.session_budget = 1).",
							 &guc_session_budget,
							 0.0, 0.0, 1e300,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("dpmo.dampening",
							 "Local dampening used by the local-sensitivity aggregates: plain or shifted.",
							 "plain is Def. 3.6 of the Local Dampening paper (as PrivPareto uses it); shifted is "
							 "Def. 4.3, which favours candidates with a larger local sensitivity.",
							 &guc_dampening, DPMO_DAMPENING_PLAIN, dampening_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("dpmo");
}

/* The session's generator, seeded from pg_strong_random (32 bytes) on first use. */
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
		dp_check(dpmo_rng_init(&session_rng, DPMO_RNG_CHACHA20, seed), "seeding the generator");
		memset(seed, 0, sizeof seed);
		session_rng_ready = true;
	}
	return &session_rng;
}

/* Applies dpmo.session_budget once per session, before the first use of the budget. */
static void
budget_apply_guc(void)
{
	if (session_budget_guc_applied)
		return;
	session_budget_guc_applied = true;
	if (guc_session_budget > 0.0 && !session_budget_set)
	{
		dp_check(dpmo_budget_init(&session_budget, guc_session_budget), "dpmo.session_budget");
		session_budget_set = true;
	}
}

static double
budget_remaining(void)
{
	double		r = 0.0;

	dp_check(dpmo_budget_remaining(&session_budget, &r), "reading the session budget");
	return r;
}

/*
 * Checks that the session budget can pay eps and returns the budget as it will be once charged; the
 * caller stores it back only after the selection succeeded (so a failed query charges nothing).
 */
static dpmo_budget
budget_prepare(double eps)
{
	dpmo_budget next;
	dpmo_status st;

	budget_apply_guc();
	next = session_budget;
	if (!session_budget_set)
		return next;
	st = dpmo_budget_charge(&next, eps);
	if (st == DPMO_BUDGET_EXHAUSTED)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("dpmo: %s", dpmo_status_message(st)),
				 errdetail("The query asks for epsilon = %g; the session has %g left of %g.",
						   eps, budget_remaining(), session_budget.total),
				 errhint("Nothing was charged. A superuser can raise the budget with dp_budget_set().")));
	dp_check(st, "charging the session budget");
	return next;
}

static void
budget_commit(const dpmo_budget *next)
{
	if (session_budget_set)
		session_budget = *next;
}

PG_FUNCTION_INFO_V1(dpmo_pg_budget_set);
Datum
dpmo_pg_budget_set(PG_FUNCTION_ARGS)
{
	double		total = PG_GETARG_FLOAT8(0);
	dpmo_budget fresh;

	budget_apply_guc();
	dp_check(dpmo_budget_init(&fresh, total), "dp_budget_set(total) needs a finite total > 0");
	if (session_budget_set && !superuser() && total > budget_remaining())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dpmo: only a superuser can raise the session's privacy budget"),
				 errdetail("%g is left; dp_budget_set(%g) would raise it.", budget_remaining(), total)));
	session_budget = fresh;
	session_budget_set = true;
	PG_RETURN_FLOAT8(total);
}

PG_FUNCTION_INFO_V1(dpmo_pg_budget_remaining);
Datum
dpmo_pg_budget_remaining(PG_FUNCTION_ARGS)
{
	budget_apply_guc();
	if (!session_budget_set)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(budget_remaining());
}

PG_FUNCTION_INFO_V1(dpmo_pg_seed);
Datum
dpmo_pg_seed(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	pg_cryptohash_ctx *ctx;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("dpmo: only a superuser can seed the generator (dp_seed is for tests only)")));
	ctx = pg_cryptohash_create(PG_SHA256);
	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof digest) < 0)
	{
		if (ctx)
			pg_cryptohash_free(ctx);
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("dpmo: could not hash the seed")));
	}
	pg_cryptohash_free(ctx);
	dp_check(dpmo_rng_init(&session_rng, DPMO_RNG_CHACHA20, digest), "dp_seed");
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
/* Transition state                                                                                  */
/* ------------------------------------------------------------------------------------------------ */

typedef enum DpKind
{
	K_SINGLE = 1,				/* one score per row, global Δ */
	K_LOCAL_CONST,				/* one utility and one δ (constant in t) per row */
	K_LOCAL_TABLE,				/* one utility and δ(t), t < T, per row */
	K_PARETO,					/* m utilities per row, PrivPareto global */
	K_PARETO_LOCAL,				/* m utilities and m δ_i per row, PrivPareto local */
	K_AGG,						/* m utilities per row, weights and Δ_i, PrivAgg global */
	K_AGG_LOCAL					/* m utilities and m δ_i per row, PrivAgg local */
} DpKind;

/* The constants of a group (the same in every row) and its size; serialised as is. */
typedef struct DpHeader
{
	int32		kind;
	int32		selector;
	int32		m;				/* utilities per row */
	int32		dm;				/* δ values per row (0: none) */
	int32		k;				/* picks (0: a single-result aggregate, one pick) */
	int32		pad;
	double		eps;
	double		sens;			/* Δ of the single-objective kinds */
	double		weights[MAXM];
	double		globals[MAXM];
	int64		n;
} DpHeader;

typedef struct DpState
{
	DpHeader	h;
	int64		cap;
	int64	   *ids;
	double	   *vals;			/* n × m, row-major */
	double	   *dels;			/* n × dm, row-major; NULL when dm = 0 */
} DpState;

static const char *const SELECTOR_NAMES[] = {
	"exponential", "permute_and_flip", "noisy_max_laplace", "noisy_max_gumbel", "noisy_max_exponential"
};

static int32
selector_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;
	int			i;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dpmo: the selector must not be NULL")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	for (i = 0; i < (int) lengthof(SELECTOR_NAMES); i++)
		if (pg_strcasecmp(name, SELECTOR_NAMES[i]) == 0)
			return i;			/* the names are in DPMO_SELECTOR_* order */
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("dpmo: unknown selector \"%s\"", name),
			 errhint("Use exponential, permute_and_flip, noisy_max_laplace, noisy_max_gumbel or "
					 "noisy_max_exponential.")));
	pg_unreachable();
}

static void
require(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dpmo: %s must not be NULL", what),
				 errhint("Filter NULLs out (WHERE ... IS NOT NULL) or replace them (coalesce) explicitly.")));
}

static double
eps_arg(FunctionCallInfo fcinfo, int argno)
{
	double		e;

	require(fcinfo, argno, "epsilon");
	e = PG_GETARG_FLOAT8(argno);
	if (!(isfinite(e) && e > 0.0))
		dp_fail(DPMO_INVALID_EPSILON, psprintf("epsilon = %g", e));
	return e;
}

static double
sens_arg(FunctionCallInfo fcinfo, int argno)
{
	double		s;

	require(fcinfo, argno, "the sensitivity");
	s = PG_GETARG_FLOAT8(argno);
	if (!(isfinite(s) && s > 0.0))
		dp_fail(DPMO_INVALID_SENSITIVITY, psprintf("sensitivity = %g", s));
	return s;
}

static int32
k_arg(FunctionCallInfo fcinfo, int argno)
{
	int32		k;

	require(fcinfo, argno, "k");
	k = PG_GETARG_INT32(argno);
	if (k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dpmo: k must be at least 1 (got %d)", k)));
	return k;
}

/* A one-dimensional float8[] without NULL elements: its data and length (0 for an empty array). */
static const double *
array_arg(FunctionCallInfo fcinfo, int argno, const char *what, int *len)
{
	ArrayType  *a;

	require(fcinfo, argno, what);
	a = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_ELEMTYPE(a) != FLOAT8OID)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH), errmsg("dpmo: %s must be float8[]", what)));
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("dpmo: %s must be a one-dimensional array", what)));
	if (array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("dpmo: %s must not contain NULL elements", what)));
	*len = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
	return (const double *) ARR_DATA_PTR(a);
}

static void
check_objectives(int m, const char *what)
{
	if (m == 0)
		dp_fail(DPMO_INVALID_ARGUMENT, psprintf("%s is empty: at least one objective is needed", what));
	if (m > MAXM)
		dp_fail(DPMO_CAPACITY_EXCEEDED, psprintf("%s has %d objectives; at most %d are supported",
												 what, m, MAXM));
}

static void
check_same_length(int m, int other, const char *what)
{
	if (other != m)
		dp_fail(DPMO_LENGTH_MISMATCH,
				psprintf("%s has %d elements but the utilities array has %d", what, other, m));
}

static void
check_weights(const double *w, int m)
{
	int			i;

	for (i = 0; i < m; i++)
		if (w[i] != 0.0)
			return;
	dp_fail(DPMO_INVALID_ARGUMENT, "every weight is zero: at least one weight must be non-zero");
}

static void
mismatch(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("dpmo: %s must be the same in every row of a group", what)));
}

/* Constants of two headers must agree (rows of one group, or two partial states). */
static void
check_same(const DpHeader *a, const DpHeader *b)
{
	if (a->kind != b->kind)
		elog(ERROR, "dpmo: internal error: aggregate states of different kinds");
	if (a->eps != b->eps)
		mismatch("epsilon");
	if (a->sens != b->sens)
		mismatch("the sensitivity");
	if (a->selector != b->selector)
		mismatch("the selector");
	if (a->k != b->k)
		mismatch("k");
	if (a->m != b->m)
		mismatch("the number of utilities");
	if (a->dm != b->dm)
		mismatch("the number of local sensitivity values");
	if (memcmp(a->weights, b->weights, sizeof a->weights) != 0)
		mismatch("the weights array");
	if (memcmp(a->globals, b->globals, sizeof a->globals) != 0)
		mismatch("the sensitivities array");
}

static void *
alloc_huge(MemoryContext cx, int64 count, size_t size)
{
	if (count < 1)
		count = 1;
	if ((uint64) count > MaxAllocHugeSize / size)
		dp_fail(DPMO_OVERFLOW, "the group is too large");
	return MemoryContextAllocHuge(cx, (Size) count * size);
}

static void
grow(DpState *s, MemoryContext cx, int64 want)
{
	int64		cap;

	if (want <= s->cap)
		return;
	cap = s->cap > 0 ? s->cap : 64;
	while (cap < want)
		cap *= 2;
	if ((uint64) cap > MaxAllocHugeSize / (sizeof(double) * (size_t) Max(Max(s->h.m, s->h.dm), 1)))
		dp_fail(DPMO_OVERFLOW, "the group is too large");
	if (s->ids == NULL)
	{
		s->ids = alloc_huge(cx, cap, sizeof(int64));
		s->vals = alloc_huge(cx, cap * s->h.m, sizeof(double));
		if (s->h.dm > 0)
			s->dels = alloc_huge(cx, cap * s->h.dm, sizeof(double));
	}
	else
	{
		s->ids = repalloc_huge(s->ids, (Size) cap * sizeof(int64));
		s->vals = repalloc_huge(s->vals, (Size) cap * s->h.m * sizeof(double));
		if (s->h.dm > 0)
			s->dels = repalloc_huge(s->dels, (Size) cap * s->h.dm * sizeof(double));
	}
	s->cap = cap;
}

/* The state, created on the first row with the row's constants, else checked against them; room for one more row. */
static DpState *
begin_row(FunctionCallInfo fcinfo, const DpHeader *row)
{
	MemoryContext aggcx;
	DpState    *s;

	if (!AggCheckCallContext(fcinfo, &aggcx))
		elog(ERROR, "dpmo: transition function called outside an aggregate");
	s = PG_ARGISNULL(0) ? NULL : (DpState *) PG_GETARG_POINTER(0);
	if (s == NULL)
	{
		s = MemoryContextAllocZero(aggcx, sizeof(DpState));
		s->h = *row;
		s->h.n = 0;
	}
	else
		check_same(&s->h, row);
	grow(s, aggcx, s->h.n + 1);
	return s;
}

static void
init_header(DpHeader *h, DpKind kind, FunctionCallInfo fcinfo)
{
	memset(h, 0, sizeof *h);
	h->kind = kind;
	h->selector = DPMO_SELECTOR_EXPONENTIAL;
	require(fcinfo, 1, "the candidate id");
	h->eps = eps_arg(fcinfo, 2);
}

/* dp_select(id, epsilon, score, sensitivity [, selector]) */
PG_FUNCTION_INFO_V1(dpmo_pg_single_trans);
Datum
dpmo_pg_single_trans(PG_FUNCTION_ARGS)
{
	DpHeader	h;
	DpState    *s;

	init_header(&h, K_SINGLE, fcinfo);
	require(fcinfo, 3, "the score");
	h.sens = sens_arg(fcinfo, 4);
	h.m = 1;
	if (PG_NARGS() > 5)
		h.selector = selector_arg(fcinfo, 5);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	s->vals[s->h.n] = PG_GETARG_FLOAT8(3);
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/* dp_select_top_k(id, epsilon, score, sensitivity, k [, selector]) */
PG_FUNCTION_INFO_V1(dpmo_pg_topk_trans);
Datum
dpmo_pg_topk_trans(PG_FUNCTION_ARGS)
{
	DpHeader	h;
	DpState    *s;

	init_header(&h, K_SINGLE, fcinfo);
	require(fcinfo, 3, "the score");
	h.sens = sens_arg(fcinfo, 4);
	h.k = k_arg(fcinfo, 5);
	h.m = 1;
	if (PG_NARGS() > 6)
		h.selector = selector_arg(fcinfo, 6);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	s->vals[s->h.n] = PG_GETARG_FLOAT8(3);
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/*
 * dp_select_local(id, epsilon, utility, delta float8, sensitivity [, selector])        (k = 0)
 * dp_select_local_top_k(id, epsilon, utility, delta float8, sensitivity, k [, selector])
 */
static Datum
local_trans(FunctionCallInfo fcinfo, bool topk)
{
	DpHeader	h;
	DpState    *s;

	init_header(&h, K_LOCAL_CONST, fcinfo);
	require(fcinfo, 3, "the utility");
	require(fcinfo, 4, "the local sensitivity (delta)");
	h.sens = sens_arg(fcinfo, 5);
	h.m = 1;
	h.dm = 1;
	if (topk)
		h.k = k_arg(fcinfo, 6);
	if (PG_NARGS() > (topk ? 7 : 6))
		h.selector = selector_arg(fcinfo, topk ? 7 : 6);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	s->vals[s->h.n] = PG_GETARG_FLOAT8(3);
	s->dels[s->h.n] = PG_GETARG_FLOAT8(4);
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/* dp_select_local(id, epsilon, utility, deltas float8[] (δ(t), t < T), sensitivity [, selector]) */
PG_FUNCTION_INFO_V1(dpmo_pg_local_table_trans);
Datum
dpmo_pg_local_table_trans(PG_FUNCTION_ARGS)
{
	DpHeader	h;
	DpState    *s;
	const double *d;
	int			t;

	init_header(&h, K_LOCAL_TABLE, fcinfo);
	require(fcinfo, 3, "the utility");
	d = array_arg(fcinfo, 4, "the local sensitivity array (deltas)", &t);
	if (t == 0)
		dp_fail(DPMO_INVALID_ARGUMENT, "the deltas array is empty: give delta(t) for t = 0 .. T-1, T >= 1");
	h.sens = sens_arg(fcinfo, 5);
	h.m = 1;
	h.dm = t;
	if (PG_NARGS() > 6)
		h.selector = selector_arg(fcinfo, 6);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	s->vals[s->h.n] = PG_GETARG_FLOAT8(3);
	memcpy(s->dels + s->h.n * t, d, (size_t) t * sizeof(double));
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/*
 * dp_pareto_select(id, epsilon, VARIADIC utilities float8[])    and (id, epsilon, utilities float8[], selector)
 * dp_pareto_select_top_k(id, epsilon, k, VARIADIC utilities float8[])
 */
static Datum
pareto_trans(FunctionCallInfo fcinfo, bool topk)
{
	DpHeader	h;
	DpState    *s;
	const double *u;
	int			m;
	int			ua = topk ? 4 : 3;

	init_header(&h, K_PARETO, fcinfo);
	if (topk)
		h.k = k_arg(fcinfo, 3);
	u = array_arg(fcinfo, ua, "the utilities array", &m);
	check_objectives(m, "the utilities array");
	h.m = m;
	if (PG_NARGS() > ua + 1)
		h.selector = selector_arg(fcinfo, ua + 1);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	memcpy(s->vals + s->h.n * m, u, (size_t) m * sizeof(double));
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/* dp_pareto_select_local(id, epsilon, utilities float8[], deltas float8[], sensitivities float8[] [, selector]) */
PG_FUNCTION_INFO_V1(dpmo_pg_pareto_local_trans);
Datum
dpmo_pg_pareto_local_trans(PG_FUNCTION_ARGS)
{
	DpHeader	h;
	DpState    *s;
	const double *u,
			   *d,
			   *g;
	int			m,
				md,
				mg;

	init_header(&h, K_PARETO_LOCAL, fcinfo);
	u = array_arg(fcinfo, 3, "the utilities array", &m);
	d = array_arg(fcinfo, 4, "the local sensitivities array (deltas)", &md);
	g = array_arg(fcinfo, 5, "the sensitivities array", &mg);
	check_objectives(m, "the utilities array");
	check_same_length(m, md, "the deltas array");
	check_same_length(m, mg, "the sensitivities array");
	h.m = m;
	h.dm = m;
	memcpy(h.globals, g, (size_t) m * sizeof(double));
	if (PG_NARGS() > 6)
		h.selector = selector_arg(fcinfo, 6);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	memcpy(s->vals + s->h.n * m, u, (size_t) m * sizeof(double));
	memcpy(s->dels + s->h.n * m, d, (size_t) m * sizeof(double));
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/*
 * dp_agg_select(id, epsilon, weights, utilities, sensitivities [, selector])
 * dp_agg_select_top_k(id, epsilon, k, weights, utilities, sensitivities)
 */
static Datum
agg_trans(FunctionCallInfo fcinfo, bool topk)
{
	DpHeader	h;
	DpState    *s;
	const double *w,
			   *u,
			   *g;
	int			mw,
				m,
				mg;
	int			a = topk ? 4 : 3;

	init_header(&h, K_AGG, fcinfo);
	if (topk)
		h.k = k_arg(fcinfo, 3);
	w = array_arg(fcinfo, a, "the weights array", &mw);
	u = array_arg(fcinfo, a + 1, "the utilities array", &m);
	g = array_arg(fcinfo, a + 2, "the sensitivities array", &mg);
	check_objectives(m, "the utilities array");
	check_same_length(m, mw, "the weights array");
	check_same_length(m, mg, "the sensitivities array");
	check_weights(w, m);
	h.m = m;
	memcpy(h.weights, w, (size_t) m * sizeof(double));
	memcpy(h.globals, g, (size_t) m * sizeof(double));
	if (PG_NARGS() > a + 3)
		h.selector = selector_arg(fcinfo, a + 3);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	memcpy(s->vals + s->h.n * m, u, (size_t) m * sizeof(double));
	s->h.n++;
	PG_RETURN_POINTER(s);
}

/* dp_agg_select_local(id, epsilon, weights, utilities, deltas, sensitivities [, selector]) */
PG_FUNCTION_INFO_V1(dpmo_pg_agg_local_trans);
Datum
dpmo_pg_agg_local_trans(PG_FUNCTION_ARGS)
{
	DpHeader	h;
	DpState    *s;
	const double *w,
			   *u,
			   *d,
			   *g;
	int			mw,
				m,
				md,
				mg;

	init_header(&h, K_AGG_LOCAL, fcinfo);
	w = array_arg(fcinfo, 3, "the weights array", &mw);
	u = array_arg(fcinfo, 4, "the utilities array", &m);
	d = array_arg(fcinfo, 5, "the local sensitivities array (deltas)", &md);
	g = array_arg(fcinfo, 6, "the sensitivities array", &mg);
	check_objectives(m, "the utilities array");
	check_same_length(m, mw, "the weights array");
	check_same_length(m, md, "the deltas array");
	check_same_length(m, mg, "the sensitivities array");
	check_weights(w, m);
	h.m = m;
	h.dm = m;
	memcpy(h.weights, w, (size_t) m * sizeof(double));
	memcpy(h.globals, g, (size_t) m * sizeof(double));
	if (PG_NARGS() > 7)
		h.selector = selector_arg(fcinfo, 7);
	s = begin_row(fcinfo, &h);
	s->ids[s->h.n] = PG_GETARG_INT64(1);
	memcpy(s->vals + s->h.n * m, u, (size_t) m * sizeof(double));
	memcpy(s->dels + s->h.n * m, d, (size_t) m * sizeof(double));
	s->h.n++;
	PG_RETURN_POINTER(s);
}

PG_FUNCTION_INFO_V1(dpmo_pg_local_trans);
Datum
dpmo_pg_local_trans(PG_FUNCTION_ARGS)
{
	return local_trans(fcinfo, false);
}

PG_FUNCTION_INFO_V1(dpmo_pg_local_topk_trans);
Datum
dpmo_pg_local_topk_trans(PG_FUNCTION_ARGS)
{
	return local_trans(fcinfo, true);
}

PG_FUNCTION_INFO_V1(dpmo_pg_pareto_trans);
Datum
dpmo_pg_pareto_trans(PG_FUNCTION_ARGS)
{
	return pareto_trans(fcinfo, false);
}

PG_FUNCTION_INFO_V1(dpmo_pg_pareto_topk_trans);
Datum
dpmo_pg_pareto_topk_trans(PG_FUNCTION_ARGS)
{
	return pareto_trans(fcinfo, true);
}

PG_FUNCTION_INFO_V1(dpmo_pg_agg_trans);
Datum
dpmo_pg_agg_trans(PG_FUNCTION_ARGS)
{
	return agg_trans(fcinfo, false);
}

PG_FUNCTION_INFO_V1(dpmo_pg_agg_topk_trans);
Datum
dpmo_pg_agg_topk_trans(PG_FUNCTION_ARGS)
{
	return agg_trans(fcinfo, true);
}

/* ------------------------------------------------------------------------------------------------ */
/* Combine, serialize, deserialize                                                                   */
/* ------------------------------------------------------------------------------------------------ */

static void
append_rows(DpState *dst, const DpState *src, MemoryContext cx)
{
	int64		n = src->h.n;

	if (n == 0)
		return;
	grow(dst, cx, dst->h.n + n);
	memcpy(dst->ids + dst->h.n, src->ids, (size_t) n * sizeof(int64));
	memcpy(dst->vals + dst->h.n * dst->h.m, src->vals, (size_t) (n * dst->h.m) * sizeof(double));
	if (dst->h.dm > 0)
		memcpy(dst->dels + dst->h.n * dst->h.dm, src->dels, (size_t) (n * dst->h.dm) * sizeof(double));
	dst->h.n += n;
}

PG_FUNCTION_INFO_V1(dpmo_pg_combine);
Datum
dpmo_pg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcx;
	DpState    *a = PG_ARGISNULL(0) ? NULL : (DpState *) PG_GETARG_POINTER(0);
	DpState    *b = PG_ARGISNULL(1) ? NULL : (DpState *) PG_GETARG_POINTER(1);

	if (!AggCheckCallContext(fcinfo, &aggcx))
		elog(ERROR, "dpmo: combine function called outside an aggregate");
	if (b == NULL)
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
		check_same(&a->h, &b->h);
	append_rows(a, b, aggcx);
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
	vals = (Size) (s->h.n * s->h.m) * sizeof(double);
	dels = (Size) (s->h.n * s->h.dm) * sizeof(double);
	total = VARHDRSZ + sizeof(DpHeader) + ids + vals + dels;
	if (total > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("dpmo: a partial aggregate state of %ld candidates is too large to pass between "
						"parallel processes", (long) s->h.n),
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
	if (s->h.n < 0 || s->h.m < 1 || s->h.m > MAXM || s->h.dm < 0 || s->h.dm > 1 << 20 ||
		(uint64) s->h.n > MaxAllocHugeSize / (sizeof(double) * (MAXM + 1 + (size_t) s->h.dm)) ||
		len != sizeof(DpHeader) + (Size) s->h.n * (sizeof(int64) + sizeof(double) * (s->h.m + s->h.dm)))
		elog(ERROR, "dpmo: corrupt partial aggregate state");
	{
		int64		n = s->h.n;

		s->h.n = 0;
		grow(s, CurrentMemoryContext, Max(n, 1));
		memcpy(s->ids, p, (size_t) n * sizeof(int64));
		p += (size_t) n * sizeof(int64);
		memcpy(s->vals, p, (size_t) (n * s->h.m) * sizeof(double));
		p += (size_t) (n * s->h.m) * sizeof(double);
		if (s->h.dm > 0)
			memcpy(s->dels, p, (size_t) (n * s->h.dm) * sizeof(double));
		s->h.n = n;
	}
	PG_RETURN_POINTER(s);
}

/* ------------------------------------------------------------------------------------------------ */
/* Final functions: the selection                                                                    */
/* ------------------------------------------------------------------------------------------------ */

static int
cmp_by_id(const void *a, const void *b, void *arg)
{
	const int64 *ids = (const int64 *) arg;
	int64		x = ids[*(const int64 *) a];
	int64		y = ids[*(const int64 *) b];

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* The group sorted by id (copies; the state is left untouched), duplicates refused. */
typedef struct Sorted
{
	int64		n;
	int64	   *ids;
	double	   *vals;
	double	   *dels;
} Sorted;

static Sorted
sorted_copy(const DpState *s)
{
	Sorted		o;
	int64	   *perm;
	int64		i;
	int			m = s->h.m,
				dm = s->h.dm;

	o.n = s->h.n;
	perm = alloc_huge(CurrentMemoryContext, o.n, sizeof(int64));
	for (i = 0; i < o.n; i++)
		perm[i] = i;
	qsort_arg(perm, (size_t) o.n, sizeof(int64), cmp_by_id, s->ids);
	o.ids = alloc_huge(CurrentMemoryContext, o.n, sizeof(int64));
	o.vals = alloc_huge(CurrentMemoryContext, o.n * m, sizeof(double));
	o.dels = dm > 0 ? alloc_huge(CurrentMemoryContext, o.n * dm, sizeof(double)) : NULL;
	for (i = 0; i < o.n; i++)
	{
		int64		r = perm[i];

		o.ids[i] = s->ids[r];
		if (i > 0 && o.ids[i] == o.ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("dpmo: candidate id " INT64_FORMAT " appears more than once in the group",
							o.ids[i]),
					 errhint("Each row is one candidate: aggregate the data per candidate first "
							 "(GROUP BY id in a subquery).")));
		memcpy(o.vals + i * m, s->vals + r * m, (size_t) m * sizeof(double));
		if (dm > 0)
			memcpy(o.dels + i * dm, s->dels + r * dm, (size_t) dm * sizeof(double));
	}
	pfree(perm);
	return o;
}

static size_t
index_scratch_len(int64 n, int32 selector)
{
	return (size_t) (selector == DPMO_SELECTOR_PERMUTE_AND_FLIP ? 2 * n : n);
}

/* Runs the group's mechanism; writes k picks (indices into the sorted group) to out. */
static void
run_selection(const DpState *s, const Sorted *g, size_t k, size_t *out)
{
	MemoryContext cx = CurrentMemoryContext;
	dpmo_rng   *rng = rng_get();
	int64		n = g->n;
	size_t		un = (size_t) n;
	int			m = s->h.m;
	dpmo_status st = DPMO_OK;

	switch ((DpKind) s->h.kind)
	{
		case K_SINGLE:
			{
				double	   *scratch = alloc_huge(cx, n, sizeof(double));
				size_t		il = index_scratch_len(n, s->h.selector);
				size_t	   *idx = alloc_huge(cx, (int64) il, sizeof(size_t));

				st = dpmo_select_top_k(rng, (uint32_t) s->h.selector, g->vals, un, s->h.sens, s->h.eps, k,
									   out, scratch, un, idx, il, NULL);
				break;
			}
		case K_LOCAL_CONST:
		case K_LOCAL_TABLE:
			{
				dpmo_sensitivity spec;
				double	   *scratch = alloc_huge(cx, 2 * n, sizeof(double));
				size_t		il = index_scratch_len(n, s->h.selector);
				size_t	   *idx = alloc_huge(cx, (int64) il, sizeof(size_t));

				memset(&spec, 0, sizeof spec);
				spec.values = g->dels;
				spec.global = s->h.sens;
				if (s->h.kind == K_LOCAL_CONST)
				{
					spec.kind = DPMO_DELTA_PER_CANDIDATE;
					spec.values_len = un;
					spec.t_max = LOCAL_COLUMNS;
				}
				else
				{
					spec.kind = DPMO_DELTA_TABLE;
					spec.values_len = un * (size_t) s->h.dm;
					spec.columns = (size_t) s->h.dm;
					spec.t_max = (size_t) s->h.dm;
				}
				st = dpmo_select_local_dampening_top_k(rng, g->vals, un, &spec, (uint32_t) guc_dampening,
													   (uint32_t) s->h.selector, s->h.eps, k, out,
													   scratch, 2 * un, idx, il, NULL);
				break;
			}
		case K_PARETO:
		case K_PARETO_LOCAL:
		case K_AGG:
		case K_AGG_LOCAL:
			{
				bool		local = s->h.kind == K_PARETO_LOCAL || s->h.kind == K_AGG_LOCAL;
				bool		pareto = s->h.kind == K_PARETO || s->h.kind == K_PARETO_LOCAL;
				size_t		columns = local ? LOCAL_COLUMNS : 0;
				dpmo_sensitivity specs[MAXM];
				double	   *dT = NULL;
				size_t		vl = 0,
							il = 0;
				double	   *values;
				size_t	   *indices;

				if (local)
				{
					int64		r;
					int			i;

					/* one per-candidate δ_i spec per objective: transpose n × m into m × n */
					dT = alloc_huge(cx, n * m, sizeof(double));
					for (r = 0; r < n; r++)
						for (i = 0; i < m; i++)
							dT[i * n + r] = g->dels[r * m + i];
					memset(specs, 0, sizeof specs);
					for (i = 0; i < m; i++)
					{
						specs[i].kind = DPMO_DELTA_PER_CANDIDATE;
						specs[i].values = dT + i * n;
						specs[i].values_len = un;
						specs[i].global = s->h.globals[i];
						specs[i].t_max = LOCAL_COLUMNS;
					}
				}
				if (pareto)
					dp_check(dpmo_privpareto_scratch_len(un, (size_t) m, columns, &vl, &il),
							 "PrivPareto scratch length");
				else
					dp_check(dpmo_privagg_scratch_len(un, columns, &vl, &il), "PrivAgg scratch length");
				if (vl > MaxAllocHugeSize / sizeof(double) || il > MaxAllocHugeSize / sizeof(size_t))
					dp_fail(DPMO_OVERFLOW, "the group is too large");
				values = alloc_huge(cx, (int64) vl, sizeof(double));
				indices = alloc_huge(cx, (int64) il, sizeof(size_t));
				if (pareto)
					st = dpmo_select_privpareto(rng, g->vals, un, (size_t) m, DPMO_DOMINANCE_TEXTBOOK,
												local ? specs : NULL, columns, (uint32_t) guc_dampening,
												(uint32_t) s->h.selector, s->h.eps, k, out, values, vl,
												indices, il, NULL);
				else
					st = dpmo_select_privagg(rng, g->vals, un, (size_t) m, s->h.weights, s->h.globals,
											 local ? specs : NULL, columns, (uint32_t) guc_dampening,
											 (uint32_t) s->h.selector, s->h.eps, k, out, values, vl,
											 indices, il, NULL);
				break;
			}
		default:
			elog(ERROR, "dpmo: internal error: unknown aggregate state kind %d", s->h.kind);
	}
	dp_check(st, NULL);
}

/* Everything a final function does before building its result: checks, budget, selection, charge. */
static size_t *
finalize(FunctionCallInfo fcinfo, size_t *k_out, Sorted *g)
{
	DpState    *s;
	size_t		k;
	size_t	   *out;
	dpmo_budget next;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "dpmo: final function called outside an aggregate");
	if (IsParallelWorker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dpmo: a private selection cannot be finalised in a parallel worker"),
				 errhint("SET max_parallel_workers_per_gather = 0 for this query.")));
	s = PG_ARGISNULL(0) ? NULL : (DpState *) PG_GETARG_POINTER(0);
	if (s == NULL || s->h.n == 0)
		dp_fail(DPMO_EMPTY_INPUT, "the group has no rows");
	k = s->h.k > 0 ? (size_t) s->h.k : 1;
	if (k > (size_t) s->h.n)
		dp_fail(DPMO_INVALID_ARGUMENT,
				psprintf("k = %zu exceeds the number of candidates in the group (" INT64_FORMAT ")",
						 k, s->h.n));
	*g = sorted_copy(s);
	next = budget_prepare(s->h.eps);
	out = palloc(k * sizeof(size_t));
	run_selection(s, g, k, out);
	budget_commit(&next);
	*k_out = k;
	return out;
}

PG_FUNCTION_INFO_V1(dpmo_pg_final_one);
Datum
dpmo_pg_final_one(PG_FUNCTION_ARGS)
{
	Sorted		g;
	size_t		k;
	size_t	   *out = finalize(fcinfo, &k, &g);

	PG_RETURN_INT64(g.ids[out[0]]);
}

PG_FUNCTION_INFO_V1(dpmo_pg_final_many);
Datum
dpmo_pg_final_many(PG_FUNCTION_ARGS)
{
	Sorted		g;
	size_t		k,
				i;
	size_t	   *out = finalize(fcinfo, &k, &g);
	Datum	   *elems = palloc(k * sizeof(Datum));

	for (i = 0; i < k; i++)
		elems[i] = Int64GetDatum(g.ids[out[i]]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) k, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
										  TYPALIGN_DOUBLE));
}
