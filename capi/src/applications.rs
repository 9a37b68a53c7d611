//! The sensitivity functions of the papers' applications: graph metrics on a CSR graph (degree, egocentric
//! density, egocentric betweenness centrality), classifier rates (TPR, TNR), split criteria of decision
//! trees (information gain, Gini), and the maximum of two δ tables.
//!
//! The δ tables these functions write are row-major n × `columns` arrays, ready for a `dpmo_sensitivity`
//! of kind `DPMO_DELTA_TABLE` (whose `global` must then be the utility's global sensitivity Δ).
//!
//! Graphs are passed as four arguments: `offsets` (`node_count` + 1 entries), `node_count` (n),
//! `neighbours` (`adjacency_len` entries) and `adjacency_len` (2m). Node v's neighbours are
//! `neighbours[offsets[v] .. offsets[v + 1]]`, sorted strictly ascending; every undirected edge {u, v} is
//! stored twice. Every graph function validates the graph as `dpmo_graph_validate` does.

use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::status::{dpmo_status, status_of};
use core::mem::size_of;
use dpmo_core::graph::Csr;
use dpmo_core::sensitivity::info_gain::{self, Contingency, InfoGainSensitivity, MAX_ATTRIBUTE_VALUES, MAX_CLASSES};
use dpmo_core::sensitivity::rates::{self, RateNeighbours};
use dpmo_core::sensitivity::{compose, degree, ebc, egodensity, gini};
use dpmo_core::Error;

/// Rate neighbour relation: databases differing by one added or removed record (unbounded DP; the
/// relation of the PrivPareto paper).
pub const DPMO_NEIGHBOURS_ADD_REMOVE: u32 = 0;
/// Rate neighbour relation: databases of the same size differing in one record (bounded DP); includes a
/// flipped prediction (TP ↔ FN, TN ↔ FP).
pub const DPMO_NEIGHBOURS_SUBSTITUTION: u32 = 1;

/// Δ = 1: the global sensitivity of the degree under edge-DP (PrivPareto paper, §7.3; neighbours differ in
/// one edge).
pub const DPMO_DEGREE_GLOBAL_SENSITIVITY: f64 = 1.0;
/// Δ = 1: the global sensitivity of egocentric density under edge-DP (PrivPareto paper, §7.3; neighbours
/// differ in one edge).
pub const DPMO_EGODENSITY_GLOBAL_SENSITIVITY: f64 = 1.0;
/// Δ = 1: the global sensitivity of TPR and TNR under both neighbour relations (PrivPareto paper,
/// Example 6.2).
pub const DPMO_RATE_GLOBAL_SENSITIVITY: f64 = 1.0;
/// Δ = 2: the global sensitivity of the Gini utility under add/remove-one-record neighbours (Local
/// Dampening paper, §5.2, after Friedman and Schuster).
pub const DPMO_GINI_GLOBAL_SENSITIVITY: f64 = 2.0;
/// The largest number of attribute values (rows) of a contingency table; more gives
/// `DPMO_CAPACITY_EXCEEDED`.
pub const DPMO_CONTINGENCY_MAX_VALUES: usize = 16;
/// The largest number of classes (columns) of a contingency table; more gives `DPMO_CAPACITY_EXCEEDED`.
pub const DPMO_CONTINGENCY_MAX_CLASSES: usize = 16;

// The C constants are literals (cbindgen cannot evaluate paths into the core): keep them equal.
const _: () = {
    assert!(DPMO_DEGREE_GLOBAL_SENSITIVITY == degree::DEGREE_GLOBAL_SENSITIVITY);
    assert!(DPMO_EGODENSITY_GLOBAL_SENSITIVITY == egodensity::EGODENSITY_GLOBAL_SENSITIVITY);
    assert!(DPMO_RATE_GLOBAL_SENSITIVITY == rates::RATE_GLOBAL_SENSITIVITY);
    assert!(DPMO_GINI_GLOBAL_SENSITIVITY == gini::GINI_GLOBAL_SENSITIVITY);
    assert!(DPMO_CONTINGENCY_MAX_VALUES == MAX_ATTRIBUTE_VALUES);
    assert!(DPMO_CONTINGENCY_MAX_CLASSES == MAX_CLASSES);
};

