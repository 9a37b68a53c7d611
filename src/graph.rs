//! A borrowed, validated, undirected graph in compressed sparse row (CSR) form: the input of the graph
//! utilities (degree, egocentric density, egocentric betweenness centrality).
//!
//! Node v's neighbours are `neighbours[offsets[v]..offsets[v + 1]]`, sorted strictly ascending. Every
//! undirected edge {u, v} is stored twice (v in u's list and u in v's list), so `neighbours.len()` = 2m.

use crate::Error;

/// An undirected simple graph borrowed from caller slices, validated once by [`Csr::new`] so that the
/// graph functions never index out of bounds and may rely on sorted, duplicate-free, symmetric lists.
#[derive(Clone, Copy, Debug)]
pub struct Csr<'a> {
    offsets: &'a [usize],
    neighbours: &'a [u32],
}

impl<'a> Csr<'a> {
    /// Validates and wraps a CSR graph with n = `offsets.len() − 1` nodes.
    ///
    /// Checks: `offsets` is non-empty, starts at 0, is non-decreasing and ends at `neighbours.len()`;
    /// every list is strictly increasing (sorted, no duplicate edges); every id is < n; no self loops;
    /// n ≤ 2³² so that ids fit in `u32`; symmetry (v ∈ N(u) ⇒ u ∈ N(v)).
    ///
    /// Cost O(n + m log d_max): symmetry is checked by one binary search per stored entry.
    ///
    /// Errors: empty `offsets`, offsets not starting at 0 or not ending at `neighbours.len()`
    /// → [`Error::LengthMismatch`]; decreasing offsets, unsorted or duplicate entries, an id ≥ n, a
    /// self loop or a missing reverse edge → [`Error::InvalidArgument`]; n > 2³² → [`Error::Overflow`].
    pub fn new(offsets: &'a [usize], neighbours: &'a [u32]) -> Result<Self, Error> {
        let n = match offsets.len().checked_sub(1) {
            Some(n) => n,
            None => return Err(Error::LengthMismatch),
        };
        if n as u64 > u64::from(u32::MAX) + 1 {
            return Err(Error::Overflow);
        }
        if offsets[0] != 0 || offsets[n] != neighbours.len() {
            return Err(Error::LengthMismatch);
        }
        for v in 0..n {
            let (lo, hi) = (offsets[v], offsets[v + 1]);
            if lo > hi || hi > neighbours.len() {
                return Err(Error::InvalidArgument);
            }
            let list = &neighbours[lo..hi];
            let mut prev: Option<u32> = None;
            for &w in list {
                if w as usize >= n || w as usize == v || prev.is_some_and(|p| p >= w) {
                    return Err(Error::InvalidArgument);
                }
                prev = Some(w);
            }
        }
        let g = Csr { offsets, neighbours };
        for v in 0..n {
            for &w in g.neighbors(v) {
                if !g.has_edge(w as usize, v) {
                    return Err(Error::InvalidArgument);
                }
            }
        }
        Ok(g)
    }

    /// The number of nodes n.
    #[inline]
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The number of undirected edges m (half the number of stored entries).
    #[inline]
    pub fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// The number of stored adjacency entries, 2m.
    #[inline]
    pub fn adjacency_len(&self) -> usize {
        self.neighbours.len()
    }

    /// The degree of node `v`, or 0 when `v` ≥ n.
    #[inline]
    pub fn degree(&self, v: usize) -> usize {
        self.neighbors(v).len()
    }

    /// The sorted neighbours of node `v`; empty when `v` ≥ n.
    #[inline]
    pub fn neighbors(&self, v: usize) -> &'a [u32] {
        if v >= self.node_count() {
            return &[];
        }
        // Validated in `new`: offsets are monotone and within `neighbours`.
        &self.neighbours[self.offsets[v]..self.offsets[v + 1]]
    }

    /// The maximum degree Δ(G) (0 for a graph without edges).
    pub fn max_degree(&self) -> usize {
        (0..self.node_count()).map(|v| self.degree(v)).max().unwrap_or(0)
    }

    /// Whether {u, v} is an edge; O(log d(u)) by binary search. False for ids ≥ n.
    #[inline]
    pub fn has_edge(&self, u: usize, v: usize) -> bool {
        match u32::try_from(v) {
            Ok(v) => self.neighbors(u).binary_search(&v).is_ok(),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_triangle_with_a_tail() {
        // 0-1, 0-2, 1-2, 2-3
        let off = [0, 2, 4, 7, 8];
        let adj = [1, 2, 0, 2, 0, 1, 3, 2];
        let g = Csr::new(&off, &adj).unwrap();
        assert_eq!(g.node_count(), 4);
        assert_eq!(g.edge_count(), 4);
        assert_eq!(g.degree(2), 3);
        assert_eq!(g.max_degree(), 3);
        assert!(g.has_edge(3, 2) && !g.has_edge(3, 0) && !g.has_edge(9, 0));
        assert_eq!(g.neighbors(7), &[] as &[u32]);
    }

    #[test]
    fn rejects_malformed_graphs() {
        assert_eq!(Csr::new(&[], &[]).err(), Some(Error::LengthMismatch));
        assert!(Csr::new(&[0], &[]).is_ok());
        assert_eq!(Csr::new(&[0, 1], &[]).err(), Some(Error::LengthMismatch));
        assert_eq!(Csr::new(&[1, 1], &[0]).err(), Some(Error::LengthMismatch));
        // self loop
        assert_eq!(Csr::new(&[0, 1], &[0]).err(), Some(Error::InvalidArgument));
        // id out of range
        assert_eq!(Csr::new(&[0, 1, 1], &[5]).err(), Some(Error::InvalidArgument));
        // asymmetric
        assert_eq!(Csr::new(&[0, 1, 1], &[1]).err(), Some(Error::InvalidArgument));
        // duplicate
        assert_eq!(Csr::new(&[0, 2, 4], &[1, 1, 0, 0]).err(), Some(Error::InvalidArgument));
        // unsorted
        assert_eq!(
            Csr::new(&[0, 2, 3, 4], &[2, 1, 0, 0]).err(),
            Some(Error::InvalidArgument)
        );
        // decreasing offsets
        assert_eq!(Csr::new(&[0, 2, 1, 2], &[1, 2]).err(), Some(Error::InvalidArgument));
        // an offset beyond the adjacency must not be sliced
        assert_eq!(Csr::new(&[0, 5, 2], &[1, 0]).err(), Some(Error::InvalidArgument));
    }
}
