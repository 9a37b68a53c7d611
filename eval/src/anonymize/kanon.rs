//! The k-anonymity baseline: full-domain generalization (Samarati 2001; LeFevre et al.'s Incognito searches
//! the same space) of the same hierarchies. A level vector (l_1, …, l_k) generalizes every record's
//! attribute i to its ancestor l_i levels up; the table is k-anonymous when every group of equal
//! generalized records has at least k members (no suppression). The lattice of level vectors has only
//! N = ∏ (height_i + 1) members, so it is searched exhaustively — no pruning, no heuristic — and the
//! chosen generalization is the k-anonymous vector of largest average utility u (ties: lower average risk,
//! then the first vector in mixed-radix order): the optimal full-domain k-anonymization under u.

use super::space::Space;
use rayon::prelude::*;
use std::collections::HashMap;

/// One level vector's table.
#[derive(Clone, Debug)]
pub struct FullDomain {
    /// Its levels (0 = leaf).
    pub levels: Vec<usize>,
    /// The smallest group: the table is k-anonymous for every k up to it.
    pub min_group: u32,
    /// Average u over the records.
    pub utility: f64,
    /// Average risk Φ/|ρ(g, D)| over the records (|ρ| is the record's group size).
    pub risk: f64,
}

/// Every level vector of the lattice, evaluated.
pub fn all(space: &Space) -> Vec<FullDomain> {
    let phi = space.phi_model_ii();
    (0..space.n)
        .into_par_iter()
        .map(|j| {
            let levels: Vec<usize> = (0..space.k).map(|i| space.level(j, i)).collect();
            let mut groups: HashMap<u64, u32> = HashMap::new();
            let mut keys = Vec::with_capacity(space.classes_len());
            let mut u_sum = 0.0;
            for ci in 0..space.classes_len() {
                let g: Vec<u32> = (0..space.k).map(|i| space.node(ci, i, levels[i])).collect();
                let u: f64 = g.iter().enumerate().map(|(i, &v)| space.d[i][v as usize]).sum();
                u_sum += u * f64::from(space.mult[ci]);
                let key = space.key(&g);
                *groups.entry(key).or_insert(0) += space.mult[ci];
                keys.push(key);
            }
            let mut risk = 0.0;
            for (ci, g) in keys.iter().enumerate() {
                risk += f64::from(space.mult[ci]) * phi / f64::from(groups[g]);
            }
            FullDomain {
                levels,
                min_group: groups.values().copied().min().unwrap_or(0),
                utility: u_sum / space.m as f64,
                risk: risk / space.m as f64,
            }
        })
        .collect()
}

/// The optimal k-anonymous full-domain generalization of `all` (None when even (⊥, …, ⊥) has fewer than k
/// records, i.e. k > m).
pub fn best(all: &[FullDomain], k: u32) -> Option<&FullDomain> {
    all.iter()
        .filter(|f| f.min_group >= k)
        .fold(None, |acc: Option<&FullDomain>, f| match acc {
            Some(b) if b.utility > f.utility || (b.utility == f.utility && b.risk <= f.risk) => Some(b),
            _ => Some(f),
        })
}