fn relation_of(neighbours: u32) -> Result<RateNeighbours, Error> {
    match neighbours {
        DPMO_NEIGHBOURS_ADD_REMOVE => Ok(RateNeighbours::AddRemove),
        DPMO_NEIGHBOURS_SUBSTITUTION => Ok(RateNeighbours::Substitution),
        _ => Err(Error::InvalidArgument),
    }
}

/// A borrowed, validated graph and the regions of its two arrays (for overlap checks).
struct Graph<'a> {
    csr: Csr<'a>,
    regions: [Region; 2],
}

/// Borrows and validates the four CSR arguments.
///
/// # Safety
/// `offsets` must hold `node_count` + 1 readable `size_t`, `neighbours` `adjacency_len` readable
/// `uint32_t`, both unmodified for `'a`.
unsafe fn graph<'a>(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
) -> Result<Graph<'a>, Error> {
    let offsets_len = node_count.checked_add(1).ok_or(Error::Overflow)?;
    // SAFETY: the caller promises node_count + 1 readable size_t.
    let off = unsafe { input(offsets, offsets_len) }?;
    // SAFETY: the caller promises adjacency_len readable uint32_t.
    let adj = unsafe { input(neighbours, adjacency_len) }?;
    let csr = Csr::new(off, adj)?;
    Ok(Graph {
        csr,
        regions: [Region::of(offsets, offsets_len), Region::of(neighbours, adjacency_len)],
    })
}

/// Validates the n × `columns` shape of a δ table: `columns` ≥ 1 and a representable element count.
fn table_len(n: usize, columns: usize) -> Result<usize, Error> {
    if columns == 0 {
        return Err(Error::InvalidArgument);
    }
    n.checked_mul(columns).ok_or(Error::Overflow)
}

/// Runs `f` on a validated graph with `out` (n · `columns` doubles) checked and disjoint from the graph.
///
/// # Safety
/// The graph contract of [`graph`]; `out` must hold n · `columns` writable doubles.
unsafe fn with_graph_output(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    columns: usize,
    out: *mut f64,
    f: impl FnOnce(&Csr<'_>, &mut [f64]) -> Result<(), Error>,
) -> Result<(), Error> {
    let out_len = table_len(node_count, columns)?;
    check_out(out)?;
    // SAFETY: forwarded caller contract.
    let g = unsafe { graph(offsets, node_count, neighbours, adjacency_len) }?;
    check_disjoint(&[Region::of(out, out_len)], &g.regions)?;
    // SAFETY: checked disjoint from the graph arrays; validity is the caller's contract.
    let out = unsafe { output(out, out_len) }?;
    f(&g.csr, out)
}

/// Borrows a row-major `values` × `classes` contingency table τ_{j,c} = `counts[j · classes + c]`.
///
/// # Safety
/// `counts` must hold `values` · `classes` readable `uint64_t`.
unsafe fn contingency(counts: *const u64, values: usize, classes: usize) -> Result<(Contingency, Region), Error> {
    if values == 0 || classes == 0 {
        return Err(Error::EmptyInput);
    }
    if values > MAX_ATTRIBUTE_VALUES || classes > MAX_CLASSES {
        return Err(Error::CapacityExceeded);
    }
    // Both ≤ 16, so the product cannot overflow.
    let len = values * classes;
    // SAFETY: the caller promises values · classes readable uint64_t.
    let c = unsafe { input(counts, len) }?;
    Ok((Contingency::new(c, values, classes)?, Region::of(counts, len)))
}

/// Checks a CSR graph: `offsets` (n + 1 entries, n = `node_count`) starts at 0, never decreases and ends
/// at `adjacency_len`; every neighbour list is sorted strictly ascending (no duplicate edges); every id is
/// < n; there is no self loop; the graph is symmetric (v in N(u) implies u in N(v), i.e. undirected).
/// n = 0 (offsets = {0}) is a valid empty graph. Both pointers must be non-null even when their arrays
/// are empty beyond offsets[0]. Cost O(n + m log d_max).
///
/// Returns `DPMO_OK` for a valid graph; offsets[0] ≠ 0 or offsets[n] ≠ `adjacency_len` →
/// `DPMO_LENGTH_MISMATCH`; decreasing offsets, an unsorted or duplicate entry, an id ≥ n, a self loop or a
/// missing reverse edge → `DPMO_INVALID_ARGUMENT`; n > 2³² or n + 1 not representable →
/// `DPMO_OVERFLOW`.
///
/// # Safety
/// `offsets`: `node_count` + 1 readable size_t; `neighbours`: `adjacency_len` readable uint32_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_graph_validate(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe { graph(offsets, node_count, neighbours, adjacency_len) }.map(|_| ()))
}

