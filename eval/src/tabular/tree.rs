//! Binary decision trees of DP-MOET (PrivPareto paper §6.2.2): random full trees, subtree crossover,
//! mutation, pruning, and fast evaluation over columnar bitsets.
//!
//! A decision node tests one attribute: x == v for a discrete attribute, x < θ (θ uniform in [0, 1]) for a
//! continuous one normalized to [0, 1]; records passing the test go left. Depth counts levels: a leaf is a
//! tree of depth 1, and the root is at depth 1.

use super::bitset::{and_into, and_not_into, count, count_and, AttrBits, Columnar};
use super::rng::{below, unit};
#[cfg(test)]
use crate::data::table::Table;
use rand_core::Rng;

/// A decision test.
#[derive(Clone, Debug, PartialEq)]
pub struct Test {
    /// Attribute index.
    pub attr: usize,
    /// Index of the test bitset: the value v (discrete) or the threshold slot (continuous).
    pub index: usize,
    /// θ for a continuous attribute (NaN for a discrete one).
    pub theta: f64,
}

/// A decision tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Predicts a class (0 or 1).
    Leaf(u8),
    /// Records passing `test` go to `left`, the others to `right`.
    Split {
        /// The decision.
        test: Test,
        /// Subtree for records passing the test.
        left: Box<Node>,
        /// Subtree for the others.
        right: Box<Node>,
    },
}

/// Confusion counts of a classifier on a table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Confusion {
    /// True positives.
    pub tp: u64,
    /// False negatives.
    pub fn_: u64,
    /// True negatives.
    pub tn: u64,
    /// False positives.
    pub fp: u64,
}

impl Confusion {
    /// TPR (0 without positives).
    pub fn tpr(&self) -> f64 {
        dpmo::sensitivity::rates::tpr(self.tp, self.fn_)
    }
    /// TNR (0 without negatives).
    pub fn tnr(&self) -> f64 {
        dpmo::sensitivity::rates::tnr(self.tn, self.fp)
    }
}

/// A random test on a random attribute.
pub fn random_test<R: Rng + ?Sized>(rng: &mut R, cols: &Columnar) -> Test {
    let attr = below(rng, cols.attrs.len());
    match &cols.attrs[attr] {
        AttrBits::Nominal { eq } => Test {
            attr,
            index: below(rng, eq.len()),
            theta: f64::NAN,
        },
        AttrBits::Numeric { .. } => {
            let theta = unit(rng);
            Test {
                attr,
                index: cols.threshold_index(attr, theta),
                theta,
            }
        }
    }
}

/// A random leaf label.
pub fn random_leaf<R: Rng + ?Sized>(rng: &mut R) -> Node {
    Node::Leaf(below(rng, 2) as u8)
}

/// random_tree(d): a full tree with every leaf at depth d, random tests and random leaf labels.
pub fn random_tree<R: Rng + ?Sized>(rng: &mut R, cols: &Columnar, depth: usize) -> Node {
    if depth <= 1 {
        return random_leaf(rng);
    }
    let test = random_test(rng, cols);
    let left = Box::new(random_tree(rng, cols, depth - 1));
    let right = Box::new(random_tree(rng, cols, depth - 1));
    Node::Split { test, left, right }
}

impl Node {
    /// Number of nodes.
    pub fn size(&self) -> usize {
        match self {
            Node::Leaf(_) => 1,
            Node::Split { left, right, .. } => 1 + left.size() + right.size(),
        }
    }

    /// Depth (a leaf has depth 1).
    pub fn depth(&self) -> usize {
        match self {
            Node::Leaf(_) => 1,
            Node::Split { left, right, .. } => 1 + left.depth().max(right.depth()),
        }
    }

    /// The node with preorder index `i` and its depth (root at depth 1).
    pub fn node_mut(&mut self, i: usize) -> (&mut Node, usize) {
        fn go(node: &mut Node, mut i: usize, depth: usize) -> Result<(&mut Node, usize), usize> {
            if i == 0 {
                return Ok((node, depth));
            }
            i -= 1;
            match node {
                Node::Leaf(_) => Err(i),
                Node::Split { left, right, .. } => match go(left, i, depth + 1) {
                    Ok(x) => Ok(x),
                    Err(rest) => go(right, rest, depth + 1),
                },
            }
        }
        match go(self, i, 1) {
            Ok(x) => x,
            Err(_) => panic!("node index out of range"),
        }
    }

    /// Prune(τ, d_max): every decision node at depth d_max becomes a leaf with a random label.
    pub fn prune<R: Rng + ?Sized>(&mut self, rng: &mut R, d_max: usize) {
        fn go<R: Rng + ?Sized>(node: &mut Node, rng: &mut R, depth: usize, d_max: usize) {
            if let Node::Split { left, right, .. } = node {
                if depth >= d_max {
                    *node = random_leaf(rng);
                } else {
                    go(left, rng, depth + 1, d_max);
                    go(right, rng, depth + 1, d_max);
                }
            }
        }
        go(self, rng, 1, d_max.max(1));
    }

    /// Prediction for record `r` of `table`, read literally from the attribute values (the reference for
    /// [`evaluate`]).
    #[cfg(test)]
    pub fn predict(&self, table: &Table, r: usize) -> u8 {
        let mut node = self;
        loop {
            match node {
                Node::Leaf(c) => return *c,
                Node::Split { test, left, right } => {
                    let a = &table.attributes[test.attr];
                    let pass = match &a.numeric {
                        Some(x) => x[r] < test.theta,
                        None => a.codes[r] as usize == test.index,
                    };
                    node = if pass { left } else { right };
                }
            }
        }
    }
}

