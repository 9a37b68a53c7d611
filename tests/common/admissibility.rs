//! Shared test helpers: a tiny deterministic generator and a generic brute-force checker of the two
//! admissibility conditions of Local Dampening (Def. 3.3). A model (counting model, graph model, …)
//! supplies its worlds already evaluated — one score per candidate and a δ table per world — plus the
//! neighbour relation as pairs of world indices; the checker knows nothing else about the model.

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

/// One world x evaluated: the score u(x, r) of each of n candidates, and δ(x, t, r) for t < t_len in a
/// row-major n × t_len table (δ(x, t, r) = `global` for t ≥ t_len, as the dampening stage reads it).
pub struct Evaluated {
    pub score: Vec<f64>,
    pub delta: Vec<f64>,
}

/// Counts of checks and violations, with the first few violations described.
#[derive(Debug, Default)]
pub struct Report {
    pub cond1_checks: usize,
    pub cond1_violations: usize,
    pub cond2_checks: usize,
    pub cond2_violations: usize,
    pub bound_violations: usize,
    pub examples: Vec<String>,
}

impl Report {
    pub fn violations(&self) -> usize {
        self.cond1_violations + self.cond2_violations + self.bound_violations
    }

    pub fn print(&self, name: &str) {
        eprintln!(
            "{name}: condition 1: {} checks, {} violations; condition 2: {} checks, {} violations; δ > Δ: {}",
            self.cond1_checks, self.cond1_violations, self.cond2_checks, self.cond2_violations, self.bound_violations
        );
        for e in &self.examples {
            eprintln!("    {e}");
        }
    }
}

/// Checks, for every neighbour pair (in both directions) and every candidate r:
/// (1) δ(x, 0, r) ≥ |u(x, r) − u(y, r)| and (2) δ(x, t + 1, r) ≥ δ(y, t, r) for t = 0..t_len, where t + 1 =
/// t_len reads the saturated value `global` (so the check reaches past saturation); also that every
/// tabulated δ lies in [0, global]. A violation is a shortfall larger than `tolerance` (use 0 for models
/// with exact arithmetic).
pub fn check_admissibility(
    worlds: &[Evaluated],
    neighbours: &[(usize, usize)],
    n: usize,
    t_len: usize,
    global: f64,
    tolerance: f64,
) -> Report {
    let mut rep = Report::default();
    let delta = |w: &Evaluated, t: usize, r: usize| {
        if t < t_len {
            w.delta[r * t_len + t]
        } else {
            global
        }
    };
    let note = |rep: &mut Report, s: String| {
        if rep.examples.len() < 3 {
            rep.examples.push(s);
        }
    };
    for (wi, w) in worlds.iter().enumerate() {
        assert_eq!(w.score.len(), n);
        assert_eq!(w.delta.len(), n * t_len);
        for (k, &d) in w.delta.iter().enumerate() {
            if !(d >= 0.0 && d <= global + tolerance) {
                rep.bound_violations += 1;
                note(&mut rep, format!("world {wi}: δ[{k}] = {d} outside [0, {global}]"));
            }
        }
    }
    for &(a, b) in neighbours {
        for (xi, yi) in [(a, b), (b, a)] {
            let (x, y) = (&worlds[xi], &worlds[yi]);
            for r in 0..n {
                rep.cond1_checks += 1;
                let change = (x.score[r] - y.score[r]).abs();
                if delta(x, 0, r) + tolerance < change {
                    rep.cond1_violations += 1;
                    note(
                        &mut rep,
                        format!("cond 1: x={xi} y={yi} r={r}: δ(x,0)={} < |Δu|={change}", delta(x, 0, r)),
                    );
                }
                for t in 0..t_len {
                    rep.cond2_checks += 1;
                    if delta(x, t + 1, r) + tolerance < delta(y, t, r) {
                        rep.cond2_violations += 1;
                        note(
                            &mut rep,
                            format!(
                                "cond 2: x={xi} y={yi} r={r} t={t}: δ(x,t+1)={} < δ(y,t)={}",
                                delta(x, t + 1, r),
                                delta(y, t, r)
                            ),
                        );
                    }
                }
            }
        }
    }
    rep
}
