//! The counting model of docs/DESIGN.md §3, shared by the admissibility proofs (`brute_force_counting.rs`)
//! and the exact output-privacy checks (`privacy_multi.rs`).
//!
//! n = 3 candidates, m = 2 objectives. A record is a 0/1 pattern over (candidate, objective), bit 2·c + i
//! standing for (candidate c, objective i). The ten patterns are: the empty record 0, the six single
//! entries 1, 2, 4, 8, 16, 32, and the three "diagonal" records 3, 12, 48 that give one candidate a point
//! in both objectives at once. Replacing a record can then move one utility, move one candidate up (or
//! down) in both objectives — the move that creates and breaks dominance — or move two candidates in
//! opposite directions, which creates exact ties. (The first ten patterns by (number of ones, value),
//! 0, 1, 2, 4, 8, 16, 32, 3, 5, 6, catch strict comparisons only 82 times with textbook dominance; this
//! set catches them 162 and 366 times.)
//! A database is a multiset of K = 3 records (220 databases); neighbours replace one record; u_i(x, r) is
//! the number of records with a one at (r, i). Each u_i then changes by at most 1: δ = 1 constant, Δ = 1.

use std::collections::{BTreeSet, HashMap};

/// Candidates.
pub const N: usize = 3;
/// Objectives.
pub const M: usize = 2;
/// Records per database.
pub const K: usize = 3;

pub fn patterns() -> Vec<u32> {
    let empty = [0u32];
    let singles = (0..N * M).map(|bit| 1u32 << bit);
    let diagonals = (0..N).map(|c| 0b11u32 << (M * c));
    let all: Vec<u32> = empty.into_iter().chain(singles).chain(diagonals).collect();
    assert_eq!(all, [0, 1, 2, 4, 8, 16, 32, 3, 12, 48]);
    all
}

/// All databases (sorted pattern-index triples) and the unordered neighbour pairs (one record replaced),
/// each pair once with the smaller index first.
pub fn model() -> (Vec<[usize; K]>, Vec<(usize, usize)>) {
    let p = patterns().len();
    let mut dbs = Vec::new();
    for a in 0..p {
        for b in a..p {
            for c in b..p {
                dbs.push([a, b, c]);
            }
        }
    }
    let index: HashMap<[usize; K], usize> = dbs.iter().enumerate().map(|(i, d)| (*d, i)).collect();
    let mut pairs = BTreeSet::new();
    for (xi, db) in dbs.iter().enumerate() {
        for pos in 0..K {
            for q in 0..p {
                let mut y = *db;
                y[pos] = q;
                y.sort();
                let yi = index[&y];
                if yi != xi {
                    pairs.insert((xi.min(yi), xi.max(yi)));
                }
            }
        }
    }
    (dbs, pairs.into_iter().collect())
}

/// u_i(x, r) as an n × m row-major array.
pub fn utilities(db: &[usize; K], pats: &[u32]) -> Vec<f64> {
    let mut u = vec![0.0; N * M];
    for &rec in db {
        for (bit, slot) in u.iter_mut().enumerate() {
            *slot += f64::from((pats[rec] >> bit) & 1);
        }
    }
    u
}

/// The utilities of every database of [`model`], in its order.
pub fn all_utilities() -> (Vec<Vec<f64>>, Vec<(usize, usize)>) {
    let pats = patterns();
    let (dbs, pairs) = model();
    (dbs.iter().map(|d| utilities(d, &pats)).collect(), pairs)
}
