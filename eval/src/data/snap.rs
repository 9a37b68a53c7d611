//! SNAP edge lists: `#` comment lines, then one edge per line as two node ids separated by white space.
//! The graph is read as undirected; self loops and repeated edges (each undirected edge is usually listed in
//! both directions) are dropped. Node ids are relabelled densely in order of first appearance.

use anyhow::{bail, Context, Result};
use dpmo::graph::Csr;
use std::collections::HashMap;
use std::path::Path;

/// An owned undirected graph in CSR form, with the original SNAP ids.
pub struct Graph {
    /// offsets[v]..offsets[v + 1] indexes `neighbours` for node v.
    pub offsets: Vec<usize>,
    /// Sorted neighbour lists, concatenated.
    pub neighbours: Vec<u32>,
    /// The SNAP id of each node.
    pub labels: Vec<u64>,
}

impl Graph {
    /// Builds a graph from an undirected edge list over nodes 0..n (duplicates and self loops dropped).
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Graph {
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(a, b) in edges {
            if a != b {
                adj[a as usize].push(b);
                adj[b as usize].push(a);
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbours = Vec::new();
        offsets.push(0);
        for list in &mut adj {
            list.sort_unstable();
            list.dedup();
            neighbours.extend_from_slice(list);
            offsets.push(neighbours.len());
        }
        Graph {
            offsets,
            neighbours,
            labels: (0..n as u64).collect(),
        }
    }

    /// Reads a SNAP edge list.
    pub fn load(path: &Path) -> Result<Graph> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut ids: HashMap<u64, u32> = HashMap::new();
        let mut labels = Vec::new();
        let mut edges = Vec::new();
        let mut id = |x: u64, labels: &mut Vec<u64>| -> u32 {
            *ids.entry(x).or_insert_with(|| {
                labels.push(x);
                (labels.len() - 1) as u32
            })
        };
        for (no, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
                bail!("{}:{}: expected two node ids", path.display(), no + 1);
            };
            let a: u64 = a.parse().with_context(|| format!("{}:{}", path.display(), no + 1))?;
            let b: u64 = b.parse().with_context(|| format!("{}:{}", path.display(), no + 1))?;
            let (a, b) = (id(a, &mut labels), id(b, &mut labels));
            edges.push((a, b));
        }
        let mut g = Graph::from_edges(labels.len(), &edges);
        g.labels = labels;
        Ok(g)
    }

    /// The borrowed, validated view the core works on.
    pub fn csr(&self) -> Result<Csr<'_>> {
        Csr::new(&self.offsets, &self.neighbours).map_err(|e| anyhow::anyhow!("invalid graph: {e}"))
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of undirected edges.
    pub fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// Largest degree.
    pub fn max_degree(&self) -> usize {
        self.offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_drops_loops_and_duplicates() {
        let dir = std::env::temp_dir().join(format!("dpmo-snap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.txt");
        std::fs::write(&p, "# comment\n10\t20\n20\t10\n20\t20\n20 30\n").unwrap();
        let g = Graph::load(&p).unwrap();
        assert_eq!((g.node_count(), g.edge_count(), g.max_degree()), (3, 2, 2));
        assert_eq!(g.labels, vec![10, 20, 30]);
        g.csr().unwrap();
        std::fs::remove_dir_all(dir).ok();
    }
}
