//! The one edge-list loader: SNAP-style whitespace files and CSV files, with or without a header line.
//!
//! * One edge per line, the two endpoint ids in the first two fields (more fields, such as weights or
//!   timestamps, are ignored). Ids are any tokens: integers (SNAP) or names.
//! * Fields are separated by white space, or by commas in CSV (quoted fields allowed). The format is taken
//!   from the option, else from the `.csv` extension, else from the first data line (a comma makes it CSV).
//! * Lines starting with `#` or `%` are comments. A header line (CSV or not) is detected when its two id
//!   fields are common column names (`source`, `target`, `from`, `to`, …) or are not integers while the next
//!   line's are; `--header yes|no` overrides the guess.
//! * `directed` states what a line means. Undirected: each line is an edge {u, v}. Directed: each line is an
//!   arc u → v. Every experiment runs on undirected graphs, so a directed list is read as its underlying
//!   undirected graph (u ~ v when u → v or v → u); the loader counts reciprocal pairs so that the user sees
//!   what was merged. Either way self loops and repeated edges are dropped and counted.
//!
//! Nodes are numbered densely in order of first appearance in the file: this order is the tie-breaking
//! order of every experiment ("first appearance in the file"), and each node keeps its original id.

use anyhow::{bail, Context, Result};
use dpmo::graph::Csr;
use std::collections::HashMap;
use std::path::Path;

/// How the fields of a line are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// From the extension, else from the first data line.
    Auto,
    /// White space (SNAP).
    Whitespace,
    /// Commas (CSV, quoted fields allowed).
    Csv,
}

/// Whether the first data line is a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// Guess (see the module documentation).
    Auto,
    /// The first non-comment line is a header.
    Yes,
    /// There is no header.
    No,
}

/// How to read an edge list.
#[derive(Clone, Copy, Debug)]
pub struct EdgeListOptions {
    /// Field separator.
    pub format: Format,
    /// Header line.
    pub header: Header,
    /// Each line is an arc (true) or an edge (false).
    pub directed: bool,
}

impl Default for EdgeListOptions {
    fn default() -> Self {
        EdgeListOptions {
            format: Format::Auto,
            header: Header::Auto,
            directed: false,
        }
    }
}

/// What the loader did with the file, for the user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Fields separated by commas.
    pub csv: bool,
    /// A header line was skipped.
    pub header: bool,
    /// Lines were read as arcs.
    pub directed: bool,
    /// Edge (or arc) lines read.
    pub lines: usize,
    /// Lines with both ends equal (dropped).
    pub self_loops: usize,
    /// Lines repeating an edge already read, in either direction (dropped).
    pub repeated: usize,
    /// Directed only: pairs listed in both directions (each became one undirected edge).
    pub reciprocal: usize,
}

/// An undirected simple graph in CSR form, with the original node ids.
pub struct Graph {
    /// offsets[v]..offsets[v + 1] indexes `neighbours` for node v.
    pub offsets: Vec<usize>,
    /// Sorted neighbour lists, concatenated.
    pub neighbours: Vec<u32>,
    /// The id of each node in the file.
    pub labels: Vec<String>,
    /// What the loader did.
    pub report: LoadReport,
}

const HEADER_NAMES: [&str; 16] = [
    "source",
    "target",
    "src",
    "dst",
    "from",
    "to",
    "node1",
    "node2",
    "u",
    "v",
    "id1",
    "id2",
    "fromnodeid",
    "tonodeid",
    "source_id",
    "target_id",
];

fn is_integer(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn looks_like_header(first: &[String], next: Option<&[String]>) -> bool {
    if first.len() < 2 {
        return false;
    }
    let named = first[..2]
        .iter()
        .all(|f| HEADER_NAMES.contains(&f.trim().to_ascii_lowercase().as_str()));
    let numeric_below = next.is_some_and(|n| n.len() >= 2 && is_integer(&n[0]) && is_integer(&n[1]));
    named || (!(is_integer(&first[0]) && is_integer(&first[1])) && numeric_below)
}

/// Splits the data lines (comments and blank lines removed) into fields, with their line numbers.
fn records(text: &str, csv: bool) -> Result<Vec<(usize, Vec<String>)>> {
    let mut out = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with('%') {
            continue;
        }
        let fields = if csv {
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(t.as_bytes());
            let mut rec = csv::StringRecord::new();
            if !r.read_record(&mut rec).with_context(|| format!("line {}", no + 1))? {
                continue;
            }
            rec.iter().map(|f| f.trim().to_string()).collect()
        } else {
            t.split_whitespace().map(str::to_string).collect()
        };
        out.push((no + 1, fields));
    }
    Ok(out)
}

