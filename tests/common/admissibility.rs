//! Shared test helpers: a tiny deterministic generator, and the one brute-force checker of the two
//! admissibility conditions of Local Dampening (Def. 3.3) that every admissibility test uses.
//!
//! The checker works on **pre-evaluated worlds**: a model (counting model, graph model, confusion counts,
//! contingency tables, …) supplies every state already evaluated — one score per candidate and a δ table —
//! plus the neighbour relation as *directed* pairs of world indices; [`check_admissibility`] knows nothing
//! else about the model. [`check_states`] is the front end for models given as a list of states and a
//! neighbour function: it evaluates every state once (neighbours outside the list included) and builds the
//! pairs. The small worlds themselves live in the sibling files [`counting`] and [`graphs`].

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;

// Declared here rather than in `mod.rs` so that `common::counting` and `common::graphs` reach every test
// through the re-export of this module (paths are relative to this file's folder).
#[path = "counting.rs"]
pub mod counting;
#[path = "graphs.rs"]
pub mod graphs;

/// SplitMix64: enough randomness for test inputs, and reproducible.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// One state x evaluated: the score u(x, r) of each of n candidates, and δ(x, t, r) for t < t_len in a
/// row-major n × t_len table.
pub struct Evaluated {
    pub score: Vec<f64>,
    pub delta: Vec<f64>,
}

/// What the checker compares against.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Columns of every δ table: δ(x, t, r) is tabulated for t < `t_len`.
    pub t_len: usize,
    /// The global sensitivity Δ when the test knows it. Then δ(x, t, r) = Δ for t ≥ `t_len` (as the
    /// dampening stage reads a table), condition 2 is also checked at t + 1 = `t_len` (past saturation),
    /// and every tabulated value must lie in [0, Δ]. Without it, condition 2 stops at t + 1 = `t_len` − 1.
    pub global: Option<f64>,
    /// A shortfall larger than this is a violation (0 for models with exact arithmetic).
    pub tolerance: f64,
}

/// One violation, by world index (a front end may name the worlds).
#[derive(Clone, Debug)]
pub struct Violation {
    pub x: usize,
    pub y: usize,
    pub r: usize,
    /// `None` for condition 1 and for a value outside [0, Δ]; `Some(t)` for condition 2 at t.
    pub t: Option<usize>,
    pub what: String,
}

/// Counts of worlds, pairs, checks and violations, with the first few violations kept.
#[derive(Debug, Default)]
pub struct Report {
    pub worlds: usize,
    /// Directed neighbour pairs (x, y) checked.
    pub pairs: usize,
    pub cond1_checks: usize,
    pub cond1_violations: usize,
    pub cond2_checks: usize,
    pub cond2_violations: usize,
    /// Tabulated δ values outside [0, Δ] (only counted when Δ is known).
    pub bound_violations: usize,
    pub examples: Vec<Violation>,
    /// Names of the worlds of the examples, filled by a front end that knows them.
    pub example_names: Vec<String>,
}

impl Report {
    pub fn checks(&self) -> usize {
        self.cond1_checks + self.cond2_checks
    }

    pub fn violations(&self) -> usize {
        self.cond1_violations + self.cond2_violations + self.bound_violations
    }

    pub fn print(&self, name: &str) {
        eprintln!(
            "{name}: {} worlds, {} directed pairs, {} checks, {} violations (condition 1: {} checks, {} \
             violations; condition 2: {} checks, {} violations; δ outside [0, Δ]: {})",
            self.worlds,
            self.pairs,
            self.checks(),
            self.violations(),
            self.cond1_checks,
            self.cond1_violations,
            self.cond2_checks,
            self.cond2_violations,
            self.bound_violations
        );
        for (k, v) in self.examples.iter().enumerate() {
            match self.example_names.get(k) {
                Some(names) => eprintln!("    {names}: {}", v.what),
                None => eprintln!("    x={} y={}: {}", v.x, v.y, v.what),
            }
        }
    }

    /// Asserts that something was checked and nothing was violated.
    pub fn assert_admissible(&self, name: &str) {
        assert!(self.checks() > 0, "{name}: nothing checked");
        assert_eq!(self.violations(), 0, "{name}: {:?}", self.examples);
    }

    /// Asserts that the checker caught a deliberately broken variant.
    pub fn assert_caught(&self, name: &str) {
        assert!(self.violations() > 0, "{name}: the checker missed a broken variant");
    }
}

/// Both orientations of every unordered pair.
pub fn both_ways(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    pairs.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect()
}