/// Degree centrality (PrivPareto paper, §7.3): writes degree(G, v) = |N(v)| to `out[v]` for every node v.
/// Neighbour relation: graphs on the same nodes differing in one edge (edge-DP, Def. 7.1); global
/// sensitivity Δ = `DPMO_DEGREE_GLOBAL_SENSITIVITY` = 1.
///
/// Errors: those of `dpmo_graph_validate`; a null, misaligned or overlapping `out`.
///
/// # Safety
/// The graph arrays as for `dpmo_graph_validate`; `out`: `node_count` writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_degree(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    out: *mut f64,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        with_graph_output(offsets, node_count, neighbours, adjacency_len, 1, out, |g, o| {
            degree::degree_all(g, o)
        })
    })
}

/// Egocentric density (PrivPareto paper, eq. (2)): writes 2·|edges among N(v)| / (|N(v)|·(|N(v)| − 1))
/// to `out[v]` for every node v, and 0 for a node with fewer than two neighbours (no possible edge among
/// them). Neighbour relation: one edge (edge-DP); global sensitivity Δ =
/// `DPMO_EGODENSITY_GLOBAL_SENSITIVITY` = 1.
///
/// Errors: those of `dpmo_graph_validate`; a null, misaligned or overlapping `out`.
///
/// # Safety
/// The graph arrays as for `dpmo_graph_validate`; `out`: `node_count` writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_egodensity(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    out: *mut f64,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        with_graph_output(offsets, node_count, neighbours, adjacency_len, 1, out, |g, o| {
            egodensity::egodensity_all(g, o)
        })
    })
}

/// Writes to `*out_len` the number of uint32_t of scratch `dpmo_ebc` needs for a graph of `node_count`
/// nodes and `adjacency_len` stored entries: 4 · node_count + 1 + adjacency_len.
///
/// Errors: a null or misaligned `out_len`; the length, or its size in bytes, not representable →
/// `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_len`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_ebc_scratch_len(
    node_count: usize,
    adjacency_len: usize,
    out_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_len)?;
        let len = ebc::ebc_scratch_len(node_count, adjacency_len)?;
        // A length whose byte size is not representable could never be passed to `dpmo_ebc`.
        if len
            .checked_mul(size_of::<u32>())
            .is_none_or(|b| b > isize::MAX as usize)
        {
            return Err(Error::Overflow);
        }
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out_len.write(len) };
        Ok(())
    })())
}

