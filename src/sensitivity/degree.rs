//! Degree centrality under edge differential privacy (PrivPareto paper, §7.3 "Degree").
//!
//! Neighbour relation: graphs on the same node set differing in exactly one edge (Def. 7.1). Adding or
//! removing an edge {u, v} changes the degrees of u and v by exactly one and no other degree, so the global
//! sensitivity is Δ = 1 and the element local sensitivity is LS(G, t, v) = 1 at every distance t.

use crate::graph::Csr;
use crate::Error;

/// Δ = 1: the global sensitivity of the degree under edge-DP (PrivPareto paper, §7.3).
pub const DEGREE_GLOBAL_SENSITIVITY: f64 = 1.0;

/// Writes degree(G, v) = |N(v)| for every node into `out[v]` (PrivPareto paper, §7.3).
///
/// Neighbour relation: one edge added or removed; Δ = [`DEGREE_GLOBAL_SENSITIVITY`].
/// Errors: `out.len()` ≠ n → [`Error::LengthMismatch`].
pub fn degree_all(g: &Csr<'_>, out: &mut [f64]) -> Result<(), Error> {
    if out.len() != g.node_count() {
        return Err(Error::LengthMismatch);
    }
    for (v, slot) in out.iter_mut().enumerate() {
        *slot = g.degree(v) as f64;
    }
    Ok(())
}

/// δ(G, t, v) = 1 for every graph, distance and node: admissible because it equals the global
/// sensitivity (both conditions of Local Dampening Def. 3.3 hold with constant Δ).
/// Neighbour relation: one edge; Δ = 1.
#[inline]
pub fn degree_delta(_t: usize) -> f64 {
    DEGREE_GLOBAL_SENSITIVITY
}

/// Fills the n × `columns` row-major table δ(G, t, v) = 1, ready for
/// [`DeltaSource::Table`](crate::sensitivity::DeltaSource::Table). Neighbour relation: one edge; Δ = 1.
///
/// Errors: `out.len()` ≠ n · `columns` → [`Error::LengthMismatch`].
pub fn degree_delta_table(g: &Csr<'_>, columns: usize, out: &mut [f64]) -> Result<(), Error> {
    if g.node_count().checked_mul(columns) != Some(out.len()) {
        return Err(Error::LengthMismatch);
    }
    out.fill(DEGREE_GLOBAL_SENSITIVITY);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_of_a_path() {
        let off = [0, 1, 3, 4];
        let adj = [1, 0, 2, 1];
        let g = Csr::new(&off, &adj).unwrap();
        let mut d = [0.0; 3];
        degree_all(&g, &mut d).unwrap();
        assert_eq!(d, [1.0, 2.0, 1.0]);
        assert_eq!(degree_all(&g, &mut [0.0; 2]), Err(Error::LengthMismatch));
        let mut t = [0.0; 6];
        degree_delta_table(&g, 2, &mut t).unwrap();
        assert!(t.iter().all(|&x| x == 1.0));
    }
}