impl Graph {
    /// Builds a graph over nodes 0..n from an undirected edge list (repeated edges and self loops
    /// dropped); labels are the indices. For tests.
    #[cfg(test)]
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Graph {
        let mut report = LoadReport {
            lines: edges.len(),
            ..LoadReport::default()
        };
        let labels = (0..n).map(|i| i.to_string()).collect();
        let (offsets, neighbours) = build(n, edges, &mut report);
        Graph {
            offsets,
            neighbours,
            labels,
            report,
        }
    }

    /// Parses an edge list (see the module documentation). `source` names the input in messages.
    pub fn parse(text: &str, source: &str, opts: EdgeListOptions) -> Result<Graph> {
        let csv = match opts.format {
            Format::Csv => true,
            Format::Whitespace => false,
            Format::Auto => {
                source.to_ascii_lowercase().ends_with(".csv")
                    || text
                        .lines()
                        .map(str::trim)
                        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('%'))
                        .is_some_and(|l| l.contains(','))
            }
        };
        let rows = records(text, csv).with_context(|| format!("reading {source}"))?;
        let header = match opts.header {
            Header::Yes => true,
            Header::No => false,
            Header::Auto => rows
                .first()
                .is_some_and(|(_, f)| looks_like_header(f, rows.get(1).map(|r| r.1.as_slice()))),
        };
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut labels: Vec<String> = Vec::new();
        let mut edges = Vec::with_capacity(rows.len());
        for (no, fields) in rows.iter().skip(usize::from(header)) {
            if fields.len() < 2 || fields[0].is_empty() || fields[1].is_empty() {
                bail!("{source}:{no}: expected two node ids, found {:?}", fields.join(" "));
            }
            let mut id = |s: &str| -> Result<u32> {
                if let Some(&i) = ids.get(s) {
                    return Ok(i);
                }
                let i = u32::try_from(labels.len()).ok().context("more than 2^32 nodes")?;
                ids.insert(s.to_string(), i);
                labels.push(s.to_string());
                Ok(i)
            };
            let a = id(&fields[0])?;
            let b = id(&fields[1])?;
            edges.push((a, b));
        }
        if edges.is_empty() {
            bail!("{source}: no edges found");
        }
        let mut report = LoadReport {
            csv,
            header,
            directed: opts.directed,
            lines: edges.len(),
            ..LoadReport::default()
        };
        if opts.directed {
            let mut arcs: Vec<(u32, u32)> = edges.iter().copied().filter(|(a, b)| a != b).collect();
            arcs.sort_unstable();
            arcs.dedup();
            report.reciprocal = arcs
                .iter()
                .filter(|&&(a, b)| a < b && arcs.binary_search(&(b, a)).is_ok())
                .count();
        }
        let (offsets, neighbours) = build(labels.len(), &edges, &mut report);
        if opts.directed {
            // Arcs listed in both directions are reciprocal pairs, not repetitions.
            report.repeated -= report.reciprocal;
        }
        Ok(Graph {
            offsets,
            neighbours,
            labels,
            report,
        })
    }

    /// Reads an edge list file.
    pub fn load(path: &Path, opts: EdgeListOptions) -> Result<Graph> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Graph::parse(&text, &path.display().to_string(), opts)
    }

    /// The borrowed, validated view the core works on.
    pub fn csr(&self) -> Result<Csr<'_>> {
        Csr::new(&self.offsets, &self.neighbours).map_err(|e| anyhow::anyhow!("invalid graph: {e:?}"))
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

    /// One line describing what was read.
    pub fn describe_load(&self) -> String {
        let r = &self.report;
        let mut s = format!(
            "{} {} lines{}; read as {}: {} self loops and {} repeated lines dropped",
            if r.csv { "CSV," } else { "whitespace-separated," },
            r.lines,
            if r.header { " after a header line" } else { "" },
            if r.directed {
                "arcs (the experiments use the underlying undirected graph)"
            } else {
                "undirected edges"
            },
            r.self_loops,
            r.repeated,
        );
        if r.directed {
            s.push_str(&format!(", {} reciprocal arc pairs merged", r.reciprocal));
        }
        s
    }
}