/// Egocentric betweenness centrality (Local Dampening paper, Def. 5.1): writes EBC(v) to `out[v]` for
/// every node v (0 for a node with fewer than two neighbours). `scratch` must hold at least
/// `dpmo_ebc_scratch_len` uint32_t (any contents; unspecified afterwards). Neighbour relation: one edge
/// (edge-DP); global sensitivity Δ = max(D(D − 1)/4, D) for a public bound D on the maximum degree
/// (Lemma 5.2, `dpmo_ebc_global_sensitivity`).
///
/// Errors: those of `dpmo_graph_validate`; a null, misaligned or overlapping `scratch` or `out`;
/// `scratch_len` too small → `DPMO_SCRATCH_TOO_SMALL`; node_count or adjacency_len ≥ 2³² →
/// `DPMO_OVERFLOW`.
///
/// # Safety
/// The graph arrays as for `dpmo_graph_validate`; `scratch`: `scratch_len` writable uint32_t; `out`:
/// `node_count` writable doubles; no output overlapping another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_ebc(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    scratch: *mut u32,
    scratch_len: usize,
    out: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        check_out(scratch)?;
        // SAFETY: forwarded caller contract.
        let g = unsafe { graph(offsets, node_count, neighbours, adjacency_len) }?;
        check_disjoint(
            &[Region::of(out, node_count), Region::of(scratch, scratch_len)],
            &g.regions,
        )?;
        // SAFETY: checked disjoint from each other and from the graph; validity is the caller's contract.
        let (out, scratch) = unsafe { (output(out, node_count)?, output(scratch, scratch_len)?) };
        ebc::ebc_all(&g.csr, scratch, out)
    })())
}

/// Writes to `*out` the global sensitivity of EBC, Δ = max(D(D − 1)/4, D), for graphs whose maximum degree
/// is at most the public bound D = `max_degree` (Local Dampening paper, Lemma 5.2). Neighbour relation:
/// one edge (edge-DP).
///
/// Errors: a null or misaligned `out`.
///
/// # Safety
/// `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_ebc_global_sensitivity(max_degree: usize, out: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out.write(ebc::ebc_global_sensitivity(max_degree)) };
        Ok(())
    })())
}

/// The δ table of the degree: writes δ(G, t, v) = 1 to `out[v · columns + t]` for every node v and
/// t < `columns` (δ equals the global sensitivity, hence is admissible, Local Dampening Def. 3.3).
/// Neighbour relation: one edge (edge-DP); Δ = `DPMO_DEGREE_GLOBAL_SENSITIVITY` = 1.
///
/// Errors: those of `dpmo_graph_validate`; `columns` = 0 → `DPMO_INVALID_ARGUMENT`; node_count · columns
/// not representable → `DPMO_OVERFLOW`; a null, misaligned or overlapping `out`.
///
/// # Safety
/// The graph arrays as for `dpmo_graph_validate`; `out`: node_count · columns writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_degree_delta_table(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    columns: usize,
    out: *mut f64,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        with_graph_output(offsets, node_count, neighbours, adjacency_len, columns, out, |g, o| {
            degree::degree_delta_table(g, columns, o)
        })
    })
}

/// The δ table of egocentric density (PrivPareto paper, §7.3, clamped as docs/DESIGN.md §2 requires): writes
/// δ(G, t, v) = min(1, 2 / (|N(v)| − t − 2)) when |N(v)| − t − 2 > 0, and 1 otherwise, to
/// `out[v · columns + t]`. The printed, unclamped form (2 at |N(v)| − t = 3) is not admissible; the
/// clamped one is (Local Dampening Lemma 3.5). Neighbour relation: one edge (edge-DP); Δ =
/// `DPMO_EGODENSITY_GLOBAL_SENSITIVITY` = 1.
///
/// Errors: as for `dpmo_degree_delta_table`.
///
/// # Safety
/// The graph arrays as for `dpmo_graph_validate`; `out`: node_count · columns writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_egodensity_delta_table(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    columns: usize,
    out: *mut f64,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        with_graph_output(offsets, node_count, neighbours, adjacency_len, columns, out, |g, o| {
            egodensity::egodensity_delta_table(g, columns, o)
        })
    })
}

