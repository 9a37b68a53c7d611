//! Private ID3 (Local Dampening paper §5.2, Algorithm 2 "GlobalDiffPID3", after Friedman and Schuster):
//! GlobalDiffPID3 (exponential mechanism with the global sensitivity of IG or Gini), LocalDiffPID3 (local
//! dampening with the element local sensitivity of IG, Lemmas 5.5–5.6) and ShiftedLocalDiffPID3 (shifted
//! local dampening, Def. 4.3).
//!
//! Budget (Algorithm 2): ε = B / (2(d + 1)) per level, one NoisyCount (noise of scale 1/ε) and one
//! selection (or the leaf's class counts) per node; nodes of one level partition the records, so parallel composition
//! makes the whole tree B-DP. Neighbour relation: one record added or removed. The global sensitivity of
//! IG, log₂(N + 1) + 1/ln 2, needs a public bound N on the dataset size: we use the size of the whole
//! dataset (the training folds are smaller).
//!
//! Attributes with more than 16 values (Adult's native-country, 41) exceed the core's `Contingency`
//! capacity; IG and Gini are sums over attribute values and LS^IG a maximum over them, so we split such a
//! table into chunks of at most 16 values, add the chunks' utilities and take the maximum of their δ rows.
//!
//! IG is the utility of eq. (1), −τ·H_{C|A} (the core's `information_gain`; eq. (2) as printed has the
//! opposite sign, which would make the least informative split the most useful).
//!
//! Everything private runs exactly: the selections are the core's exact exponential mechanism and exact
//! local dampening, and the counts (NoisyCount, the leaves' class counts) get exact discrete Laplace noise
//! of scale 1/ε (the core's `exact::discrete`) instead of continuous Laplace noise.
//!
//! LS^IG is tabulated for t < `t_max` (a public constant) and saturated to ΔIG beyond: the core's
//! Candidates recursion costs O(t) per distance, so an unbounded walk over the thousands of distances a
//! root split's |IG| needs is not affordable. [`Stats`] counts how often a candidate's dampening reached
//! `t_max` (the report prints it).

use crate::data::table::Table;
use anyhow::{anyhow, Result};
use dpmo::exact::discrete::{discrete_laplace, LaplaceRate};
use dpmo::sensitivity::gini::{gini_utility, GINI_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::info_gain::{
    info_gain_global_sensitivity, information_gain, Contingency, InfoGainSensitivity, MAX_ATTRIBUTE_VALUES,
};
use dpmo::{
    select_exponential, select_local_dampening, Arithmetic, Dampening, DeltaSource, LocalSensitivity, Selector,
};
use rand_core::Rng;
use std::cell::Cell;

/// Split criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Criterion {
    /// Information gain (eq. 2).
    InfoGain,
    /// Gini index (global sensitivity 2).
    Gini,
}

/// Which selection replaces line 12 of Algorithm 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Exponential mechanism with the global sensitivity.
    Global,
    /// Local dampening (plain) with LS^IG.
    Local,
    /// Shifted local dampening with LS^IG.
    ShiftedLocal,
    /// Not private: the best split and exact counts (the reference).
    NonPrivate,
}

/// Parameters of one tree.
#[derive(Clone, Copy, Debug)]
pub struct Id3Params {
    /// Maximum depth d.
    pub depth: usize,
    /// Total budget B.
    pub budget: f64,
    /// Split criterion.
    pub criterion: Criterion,
    /// Selection mechanism.
    pub variant: Variant,
    /// Distances of the LS^IG table before saturation to ΔIG (public constant).
    pub t_max: usize,
    /// Public bound N on the dataset size, for ΔIG.
    pub max_records: u64,
}

/// A multiway ID3 tree.
#[derive(Clone, Debug)]
pub enum Id3Node {
    /// Predicts a class.
    Leaf(u8),
    /// One child per value of the attribute.
    Split {
        /// Attribute index.
        attr: usize,
        /// Children by value code.
        children: Vec<Id3Node>,
    },
}

impl Id3Node {
    /// Prediction for record r of `table`.
    pub fn predict(&self, table: &Table, r: usize) -> u8 {
        let mut node = self;
        loop {
            match node {
                Id3Node::Leaf(c) => return *c,
                Id3Node::Split { attr, children } => node = &children[table.attributes[*attr].codes[r] as usize],
            }
        }
    }

    /// Depth (a leaf has depth 0, as in Algorithm 2's d).
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        match self {
            Id3Node::Leaf(_) => 0,
            Id3Node::Split { children, .. } => 1 + children.iter().map(|c| c.depth()).max().unwrap_or(0),
        }
    }
}

fn err(e: dpmo::Error) -> anyhow::Error {
    anyhow!("dpmo: {e:?}")
}

/// The contingency table of attribute `attr` over `rows`, in chunks of at most 16 values.
pub fn contingency_chunks(table: &Table, rows: &[u32], attr: usize) -> Result<Vec<Contingency>> {
    let a = &table.attributes[attr];
    let k = a.cardinality();
    let mut counts = vec![0u64; k * 2];
    for &r in rows {
        let r = r as usize;
        counts[a.codes[r] as usize * 2 + table.class[r] as usize] += 1;
    }
    counts
        .chunks(MAX_ATTRIBUTE_VALUES * 2)
        .map(|c| Contingency::new(c, c.len() / 2, 2).map_err(err))
        .collect()
}

