//! Value generalization hierarchies (VGHs) and their product lattice (paper §2.1.2).
//!
//! A VGH 𝓛_i is a tree given as a parent array over nodes 0..n_i: `parents[v]` is the parent of v and the
//! root ⊥ (the most general value, "suppressed") is the one node that is its own parent. Leaves are the data
//! values; x ⪰_i y when x is y or one of its ancestors. 𝓛 = 𝓛_1 × … × 𝓛_k is ordered componentwise, with
//! top (⊥, …, ⊥). For a record a, a⁺ = a_1⁺ × … × a_k⁺ is the chain product of its generalizations, and
//! ρ(x, D) = {t ∈ D : t ⪯ x} the records x generalizes.
//!
//! A record value may be any node, not only a leaf: a value at an internal node is a record that is already
//! generalized there (for instance a missing value recorded as ⊥).
//!
//! **Record values out of range.** Records are private, so a node id ≥ n_i in a record cannot be an error
//! of the private release (the status would depend on the data: a free probe of whether some record holds
//! a bad id). [`release`](super::release) and [`record_probabilities`](super::record_probabilities) apply
//! a public rule instead, [`Hierarchy::node_or_root`]: such a value reads as ⊥, the most general value (the
//! value of a record whose attribute is unknown). The public functions of this module that take records
//! (counts, chain products) still refuse them: they release nothing and are not differentially private.
//!
//! **Element order of a⁺.** An element x ∈ a⁺ is given by its levels l_i ∈ [0, depth(a_i)] (l_i = 0 is a_i
//! itself, l_i = depth(a_i) is ⊥). Elements are numbered in mixed radix with the last attribute fastest:
//! index = Σ_i l_i · stride_i, stride_{k−1} = 1, stride_i = stride_{i+1} · (depth(a_{i+1}) + 1). Index 0 is
//! a itself and the last index is (⊥, …, ⊥). Every function of this module that writes one value per
//! element of a⁺ uses this order.

use crate::Error;

/// The largest number of attributes k.
pub const MAX_ATTRIBUTES: usize = 16;
/// The largest height of a hierarchy (edges from the root to the deepest node): a chain a_i⁺ has at most
/// `MAX_HEIGHT + 1` elements.
pub const MAX_HEIGHT: usize = 15;
/// The largest chain product a lattice may produce: N = ∏_i (height_i + 1) must not exceed it, so that no
/// record's a⁺ (|a⁺| ≤ N) can, and every per-record buffer has a length known before the data is read.
pub const MAX_CHAIN_PRODUCT: usize = 1 << 16;
/// The largest number of nodes of one hierarchy (node ids are `u32`; leaf counts use 31 bits).
pub const MAX_NODES: usize = (1 << 31) - 1;

const INTERNAL: u32 = 1 << 31;

/// One validated VGH: the caller's parent array and the number of leaves under every node (n_i(x) of the
/// paper), kept in caller memory.
#[derive(Clone, Copy, Debug)]
pub struct Hierarchy<'a> {
    parents: &'a [u32],
    leaves: &'a [u32],
    root: u32,
    height: usize,
}