/// The δ table of EBC (Local Dampening paper, Def. 5.3, Lemma 5.4): writes
/// δ(G, t, v) = max((d + t)(d + t − 1)/4, d + t), d = |N(v)|, clamped to Δ = max(D(D − 1)/4, D)
/// (Lemma 5.2, D = `max_degree`, the public bound on the maximum degree), to `out[v · columns + t]`.
/// Neighbour relation: one edge (edge-DP); Δ = `dpmo_ebc_global_sensitivity(max_degree)`.
///
/// Errors: as for `dpmo_degree_delta_table`; a node of degree above `max_degree` →
/// `DPMO_INVALID_ARGUMENT` (the public bound, hence Δ, would be wrong).
///
/// # Safety
/// The graph arrays as for `dpmo_graph_validate`; `out`: node_count · columns writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_ebc_delta_table(
    offsets: *const usize,
    node_count: usize,
    neighbours: *const u32,
    adjacency_len: usize,
    max_degree: usize,
    columns: usize,
    out: *mut f64,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        with_graph_output(offsets, node_count, neighbours, adjacency_len, columns, out, |g, o| {
            ebc::ebc_delta_table(g, max_degree, columns, o)
        })
    })
}

/// True positive rate (PrivPareto paper, §6.2.3): writes TP / (TP + FN) to `*out`, or 0 when there are
/// no positives. Neighbour relation: one record added or removed, or substituted; global sensitivity
/// Δ = `DPMO_RATE_GLOBAL_SENSITIVITY` = 1 (Example 6.2).
///
/// Errors: a null or misaligned `out`.
///
/// # Safety
/// `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_tpr(true_positives: u64, false_negatives: u64, out: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out.write(rates::tpr(true_positives, false_negatives)) };
        Ok(())
    })())
}

/// True negative rate (PrivPareto paper, §6.2.3): writes TN / (TN + FP) to `*out`, or 0 when there are
/// no negatives. Neighbour relation: one record added or removed, or substituted; global sensitivity
/// Δ = `DPMO_RATE_GLOBAL_SENSITIVITY` = 1.
///
/// Errors: a null or misaligned `out`.
///
/// # Safety
/// `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_tnr(true_negatives: u64, false_positives: u64, out: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out.write(rates::tnr(true_negatives, false_positives)) };
        Ok(())
    })())
}

/// The admissible δ of a rate hits / (hits + misses) at distance `t` — (TP, FN) for TPR, (TN, FP) for
/// TNR — written to `*out`. This is the corrected form of PrivPareto Lemma 6.1 (the printed lemma is not
/// admissible, docs/DESIGN.md §2): with P′ = hits + misses − t, δ = 1 if P′ ≤ 1, otherwise
/// min(1, min(P′, max(hits, misses)) / (P′(P′ − 1))) for `DPMO_NEIGHBOURS_ADD_REMOVE`, and the maximum of
/// that and 1/P′ for `DPMO_NEIGHBOURS_SUBSTITUTION`. Already clamped to Δ =
/// `DPMO_RATE_GLOBAL_SENSITIVITY` = 1.
///
/// Errors: `neighbours` not one of the two constants → `DPMO_INVALID_ARGUMENT`; a null or misaligned `out`.
///
/// # Safety
/// `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_rate_delta(
    hits: u64,
    misses: u64,
    t: u64,
    neighbours: u32,
    out: *mut f64,
) -> dpmo_status {
    status_of((|| {
        let relation = relation_of(neighbours)?;
        check_out(out)?;
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out.write(rates::rate_delta(hits, misses, t, relation)) };
        Ok(())
    })())
}

