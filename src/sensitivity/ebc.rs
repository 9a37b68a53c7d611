//! Egocentric betweenness centrality (EBC) under edge differential privacy (Local Dampening paper, §5.1).
//!
//! EBC(c) = Σ_{u ≠ v ∈ N_c} p_uv(c) / q_uv(c) over unordered pairs (Def. 5.1), with q_uv the number of
//! geodesics between u and v in the ego network G[N_c ∪ {c}] and p_uv those through c. In the ego network
//! c is adjacent to all of N_c, so a pair of adjacent neighbours contributes 0 and a non-adjacent pair
//! contributes 1 / (1 + k_uv), k_uv being the number of common neighbours of u and v inside N_c.
//!
//! Neighbour relation: graphs on the same node set differing in one edge. Global sensitivity (Lemma 5.2):
//! Δ = max(D(D − 1)/4, D) for a public upper bound D on the maximum degree (the paper assumes the maximum
//! degree is public); every graph the mechanism may see must respect the bound.

use crate::graph::Csr;
use crate::Error;

/// The length of the `u32` scratch slice [`ebc_all`] needs for a graph with `n` nodes and `adjacency_len`
/// = 2m stored adjacency entries ([`Csr::adjacency_len`]): 4n + 1 + 2m.
///
/// Errors: the sum overflows `usize` → [`Error::Overflow`].
pub fn ebc_scratch_len(n: usize, adjacency_len: usize) -> Result<usize, Error> {
    n.checked_mul(4)
        .and_then(|x| x.checked_add(1))
        .and_then(|x| x.checked_add(adjacency_len))
        .ok_or(Error::Overflow)
}

/// Writes EBC(c) (Local Dampening paper, Def. 5.1) for every node c into `out[c]`; nodes with fewer than
/// two neighbours have no pair and get 0. Neighbour relation: one edge; Δ = [`ebc_global_sensitivity`].
///
/// For each c the ego network is copied into `scratch` as a small CSR over local indices, and the
/// common-neighbour counts k_uv > 0 are found by walking the paths u–x–w inside it; pairs never reached
/// have k_uv = 0 and are counted arithmetically instead of enumerated. Cost
/// O(Σ_v d(v)² + Σ_c Σ_{x ∈ N_c} d_c(x)²) with d_c(x) = |N(x) ∩ N_c|; memory: `scratch` only.
///
/// Errors: `out.len()` ≠ n → [`Error::LengthMismatch`]; `scratch` shorter than
/// [`ebc_scratch_len`] → [`Error::ScratchTooSmall`]; more than 2³² − 1 adjacency entries → [`Error::Overflow`]
/// (local offsets are stored as `u32`).
pub fn ebc_all(g: &Csr<'_>, scratch: &mut [u32], out: &mut [f64]) -> Result<(), Error> {
    let n = g.node_count();
    let adj_len = g.adjacency_len();
    if out.len() != n {
        return Err(Error::LengthMismatch);
    }
    if u32::try_from(adj_len).is_err() || u32::try_from(n).is_err() {
        return Err(Error::Overflow);
    }
    if scratch.len() < ebc_scratch_len(n, adj_len)? {
        return Err(Error::ScratchTooSmall);
    }
    let (local, rest) = scratch.split_at_mut(n);
    let (loff, rest) = rest.split_at_mut(n + 1);
    let (ladj, rest) = rest.split_at_mut(adj_len);
    let (cnt, rest) = rest.split_at_mut(n);
    let touched = &mut rest[..n];
    // `local[x]` = 1 + index of x in N_c while c is processed, 0 otherwise; `cnt` is all zero between pairs.
    local.fill(0);
    cnt.fill(0);

    for (c, slot) in out.iter_mut().enumerate() {
        let nc = g.neighbors(c);
        let d = nc.len();
        if d < 2 {
            *slot = 0.0;
            continue;
        }
        for (i, &x) in nc.iter().enumerate() {
            local[x as usize] = i as u32 + 1;
        }
        // Local lists stay sorted: N(x) is sorted by id and local indices are increasing in id.
        let mut len = 0usize;
        loff[0] = 0;
        for (i, &x) in nc.iter().enumerate() {
            for &y in g.neighbors(x as usize) {
                let l = local[y as usize];
                if l != 0 {
                    ladj[len] = l - 1;
                    len += 1;
                }
            }
            loff[i + 1] = len as u32;
        }
        let ego_edges = (len / 2) as u64;

        let mut shared = 0.0;
        let mut shared_pairs = 0u64;
        for u in 0..d {
            let lu = &ladj[loff[u] as usize..loff[u + 1] as usize];
            let mut k = 0usize;
            for &x in lu {
                let x = x as usize;
                for &w in &ladj[loff[x] as usize..loff[x + 1] as usize] {
                    if w as usize > u {
                        let cw = &mut cnt[w as usize];
                        if *cw == 0 {
                            touched[k] = w;
                            k += 1;
                        }
                        *cw += 1;
                    }
                }
            }
            for &w in &touched[..k] {
                if lu.binary_search(&w).is_err() {
                    shared += 1.0 / (1.0 + f64::from(cnt[w as usize]));
                    shared_pairs += 1;
                }
                cnt[w as usize] = 0;
            }
        }
        let pairs = (d as u64) * (d as u64 - 1) / 2;
        // Non-adjacent pairs with no common neighbour in N_c: exactly one geodesic, through c.
        let lonely = pairs.saturating_sub(ego_edges).saturating_sub(shared_pairs);
        *slot = lonely as f64 + shared;
        for &x in nc {
            local[x as usize] = 0;
        }
    }
    Ok(())
}