impl<'a> Hierarchy<'a> {
    const EMPTY: Hierarchy<'static> = Hierarchy {
        parents: &[],
        leaves: &[],
        root: 0,
        height: 0,
    };

    /// Validates the parent array of one hierarchy and fills `leaf_scratch[..n]` with n_i(v), the number
    /// of leaves under each node v. O(n · height).
    ///
    /// Errors: no node → [`Error::EmptyInput`]; more than [`MAX_NODES`] nodes or a node deeper than
    /// [`MAX_HEIGHT`] → [`Error::CapacityExceeded`]; a parent id ≥ n, no root (then the parents contain a
    /// cycle), several roots (a forest) or a cycle → [`Error::InvalidArgument`]; `leaf_scratch` shorter
    /// than n → [`Error::ScratchTooSmall`]. On error `leaf_scratch` is untouched.
    pub fn new(parents: &'a [u32], leaf_scratch: &'a mut [u32]) -> Result<Self, Error> {
        let n = parents.len();
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        if n > MAX_NODES {
            return Err(Error::CapacityExceeded);
        }
        if leaf_scratch.len() < n {
            return Err(Error::ScratchTooSmall);
        }
        let mut root = None;
        for (v, &p) in parents.iter().enumerate() {
            if p as usize >= n {
                return Err(Error::InvalidArgument);
            }
            if p as usize == v {
                if root.is_some() {
                    return Err(Error::InvalidArgument);
                }
                root = Some(p);
            }
        }
        // Without a root every node has another node as parent: following parents must cycle.
        let root = root.ok_or(Error::InvalidArgument)?;
        let mut height = 0;
        for v in 0..n as u32 {
            height = height.max(checked_depth(parents, root, v)?);
        }
        let leaves: &'a mut [u32] = &mut leaf_scratch[..n];
        leaves.fill(0);
        for (v, &p) in parents.iter().enumerate() {
            if v as u32 != root {
                leaves[p as usize] |= INTERNAL;
            }
        }
        // Every leaf adds one to itself and each ancestor. A leaf is visited once and is nobody's
        // ancestor, so its INTERNAL bit is still clear when the loop reaches it; counts stay below 2^31.
        for v in 0..n {
            if leaves[v] & INTERNAL == 0 {
                let mut x = v as u32;
                loop {
                    leaves[x as usize] += 1;
                    if x == root {
                        break;
                    }
                    x = parents[x as usize];
                }
            }
        }
        for c in leaves.iter_mut() {
            *c &= !INTERNAL;
        }
        Ok(Hierarchy {
            parents,
            leaves,
            root,
            height,
        })
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Always false: a valid hierarchy has a root.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// The public rule for a value read from a private record: v itself when it is a node (v < n), else
    /// the root ⊥. Applied per attribute, it maps each record to a valid record by a function of that
    /// record and the public hierarchy alone, T(a); so T(D) and T(D′) differ in at most one record whenever
    /// D and D′ do (T of the added record), and every guarantee for adding or removing one record of a
    /// valid database holds for T(D) unchanged: Theorem 4's analysis (m, the sampling, the √N sensitivity
    /// of the counts — T(a)⁺ is the chain product of a valid record) is that of the valid database T(D).
    /// ⊥ rather than dropping the record: it is what the hierarchy already means by an unknown value (a
    /// record with a value there is a valid one), it keeps m (and hence m̄ and the output length m · k) a
    /// plain count of the rows given, and needs no pass over the data before the release.
    #[inline]
    pub fn node_or_root(&self, v: u32) -> u32 {
        if (v as usize) < self.parents.len() {
            v
        } else {
            self.root
        }
    }

    /// The root ⊥.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// The height: the largest depth of a node (edges to the root).
    pub fn height(&self) -> usize {
        self.height
    }

    /// n_i(v), the number of leaves of the subtree rooted at v (1 for a leaf). Errors: v ≥ n →
    /// [`Error::InvalidArgument`].
    pub fn leaf_count(&self, v: u32) -> Result<u32, Error> {
        self.leaves.get(v as usize).copied().ok_or(Error::InvalidArgument)
    }

    /// The depth of v (0 for the root). Errors: v ≥ n → [`Error::InvalidArgument`].
    pub fn depth(&self, v: u32) -> Result<usize, Error> {
        self.check(v)?;
        Ok(self.depth_of(v))
    }

    /// Whether x ⪰_i v (x is v or an ancestor of v). Errors: an id ≥ n → [`Error::InvalidArgument`].
    pub fn generalizes(&self, x: u32, v: u32) -> Result<bool, Error> {
        self.check(x)?;
        self.check(v)?;
        Ok(self.is_ancestor(x, v))
    }

    fn check(&self, v: u32) -> Result<(), Error> {
        if (v as usize) < self.parents.len() {
            Ok(())
        } else {
            Err(Error::InvalidArgument)
        }
    }

    // The helpers below take ids already checked against n.

    #[inline]
    pub(crate) fn parent_of(&self, v: u32) -> u32 {
        self.parents[v as usize]
    }

    #[inline]
    pub(crate) fn leaves_of(&self, v: u32) -> u32 {
        self.leaves[v as usize]
    }

    pub(crate) fn depth_of(&self, mut v: u32) -> usize {
        let mut d = 0;
        while v != self.root {
            v = self.parent_of(v);
            d += 1;
        }
        d
    }

    pub(crate) fn is_ancestor(&self, x: u32, v: u32) -> bool {
        let (dx, mut dv) = (self.depth_of(x), self.depth_of(v));
        if dx > dv {
            return false;
        }
        let mut y = v;
        while dv > dx {
            y = self.parent_of(y);
            dv -= 1;
        }
        y == x
    }
}