/// The δ table of a rate for n candidates (e.g. classifiers): writes `dpmo_rate_delta(hits[r], misses[r],
/// t, neighbours)` to `out[r · columns + t]` for r < n, t < `columns`. Neighbour relation as selected by
/// `neighbours`; Δ = `DPMO_RATE_GLOBAL_SENSITIVITY` = 1. n = 0 is accepted and writes nothing.
///
/// Errors: `neighbours` unknown or `columns` = 0 → `DPMO_INVALID_ARGUMENT`; n · columns not
/// representable → `DPMO_OVERFLOW`; a null, misaligned or overlapping pointer.
///
/// # Safety
/// `hits`, `misses`: n readable uint64_t; `out`: n · columns writable doubles overlapping neither.
#[no_mangle]
pub unsafe extern "C" fn dpmo_rate_delta_table(
    hits: *const u64,
    misses: *const u64,
    n: usize,
    neighbours: u32,
    columns: usize,
    out: *mut f64,
) -> dpmo_status {
    status_of((|| {
        let relation = relation_of(neighbours)?;
        let out_len = table_len(n, columns)?;
        check_out(out)?;
        // SAFETY: the caller promises n readable uint64_t at each.
        let (h, m) = unsafe { (input(hits, n)?, input(misses, n)?) };
        check_disjoint(
            &[Region::of(out, out_len)],
            &[Region::of(hits, n), Region::of(misses, n)],
        )?;
        // SAFETY: checked disjoint from the inputs; validity is the caller's contract.
        let out = unsafe { output(out, out_len) }?;
        rates::rate_delta_table(h, m, relation, columns, out)
    })())
}

/// Information gain of a split attribute (Local Dampening paper, §5.2, eq. (2), without the class
/// entropy term, which is the same for every attribute): writes
/// IG = −Σ_j Σ_c τ_{j,c} log₂(τ_{j,c} / τ_j) to `*out`, for the row-major `values` × `classes`
/// contingency table τ_{j,c} = `counts[j · classes + c]`. Neighbour relation: one record added or
/// removed; global sensitivity Δ = log₂(N + 1) + 1/ln 2 for a public bound N on the number of records
/// (`dpmo_info_gain_global_sensitivity`).
///
/// Errors: `values` or `classes` = 0 → `DPMO_EMPTY_INPUT`; `values` > `DPMO_CONTINGENCY_MAX_VALUES` or
/// `classes` > `DPMO_CONTINGENCY_MAX_CLASSES` (16 × 16) → `DPMO_CAPACITY_EXCEEDED`; a total count above
/// 2⁵³ → `DPMO_OVERFLOW`; a null, misaligned or overlapping pointer.
///
/// # Safety
/// `counts`: values · classes readable uint64_t; `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_information_gain(
    counts: *const u64,
    values: usize,
    classes: usize,
    out: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        // SAFETY: forwarded caller contract.
        let (table, region) = unsafe { contingency(counts, values, classes) }?;
        check_disjoint(&[Region::of(out, 1)], &[region])?;
        // SAFETY: checked non-null, aligned and disjoint; the caller promises it is writable.
        unsafe { out.write(info_gain::information_gain(&table)) };
        Ok(())
    })())
}

/// Writes to `*out` the global sensitivity of information gain, Δ = log₂(N + 1) + 1/ln 2, for datasets of
/// at most N = `max_records` records (Local Dampening paper, §5.2, after Friedman and Schuster); N must
/// be public. Neighbour relation: one record added or removed.
///
/// Errors: a null or misaligned `out`.
///
/// # Safety
/// `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_info_gain_global_sensitivity(max_records: u64, out: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out.write(info_gain::info_gain_global_sensitivity(max_records)) };
        Ok(())
    })())
}

