/*
 * dpmo_sqlite_internal.h: what the extension's files share (not installed; the host's API is dpmo_sqlite.h).
 */
#ifndef DPMO_SQLITE_INTERNAL_H
#define DPMO_SQLITE_INTERNAL_H

#include <stdbool.h>

#define DP_EXPORT __attribute__((visibility("default")))

/* True when name is one of the selecting aggregates (dp_select, ..., dp_agg_select_local_top_k). */
bool dpmo_sqlite_is_selection(const char *name);

#endif
