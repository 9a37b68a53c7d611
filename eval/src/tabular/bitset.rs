//! Columnar bitsets over the records of a table: one bit per record, 64 records per word. A tree node's
//! record set is the AND of its ancestors' test bitsets (or their complements), and confusion counts are
//! popcounts, so evaluating a tree costs O(nodes × records / 64) word operations.

use crate::data::table::Table;

/// Records as bits in u64 words (bits beyond the record count are always 0).
pub type Bits = Vec<u64>;

/// The test bitsets of one attribute.
pub enum AttrBits {
    /// A discrete attribute: `eq[v]` = records with value v (tested as x == v).
    Nominal {
        /// One bitset per value.
        eq: Vec<Bits>,
    },
    /// A continuous attribute normalized to [0, 1]: with its distinct values v_0 < … < v_{D−1},
    /// `lt[j]` = records with x < v_j for j < D, and `lt[D]` = all records (tested as x < θ).
    Numeric {
        /// The distinct values, ascending.
        distinct: Vec<f64>,
        /// D + 1 bitsets.
        lt: Vec<Bits>,
    },
}

/// Every test bitset of a table, the class bitset and the all-records bitset.
pub struct Columnar {
    /// Words per bitset.
    pub words: usize,
    /// Positive records.
    pub positive: Bits,
    /// All records.
    pub all: Bits,
    /// Per attribute.
    pub attrs: Vec<AttrBits>,
}

fn from_pred(records: usize, words: usize, pred: impl Fn(usize) -> bool) -> Bits {
    let mut b = vec![0u64; words];
    for r in 0..records {
        if pred(r) {
            b[r / 64] |= 1 << (r % 64);
        }
    }
    b
}

/// Number of set bits.
#[inline]
pub fn count(b: &[u64]) -> u64 {
    b.iter().map(|w| w.count_ones() as u64).sum()
}

/// Number of bits set in both.
#[inline]
pub fn count_and(a: &[u64], b: &[u64]) -> u64 {
    a.iter().zip(b).map(|(x, y)| (x & y).count_ones() as u64).sum()
}

/// out = a & b; returns whether any bit is set.
#[inline]
pub fn and_into(a: &[u64], b: &[u64], out: &mut [u64]) -> bool {
    let mut any = 0;
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x & y;
        any |= *o;
    }
    any != 0
}

/// out = a & !b; returns whether any bit is set (a never has bits beyond the record count).
#[inline]
pub fn and_not_into(a: &[u64], b: &[u64], out: &mut [u64]) -> bool {
    let mut any = 0;
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x & !y;
        any |= *o;
    }
    any != 0
}

impl Columnar {
    /// Builds the bitsets of `table`. Continuous attributes (with `numeric`) become threshold tests,
    /// discrete ones equality tests.
    pub fn new(table: &Table) -> Self {
        let records = table.len();
        let words = records.div_ceil(64);
        let positive = from_pred(records, words, |r| table.class[r] == 1);
        let all = from_pred(records, words, |_| true);
        let attrs = table
            .attributes
            .iter()
            .map(|a| match &a.numeric {
                None => AttrBits::Nominal {
                    eq: (0..a.cardinality())
                        .map(|v| from_pred(records, words, |r| a.codes[r] as usize == v))
                        .collect(),
                },
                Some(x) => {
                    let mut distinct = x.clone();
                    distinct.sort_by(|p, q| p.total_cmp(q));
                    distinct.dedup();
                    let mut lt: Vec<Bits> = distinct
                        .iter()
                        .map(|&v| from_pred(records, words, |r| x[r] < v))
                        .collect();
                    lt.push(all.clone());
                    AttrBits::Numeric { distinct, lt }
                }
            })
            .collect();
        Columnar {
            words,
            positive,
            all,
            attrs,
        }
    }

    /// The bitset of records passing a test on attribute `attr` with bitset index `index`.
    #[inline]
    pub fn test_bits(&self, attr: usize, index: usize) -> &[u64] {
        match &self.attrs[attr] {
            AttrBits::Nominal { eq } => &eq[index],
            AttrBits::Numeric { lt, .. } => &lt[index],
        }
    }

    /// The bitset index of the test x < θ on a numeric attribute.
    pub fn threshold_index(&self, attr: usize, theta: f64) -> usize {
        match &self.attrs[attr] {
            AttrBits::Numeric { distinct, .. } => distinct.partition_point(|&v| v < theta),
            AttrBits::Nominal { .. } => panic!("threshold on a nominal attribute"),
        }
    }
}