/// Crossover(τ1, τ2): swaps a uniformly chosen node (with its subtree) of `a` with one of `b`, in place.
pub fn crossover<R: Rng + ?Sized>(rng: &mut R, a: &mut Node, b: &mut Node) {
    let i = below(rng, a.size());
    let j = below(rng, b.size());
    let (x, _) = a.node_mut(i);
    let (y, _) = b.node_mut(j);
    std::mem::swap(x, y);
}

/// Mutation(τ, d_max): replaces a uniformly chosen node at depth d′ with random_tree(d_max − d′ + 1).
pub fn mutate<R: Rng + ?Sized>(rng: &mut R, cols: &Columnar, tree: &mut Node, d_max: usize) {
    let i = below(rng, tree.size());
    let (node, depth) = tree.node_mut(i);
    let d = (d_max + 1).saturating_sub(depth).max(1);
    *node = random_tree(rng, cols, d);
}

/// Reusable buffers of [`evaluate`]: one bitset per depth level.
#[derive(Default)]
pub struct EvalScratch {
    levels: Vec<Vec<u64>>,
}

/// Confusion counts of `tree` on the records of `cols` by bitset ANDs and popcounts.
pub fn evaluate(tree: &Node, cols: &Columnar, scratch: &mut EvalScratch) -> Confusion {
    fn go(node: &Node, set: &[u64], cols: &Columnar, levels: &mut [Vec<u64>], c: &mut Confusion) {
        match node {
            Node::Leaf(label) => {
                let pos = count_and(set, &cols.positive);
                let neg = count(set) - pos;
                if *label == 1 {
                    c.tp += pos;
                    c.fp += neg;
                } else {
                    c.fn_ += pos;
                    c.tn += neg;
                }
            }
            Node::Split { test, left, right } => {
                let bits = cols.test_bits(test.attr, test.index);
                let (here, deeper) = levels.split_at_mut(1);
                let buf = &mut here[0];
                if and_into(set, bits, buf) {
                    go(left, buf, cols, deeper, c);
                }
                if and_not_into(set, bits, buf) {
                    go(right, buf, cols, deeper, c);
                }
            }
        }
    }
    let depth = tree.depth();
    while scratch.levels.len() < depth {
        scratch.levels.push(vec![0; cols.words]);
    }
    for l in &mut scratch.levels {
        l.resize(cols.words, 0);
    }
    let mut c = Confusion::default();
    go(tree, &cols.all, cols, &mut scratch.levels, &mut c);
    c
}

/// The reference evaluation: predicts every record one by one.
#[cfg(test)]
pub fn evaluate_naive(tree: &Node, table: &Table) -> Confusion {
    let mut c = Confusion::default();
    for r in 0..table.len() {
        match (tree.predict(table, r), table.class[r]) {
            (1, 1) => c.tp += 1,
            (0, 1) => c.fn_ += 1,
            (0, _) => c.tn += 1,
            _ => c.fp += 1,
        }
    }
    c
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::data::table::Attribute;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A random table with 2 binary, 1 four-valued and 1 continuous attribute (200 records: not a multiple of 64).
    pub fn toy_table(rng: &mut Xoshiro256PlusPlus, n: usize) -> Table {
        let mut attributes = Vec::new();
        for (i, k) in [2usize, 2, 4].into_iter().enumerate() {
            attributes.push(Attribute {
                name: format!("d{i}"),
                values: (0..k).map(|v| v.to_string()).collect(),
                codes: (0..n).map(|_| below(rng, k) as u8).collect(),
                numeric: None,
            });
        }
        let x: Vec<f64> = (0..n).map(|_| (below(rng, 20) as f64) / 19.0).collect();
        attributes.push(Attribute {
            name: "c".into(),
            values: vec!["lo".into(), "hi".into()],
            codes: x.iter().map(|&v| (v >= 0.5) as u8).collect(),
            numeric: Some(x),
        });
        let class = (0..n)
            .map(|r| ((attributes[0].codes[r] ^ attributes[2].codes[r].min(1)) | (below(rng, 5) == 0) as u8) & 1)
            .collect();
        Table {
            name: "toy".into(),
            attributes,
            class,
            class_values: ["0".into(), "1".into()],
            dropped: 0,
        }
    }

    #[test]
    fn bitset_evaluation_matches_naive_and_operators_keep_shape() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let table = toy_table(&mut rng, 200);
        let cols = Columnar::new(&table);
        let mut scratch = EvalScratch::default();
        for _ in 0..300 {
            let d = 1 + below(&mut rng, 6);
            let mut a = random_tree(&mut rng, &cols, d);
            assert_eq!(a.depth(), d);
            assert_eq!(a.size(), (1 << d) - 1);
            let db = 1 + below(&mut rng, 6);
            let mut b = random_tree(&mut rng, &cols, db);
            crossover(&mut rng, &mut a, &mut b);
            mutate(&mut rng, &cols, &mut a, 7);
            a.prune(&mut rng, 5);
            assert!(a.depth() <= 5);
            for t in [&a, &b] {
                let fast = evaluate(t, &cols, &mut scratch);
                assert_eq!(fast, evaluate_naive(t, &table));
                assert_eq!(fast.tp + fast.fn_ + fast.tn + fast.fp, 200);
            }
        }
        // Mutation never exceeds d_max.
        for _ in 0..100 {
            let mut t = random_tree(&mut rng, &cols, 3);
            mutate(&mut rng, &cols, &mut t, 6);
            assert!(t.depth() <= 6);
        }
    }
}
