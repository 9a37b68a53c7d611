//! The graph model of docs/DESIGN.md §3: all labelled graphs on n nodes, a graph being a bit mask over the
//! n(n−1)/2 possible edges (edge k is the k-th pair (i, j), i < j, in lexicographic order); neighbours
//! differ in one edge (edge-DP).

use dpmo::graph::Csr;

/// The possible edges (i, j), i < j, in the order of the mask bits.
pub fn edge_list(n: usize) -> Vec<(usize, usize)> {
    let mut e = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            e.push((i, j));
        }
    }
    e
}

/// The CSR arrays (offsets, sorted neighbour lists) of the graph `mask` on n nodes.
pub fn csr_of(n: usize, mask: u64) -> (Vec<usize>, Vec<u32>) {
    let mut adj = vec![Vec::new(); n];
    for (k, &(i, j)) in edge_list(n).iter().enumerate() {
        if mask >> k & 1 == 1 {
            adj[i].push(j as u32);
            adj[j].push(i as u32);
        }
    }
    let mut off = vec![0];
    let mut flat = Vec::new();
    for mut l in adj {
        l.sort_unstable();
        flat.extend(l);
        off.push(flat.len());
    }
    (off, flat)
}

/// Calls `f` with the validated CSR view of the graph `mask` on n nodes.
pub fn with_graph<T>(n: usize, mask: u64, f: impl FnOnce(&Csr<'_>) -> T) -> T {
    let (off, adj) = csr_of(n, mask);
    let g = Csr::new(&off, &adj).expect("valid graph");
    f(&g)
}

/// Every graph on n nodes (the masks 0..2^(n(n−1)/2)) and the one-edge neighbour function.
pub fn graph_world(n: usize) -> (Vec<u64>, impl Fn(&u64) -> Vec<u64>) {
    let m = n * (n - 1) / 2;
    let world: Vec<u64> = (0..1u64 << m).collect();
    (world, move |&g: &u64| (0..m).map(|k| g ^ (1 << k)).collect())
}

/// The unordered neighbour pairs (g, g with one edge flipped), smaller mask first, over all graphs on n
/// nodes; world index = mask.
pub fn graph_pairs(n: usize) -> Vec<(usize, usize)> {
    let m = n * (n - 1) / 2;
    let mut pairs = Vec::new();
    for g in 0..1usize << m {
        for k in 0..m {
            let h = g ^ (1 << k);
            if g < h {
                pairs.push((g, h));
            }
        }
    }
    pairs
}
