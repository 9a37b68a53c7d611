//! The graph experiments: DP-MoTkIN (PrivPareto paper §7), PrivTopk with EBC (Local Dampening paper §5.1,
//! §6.1) and privacy for the protected (Kearns et al., PNAS 2016, with its SI), on any undirected graph;
//! and what `dpmo-eval dataset --graph` prints.
//!
//! Ties: wherever a non-private "true" answer needs a tie broken, the node that appears first in the file
//! wins (node indices follow first appearance, `data::edges`).

pub mod infection;
pub mod motkin_agg;
pub mod motkin_pareto;
pub mod privtopk;
pub mod protected;

use crate::data::GraphData;
use crate::harness::{thousands, Job, Outcome, SummaryRow};
use anyhow::Result;
use dpmo::graph::Csr;
use dpmo::pareto::{pareto_scores, pareto_scores_scratch_len};
use dpmo::sensitivity::degree::{degree_all, DEGREE_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::ebc::{ebc_all, ebc_scratch_len};
use dpmo::sensitivity::egodensity::{egodensity_all, egodensity_delta, EGODENSITY_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::weighted_sum::weighted_sum;
use dpmo::sensitivity::{DeltaFunction, DeltaSource, LocalSensitivity};
use dpmo::Dominance;

/// Runs `run_one` on every graph of `job` and joins their sections under one heading, `title` applied to
/// the graphs' names (comma-separated): the `run` of every graph experiment.
pub fn each_graph(
    job: &Job<'_>,
    title: impl Fn(&str) -> String,
    mut run_one: impl FnMut(&Job<'_>, &GraphData, &mut Vec<SummaryRow>) -> Result<String>,
) -> Result<Outcome> {
    let mut body = String::new();
    let mut summary = Vec::new();
    for d in job.graphs {
        body.push_str(&run_one(job, d, &mut summary)?);
    }
    let names: Vec<&str> = job.graphs.iter().map(|d| d.name.as_str()).collect();
    Ok(Outcome {
        title: title(&names.join(", ")),
        body,
        summary,
    })
}

/// Number of objectives of DP-MoTkIN (degree, egodensity).
pub const M: usize = 2;
/// The dominance relation of the Pareto score and of metric C (textbook: ≥ everywhere, > somewhere).
pub const DOMINANCE: Dominance = Dominance::Textbook;
/// PrivAgg weights (w_degree, w_egodensity) of Figure 3.
pub const AGG_WEIGHTS: [f64; 2] = [1.0, 100.0];

/// The degree and egodensity of every node (PrivPareto paper §7.3), and their admissible sensitivities under
/// edge differential privacy.
pub struct Objectives {
    /// n × 2 row-major: degree, egodensity.
    pub util: Vec<f64>,
    /// Degrees.
    pub degree: Vec<usize>,
    /// δ^degree = 1 for every node.
    ones: Vec<f64>,
    /// The distance from which δ^egodensity = 1 for every node (the maximum degree): saturating both
    /// objective sensitivities there loses nothing.
    pub t_max: usize,
}

/// δ^egodensity(G, t, v) (PrivPareto §7.3, clamped to 1 by [`LocalSensitivity`]) as a function of (v, t).
pub struct EgoDelta<'a>(pub &'a [usize]);

impl DeltaFunction for EgoDelta<'_> {
    fn delta(&self, r: usize, t: usize) -> f64 {
        egodensity_delta(self.0[r], t)
    }
}

impl Objectives {
    /// Computes both objectives with the core.
    pub fn new(g: &Csr<'_>) -> Result<Objectives> {
        let n = g.node_count();
        let mut deg = vec![0.0; n];
        degree_all(g, &mut deg)?;
        let mut ego = vec![0.0; n];
        egodensity_all(g, &mut ego)?;
        let util = deg.iter().zip(&ego).flat_map(|(&d, &e)| [d, e]).collect();
        Ok(Objectives {
            util,
            degree: (0..n).map(|v| g.degree(v)).collect(),
            ones: vec![1.0; n],
            t_max: g.max_degree().max(1),
        })
    }

    /// Number of nodes.
    pub fn n(&self) -> usize {
        self.degree.len()
    }

    /// The objectives of node r.
    pub fn row(&self, r: usize) -> &[f64] {
        &self.util[r * M..(r + 1) * M]
    }

    /// Runs `body` with the two objective sensitivities (degree, egodensity).
    pub fn with_deltas<T>(&self, body: impl FnOnce(&[LocalSensitivity<'_>]) -> Result<T>) -> Result<T> {
        let ego = EgoDelta(&self.degree);
        let n = self.n();
        let deltas = [
            LocalSensitivity::new(
                DeltaSource::PerCandidate(&self.ones),
                DEGREE_GLOBAL_SENSITIVITY,
                self.t_max,
                n,
            )?,
            LocalSensitivity::new(
                DeltaSource::Function(&ego),
                EGODENSITY_GLOBAL_SENSITIVITY,
                self.t_max,
                n,
            )?,
        ];
        body(&deltas)
    }

    /// The Pareto scores of all nodes (the core's `pareto_scores`).
    pub fn pareto_scores(&self) -> Result<Vec<f64>> {
        let n = self.n();
        let mut ps = vec![0.0; n];
        let mut scratch = vec![0usize; pareto_scores_scratch_len(n, M)?];
        pareto_scores(&self.util, M, DOMINANCE, &mut ps, &mut scratch)?;
        Ok(ps)
    }

    /// u_agg = degree + 100 · egodensity (the core's `weighted_sum`).
    pub fn aggregate(&self) -> Result<Vec<f64>> {
        let mut agg = vec![0.0; self.n()];
        weighted_sum(&self.util, &AGG_WEIGHTS, &mut agg)?;
        Ok(agg)
    }
}

/// The non-private top-k of `scores`, ties to the smaller `rank` (by default the node index, i.e. first
/// appearance in the file).
pub fn top_k_by(scores: &[f64], k: usize, rank: &[usize]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(rank[a].cmp(&rank[b])));
    idx.truncate(k);
    idx
}

/// The identity ranking (first appearance in the file).
pub fn file_order(n: usize) -> Vec<usize> {
    (0..n).collect()
}

/// The rank of each node's label: numeric order when every label is an integer, else text order.
pub fn label_order(labels: &[String]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..labels.len()).collect();
    let numeric: Option<Vec<i128>> = labels.iter().map(|l| l.parse::<i128>().ok()).collect();
    match numeric {
        Some(v) => idx.sort_by_key(|&i| v[i]),
        None => idx.sort_by(|&a, &b| labels[a].cmp(&labels[b])),
    }
    let mut rank = vec![0; labels.len()];
    for (r, &i) in idx.iter().enumerate() {
        rank[i] = r;
    }
    rank
}

/// The non-private DP-MoTkIN-Pareto answer: k rounds of "the node of largest Pareto score among those
/// left", re-scoring after each pick (as the mechanism does), ties to the smaller `rank`. Also returns,
/// for each round, how many nodes shared the largest score.
pub fn pareto_top_k(obj: &Objectives, k: usize, rank: &[usize]) -> Vec<(usize, usize)> {
    let n = obj.n();
    let mut alive = vec![true; n];
    let mut out = Vec::with_capacity(k);
    for _ in 0..k.min(n) {
        // PS among the nodes left: the node is non-dominated by every live node (textbook relation).
        let live: Vec<usize> = (0..n).filter(|&r| alive[r]).collect();
        let util: Vec<f64> = live.iter().flat_map(|&r| obj.row(r).to_vec()).collect();
        let mut ps = vec![0.0; live.len()];
        let mut scratch = vec![0usize; pareto_scores_scratch_len(live.len(), M).unwrap_or(0)];
        if pareto_scores(&util, M, DOMINANCE, &mut ps, &mut scratch).is_err() {
            break;
        }
        let best = ps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let tied: Vec<usize> = (0..live.len()).filter(|&j| ps[j] == best).collect();
        let pick = tied
            .iter()
            .map(|&j| live[j])
            .min_by_key(|&r| rank[r])
            .unwrap_or(live[0]);
        alive[pick] = false;
        out.push((pick, tied.len()));
    }
    out
}

/// How the k-th largest value of `scores` is shared: (k-th value, nodes holding it, of which inside the
/// top-k).
pub fn boundary(scores: &[f64], k: usize) -> Option<(f64, usize, usize)> {
    if k == 0 || k > scores.len() {
        return None;
    }
    let mut sorted = scores.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let v = sorted[k - 1];
    let holding = scores.iter().filter(|&&s| s == v).count();
    let above = scores.iter().filter(|&&s| s > v).count();
    Some((v, holding, k - above))
}

fn boundary_text(what: &str, scores: &[f64], k: usize) -> String {
    match boundary(scores, k) {
        Some((v, holding, inside)) if holding > inside => format!(
            "  {what}, top-{k}: the value at rank {k}, {v:.4}, is shared by {} nodes of which {inside} enter the top-{k}: \
             a tie, broken by first appearance in the file\n",
            thousands(holding)
        ),
        Some((v, _, _)) => format!("  {what}, top-{k}: no tie at the boundary (value at rank {k}: {v:.4})\n"),
        None => format!("  {what}, top-{k}: fewer than {k} nodes\n"),
    }
}

/// What `dpmo-eval dataset --graph` prints.
pub fn describe(d: &GraphData, ks: &[usize]) -> Result<String> {
    let g = d.graph.csr()?;
    let obj = Objectives::new(&g)?;
    let ps = obj.pareto_scores()?;
    let front = ps.iter().filter(|&&p| p == 0.0).count();
    let mut s = format!(
        "{}{}\n  read: {}\n  {} nodes, {} edges, maximum degree {}\n  Pareto front (degree, egodensity): {} nodes with \
         PS = 0\n",
        d.name,
        if d.bundled.is_some() {
            " (bundled; published shape checked)"
        } else {
            ""
        },
        d.graph.describe_load(),
        thousands(d.graph.node_count()),
        thousands(d.graph.edge_count()),
        thousands(d.graph.max_degree()),
        thousands(front),
    );
    s.push_str("Top-k boundaries (ties are broken by first appearance in the file):\n");
    let order = file_order(obj.n());
    for &k in ks {
        let rounds = pareto_top_k(&obj, k, &order);
        let ties: Vec<String> = rounds
            .iter()
            .enumerate()
            .map(|(i, &(pick, t))| {
                format!(
                    "round {}: {} tied, picked {}",
                    i + 1,
                    thousands(t),
                    d.graph.labels[pick]
                )
            })
            .collect();
        s.push_str(&format!(
            "  Pareto score (re-scored each round), top-{k}: {}\n",
            ties.join("; ")
        ));
    }
    let agg = obj.aggregate()?;
    for &k in ks {
        s.push_str(&boundary_text("u_agg = degree + 100·egodensity", &agg, k));
    }
    let n = g.node_count();
    let mut scratch = vec![0u32; ebc_scratch_len(n, g.adjacency_len())?];
    let mut ebc = vec![0.0; n];
    ebc_all(&g, &mut scratch, &mut ebc)?;
    for &k in ks {
        s.push_str(&boundary_text("egocentric betweenness (EBC)", &ebc, k));
    }
    Ok(s)
}

/// A random graph with a hub, so that degrees spread out (for tests).
#[cfg(test)]
pub(crate) fn random_graph(n: usize, p: f64, seed: u64) -> crate::data::edges::Graph {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut edges = Vec::new();
    for a in 0..n as u32 {
        for b in a + 1..n as u32 {
            if (rng.next_u64() as f64 / u64::MAX as f64) < p {
                edges.push((a, b));
            }
        }
    }
    for b in 1..n as u32 / 2 {
        edges.push((0, b));
    }
    crate::data::edges::Graph::from_edges(n, &edges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::edges::Graph;

    #[test]
    fn ties_and_orders() {
        assert_eq!(top_k_by(&[1.0, 3.0, 3.0, 2.0], 3, &file_order(4)), vec![1, 2, 3]);
        assert_eq!(top_k_by(&[1.0, 3.0, 3.0, 2.0], 3, &[0, 9, 1, 2]), vec![2, 1, 3]);
        assert_eq!(label_order(&["10".into(), "9".into(), "100".into()]), vec![1, 0, 2]);
        assert_eq!(label_order(&["b".into(), "a".into()]), vec![1, 0]);
        assert_eq!(boundary(&[5.0, 3.0, 3.0, 3.0, 1.0], 2), Some((3.0, 3, 1)));
        assert_eq!(boundary(&[5.0, 4.0, 3.0], 2), Some((4.0, 1, 1)));
        assert_eq!(boundary(&[5.0], 2), None);
    }

    #[test]
    fn non_private_pareto_top_k_rescores() {
        // A star 0 – {1..4} plus the edge 1 – 2: node 0 dominates (degree 4); after it leaves, 1 and 2
        // (degree 2, egodensity 1) tie, and the first in the file wins.
        let g = Graph::from_edges(5, &[(0, 1), (0, 2), (0, 3), (0, 4), (1, 2)]);
        let obj = Objectives::new(&g.csr().unwrap()).unwrap();
        let picks = pareto_top_k(&obj, 3, &file_order(5));
        assert_eq!(picks[0].0, 0);
        assert_eq!((picks[1].0, picks[1].1), (1, 2));
        assert_eq!(pareto_top_k(&obj, 2, &[0, 2, 1, 3, 4])[1].0, 2);
        let d = GraphData {
            name: "star".into(),
            graph: g,
            bundled: None,
        };
        let text = describe(&d, &[1, 2]).unwrap();
        assert!(text.contains("5 nodes, 5 edges"), "{text}");
    }
}