/// The utility of a split (IG or Gini), summed over chunks.
pub fn utility(chunks: &[Contingency], criterion: Criterion) -> f64 {
    chunks
        .iter()
        .map(|c| match criterion {
            Criterion::InfoGain => information_gain(c),
            Criterion::Gini => gini_utility(c),
        })
        .sum()
}

/// LS^IG(x, t, A) for t < out.len(): the maximum over chunks.
fn ls_row(chunks: &[Contingency], out: &mut [f64]) {
    let mut tmp = vec![0.0; out.len()];
    out.fill(0.0);
    for c in chunks {
        InfoGainSensitivity::fill(c, &mut tmp);
        for (o, &t) in out.iter_mut().zip(&tmp) {
            *o = o.max(t);
        }
    }
}

/// How often the LS^IG table depth bound: candidate scores dampened, and those whose walk reached `t_max`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Candidate scores dampened (local variants).
    pub scored: usize,
    /// Of which the breakpoints b(t_max) did not reach |IG| (the score used the saturated part).
    pub saturated: usize,
}

struct Ctx<'a> {
    table: &'a Table,
    params: Id3Params,
    eps: f64,
    rate: LaplaceRate,
    global: f64,
    stats: Cell<Stats>,
}

/// A count plus exact discrete Laplace noise of scale 1/ε (the count itself for the non-private tree).
fn noisy_count<R: Rng + ?Sized>(rng: &mut R, ctx: &Ctx<'_>, count: usize) -> i64 {
    if ctx.params.variant == Variant::NonPrivate {
        return count as i64;
    }
    count as i64 + discrete_laplace(rng, &ctx.rate)
}

fn leaf<R: Rng + ?Sized>(rng: &mut R, ctx: &Ctx<'_>, rows: &[u32]) -> Id3Node {
    let pos = rows.iter().filter(|&&r| ctx.table.class[r as usize] == 1).count();
    let neg = rows.len() - pos;
    let (np, nn) = (noisy_count(rng, ctx, pos), noisy_count(rng, ctx, neg));
    Id3Node::Leaf((np > nn) as u8)
}

fn build<R: Rng + ?Sized>(
    rng: &mut R,
    ctx: &Ctx<'_>,
    rows: &[u32],
    avail: &mut Vec<usize>,
    d: usize,
) -> Result<Id3Node> {
    let t = avail
        .iter()
        .map(|&a| ctx.table.attributes[a].cardinality())
        .max()
        .unwrap_or(1) as f64;
    let noisy = noisy_count(rng, ctx, rows.len()) as f64;
    if avail.is_empty() || d == 0 || noisy / (t * 2.0) < std::f64::consts::FRAC_1_SQRT_2 {
        return Ok(leaf(rng, ctx, rows));
    }
    let n = avail.len();
    let cols = ctx.params.t_max;
    let mut utils = Vec::with_capacity(n);
    let local = matches!(ctx.params.variant, Variant::Local | Variant::ShiftedLocal);
    let mut ls = if local { vec![0.0; n * cols] } else { Vec::new() };
    for (i, &a) in avail.iter().enumerate() {
        let chunks = contingency_chunks(ctx.table, rows, a)?;
        utils.push(utility(&chunks, ctx.params.criterion));
        if local {
            ls_row(&chunks, &mut ls[i * cols..(i + 1) * cols]);
        }
    }
    if local {
        let mut st = ctx.stats.get();
        for (i, &u) in utils.iter().enumerate() {
            let reach: f64 = ls[i * cols..(i + 1) * cols].iter().map(|&x| x.min(ctx.global)).sum();
            st.scored += 1;
            st.saturated += usize::from(if u >= 0.0 { reach <= u } else { reach < -u });
        }
        ctx.stats.set(st);
    }
    let pick = match ctx.params.variant {
        Variant::NonPrivate => (0..n).fold(0, |b, i| if utils[i] > utils[b] { i } else { b }),
        Variant::Global => select_exponential(rng, &utils, ctx.global, ctx.eps).map_err(err)?,
        Variant::Local | Variant::ShiftedLocal => {
            let delta = LocalSensitivity::new(
                DeltaSource::Table {
                    values: &ls,
                    columns: cols,
                },
                ctx.global,
                cols,
                n,
            )
            .map_err(err)?;
            let kind = if ctx.params.variant == Variant::Local {
                Dampening::Plain
            } else {
                Dampening::Shifted
            };
            let mut scratch = vec![0.0; 2 * n];
            select_local_dampening(
                rng,
                &utils,
                &delta,
                kind,
                Selector::Exponential,
                ctx.eps,
                &mut scratch,
                &mut [],
                Arithmetic::Exact,
            )
            .map_err(err)?
        }
    };
    let attr = avail.remove(pick);
    let k = ctx.table.attributes[attr].cardinality();
    let mut parts: Vec<Vec<u32>> = vec![Vec::new(); k];
    for &r in rows {
        parts[ctx.table.attributes[attr].codes[r as usize] as usize].push(r);
    }
    let mut children = Vec::with_capacity(k);
    for part in &parts {
        children.push(build(rng, ctx, part, avail, d - 1)?);
    }
    avail.insert(pick, attr);
    Ok(Id3Node::Split { attr, children })
}

