//! Datasets: the bundled ones of `../shared/data` (loaded from a data folder and checked against their
//! published shapes, a fixture check) and anyone's graph or table files.

pub mod adult;
pub mod edges;
pub mod table;

use anyhow::{ensure, Context, Result};
use edges::{EdgeListOptions, Graph};
use std::path::Path;
use table::{Table, TableOptions};

/// The datasets the papers used, which this repository's reproduction report runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bundled {
    /// SNAP email-Enron (PrivPareto paper Table 2, Figure 3; Local Dampening paper Figure 5).
    Enron,
    /// NLTCS, class column 13 (PrivPareto paper Table 1, Figure 2; Local Dampening paper Figure 6).
    Nltcs,
    /// UCI Adult, class income > 50K (same experiments as NLTCS).
    Adult,
}

/// A graph with its display name.
pub struct GraphData {
    /// Name used in titles, labels and file names.
    pub name: String,
    /// The graph.
    pub graph: Graph,
    /// Which bundled dataset it is, if any (published values are shown only then).
    pub bundled: Option<Bundled>,
}

/// A table with its display name.
pub struct TableData {
    /// The table (its name is the display name).
    pub table: Table,
    /// Which bundled dataset it is, if any.
    pub bundled: Option<Bundled>,
}

impl TableData {
    /// The display name.
    pub fn name(&self) -> &str {
        &self.table.name
    }
}

/// The folder must exist: a clear message naming it and the option otherwise.
pub fn check_data_folder(data: &Path) -> Result<()> {
    ensure!(
        data.is_dir(),
        "the data folder {} does not exist. The bundled datasets (enron/, nltcs/, adult/) are expected there; \
         give their folder with --data DIR, or run on your own files with --graph FILE or --table FILE --class-col N",
        data.display()
    );
    Ok(())
}

/// The NLTCS class column used by the papers' experiments.
pub const NLTCS_CLASS_COLUMN: usize = 13;

/// Loads a bundled graph from the data folder and checks its published shape.
pub fn bundled_graph(data: &Path, which: Bundled) -> Result<GraphData> {
    check_data_folder(data)?;
    ensure!(which == Bundled::Enron, "{which:?} is not a graph");
    let path = data.join("enron/Email-Enron.txt");
    // The file lists each undirected edge in both directions: read as arcs, merged into edges.
    let opts = EdgeListOptions {
        directed: true,
        ..EdgeListOptions::default()
    };
    let graph = Graph::load(&path, opts)?;
    let shape = (graph.node_count(), graph.edge_count(), graph.max_degree());
    ensure!(
        shape == (36_692, 183_831, 1_383),
        "{}: expected 36,692 nodes, 183,831 edges and maximum degree 1,383 (../shared/data/README.md), read {:?}",
        path.display(),
        shape
    );
    Ok(GraphData {
        name: "Enron".into(),
        graph,
        bundled: Some(which),
    })
}

/// Loads a bundled table from the data folder and checks its published shape.
pub fn bundled_table(data: &Path, which: Bundled) -> Result<TableData> {
    check_data_folder(data)?;
    let table = match which {
        Bundled::Nltcs => {
            let opts = TableOptions {
                class_col: NLTCS_CLASS_COLUMN.to_string(),
                ..TableOptions::default()
            };
            let mut t = table::load_dat(&data.join("nltcs/nltcs.dat"), "NLTCS", &opts)?;
            ensure!(
                (t.len(), t.attributes.len(), t.positives()) == (21_574, 15, 8_697),
                "NLTCS: expected 21,574 records × 15 attributes (+ class) with 8,697 positive, read {} × {}, {} positive",
                t.len(),
                t.attributes.len(),
                t.positives()
            );
            t.name = "NLTCS".into();
            t
        }
        Bundled::Adult => adult::load(&data.join("adult"))?,
        Bundled::Enron => anyhow::bail!("Enron is not a table"),
    };
    Ok(TableData {
        table,
        bundled: Some(which),
    })
}

/// A display name from a file name (its stem), unless one is given.
pub fn name_of(path: &Path, given: Option<&str>) -> String {
    given
        .map(str::to_string)
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "data".into())
}

/// Loads a user's graph file.
pub fn user_graph(path: &Path, name: Option<&str>, opts: EdgeListOptions) -> Result<GraphData> {
    let graph = Graph::load(path, opts)?;
    ensure!(
        graph.node_count() >= 2,
        "{}: a graph needs at least two nodes",
        path.display()
    );
    Ok(GraphData {
        name: name_of(path, name),
        graph,
        bundled: None,
    })
}

/// Loads a user's table file.
pub fn user_table(path: &Path, name: Option<&str>, opts: &TableOptions) -> Result<TableData> {
    let table = table::load(path, &name_of(path, name), opts).with_context(|| format!("loading {}", path.display()))?;
    ensure!(
        table.len() >= 2,
        "{}: a table needs at least two records",
        path.display()
    );
    ensure!(
        !table.attributes.is_empty(),
        "{}: no attribute besides the class",
        path.display()
    );
    Ok(TableData { table, bundled: None })
}

/// A file-name-safe lower-case form of a dataset name.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "data".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_fixtures_have_their_published_shapes() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
        if !data.is_dir() {
            eprintln!("skipping: no shared data");
            return;
        }
        let g = bundled_graph(&data, Bundled::Enron).unwrap();
        assert_eq!(g.graph.report.reciprocal, 183_831);
        let t = bundled_table(&data, Bundled::Nltcs).unwrap();
        assert!(t.table.attributes.iter().all(|a| a.cardinality() == 2));
    }

    #[test]
    fn missing_data_folder_names_the_folder_and_the_option() {
        let e = bundled_graph(Path::new("/nonexistent/shared/data"), Bundled::Enron)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/shared/data") && e.contains("--data"), "{e}");
        assert_eq!(slug("My Graph (v2)"), "my-graph--v2");
    }
}
