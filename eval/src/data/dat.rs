//! A generic loader for binary `.dat` tables (one record per line, whitespace-separated 0/1 values, an
//! optional first line holding the row count, as in the NLTCS file of `../shared/data/nltcs`), and the
//! [`Table`] type every tabular experiment works on.

use anyhow::{bail, Context, Result};
use std::path::Path;

/// One attribute of a table.
#[derive(Clone, Debug)]
pub struct Attribute {
    /// Column name.
    pub name: String,
    /// Labels of the discrete codes 0..values.len() (for a continuous attribute: its discretization bins).
    pub values: Vec<String>,
    /// The discrete code of every record (what ID3 splits on).
    pub codes: Vec<u8>,
    /// For a continuous attribute, its value normalized to [0, 1] (what DP-MOET thresholds); None when discrete.
    pub numeric: Option<Vec<f64>>,
}

impl Attribute {
    /// Number of discrete codes.
    pub fn cardinality(&self) -> usize {
        self.values.len()
    }
}

/// A classification table: attributes and a binary class (1 = positive).
#[derive(Clone, Debug)]
pub struct Table {
    /// Dataset name.
    pub name: String,
    /// The predictive attributes.
    pub attributes: Vec<Attribute>,
    /// The class of every record, 0 or 1.
    pub class: Vec<u8>,
}

impl Table {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.class.len()
    }

    /// Number of positive records.
    pub fn positives(&self) -> usize {
        self.class.iter().filter(|&&c| c == 1).count()
    }

    /// One line describing the shape.
    pub fn describe(&self) -> String {
        let cont = self.attributes.iter().filter(|a| a.numeric.is_some()).count();
        format!(
            "{}: {} records x {} attributes ({} continuous, {} discrete), {} positive / {} negative",
            self.name,
            self.len(),
            self.attributes.len(),
            cont,
            self.attributes.len() - cont,
            self.positives(),
            self.len() - self.positives()
        )
    }
}

/// A binary matrix read from a `.dat` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryMatrix {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Row-major 0/1 values.
    pub data: Vec<u8>,
}

impl BinaryMatrix {
    /// Parses the text of a `.dat` file. A first line with a single number is the row count and must match.
    pub fn parse(text: &str) -> Result<Self> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty()).peekable();
        let mut declared = None;
        if let Some(first) = lines.peek() {
            let fields: Vec<&str> = first.split_whitespace().collect();
            // A single field on the first line is the row count (a one-column table would be ambiguous:
            // we then require a value other than 0/1 to read it as a count).
            if fields.len() == 1 && !matches!(fields[0], "0" | "1") {
                declared = Some(fields[0].parse::<usize>().context("row-count line")?);
                lines.next();
            }
        }
        let mut data = Vec::new();
        let mut cols = None;
        let mut rows = 0;
        for (i, line) in lines.enumerate() {
            let before = data.len();
            for f in line.split_whitespace() {
                match f {
                    "0" => data.push(0),
                    "1" => data.push(1),
                    other => bail!("row {}: value {other:?} is not 0/1", i + 1),
                }
            }
            let c = data.len() - before;
            match cols {
                None => cols = Some(c),
                Some(k) if k != c => bail!("row {} has {c} values, expected {k}", i + 1),
                _ => {}
            }
            rows += 1;
        }
        if let Some(d) = declared {
            if d != rows {
                bail!("row-count line says {d}, found {rows} rows");
            }
        }
        Ok(BinaryMatrix {
            rows,
            cols: cols.unwrap_or(0),
            data,
        })
    }

    /// Reads a `.dat` file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// A classification table with column `class_col` as the class and the other columns as binary
    /// attributes named `a<index>` (the index in the file).
    pub fn into_table(self, name: &str, class_col: usize) -> Result<Table> {
        if class_col >= self.cols {
            bail!("class column {class_col} out of range ({} columns)", self.cols);
        }
        let col = |c: usize| {
            (0..self.rows)
                .map(|r| self.data[r * self.cols + c])
                .collect::<Vec<u8>>()
        };
        let attributes = (0..self.cols)
            .filter(|&c| c != class_col)
            .map(|c| Attribute {
                name: format!("a{c}"),
                values: vec!["0".into(), "1".into()],
                codes: col(c),
                numeric: None,
            })
            .collect();
        Ok(Table {
            name: name.into(),
            attributes,
            class: col(class_col),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_with_and_without_count_line() {
        let m = BinaryMatrix::parse("2\n0 1 1\n1\t0\t1\n").unwrap();
        assert_eq!((m.rows, m.cols), (2, 3));
        assert_eq!(m.data, vec![0, 1, 1, 1, 0, 1]);
        let m2 = BinaryMatrix::parse("0 1 1\n1 0 1\n").unwrap();
        assert_eq!(m, m2);
        assert!(BinaryMatrix::parse("3\n0 1\n1 0\n").is_err());
        assert!(BinaryMatrix::parse("0 1\n1\n").is_err());
        assert!(BinaryMatrix::parse("0 2\n").is_err());
        let t = m.into_table("x", 1).unwrap();
        assert_eq!(t.attributes.len(), 2);
        assert_eq!(t.class, vec![1, 0]);
        assert_eq!(t.attributes[1].codes, vec![1, 1]);
        assert_eq!(t.attributes[1].name, "a2");
    }
}
