//! The infection process that generates the targeted subpopulation (Kearns et al., SI §4.1, Algorithm 4
//! infect(G, s, p, q, k)).
//!
//! Infection phase: starting from {s}, in each of k rounds every node adjacent to the infected set (taken
//! as it is at the start of the round) and not yet infected becomes infected independently with
//! probability p — one coin per node per round, however many infected neighbours it has (the algorithm
//! loops over "each node v that is neighbour to Ĩ"); a node that escapes may be infected in a later round.
//! Immune phase: every infected node, the seed included, becomes immune (protected) with probability q.
//! The printed algorithm adds "v" where it means the loop variable v′; we add v′.

use dpmo::graph::Csr;
use dpmo::sample::uniform_open01;
use rand_core::Rng;

/// Algorithm 4: returns the targeted flags of all nodes.
pub fn infect<R: Rng + ?Sized>(g: &Csr<'_>, seed: usize, p: f64, q: f64, rounds: usize, rng: &mut R) -> Vec<bool> {
    let n = g.node_count();
    let mut infected = vec![false; n];
    let mut members = vec![seed];
    infected[seed] = true;
    let mut seen = vec![usize::MAX; n];
    for round in 0..rounds {
        // The frontier of this round: uninfected neighbours of the infected set, each once.
        let mut frontier = Vec::new();
        for &v in &members {
            for &w in g.neighbors(v) {
                let w = w as usize;
                if !infected[w] && seen[w] != round {
                    seen[w] = round;
                    frontier.push(w);
                }
            }
        }
        for w in frontier {
            if uniform_open01(rng) <= p {
                infected[w] = true;
                members.push(w);
            }
        }
    }
    let mut targeted = vec![false; n];
    for &v in &members {
        if uniform_open01(rng) > q {
            targeted[v] = true;
        }
    }
    targeted
}

/// Sizes of the connected components of the subgraph induced by the targeted nodes, largest first.
pub fn component_sizes(g: &Csr<'_>, targeted: &[bool]) -> Vec<usize> {
    let n = g.node_count();
    let mut seen = vec![false; n];
    let mut sizes = Vec::new();
    let mut stack = Vec::new();
    for s in 0..n {
        if !targeted[s] || seen[s] {
            continue;
        }
        seen[s] = true;
        stack.push(s);
        let mut size = 0;
        while let Some(v) = stack.pop() {
            size += 1;
            for &w in g.neighbors(v) {
                let w = w as usize;
                if targeted[w] && !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        sizes.push(size);
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::edges::Graph;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A path 0 – 1 – … – (n − 1).
    fn path(n: usize) -> Graph {
        let edges: Vec<(u32, u32)> = (0..n as u32 - 1).map(|i| (i, i + 1)).collect();
        Graph::from_edges(n, &edges)
    }

    #[test]
    fn certain_infection_is_the_ball_of_radius_k() {
        let graph = path(10);
        let g = graph.csr().unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for k in 0..5 {
            let t = infect(&g, 4, 1.0, 0.0, k, &mut rng);
            let expect: Vec<bool> = (0..10).map(|v: usize| v.abs_diff(4) <= k).collect();
            assert_eq!(t, expect, "k = {k}");
        }
    }

    #[test]
    fn no_infection_and_full_immunity() {
        let graph = path(10);
        let g = graph.csr().unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let t = infect(&g, 3, 0.0, 0.0, 4, &mut rng);
        assert_eq!(t.iter().filter(|&&x| x).count(), 1);
        assert!(t[3]);
        let t = infect(&g, 3, 1.0, 1.0, 4, &mut rng);
        assert!(t.iter().all(|&x| !x));
    }

    #[test]
    fn one_coin_per_node_per_round_and_immunity_rate() {
        // A star: the centre infected, 2000 leaves each get one coin per round: after one round about p of
        // them are infected, after two rounds about 1 − (1 − p)².
        let n = 2001;
        let edges: Vec<(u32, u32)> = (1..n as u32).map(|i| (0, i)).collect();
        let graph = Graph::from_edges(n, &edges);
        let g = graph.csr().unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut one = 0;
        let mut two = 0;
        let reps = 50;
        for _ in 0..reps {
            one += infect(&g, 0, 0.3, 0.0, 1, &mut rng).iter().filter(|&&x| x).count() - 1;
            two += infect(&g, 0, 0.3, 0.0, 2, &mut rng).iter().filter(|&&x| x).count() - 1;
        }
        let (f1, f2) = (one as f64 / (reps * 2000) as f64, two as f64 / (reps * 2000) as f64);
        assert!((f1 - 0.3).abs() < 0.01, "{f1}");
        assert!((f2 - 0.51).abs() < 0.01, "{f2}");
        // Immunity keeps a fraction 1 − q of the infected.
        let mut kept = 0;
        for _ in 0..reps {
            kept += infect(&g, 0, 1.0, 0.25, 1, &mut rng).iter().filter(|&&x| x).count();
        }
        let fk = kept as f64 / (reps * n) as f64;
        assert!((fk - 0.75).abs() < 0.01, "{fk}");
    }

    #[test]
    fn components_of_targeted_subgraph() {
        let graph = path(7);
        let g = graph.csr().unwrap();
        let t = [true, true, false, true, false, true, true];
        assert_eq!(component_sizes(&g, &t), vec![2, 2, 1]);
    }
}
