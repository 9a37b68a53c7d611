//! Egocentric density under edge differential privacy (PrivPareto paper, eq. (2) and §7.3).
//!
//! egodensity(G, v) = 2·|{edges between neighbours of v}| / (|N(v)|·(|N(v)| − 1)), the fraction of
//! possible edges among v's neighbours that exist. Neighbour relation: graphs differing in one edge
//! (Def. 7.1). Global sensitivity Δ = 1 (the range is [0, 1] and the path v2–v1–v3 versus the triangle
//! attains it at v1).
//!
//! **Small neighbourhoods.** Eq. (2) divides by zero when |N(v)| < 2. We define egodensity = 0 there (no
//! pair of neighbours, so no possible edge among them). This keeps admissibility: a node with d ≤ 1
//! neighbours has δ = 1 = Δ at every t (see [`egodensity_delta`]), so condition 1 holds because every
//! value lies in [0, 1]; condition 2 for a neighbour y whose node has degree d_y ≤ d + 1 ≤ 2 also reads
//! δ = 1 ≥ δ(y, t). The brute-force test over all graphs on 5 and 6 nodes confirms it.

use crate::graph::Csr;
use crate::Error;

/// Δ = 1: the global sensitivity of egocentric density under edge-DP (PrivPareto paper, §7.3).
pub const EGODENSITY_GLOBAL_SENSITIVITY: f64 = 1.0;

/// Writes egodensity(G, v) for every node into `out[v]` (PrivPareto paper, eq. (2)); nodes with fewer than
/// two neighbours get 0 (see the module documentation). Neighbour relation: one edge; Δ = 1.
///
/// Triangles are counted once each (u < w < x, each found by merging the tails of the sorted lists of u
/// and w beyond w), so the cost is O(Σ_{edges {u,w}} (d(u) + d(w))) time and no memory beyond `out`, which
/// holds the per-node triangle counts (exact in `f64` up to 2⁵³) before they are turned into densities.
///
/// Errors: `out.len()` ≠ n → [`Error::LengthMismatch`].
pub fn egodensity_all(g: &Csr<'_>, out: &mut [f64]) -> Result<(), Error> {
    let n = g.node_count();
    if out.len() != n {
        return Err(Error::LengthMismatch);
    }
    out.fill(0.0);
    for u in 0..n {
        let nu = g.neighbors(u);
        let start = nu.partition_point(|&w| (w as usize) <= u);
        for (i, &w) in nu.iter().enumerate().skip(start) {
            let nw = g.neighbors(w as usize);
            let a = &nu[i + 1..];
            let b = &nw[nw.partition_point(|&x| x <= w)..];
            let (mut p, mut q) = (0, 0);
            while p < a.len() && q < b.len() {
                match a[p].cmp(&b[q]) {
                    core::cmp::Ordering::Less => p += 1,
                    core::cmp::Ordering::Greater => q += 1,
                    core::cmp::Ordering::Equal => {
                        out[u] += 1.0;
                        out[w as usize] += 1.0;
                        out[a[p] as usize] += 1.0;
                        p += 1;
                        q += 1;
                    }
                }
            }
        }
    }
    for (v, slot) in out.iter_mut().enumerate() {
        let d = g.degree(v) as f64;
        *slot = if d < 2.0 { 0.0 } else { 2.0 * *slot / (d * (d - 1.0)) };
    }
    Ok(())
}

/// The admissible sensitivity of egocentric density for a node of degree `degree` at distance `t`
/// (PrivPareto paper §7.3, clamped to Δ = 1 as docs/DESIGN.md §2 requires):
///
/// δ(G, t, v) = min(1, 2 / (|N(v)| − t − 2)) when |N(v)| − t − 2 > 0, and 1 otherwise.
///
/// The printed, unclamped form equals 2 > Δ when |N(v)| − t = 3 and then violates condition 2 of
/// admissibility (Local Dampening Def. 3.3); min(·, Δ) keeps admissibility (Local Dampening Lemma 3.5).
/// Neighbour relation: one edge added or removed; Δ = 1.
#[inline]
pub fn egodensity_delta(degree: usize, t: usize) -> f64 {
    match degree.checked_sub(t.saturating_add(2)) {
        Some(k) if k >= 2 => 2.0 / k as f64,
        _ => EGODENSITY_GLOBAL_SENSITIVITY,
    }
}

/// Fills the n × `columns` row-major table `out[v · columns + t]` = [`egodensity_delta`]`(d(v), t)`,
/// ready for [`DeltaSource::Table`](crate::sensitivity::DeltaSource::Table). Neighbour relation: one
/// edge; Δ = 1.
///
/// Errors: `out.len()` ≠ n · `columns` → [`Error::LengthMismatch`].
pub fn egodensity_delta_table(g: &Csr<'_>, columns: usize, out: &mut [f64]) -> Result<(), Error> {
    if g.node_count().checked_mul(columns) != Some(out.len()) {
        return Err(Error::LengthMismatch);
    }
    if columns == 0 {
        return Ok(());
    }
    for (v, row) in out.chunks_exact_mut(columns).enumerate() {
        let d = g.degree(v);
        for (t, slot) in row.iter_mut().enumerate() {
            *slot = egodensity_delta(d, t);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_and_triangle_of_section_7_3() {
        // path v2 - v1 - v3 (ids 1 - 0 - 2)
        let g = Csr::new(&[0, 2, 3, 4], &[1, 2, 0, 0]).unwrap();
        let mut e = [9.0; 3];
        egodensity_all(&g, &mut e).unwrap();
        assert_eq!(e, [0.0, 0.0, 0.0]);
        let g = Csr::new(&[0, 2, 4, 6], &[1, 2, 0, 2, 0, 1]).unwrap();
        egodensity_all(&g, &mut e).unwrap();
        assert_eq!(e, [1.0, 1.0, 1.0]);
    }

    #[test]
    fn delta_is_clamped_and_monotone() {
        assert_eq!(egodensity_delta(3, 0), 1.0); // printed: 2
        assert_eq!(egodensity_delta(4, 0), 1.0);
        assert_eq!(egodensity_delta(5, 0), 2.0 / 3.0);
        assert_eq!(egodensity_delta(5, 1), 1.0);
        assert_eq!(egodensity_delta(0, usize::MAX), 1.0);
        assert_eq!(egodensity_delta(usize::MAX, usize::MAX), 1.0);
        for d in 0..20 {
            for t in 0..20 {
                assert!(egodensity_delta(d, t + 1) >= egodensity_delta(d, t));
            }
        }
    }
}