/// Δ = max(D(D − 1)/4, D): the global sensitivity of EBC for graphs of maximum degree at most D
/// (Local Dampening paper, Lemma 5.2). Neighbour relation: one edge.
pub fn ebc_global_sensitivity(max_degree: usize) -> f64 {
    raw_delta(max_degree as f64)
}

fn raw_delta(k: f64) -> f64 {
    (k * (k - 1.0) / 4.0).max(k)
}

/// The admissible function δ^EBC(G, t, v) = max((d + t)(d + t − 1)/4, d + t) with d = d^G(v)
/// (Local Dampening paper, Def. 5.3, Lemma 5.4), clamped to Δ = [`ebc_global_sensitivity`]`(max_degree)`
/// (Lemma 3.5). `max_degree` is the public bound D on the maximum degree. Neighbour relation: one edge.
#[inline]
pub fn ebc_delta(degree: usize, t: usize, max_degree: usize) -> f64 {
    raw_delta(degree.saturating_add(t) as f64).min(ebc_global_sensitivity(max_degree))
}

/// Fills the n × `columns` row-major table `out[v · columns + t]` = [`ebc_delta`]`(d(v), t, max_degree)`,
/// ready for [`DeltaSource::Table`](crate::sensitivity::DeltaSource::Table). Neighbour relation: one edge;
/// Δ = [`ebc_global_sensitivity`]`(max_degree)`.
///
/// Errors: `out.len()` ≠ n · `columns` → [`Error::LengthMismatch`]; a node of degree above the public
/// bound `max_degree` → [`Error::InvalidArgument`] (the bound, and thus Δ, would be wrong).
pub fn ebc_delta_table(g: &Csr<'_>, max_degree: usize, columns: usize, out: &mut [f64]) -> Result<(), Error> {
    if g.node_count().checked_mul(columns) != Some(out.len()) {
        return Err(Error::LengthMismatch);
    }
    if g.max_degree() > max_degree {
        return Err(Error::InvalidArgument);
    }
    if columns == 0 {
        return Ok(());
    }
    for (v, row) in out.chunks_exact_mut(columns).enumerate() {
        let d = g.degree(v);
        for (t, slot) in row.iter_mut().enumerate() {
            *slot = ebc_delta(d, t, max_degree);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_len_overflow() {
        assert_eq!(ebc_scratch_len(3, 4), Ok(17));
        assert_eq!(ebc_scratch_len(usize::MAX, 0), Err(Error::Overflow));
    }

    #[test]
    fn star_and_triangle() {
        // star centre 0 with leaves 1, 2, 3: three pairs, one geodesic each, all through 0
        let g = Csr::new(&[0, 3, 4, 5, 6], &[1, 2, 3, 0, 0, 0]).unwrap();
        let mut s = [0u32; 17 + 6];
        let mut out = [0.0; 4];
        ebc_all(&g, &mut s, &mut out).unwrap();
        assert_eq!(out, [3.0, 0.0, 0.0, 0.0]);
        assert_eq!(ebc_all(&g, &mut s[..10], &mut out), Err(Error::ScratchTooSmall));
        assert_eq!(ebc_global_sensitivity(7), 10.5);
        assert_eq!(ebc_delta(3, 4, 5), 5.0);
        assert_eq!(ebc_delta(3, 40, 5), 5.0);
    }
}