/// Checks, for every directed neighbour pair (x, y) and every candidate r:
/// (1) δ(x, 0, r) ≥ |u(x, r) − u(y, r)| and (2) δ(x, t + 1, r) ≥ δ(y, t, r) for t + 1 < `t_len`, and for
/// t + 1 = `t_len` too when Δ is known (see [`Bounds`]). x and y must have as many candidates.
pub fn check_admissibility(worlds: &[Evaluated], pairs: &[(usize, usize)], bounds: Bounds) -> Report {
    let Bounds {
        t_len,
        global,
        tolerance,
    } = bounds;
    assert!(t_len > 0);
    let mut rep = Report {
        worlds: worlds.len(),
        ..Report::default()
    };
    let delta = |w: &Evaluated, t: usize, r: usize| match global {
        Some(g) if t >= t_len => g,
        _ => w.delta[r * t_len + t],
    };
    let note = |rep: &mut Report, v: Violation| {
        if rep.examples.len() < 3 {
            rep.examples.push(v);
        }
    };
    for (wi, w) in worlds.iter().enumerate() {
        assert_eq!(w.delta.len(), w.score.len() * t_len, "world {wi}: δ table shape");
        if let Some(g) = global {
            for (k, &d) in w.delta.iter().enumerate() {
                if !(d >= 0.0 && d <= g + tolerance) {
                    rep.bound_violations += 1;
                    let what = format!("δ(t={}, r={}) = {d} outside [0, {g}]", k % t_len, k / t_len);
                    note(
                        &mut rep,
                        Violation {
                            x: wi,
                            y: wi,
                            r: k / t_len,
                            t: None,
                            what,
                        },
                    );
                }
            }
        }
    }
    let last = if global.is_some() { t_len } else { t_len - 1 };
    for &(xi, yi) in pairs {
        rep.pairs += 1;
        let (x, y) = (&worlds[xi], &worlds[yi]);
        assert_eq!(x.score.len(), y.score.len(), "worlds {xi} and {yi}: candidates");
        for r in 0..x.score.len() {
            rep.cond1_checks += 1;
            let change = (x.score[r] - y.score[r]).abs();
            let d0 = delta(x, 0, r);
            if d0 + tolerance < change {
                rep.cond1_violations += 1;
                let what = format!("cond 1: r={r}: δ(x,0)={d0} < |Δu|={change}");
                note(
                    &mut rep,
                    Violation {
                        x: xi,
                        y: yi,
                        r,
                        t: None,
                        what,
                    },
                );
            }
            for t in 0..last {
                rep.cond2_checks += 1;
                let (dx, dy) = (delta(x, t + 1, r), delta(y, t, r));
                if dx + tolerance < dy {
                    rep.cond2_violations += 1;
                    let what = format!("cond 2: r={r} t={t}: δ(x,t+1)={dx} < δ(y,t)={dy}");
                    note(
                        &mut rep,
                        Violation {
                            x: xi,
                            y: yi,
                            r,
                            t: Some(t),
                            what,
                        },
                    );
                }
            }
        }
    }
    rep
}

/// The front end for a model given as states: every x in `world` is paired with every y in
/// `neighbours(x)` (directed; y may lie outside `world` and is then evaluated but not used as an x), each
/// distinct state is evaluated once by `eval`, and the report names the worlds of its examples. Prints the
/// report under `name`.
pub fn check_states<S, N, E>(name: &str, world: &[S], neighbours: N, eval: E, bounds: Bounds) -> Report
where
    S: Clone + Eq + Hash + Debug,
    N: Fn(&S) -> Vec<S>,
    E: Fn(&S) -> Evaluated,
{
    let mut index: HashMap<S, usize> = HashMap::new();
    let mut states: Vec<S> = Vec::new();
    let mut evaluated: Vec<Evaluated> = Vec::new();
    let mut id = |s: &S, states: &mut Vec<S>, evaluated: &mut Vec<Evaluated>| -> usize {
        if let Some(&i) = index.get(s) {
            return i;
        }
        let i = states.len();
        index.insert(s.clone(), i);
        states.push(s.clone());
        evaluated.push(eval(s));
        i
    };
    let mut pairs = Vec::new();
    for x in world {
        let xi = id(x, &mut states, &mut evaluated);
        for y in neighbours(x) {
            let yi = id(&y, &mut states, &mut evaluated);
            pairs.push((xi, yi));
        }
    }
    let mut rep = check_admissibility(&evaluated, &pairs, bounds);
    // Report the states listed by the caller (duplicates included), as the model defines its world.
    rep.worlds = world.len();
    rep.example_names = rep
        .examples
        .iter()
        .map(|v| format!("x={:?} y={:?}", states[v.x], states[v.y]))
        .collect();
    rep.print(name);
    rep
}