/// The depth of v, or the error that explains why the root is not reached within [`MAX_HEIGHT`] steps.
fn checked_depth(parents: &[u32], root: u32, v: u32) -> Result<usize, Error> {
    let mut x = v;
    let mut d = 0;
    while x != root {
        if d == MAX_HEIGHT {
            // Either a longer path to the root (too deep) or a cycle: n more steps tell them apart.
            for _ in 0..parents.len() {
                if x == root {
                    return Err(Error::CapacityExceeded);
                }
                x = parents[x as usize];
            }
            return Err(Error::InvalidArgument);
        }
        x = parents[x as usize];
        d += 1;
    }
    Ok(d)
}

/// The product lattice 𝓛 = 𝓛_1 × … × 𝓛_k of k validated hierarchies.
#[derive(Clone, Copy, Debug)]
pub struct Lattice<'a> {
    hierarchies: [Hierarchy<'a>; MAX_ATTRIBUTES],
    k: usize,
    max_chain: usize,
}

/// The length of the `u32` scratch [`Lattice::build`] needs: the total number of nodes, Σ n_i.
/// Errors: the sum overflows → [`Error::Overflow`].
pub fn lattice_scratch_len(parents: &[&[u32]]) -> Result<usize, Error> {
    parents
        .iter()
        .try_fold(0usize, |acc, p| acc.checked_add(p.len()))
        .ok_or(Error::Overflow)
}