/// CSR arrays of the undirected simple graph of `edges`; counts self loops and repetitions in `report`.
fn build(n: usize, edges: &[(u32, u32)], report: &mut LoadReport) -> (Vec<usize>, Vec<u32>) {
    let mut degree = vec![0usize; n];
    for &(a, b) in edges {
        if a == b {
            report.self_loops += 1;
        } else {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    for d in &degree {
        offsets.push(offsets.last().copied().unwrap_or(0) + d);
    }
    let mut fill = offsets[..n].to_vec();
    let mut adj = vec![0u32; offsets[n]];
    for &(a, b) in edges {
        if a != b {
            adj[fill[a as usize]] = b;
            fill[a as usize] += 1;
            adj[fill[b as usize]] = a;
            fill[b as usize] += 1;
        }
    }
    let mut neighbours = Vec::with_capacity(adj.len());
    let mut out_offsets = Vec::with_capacity(n + 1);
    out_offsets.push(0);
    for v in 0..n {
        let list = &mut adj[offsets[v]..offsets[v + 1]];
        list.sort_unstable();
        let before = neighbours.len();
        let mut last = None;
        for &w in list.iter() {
            if last != Some(w) {
                neighbours.push(w);
                last = Some(w);
            }
        }
        let kept = neighbours.len() - before;
        // Each repeated undirected edge is seen once from each end.
        report.repeated += list.len() - kept;
        out_offsets.push(neighbours.len());
    }
    report.repeated /= 2;
    (out_offsets, neighbours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snap_whitespace_with_comments_loops_and_duplicates() {
        let g = Graph::parse(
            "# comment\n10\t20\n20\t10\n20\t20\n20 30\n",
            "g.txt",
            EdgeListOptions::default(),
        )
        .unwrap();
        assert_eq!((g.node_count(), g.edge_count(), g.max_degree()), (3, 2, 2));
        assert_eq!(g.labels, vec!["10", "20", "30"]);
        assert_eq!((g.report.self_loops, g.report.repeated, g.report.csv), (1, 1, false));
        g.csr().unwrap();
    }

    #[test]
    fn csv_with_and_without_header_and_named_nodes() {
        let with = Graph::parse(
            "source,target,weight\n1,2,0.5\n2,3,1\n",
            "e.csv",
            EdgeListOptions::default(),
        )
        .unwrap();
        assert!(with.report.header && with.report.csv);
        assert_eq!((with.node_count(), with.edge_count()), (3, 2));
        let without = Graph::parse("1,2\n2,3\n", "e.txt", EdgeListOptions::default()).unwrap();
        assert!(!without.report.header && without.report.csv);
        assert_eq!(with.neighbours, without.neighbours);
        // Named nodes with a header whose names are unusual: detected because the data lines are not all
        // numbers? They are names too, so the header must be stated.
        let opts = EdgeListOptions {
            header: Header::Yes,
            ..EdgeListOptions::default()
        };
        let named = Graph::parse("a_col,b_col\n\"alice\", bob\nbob,carol\n", "n.csv", opts).unwrap();
        assert_eq!(named.labels, vec!["alice", "bob", "carol"]);
        // A header with integer ids below is detected without being named.
        let g = Graph::parse("x y\n1 2\n", "x.txt", EdgeListOptions::default()).unwrap();
        assert!(g.report.header);
        assert!(Graph::parse("1\n", "bad.txt", EdgeListOptions::default()).is_err());
        assert!(Graph::parse("# nothing\n", "empty.txt", EdgeListOptions::default()).is_err());
    }

    #[test]
    fn directed_lists_give_the_underlying_undirected_graph() {
        let opts = EdgeListOptions {
            directed: true,
            ..EdgeListOptions::default()
        };
        let g = Graph::parse("1 2\n2 1\n2 3\n2 3\n", "d.txt", opts).unwrap();
        assert_eq!(g.edge_count(), 2);
        assert_eq!((g.report.reciprocal, g.report.repeated), (1, 1));
        let u = Graph::parse("1 2\n2 1\n2 3\n2 3\n", "d.txt", EdgeListOptions::default()).unwrap();
        assert_eq!(u.neighbours, g.neighbours);
        assert_eq!(u.report.repeated, 2);
    }
}
