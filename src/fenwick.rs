//! A Fenwick (binary indexed) tree of counts living in a caller-supplied slice, so dominance counting
//! needs no allocation.

/// Counts over positions 0..n, stored in `n + 1` slots (slot 0 unused, the usual 1-based layout).
pub(crate) struct Fenwick<'a> {
    tree: &'a mut [usize],
}

impl<'a> Fenwick<'a> {
    /// Wraps and clears `tree`; it holds positions 0..tree.len() − 1.
    pub(crate) fn new(tree: &'a mut [usize]) -> Self {
        tree.fill(0);
        Fenwick { tree }
    }

    /// Adds one at position `pos` (< tree.len() − 1).
    pub(crate) fn add(&mut self, pos: usize) {
        let mut i = pos + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// The total count at positions 0..end.
    pub(crate) fn prefix(&self, end: usize) -> usize {
        let mut i = end.min(self.tree.len().saturating_sub(1));
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_counts() {
        let mut buf = [7usize; 9];
        let mut f = Fenwick::new(&mut buf);
        for p in [0, 3, 3, 7, 5] {
            f.add(p);
        }
        let expect = [0, 1, 1, 1, 3, 3, 4, 4, 5];
        for (end, e) in expect.iter().enumerate() {
            assert_eq!(f.prefix(end), *e);
        }
    }
}