impl<'a> Lattice<'a> {
    /// The lattice of `hierarchies` (k = their number).
    ///
    /// Errors: k = 0 → [`Error::EmptyInput`]; k > [`MAX_ATTRIBUTES`], N = ∏ (height_i + 1) above
    /// [`MAX_CHAIN_PRODUCT`], or more than 2^64 − 1 elements in 𝓛 → [`Error::CapacityExceeded`].
    pub fn new(hierarchies: &[Hierarchy<'a>]) -> Result<Self, Error> {
        let k = hierarchies.len();
        if k == 0 {
            return Err(Error::EmptyInput);
        }
        if k > MAX_ATTRIBUTES {
            return Err(Error::CapacityExceeded);
        }
        let mut max_chain: usize = 1;
        let mut elements: u128 = 1;
        for h in hierarchies {
            max_chain = max_chain
                .checked_mul(h.height + 1)
                .filter(|&c| c <= MAX_CHAIN_PRODUCT)
                .ok_or(Error::CapacityExceeded)?;
            elements = elements
                .checked_mul(h.len() as u128)
                .filter(|&e| e <= u128::from(u64::MAX))
                .ok_or(Error::CapacityExceeded)?;
        }
        let mut all = [Hierarchy::EMPTY; MAX_ATTRIBUTES];
        all[..k].copy_from_slice(hierarchies);
        Ok(Lattice {
            hierarchies: all,
            k,
            max_chain,
        })
    }

    /// Validates the k parent arrays `parents` and builds their lattice, with the leaf counts in
    /// `scratch` (length [`lattice_scratch_len`]). Errors: those of [`Hierarchy::new`] and
    /// [`Lattice::new`]; `scratch` too short → [`Error::ScratchTooSmall`].
    pub fn build(parents: &[&'a [u32]], scratch: &'a mut [u32]) -> Result<Self, Error> {
        if parents.is_empty() {
            return Err(Error::EmptyInput);
        }
        if parents.len() > MAX_ATTRIBUTES {
            return Err(Error::CapacityExceeded);
        }
        if scratch.len() < lattice_scratch_len(parents)? {
            return Err(Error::ScratchTooSmall);
        }
        let mut hs = [Hierarchy::EMPTY; MAX_ATTRIBUTES];
        let mut rest: &'a mut [u32] = scratch;
        for (slot, p) in hs.iter_mut().zip(parents) {
            let (head, tail) = core::mem::take(&mut rest).split_at_mut(p.len());
            rest = tail;
            *slot = Hierarchy::new(p, head)?;
        }
        Lattice::new(&hs[..parents.len()])
    }

    /// The number of attributes k.
    pub fn attributes(&self) -> usize {
        self.k
    }

    /// The hierarchies, one per attribute.
    pub fn hierarchies(&self) -> &[Hierarchy<'a>] {
        &self.hierarchies[..self.k]
    }

    /// N = ∏_i (height_i + 1), the largest possible |a⁺|: a public bound (it depends on the hierarchies
    /// only) that sizes every per-record buffer and replaces the paper's h^k.
    pub fn max_chain_product(&self) -> usize {
        self.max_chain
    }

    /// Checks an element (k node ids). Errors: length ≠ k → [`Error::LengthMismatch`]; an id out of range
    /// → [`Error::InvalidArgument`].
    pub fn check_element(&self, x: &[u32]) -> Result<(), Error> {
        if x.len() != self.k {
            return Err(Error::LengthMismatch);
        }
        for (h, &v) in self.hierarchies().iter().zip(x) {
            h.check(v)?;
        }
        Ok(())
    }

    /// Checks a row-major array of records (m × k node ids) and returns m (0 is allowed). Errors: a length
    /// that is not a multiple of k → [`Error::LengthMismatch`]; an id out of range →
    /// [`Error::InvalidArgument`].
    pub fn check_records(&self, records: &[u32]) -> Result<usize, Error> {
        if !records.len().is_multiple_of(self.k) {
            return Err(Error::LengthMismatch);
        }
        for r in records.chunks_exact(self.k) {
            self.check_element(r)?;
        }
        Ok(records.len() / self.k)
    }

    /// The number of records of a row-major array (m × k node ids) without looking at the ids: private
    /// records whose values are read through [`Hierarchy::node_or_root`]. Errors: a length that is not a
    /// multiple of k → [`Error::LengthMismatch`] (public: the caller's m · k).
    pub(crate) fn record_count(&self, records: &[u32]) -> Result<usize, Error> {
        if !records.len().is_multiple_of(self.k) {
            return Err(Error::LengthMismatch);
        }
        Ok(records.len() / self.k)
    }

    /// Whether x ⪰ y: x_i ⪰_i y_i for every attribute. Errors: as [`check_element`](Self::check_element).
    pub fn generalizes(&self, x: &[u32], y: &[u32]) -> Result<bool, Error> {
        self.check_element(x)?;
        self.check_element(y)?;
        Ok(self.generalizes_unchecked(x, y))
    }

    pub(crate) fn generalizes_unchecked(&self, x: &[u32], y: &[u32]) -> bool {
        self.hierarchies()
            .iter()
            .zip(x.iter().zip(y))
            .all(|(h, (&xi, &yi))| h.is_ancestor(xi, yi))
    }

    /// The index of an element of 𝓛 in mixed radix over the node counts (attribute k − 1 fastest); unique
    /// per element and below 2^64 (checked by [`Lattice::new`]). Takes a checked element.
    pub(crate) fn element_index(&self, x: &[u32]) -> u64 {
        self.hierarchies().iter().zip(x).fold(0u64, |acc, (h, &v)| {
            acc.wrapping_mul(h.len() as u64).wrapping_add(u64::from(v))
        })
    }

    /// ρ(x, D): the number of records of `records` (m × k) that x generalizes. O(m · k · height).
    /// Errors: those of [`check_element`](Self::check_element) and [`check_records`](Self::check_records).
    pub fn count_generalized(&self, x: &[u32], records: &[u32]) -> Result<u64, Error> {
        self.check_element(x)?;
        self.check_records(records)?;
        Ok(records
            .chunks_exact(self.k)
            .filter(|t| self.generalizes_unchecked(x, t))
            .count() as u64)
    }

    /// |a⁺| = ∏_i (depth(a_i) + 1) for the record a (≤ [`max_chain_product`](Self::max_chain_product)).
    /// Errors: as [`check_element`](Self::check_element).
    pub fn chain_product_len(&self, record: &[u32]) -> Result<usize, Error> {
        self.check_element(record)?;
        Ok(self.chains(record).total)
    }

    /// Writes the elements of a⁺ (each k node ids, in the order of the module docs) to `out`, row-major,
    /// and returns |a⁺|. Errors: as [`check_element`](Self::check_element); `out` shorter than |a⁺| · k →
    /// [`Error::LengthMismatch`] (nothing written).
    pub fn chain_product(&self, record: &[u32], out: &mut [u32]) -> Result<usize, Error> {
        self.check_element(record)?;
        let c = self.chains(record);
        let need = c.total * self.k;
        if out.len() < need {
            return Err(Error::LengthMismatch);
        }
        for (j, row) in out[..need].chunks_exact_mut(self.k).enumerate() {
            c.element(j, row);
        }
        Ok(c.total)
    }

    /// ρ(x, D) for every x ∈ a⁺ at once, written to `out[..|a⁺|]` in the order of the module docs; returns
    /// |a⁺|. Each record t of D is generalized by exactly the x ∈ a⁺ whose levels are at least those of the
    /// lowest common ancestors of (a_i, t_i) in a's chains, so the counts are a histogram of those levels
    /// followed by a k-dimensional prefix sum: O(m · k · height + |a⁺| · k) instead of O(|a⁺| · m · k).
    ///
    /// Errors: those of [`check_element`](Self::check_element) and [`check_records`](Self::check_records);
    /// `out` shorter than |a⁺| → [`Error::LengthMismatch`] (nothing written).
    pub fn count_chain_product(&self, record: &[u32], records: &[u32], out: &mut [u64]) -> Result<usize, Error> {
        self.check_element(record)?;
        self.check_records(records)?;
        let c = self.chains(record);
        if out.len() < c.total {
            return Err(Error::LengthMismatch);
        }
        self.count_into(&c, records, &mut out[..c.total]);
        Ok(c.total)
    }

    /// The chains a_i⁺ of a record, each value read by [`Hierarchy::node_or_root`] (the identity on a
    /// checked record).
    pub(crate) fn chains(&self, record: &[u32]) -> Chains {
        let mut c = Chains {
            k: self.k,
            len: [1; MAX_ATTRIBUTES],
            nodes: [[0; MAX_HEIGHT + 1]; MAX_ATTRIBUTES],
            stride: [1; MAX_ATTRIBUTES],
            total: 1,
        };
        for (i, (h, &a)) in self.hierarchies().iter().zip(record).enumerate() {
            let mut x = h.node_or_root(a);
            let mut l = 0;
            loop {
                c.nodes[i][l] = x;
                if x == h.root {
                    break;
                }
                x = h.parent_of(x);
                l += 1;
            }
            c.len[i] = l + 1;
        }
        for i in (0..self.k).rev() {
            c.stride[i] = c.total;
            c.total *= c.len[i];
        }
        c
    }

    /// The counts of [`count_chain_product`](Self::count_chain_product) into `out` (length |a⁺|), each
    /// value of `records` read by [`Hierarchy::node_or_root`] (the identity on checked records).
    pub(crate) fn count_into(&self, c: &Chains, records: &[u32], out: &mut [u64]) {
        out.fill(0);
        for t in records.chunks_exact(self.k) {
            let mut j = 0;
            for (i, (h, &ti)) in self.hierarchies().iter().zip(t).enumerate() {
                j += c.stride[i] * c.lca_level(h, i, h.node_or_root(ti));
            }
            out[j] += 1;
        }
        for i in 0..self.k {
            let (stride, len) = (c.stride[i], c.len[i]);
            for j in 0..out.len() {
                if (j / stride) % len != 0 {
                    out[j] += out[j - stride];
                }
            }
        }
    }
}

/// The chains a_1⁺, …, a_k⁺ of one record and the mixed-radix numbering of a⁺.
#[derive(Clone, Copy)]
pub(crate) struct Chains {
    pub(crate) k: usize,
    /// |a_i⁺| = depth(a_i) + 1.
    pub(crate) len: [usize; MAX_ATTRIBUTES],
    /// nodes[i][l]: the ancestor of a_i l levels up (nodes[i][len_i − 1] = ⊥).
    pub(crate) nodes: [[u32; MAX_HEIGHT + 1]; MAX_ATTRIBUTES],
    pub(crate) stride: [usize; MAX_ATTRIBUTES],
    /// |a⁺|.
    pub(crate) total: usize,
}

impl Chains {
    /// The level of attribute i in element j.
    #[inline]
    pub(crate) fn level(&self, j: usize, i: usize) -> usize {
        (j / self.stride[i]) % self.len[i]
    }

    /// Writes the k node ids of element j.
    pub(crate) fn element(&self, j: usize, out: &mut [u32]) {
        for (i, o) in out.iter_mut().enumerate().take(self.k) {
            *o = self.nodes[i][self.level(j, i)];
        }
    }

    /// The level, in a_i's chain, of the lowest common ancestor of a_i and t_i: t_i ⪯ nodes[i][l] exactly
    /// when l is at least this level.
    fn lca_level(&self, h: &Hierarchy<'_>, i: usize, ti: u32) -> usize {
        let d = self.len[i] - 1;
        let mut y = ti;
        let mut dy = h.depth_of(y);
        while dy > d {
            y = h.parent_of(y);
            dy -= 1;
        }
        // nodes[i][l] has depth d − l; climb both until they meet (at the latest at the root, l = d).
        let mut l = d - dy;
        while self.nodes[i][l] != y {
            y = h.parent_of(y);
            l += 1;
        }
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_errors() {
        let mut s = [0u32; 8];
        assert_eq!(Hierarchy::new(&[], &mut s).err(), Some(Error::EmptyInput));
        assert_eq!(Hierarchy::new(&[0, 0, 5], &mut s).err(), Some(Error::InvalidArgument)); // out of range
        assert_eq!(Hierarchy::new(&[0, 1], &mut s).err(), Some(Error::InvalidArgument)); // two roots
        assert_eq!(Hierarchy::new(&[1, 0], &mut s).err(), Some(Error::InvalidArgument)); // no root: cycle
        assert_eq!(Hierarchy::new(&[0, 2, 1], &mut s).err(), Some(Error::InvalidArgument)); // cycle off root
        assert_eq!(
            Hierarchy::new(&[0, 0, 0], &mut s[..2]).err(),
            Some(Error::ScratchTooSmall)
        );
        // a path of 17 nodes has height 16 > MAX_HEIGHT
        let mut path = [0u32; 17];
        for (v, p) in path.iter_mut().enumerate() {
            *p = v.saturating_sub(1) as u32;
        }
        let mut s17 = [0u32; 17];
        assert_eq!(Hierarchy::new(&path, &mut s17).err(), Some(Error::CapacityExceeded));
        assert!(Hierarchy::new(&path[..16], &mut s17).is_ok());
        assert_eq!(s, [0; 8]);
    }

    #[test]
    fn leaf_counts_and_depths() {
        // 0 = ⊥; 1, 2 under ⊥; 3, 4 under 1; 5 under 2.
        let parents = [0, 0, 0, 1, 1, 2];
        let mut s = [0u32; 6];
        let h = Hierarchy::new(&parents, &mut s).unwrap();
        let counts: [u32; 6] = core::array::from_fn(|v| h.leaf_count(v as u32).unwrap());
        assert_eq!(counts, [3, 2, 1, 1, 1, 1]);
        assert_eq!(h.height(), 2);
        assert_eq!(h.depth(4), Ok(2));
        assert_eq!(h.generalizes(1, 4), Ok(true));
        assert_eq!(h.generalizes(2, 4), Ok(false));
        assert_eq!(h.generalizes(4, 1), Ok(false));
        assert_eq!(h.generalizes(0, 5), Ok(true));
        assert_eq!(h.leaf_count(6), Err(Error::InvalidArgument));
        let mut one = [0u32; 1];
        let single = Hierarchy::new(&[0], &mut one).unwrap();
        assert_eq!((single.height(), single.leaf_count(0)), (0, Ok(1)));
    }
}