/// Builds a private ID3 tree on the records `rows` of `table`.
pub fn train<R: Rng + ?Sized>(rng: &mut R, table: &Table, rows: &[u32], params: Id3Params) -> Result<Id3Node> {
    train_with_stats(rng, table, rows, params).map(|x| x.0)
}

/// [`train`], also returning how often the LS^IG depth bound was reached.
pub fn train_with_stats<R: Rng + ?Sized>(
    rng: &mut R,
    table: &Table,
    rows: &[u32],
    params: Id3Params,
) -> Result<(Id3Node, Stats)> {
    if params.criterion == Criterion::Gini && matches!(params.variant, Variant::Local | Variant::ShiftedLocal) {
        return Err(anyhow!("Gini is used with the global sensitivity only"));
    }
    let eps = params.budget / (2.0 * (params.depth as f64 + 1.0));
    let global = match params.criterion {
        Criterion::InfoGain => info_gain_global_sensitivity(params.max_records),
        Criterion::Gini => GINI_GLOBAL_SENSITIVITY,
    };
    let ctx = Ctx {
        table,
        params,
        eps,
        rate: if params.variant == Variant::NonPrivate {
            LaplaceRate::new(1.0, 1.0)
        } else {
            LaplaceRate::new(1.0 / eps, 1.0)
        }
        .map_err(err)?,
        global,
        stats: Cell::new(Stats::default()),
    };
    let mut avail: Vec<usize> = (0..table.attributes.len()).collect();
    let tree = build(rng, &ctx, rows, &mut avail, params.depth)?;
    Ok((tree, ctx.stats.get()))
}

/// Accuracy of `tree` on the records `rows`.
pub fn accuracy(tree: &Id3Node, table: &Table, rows: &[u32]) -> f64 {
    let ok = rows
        .iter()
        .filter(|&&r| tree.predict(table, r as usize) == table.class[r as usize])
        .count();
    ok as f64 / rows.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::table::Attribute;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// 4000 records; the class is attribute 1, attribute 0 is noise, attribute 2 has 20 values (chunked).
    fn tiny() -> Table {
        let n = 4000;
        let a0: Vec<u8> = (0..n).map(|r| ((r / 2) % 2) as u8).collect();
        let a1: Vec<u8> = (0..n).map(|r| (r % 2) as u8).collect();
        let a2: Vec<u8> = (0..n).map(|r| (r % 20) as u8).collect();
        let attr = |name: &str, k: usize, codes: Vec<u8>| Attribute {
            name: name.into(),
            values: (0..k).map(|v| v.to_string()).collect(),
            codes,
            numeric: None,
        };
        Table {
            name: "tiny".into(),
            class: a1.clone(),
            attributes: vec![attr("noise", 2, a0), attr("class-copy", 2, a1), attr("wide", 20, a2)],
            class_values: ["0".into(), "1".into()],
            dropped: 0,
        }
    }

    #[test]
    fn id3_learns_the_informative_attribute() {
        let table = tiny();
        let rows: Vec<u32> = (0..table.len() as u32).collect();
        // The chunked IG of the 20-valued attribute equals the direct sum of its cells.
        let chunks = contingency_chunks(&table, &rows, 2).unwrap();
        assert_eq!(chunks.len(), 2);
        // r % 20 determines r % 2, so the split is pure: IG = 0 (the largest possible).
        assert_eq!(utility(&chunks, Criterion::InfoGain), 0.0);
        let noise = utility(&contingency_chunks(&table, &rows, 0).unwrap(), Criterion::InfoGain);
        assert!((noise + 4000.0).abs() < 1e-6); // one bit per record lost
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for variant in [Variant::Global, Variant::Local, Variant::ShiftedLocal] {
            for criterion in [Criterion::InfoGain, Criterion::Gini] {
                if criterion == Criterion::Gini && variant != Variant::Global {
                    continue;
                }
                let p = Id3Params {
                    depth: 2,
                    budget: 50.0,
                    criterion,
                    variant,
                    t_max: 64,
                    max_records: 4000,
                };
                let tree = train(&mut rng, &table, &rows, p).unwrap();
                assert!(tree.depth() <= 2);
                assert!(accuracy(&tree, &table, &rows) > 0.95, "{:?}", p);
            }
        }
        // Depth 0 is a single (noisy majority) leaf.
        let p = Id3Params {
            depth: 0,
            budget: 1.0,
            criterion: Criterion::InfoGain,
            variant: Variant::Global,
            t_max: 8,
            max_records: 4000,
        };
        assert!(matches!(train(&mut rng, &table, &rows, p).unwrap(), Id3Node::Leaf(_)));
    }
}