/// One attribute's row of the information-gain δ table: writes LS^IG(T, t, A) for t = 0 .. `columns` − 1
/// to `out[0 .. columns]`, the element local sensitivity at distance t (Local Dampening paper, Lemma 5.5
/// at t = 0, Algorithm 3 "Candidates" and Lemma 5.6 beyond, computed incrementally over t; without the
/// printed "a < τ" guard, which drops real neighbours). It is admissible and non-decreasing in t, and
/// **not clamped**: the values may exceed Δ, so pass Δ = `dpmo_info_gain_global_sensitivity(N)` as the
/// `global` of the `dpmo_sensitivity`, which clamps them. For n attributes, call once per attribute with
/// `out` pointing at row r of the n × columns table. Neighbour relation: one record added or removed.
///
/// Cost O(values · classes · columns · min(columns, max count)): keep `columns` to the saturation
/// distance you need.
///
/// Errors: as for `dpmo_information_gain`; `columns` = 0 → `DPMO_INVALID_ARGUMENT`.
///
/// # Safety
/// `counts`: values · classes readable uint64_t; `out`: `columns` writable doubles not overlapping it.
#[no_mangle]
pub unsafe extern "C" fn dpmo_info_gain_delta_table(
    counts: *const u64,
    values: usize,
    classes: usize,
    columns: usize,
    out: *mut f64,
) -> dpmo_status {
    status_of((|| {
        let out_len = table_len(1, columns)?;
        check_out(out)?;
        // SAFETY: forwarded caller contract.
        let (table, region) = unsafe { contingency(counts, values, classes) }?;
        check_disjoint(&[Region::of(out, out_len)], &[region])?;
        // SAFETY: checked disjoint from `counts`; validity is the caller's contract.
        let out = unsafe { output(out, out_len) }?;
        InfoGainSensitivity::fill(&table, out);
        Ok(())
    })())
}

/// The Gini split utility (Local Dampening paper, §5.2 "Gini Index", after Friedman and Schuster):
/// writes −Σ_j (τ_j − Σ_c τ_{j,c}² / τ_j) over the values j with τ_j > 0 to `*out` (0 for a pure split,
/// larger is better), for the row-major `values` × `classes` table `counts`. Neighbour relation: one
/// record added or removed; global sensitivity Δ = `DPMO_GINI_GLOBAL_SENSITIVITY` = 2 (use it with a
/// global selector; no local δ is offered).
///
/// Errors: as for `dpmo_information_gain`.
///
/// # Safety
/// `counts`: values · classes readable uint64_t; `out`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_gini(counts: *const u64, values: usize, classes: usize, out: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        // SAFETY: forwarded caller contract.
        let (table, region) = unsafe { contingency(counts, values, classes) }?;
        check_disjoint(&[Region::of(out, 1)], &[region])?;
        // SAFETY: checked non-null, aligned and disjoint; the caller promises it is writable.
        unsafe { out.write(gini::gini_utility(&table)) };
        Ok(())
    })())
}

/// The element-wise maximum of two δ tables of the same shape, in place: `acc[i] = max(acc[i],
/// other[i])` for i < `len`. The maximum of admissible functions is admissible (Local Dampening paper,
/// Lemma 4.5), so this combines, e.g., several bounds of one utility, or the δ of utilities whose maximum
/// is taken. (A minimum is not admissible in general and is not offered.) `acc` is read and written;
/// `other` must not overlap it.
///
/// Errors: a NaN, negative or infinite value in either table → `DPMO_INVALID_SENSITIVITY_VALUE` (`acc`
/// unchanged); a null, misaligned or overlapping pointer; len · 8 not representable → `DPMO_OVERFLOW`.
///
/// # Safety
/// `acc`: `len` readable and writable doubles; `other`: `len` readable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_delta_max_into(acc: *mut f64, other: *const f64, len: usize) -> dpmo_status {
    status_of((|| {
        check_out(acc)?;
        // SAFETY: the caller promises len readable doubles.
        let o = unsafe { input(other, len) }?;
        check_disjoint(&[Region::of(acc, len)], &[Region::of(other, len)])?;
        // SAFETY: checked disjoint from `other`; validity is the caller's contract.
        let a = unsafe { output(acc, len) }?;
        compose::max_into(a, o)
    })())
}
