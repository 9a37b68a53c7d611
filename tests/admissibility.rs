//! Brute-force proof of admissibility (Local Dampening paper, Def. 3.3) for the sensitivity functions of
//! the applications, in small worlds where every neighbour can be enumerated:
//! (1) δ(x, 0, r) ≥ |u(x, r) − u(y, r)| and (2) δ(x, t + 1, r) ≥ δ(y, t, r), for every state x of the world,
//! every neighbour y of x, every candidate r and every t below a bound past saturation.
//! Each test also runs a deliberately broken variant through the same checker and asserts it is caught.

mod common;

use common::graphs::{csr_of, edge_list, graph_world};
use common::{check_states, Bounds, Evaluated, Report};
use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::hash::Hash;

use dpmo::graph::Csr;
use dpmo::sensitivity::degree::{degree_all, degree_delta_table};
use dpmo::sensitivity::ebc::{ebc_all, ebc_delta_table, ebc_global_sensitivity, ebc_scratch_len};
use dpmo::sensitivity::egodensity::{egodensity_all, egodensity_delta_table};
use dpmo::sensitivity::gini::{gini_utility, GINI_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::info_gain::{
    info_gain_global_sensitivity, info_gain_local_sensitivity0, information_gain, Contingency, InfoGainSensitivity,
};
use dpmo::sensitivity::rates::{rate_delta, tnr, tpr, RateNeighbours};

const TOL: f64 = 1e-9;

/// The bounds of every check in this file: δ tabulated for t < `t_len`, condition 2 within the table,
/// absolute tolerance [`TOL`] for the floating-point utilities.
fn bounds(t_len: usize) -> Bounds {
    Bounds {
        t_len,
        global: None,
        tolerance: TOL,
    }
}

/// Checks both admissibility conditions for every x in `world` and every y in `neighbours(x)`, with δ
/// tabulated for t < `t_len` by `eval` (the shared checker of `tests/common/admissibility.rs`).
fn check<S, N, E>(name: &str, world: &[S], neighbours: N, eval: E, t_len: usize) -> Report
where
    S: Clone + Eq + Hash + Debug,
    N: Fn(&S) -> Vec<S>,
    E: Fn(&S) -> Evaluated,
{
    check_states(name, world, neighbours, eval, bounds(t_len))
}

fn assert_admissible(rep: &Report) {
    rep.assert_admissible("admissibility");
}

fn assert_caught(rep: &Report) {
    rep.assert_caught("broken variant");
}

// ---------------------------------------------------------------------------------------------------
// Graph world (`common::graphs`): all labelled graphs on n nodes; neighbours differ in one edge (edge-DP).

/// Evaluates a graph utility and its δ table on the graph `mask`.
fn graph_eval(
    n: usize,
    mask: u64,
    t_len: usize,
    utility: &dyn Fn(&Csr<'_>, &mut [f64]),
    delta: &dyn Fn(&Csr<'_>, &mut [f64]),
) -> Evaluated {
    let (off, adj) = csr_of(n, mask);
    let g = Csr::new(&off, &adj).expect("valid graph");
    let mut u = vec![0.0; n];
    let mut d = vec![0.0; n * t_len];
    utility(&g, &mut u);
    delta(&g, &mut d);
    Evaluated { score: u, delta: d }
}

const GRAPH_T: usize = 8;

fn run_graph(
    name: &str,
    n: usize,
    utility: &dyn Fn(&Csr<'_>, &mut [f64]),
    delta: &dyn Fn(&Csr<'_>, &mut [f64]),
) -> Report {
    let (world, nb) = graph_world(n);
    check(
        name,
        &world,
        nb,
        |&m| graph_eval(n, m, GRAPH_T, utility, delta),
        GRAPH_T,
    )
}

#[test]
fn degree_is_admissible_on_all_graphs_with_5_and_6_nodes() {
    for n in [5, 6] {
        let rep = run_graph(
            &format!("degree n={n}"),
            n,
            &|g, u| degree_all(g, u).unwrap(),
            &|g, d| degree_delta_table(g, GRAPH_T, d).unwrap(),
        );
        assert_admissible(&rep);
    }
    // Broken: δ = 1/2 understates the change of one edge.
    let rep = run_graph(
        "degree broken (δ = 1/2)",
        5,
        &|g, u| degree_all(g, u).unwrap(),
        &|_, d| d.fill(0.5),
    );
    assert_caught(&rep);
}

/// The printed, unclamped egodensity sensitivity (PrivPareto §7.3), kept only here as the broken variant.
fn egodensity_delta_unclamped(degree: usize, t: usize) -> f64 {
    let k = degree as i64 - t as i64;
    if k > 2 {
        2.0 / (k - 2) as f64
    } else {
        1.0
    }
}

#[test]
fn egodensity_is_admissible_on_all_graphs_with_5_and_6_nodes() {
    for n in [5, 6] {
        let rep = run_graph(
            &format!("egodensity n={n}"),
            n,
            &|g, u| egodensity_all(g, u).unwrap(),
            &|g, d| egodensity_delta_table(g, GRAPH_T, d).unwrap(),
        );
        assert_admissible(&rep);
    }
    let rep = run_graph(
        "egodensity broken (printed, unclamped) n=5",
        5,
        &|g, u| egodensity_all(g, u).unwrap(),
        &|g, d| {
            for v in 0..g.node_count() {
                for t in 0..GRAPH_T {
                    d[v * GRAPH_T + t] = egodensity_delta_unclamped(g.degree(v), t);
                }
            }
        },
    );
    assert_caught(&rep);
}

fn ebc_of(g: &Csr<'_>, u: &mut [f64]) {
    let mut s = vec![0u32; ebc_scratch_len(g.node_count(), g.adjacency_len()).unwrap()];
    ebc_all(g, &mut s, u).unwrap();
}

#[test]
fn ebc_is_admissible_on_all_graphs_with_5_and_6_nodes() {
    for n in [5, 6] {
        let rep = run_graph(
            &format!("EBC n={n} (clamped to Lemma 5.2, D = n − 1)"),
            n,
            &ebc_of,
            &|g, d| ebc_delta_table(g, n - 1, GRAPH_T, d).unwrap(),
        );
        assert_admissible(&rep);
    }
    // Broken: the distance-0 value for every t (no growth with t) fails condition 2.
    let rep = run_graph("EBC broken (δ(x,0) for all t) n=5", 5, &ebc_of, &|g, d| {
        ebc_delta_table(g, 4, GRAPH_T, d).unwrap();
        for row in d.chunks_mut(GRAPH_T) {
            let d0 = row[0];
            row.fill(d0);
        }
    });
    assert_caught(&rep);
}

/// Graphs on 8 to 10 nodes, where degrees reach 7 to 9 and the quadratic term (d + t)(d + t − 1)/4 of
/// Def. 5.3 exceeds d + t (it never does with at most 6 nodes): random graphs of every density, plus the
/// Figure 1a gadget family (two hubs sharing k pairwise non-adjacent neighbours) with and without the hub
/// edge. All their one-edge neighbours are checked, so this samples the world rather than enumerating it.
#[test]
fn ebc_and_egodensity_are_admissible_on_sampled_graphs_with_8_to_10_nodes() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for n in [8usize, 9, 10] {
        let edges = edge_list(n);
        let m = edges.len();
        let mut world = Vec::new();
        for k in 2..n - 1 {
            // hubs 0 and 1, shared neighbours 2..2+k
            let mut g = 0u64;
            for (e, &(i, j)) in edges.iter().enumerate() {
                if i <= 1 && (2..2 + k).contains(&j) {
                    g |= 1 << e;
                }
            }
            world.push(g);
            world.push(g | 1); // edge (0, 1) has index 0
        }
        for s in 0..3000u64 {
            let density = (s % 16 + 1) as f64 / 17.0;
            let mut g = 0u64;
            for e in 0..m {
                if ((next() >> 11) as f64 / (1u64 << 53) as f64) < density {
                    g |= 1 << e;
                }
            }
            world.push(g);
        }
        let nb = move |&g: &u64| (0..m).map(|k| g ^ (1 << k)).collect::<Vec<u64>>();
        let ebc_delta = |g: &Csr<'_>, d: &mut [f64]| ebc_delta_table(g, n - 1, GRAPH_T, d).unwrap();
        let rep = check(
            &format!("EBC sampled n={n} (D = n − 1)"),
            &world,
            nb,
            |&x| graph_eval(n, x, GRAPH_T, &ebc_of, &ebc_delta),
            GRAPH_T,
        );
        assert_admissible(&rep);
        let ego_delta = |g: &Csr<'_>, d: &mut [f64]| egodensity_delta_table(g, GRAPH_T, d).unwrap();
        let ego_u = |g: &Csr<'_>, u: &mut [f64]| egodensity_all(g, u).unwrap();
        let rep = check(
            &format!("egodensity sampled n={n}"),
            &world,
            nb,
            |&x| graph_eval(n, x, GRAPH_T, &ego_u, &ego_delta),
            GRAPH_T,
        );
        assert_admissible(&rep);
    }
}

/// Def. 5.1 evaluated literally: breadth-first search inside the ego network G[N_c ∪ {c}] counts the
/// geodesics σ(a, b) and those through c, σ(a, c)·σ(c, b) when d(a, c) + d(c, b) = d(a, b).
fn ebc_by_bfs(g: &Csr<'_>, c: usize) -> f64 {
    let mut ego: Vec<usize> = g.neighbors(c).iter().map(|&x| x as usize).collect();
    ego.push(c);
    let bfs = |src: usize| {
        let mut dist: HashMap<usize, (usize, f64)> = HashMap::from([(src, (0, 1.0))]);
        let mut frontier = vec![src];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                let (du, su) = dist[&u];
                for &w in &ego {
                    if !g.has_edge(u, w) {
                        continue;
                    }
                    match dist.get_mut(&w) {
                        None => {
                            dist.insert(w, (du + 1, su));
                            next.push(w);
                        }
                        Some((dw, sw)) if *dw == du + 1 => *sw += su,
                        Some(_) => {}
                    }
                }
            }
            frontier = next;
        }
        dist
    };
    let nc = &ego[..ego.len() - 1];
    let from_c = bfs(c);
    let mut total = 0.0;
    for (i, &a) in nc.iter().enumerate() {
        let from_a = bfs(a);
        for &b in &nc[i + 1..] {
            let (dab, sab) = from_a[&b];
            let (dac, sac) = from_a[&c];
            let (dcb, scb) = from_c[&b];
            if dac + dcb == dab {
                total += sac * scb / sab;
            }
        }
    }
    total
}

#[test]
fn ebc_matches_breadth_first_geodesic_counts() {
    let mut compared = 0;
    let mut compare = |n: usize, mask: u64| {
        let (off, adj) = csr_of(n, mask);
        let g = Csr::new(&off, &adj).unwrap();
        let mut fast = vec![0.0; n];
        ebc_of(&g, &mut fast);
        for (c, &got) in fast.iter().enumerate() {
            let want = ebc_by_bfs(&g, c);
            assert!((got - want).abs() < 1e-9, "n {n} mask {mask} node {c}: {got} vs {want}");
            compared += 1;
        }
    };
    for mask in 0..1u64 << 10 {
        compare(5, mask);
    }
    // Denser ego networks with many common neighbours: random graphs on 11 nodes (55 possible edges).
    let mut state = 12345u64;
    for s in 0..400u64 {
        let mut mask = 0u64;
        for e in 0..55 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state % 8 < s % 8 {
                mask |= 1 << e;
            }
        }
        compare(11, mask);
    }
    eprintln!("EBC vs breadth-first search: {compared} node values equal");
}

// ---------------------------------------------------------------------------------------------------
// Confusion-count world: (hits, misses) = (TP, FN) for TPR or (TN, FP) for TNR, each up to RATE_MAX.

const RATE_MAX: u64 = 24;
const RATE_T: usize = 28;

fn rate_neighbours(rel: RateNeighbours) -> impl Fn(&(u64, u64)) -> Vec<(u64, u64)> {
    move |&(h, m)| {
        // Adding or removing a record of the other class leaves the counts unchanged: y = x.
        let mut v = vec![(h, m), (h + 1, m), (h, m + 1)];
        if h > 0 {
            v.push((h - 1, m));
        }
        if m > 0 {
            v.push((h, m - 1));
        }
        if rel == RateNeighbours::Substitution {
            // A substitution can also flip a prediction (and, through the other class, add or remove).
            if h > 0 {
                v.push((h - 1, m + 1));
            }
            if m > 0 {
                v.push((h + 1, m - 1));
            }
        }
        v
    }
}

fn rate_world() -> Vec<(u64, u64)> {
    let mut w = Vec::new();
    for h in 0..=RATE_MAX {
        for m in 0..=RATE_MAX {
            w.push((h, m));
        }
    }
    w
}

/// PrivPareto Lemma 6.1 as printed (appendix A.2 form), clamped to 1; kept only here as the broken variant.
fn printed_lemma_6_1(tp: u64, fn_: u64, t: u64) -> f64 {
    let (tp, p, t) = (tp as i64, (tp + fn_) as i64, t as i64);
    let pp = (p - t).max(2) as f64;
    let d = if t <= p - tp {
        (pp - tp as f64) / (pp * (pp - 1.0))
    } else {
        let tpp = if t <= p - 2 { p - t } else { 2 } as f64;
        tpp / (pp * (pp - 1.0))
    };
    d.clamp(0.0, 1.0)
}

fn run_rates(
    name: &str,
    rel: RateNeighbours,
    rate: fn(u64, u64) -> f64,
    delta: &dyn Fn(u64, u64, u64) -> f64,
) -> Report {
    check(
        name,
        &rate_world(),
        rate_neighbours(rel),
        |&(h, m)| Evaluated {
            score: vec![rate(h, m)],
            delta: (0..RATE_T as u64).map(|t| delta(h, m, t)).collect(),
        },
        RATE_T,
    )
}

#[test]
fn tpr_and_tnr_are_admissible_under_both_neighbour_relations() {
    for rel in [RateNeighbours::AddRemove, RateNeighbours::Substitution] {
        let rep = run_rates(&format!("TPR {rel:?}"), rel, tpr, &|h, m, t| rate_delta(h, m, t, rel));
        assert_admissible(&rep);
        let rep = run_rates(&format!("TNR {rel:?}"), rel, tnr, &|h, m, t| rate_delta(h, m, t, rel));
        assert_admissible(&rep);
    }
    // Broken 1: the printed Lemma 6.1, under add/remove (condition 2, e.g. x = (TP 1, FN 2)).
    let rep = run_rates(
        "TPR broken (printed Lemma 6.1) AddRemove",
        RateNeighbours::AddRemove,
        tpr,
        &printed_lemma_6_1,
    );
    assert_caught(&rep);
    assert!(
        rep.cond2_violations > 0,
        "docs/DESIGN.md's condition-2 counterexample must be among the violations"
    );
    let rep = run_rates(
        "TPR broken (printed Lemma 6.1) Substitution",
        RateNeighbours::Substitution,
        tpr,
        &printed_lemma_6_1,
    );
    assert_caught(&rep);
    // Broken 2: the add/remove function used for substitution neighbours (misses the flip, condition 1).
    let rep = run_rates(
        "TPR broken (add/remove δ under substitution)",
        RateNeighbours::Substitution,
        tpr,
        &|h, m, t| rate_delta(h, m, t, RateNeighbours::AddRemove),
    );
    assert_caught(&rep);
}

#[test]
fn printed_lemma_6_1_counterexample_of_design_md() {
    assert_eq!(printed_lemma_6_1(1, 2, 1), 0.5);
    assert_eq!(printed_lemma_6_1(0, 2, 0), 1.0);
    assert!(rate_delta(1, 2, 1, RateNeighbours::AddRemove) >= rate_delta(0, 2, 0, RateNeighbours::AddRemove));
}

// ---------------------------------------------------------------------------------------------------
// Contingency world: all values × classes tables with total ≤ IG_MAX; neighbours add or remove one record.

const IG_MAX: u64 = 8;
const IG_T: usize = 14;

type Cells = Vec<u64>;

fn tables(cells: usize, max_total: u64) -> Vec<Cells> {
    fn rec(prefix: &mut Cells, cells: usize, left: u64, out: &mut Vec<Cells>) {
        if prefix.len() == cells {
            out.push(prefix.clone());
            return;
        }
        for x in 0..=left {
            prefix.push(x);
            rec(prefix, cells, left - x, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    rec(&mut Vec::new(), cells, max_total, &mut out);
    out
}

fn record_neighbours(x: &Cells) -> Vec<Cells> {
    let mut v = Vec::new();
    for i in 0..x.len() {
        let mut y = x.clone();
        y[i] += 1;
        v.push(y);
        if x[i] > 0 {
            let mut y = x.clone();
            y[i] -= 1;
            v.push(y);
        }
    }
    v
}

fn run_ig(name: &str, values: usize, classes: usize, delta: &dyn Fn(&Contingency, &mut [f64])) -> Report {
    check(
        name,
        &tables(values * classes, IG_MAX),
        record_neighbours,
        |x| {
            let t = Contingency::new(x, values, classes).unwrap();
            let mut d = vec![0.0; IG_T];
            delta(&t, &mut d);
            Evaluated {
                score: vec![information_gain(&t)],
                delta: d,
            }
        },
        IG_T,
    )
}

/// Algorithm 3 literally, with sets, with or without the printed "a < τ" guard (τ = dataset size).
fn candidates_literal(a: u64, b: u64, t: usize, tau: u64, guard: bool) -> Vec<HashSet<(u64, u64)>> {
    let mut levels = vec![HashSet::from([(a, b)])];
    for _ in 0..t {
        let mut next = HashSet::new();
        for &(a, b) in levels.last().unwrap() {
            if a > 0 && b > 0 {
                next.insert((a - 1, b - 1));
            }
            if !guard || a < tau {
                next.insert((a + 1, b));
            }
        }
        levels.push(next);
    }
    levels
}

fn h_direct(a: u64, b: u64) -> f64 {
    // h from its meaning: the IG change of adding / removing a record of the cell (a, b) in a one-row table.
    let phi = |x: u64| if x == 0 { 0.0 } else { x as f64 * (x as f64).log2() };
    let add = (phi(a + 1) - phi(a)) - (phi(b + 1) - phi(b));
    let g = |x: u64| if x <= 1 { 0.0 } else { -(phi(x) - phi(x - 1)) };
    add.max(g(b) - g(a))
}

/// Lemma 5.6 evaluated from the literal candidate sets.
fn ls_literal(t: &Contingency, out: &mut [f64], guard: bool) {
    let mut running: f64 = 0.0;
    let mut levels = Vec::new();
    for j in 0..t.values() {
        for c in 0..t.classes() {
            levels.push(candidates_literal(
                t.value_total(j),
                t.count(j, c),
                out.len(),
                t.total(),
                guard,
            ));
        }
    }
    for (k, slot) in out.iter_mut().enumerate() {
        for l in &levels {
            for &(a, b) in &l[k] {
                running = running.max(h_direct(a, b));
            }
        }
        *slot = running;
    }
}

#[test]
fn information_gain_is_admissible_on_small_contingency_tables() {
    for (values, classes) in [(2, 2), (3, 2), (2, 3)] {
        let rep = run_ig(
            &format!("IG {values}x{classes} totals ≤ {IG_MAX}"),
            values,
            classes,
            &|t, d| InfoGainSensitivity::fill(t, d),
        );
        assert_admissible(&rep);
    }
    // Broken 1: the distance-0 sensitivity for every t (skips the Candidates recursion).
    let rep = run_ig("IG broken (LS(x,0) for all t)", 2, 2, &|t, d| {
        d.fill(info_gain_local_sensitivity0(t))
    });
    assert_caught(&rep);
    // Broken 2: Algorithm 3 with the printed "a < τ" guard.
    let rep = run_ig("IG broken (Algorithm 3 with the a < τ guard)", 2, 2, &|t, d| {
        ls_literal(t, d, true)
    });
    assert_caught(&rep);
}

#[test]
fn the_a_below_tau_guard_drops_a_real_neighbour() {
    // x: three records, all with value j and class 0; y adds a fourth. For (j, class 1) the guarded
    // Candidates(1) is empty, so δ(x, 1) stays at δ(x, 0) = f(3) while δ(y, 0) = f(4).
    let x = Contingency::new(&[3, 0], 1, 2).unwrap();
    let y = Contingency::new(&[4, 0], 1, 2).unwrap();
    let mut guarded = [0.0; 2];
    ls_literal(&x, &mut guarded, true);
    let y0 = info_gain_local_sensitivity0(&y);
    assert!(guarded[1] < y0, "{guarded:?} vs {y0}");
    let mut ours = [0.0; 2];
    InfoGainSensitivity::fill(&x, &mut ours);
    assert!(ours[1] >= y0);
}

#[test]
fn incremental_candidates_equal_the_literal_algorithm_3_without_guard() {
    let mut compared = 0;
    for x in tables(4, IG_MAX) {
        let t = Contingency::new(&x, 2, 2).unwrap();
        let mut fast = vec![0.0; IG_T];
        let mut slow = vec![0.0; IG_T];
        InfoGainSensitivity::fill(&t, &mut fast);
        ls_literal(&t, &mut slow, false);
        for (a, b) in fast.iter().zip(&slow) {
            assert!((a - b).abs() < 1e-9, "{x:?}: {fast:?} vs {slow:?}");
            compared += 1;
        }
    }
    eprintln!("IG incremental vs literal Algorithm 3: {compared} values equal");
}

#[test]
fn information_gain_and_gini_respect_their_global_sensitivities() {
    let mut checks = 0u64;
    for (values, classes) in [(2, 2), (3, 2), (2, 3)] {
        for x in tables(values * classes, IG_MAX) {
            let tx = Contingency::new(&x, values, classes).unwrap();
            for y in record_neighbours(&x) {
                let ty = Contingency::new(&y, values, classes).unwrap();
                let n = tx.total().min(ty.total());
                let dig = (information_gain(&tx) - information_gain(&ty)).abs();
                assert!(dig <= info_gain_global_sensitivity(n) + TOL, "{x:?} {y:?}");
                let dg = (gini_utility(&tx) - gini_utility(&ty)).abs();
                assert!(dg <= GINI_GLOBAL_SENSITIVITY + TOL, "{x:?} {y:?}");
                checks += 2;
            }
        }
    }
    eprintln!("IG and Gini global sensitivity: {checks} checks, 0 violations");
    // Gini through the admissibility checker (δ = Δ = 2 constant), and a broken δ = 1 it must catch.
    let gini_run = |name: &str, d: f64| {
        check(
            name,
            &tables(6, IG_MAX),
            record_neighbours,
            |x| Evaluated {
                score: vec![gini_utility(&Contingency::new(x, 3, 2).unwrap())],
                delta: vec![d; 4],
            },
            4,
        )
    };
    assert_admissible(&gini_run("Gini 3x2 (δ = 2)", GINI_GLOBAL_SENSITIVITY));
    assert_caught(&gini_run("Gini broken (δ = 1)", 1.0));
}

// ---------------------------------------------------------------------------------------------------
// The papers' worked values.

#[test]
fn example_1_1_ebc_of_the_figure_1a_gadget() {
    // a = 0, b = 1, v0..v5 = 2..7; a–b, and a and b each adjacent to every v_i.
    let build = |with_ab: bool| {
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); 8];
        for v in 2..8u32 {
            for hub in [0u32, 1] {
                adj[hub as usize].push(v);
                adj[v as usize].push(hub);
            }
        }
        if with_ab {
            adj[0].push(1);
            adj[1].push(0);
        }
        let mut off = vec![0];
        let mut flat = Vec::new();
        for mut l in adj {
            l.sort_unstable();
            flat.extend(l);
            off.push(flat.len());
        }
        (off, flat)
    };
    let (off, adj) = build(true);
    let g = Csr::new(&off, &adj).unwrap();
    let mut e = vec![0.0; 8];
    ebc_of(&g, &mut e);
    assert_eq!(e[0], 7.5);
    assert_eq!(e[1], 7.5);
    assert!(e[2..].iter().all(|&x| x == 0.0));
    let (off, adj) = build(false);
    let g = Csr::new(&off, &adj).unwrap();
    ebc_of(&g, &mut e);
    assert_eq!(e[0], 15.0);
    assert!(e[2..].iter().all(|&x| x == 1.0)); // Example 1.2: v_i goes from 0 to 1
                                               // Lemma 5.2 with Δ(G) = 7 covers the change 7.5 of removing (a, b).
    assert!(ebc_global_sensitivity(7) >= 7.5);
}

#[test]
fn example_6_2_tpr_global_sensitivity_is_attained() {
    // One positive record, predicted positive in x and negative in x′: TPR goes from 1 to 0.
    assert_eq!(tpr(1, 0), 1.0);
    assert_eq!(tpr(0, 1), 0.0);
    assert_eq!(rate_delta(1, 0, 0, RateNeighbours::Substitution), 1.0);
}

#[test]
fn section_7_3_egodensity_path_and_triangle() {
    let path = Csr::new(&[0, 2, 3, 4], &[1, 2, 0, 0]).unwrap(); // v1 = 0, v2 = 1, v3 = 2
    let tri = Csr::new(&[0, 2, 4, 6], &[1, 2, 0, 2, 0, 1]).unwrap();
    let mut e = [0.0; 3];
    egodensity_all(&path, &mut e).unwrap();
    assert_eq!(e[0], 0.0);
    egodensity_all(&tri, &mut e).unwrap();
    assert_eq!(e[0], 1.0);
}
