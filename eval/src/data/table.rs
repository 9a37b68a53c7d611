//! Classification tables: the [`Table`] every tabular experiment works on, and the two file loaders.
//!
//! * **`.dat` with a domain file** (the format of `../shared/data/nltcs`): one record per line,
//!   whitespace-separated numeric values, an optional first line holding the row count. The domain file
//!   (`NAME.domain` beside `NAME.dat`, or given explicitly) has an optional first line with the number of
//!   columns, then one line per column: `D v1 v2 …` for a discrete column with the listed values, or
//!   `C lo hi` for a continuous column with public bounds [lo, hi]. Without a domain file every column must
//!   be 0/1 (a binary table).
//! * **CSV**: one record per line, comma-separated, with or without a header line (guessed; see
//!   [`TableOptions`]). Rows with an empty field or `?` are dropped and counted. A numeric column with more
//!   than `max_levels` distinct values is continuous, any other column discrete.
//!
//! Either way one column is the class, which must take exactly two values; the positive class is the
//! given value, else the larger of the two (numerically, or in text order: `1` of 0/1, `>50K` of
//! `<=50K`/`>50K`).
//!
//! A continuous attribute is kept in two forms, as the papers use them: normalized to [0, 1] (DP-MOET tests
//! thresholds on it) and cut into equal-width bins (ID3 splits on discrete values). The bounds come from the
//! domain file when it has them, else from the data (min and max), which the report states.

use anyhow::{bail, ensure, Context, Result};
use std::path::{Path, PathBuf};

/// One attribute of a table.
#[derive(Clone, Debug)]
pub struct Attribute {
    /// Column name.
    pub name: String,
    /// Labels of the discrete codes 0..values.len() (for a continuous attribute: its bins).
    pub values: Vec<String>,
    /// The discrete code of every record (what ID3 splits on).
    pub codes: Vec<u8>,
    /// For a continuous attribute, its value normalized to [0, 1] (what DP-MOET thresholds); None when
    /// discrete.
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
    /// The class column's values (negative, positive).
    pub class_values: [String; 2],
    /// Rows dropped by the loader (missing values).
    pub dropped: usize,
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
            "{}: {} records × {} attributes ({} continuous, {} discrete), class {} ({} records) vs {} ({}){}",
            self.name,
            self.len(),
            self.attributes.len(),
            cont,
            self.attributes.len() - cont,
            self.class_values[1],
            self.positives(),
            self.class_values[0],
            self.len() - self.positives(),
            if self.dropped > 0 {
                format!("; {} rows with missing values dropped", self.dropped)
            } else {
                String::new()
            }
        )
    }
}

/// Where a column's values go.
#[derive(Clone, Debug)]
enum ColumnKind {
    /// Discrete with these values (codes in this order).
    Discrete(Vec<String>),
    /// Continuous with bounds [lo, hi].
    Continuous(f64, f64),
}

/// Options shared by the loaders.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// The class column (0-based index, or a header name for CSV).
    pub class_col: String,
    /// The positive class value (default: the larger of the two).
    pub positive: Option<String>,
    /// A numeric CSV column with more distinct values than this is continuous.
    pub max_levels: usize,
    /// Equal-width bins of a continuous attribute for ID3.
    pub bins: usize,
    /// CSV header: None to guess.
    pub header: Option<bool>,
    /// The domain file of a `.dat` table (default: beside it, `.domain`).
    pub domain: Option<PathBuf>,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            class_col: String::new(),
            positive: None,
            max_levels: 16,
            bins: 5,
            header: None,
            domain: None,
        }
    }
}

fn parse_number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Sorts distinct values numerically when they all are numbers, else as text.
fn sorted_values(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    if v.iter().all(|s| parse_number(s).is_some()) {
        v.sort_by(|a, b| {
            parse_number(a)
                .unwrap_or(0.0)
                .total_cmp(&parse_number(b).unwrap_or(0.0))
        });
        v.dedup_by(|a, b| parse_number(a) == parse_number(b));
    }
    v
}

fn bin_of(x: f64, lo: f64, hi: f64, bins: usize) -> u8 {
    if hi <= lo {
        return 0;
    }
    let b = ((x - lo) / (hi - lo) * bins as f64).floor();
    b.clamp(0.0, (bins - 1) as f64) as u8
}

/// Builds a table from string cells of `rows` (all of the same width) and a kind per column.
fn assemble(
    name: &str,
    names: &[String],
    rows: &[Vec<String>],
    kinds: &[ColumnKind],
    class: usize,
    opts: &TableOptions,
    dropped: usize,
) -> Result<Table> {
    ensure!(!rows.is_empty(), "{name}: no records");
    ensure!(
        class < names.len(),
        "{name}: class column {class} out of range ({} columns)",
        names.len()
    );
    ensure!((1..=255).contains(&opts.bins), "--bins must be in 1..=255");
    let class_values = match &kinds[class] {
        ColumnKind::Discrete(v) if v.len() == 2 => v.clone(),
        ColumnKind::Discrete(v) => bail!(
            "{name}: the class column {} must take exactly 2 values, it takes {}",
            names[class],
            v.len()
        ),
        ColumnKind::Continuous(..) => bail!("{name}: the class column {} is continuous", names[class]),
    };
    let positive = match &opts.positive {
        Some(p) => class_values
            .iter()
            .position(|v| v == p)
            .with_context(|| format!("{name}: positive class {p:?} is not one of {class_values:?}"))?,
        None => 1,
    };
    let class_codes: Vec<u8> = rows
        .iter()
        .map(|r| u8::from(r[class] == class_values[positive]))
        .collect();
    let mut attributes = Vec::new();
    for (c, kind) in kinds.iter().enumerate() {
        if c == class {
            continue;
        }
        let attr = match kind {
            ColumnKind::Discrete(values) => {
                ensure!(
                    values.len() <= 255,
                    "{name}: column {} has {} distinct values (at most 255 for a discrete attribute)",
                    names[c],
                    values.len()
                );
                let codes = rows
                    .iter()
                    .map(|r| {
                        values
                            .iter()
                            .position(|v| {
                                *v == r[c] || (parse_number(v).is_some() && parse_number(v) == parse_number(&r[c]))
                            })
                            .map(|p| p as u8)
                            .with_context(|| format!("{name}: column {}: value {:?} not in its domain", names[c], r[c]))
                    })
                    .collect::<Result<_>>()?;
                Attribute {
                    name: names[c].clone(),
                    values: values.clone(),
                    codes,
                    numeric: None,
                }
            }
            &ColumnKind::Continuous(lo, hi) => {
                let raw: Vec<f64> = rows
                    .iter()
                    .map(|r| {
                        parse_number(&r[c])
                            .with_context(|| format!("{name}: column {}: {:?} is not a number", names[c], r[c]))
                    })
                    .collect::<Result<_>>()?;
                let span = if hi > lo { hi - lo } else { 1.0 };
                let width = span / opts.bins as f64;
                let values = (0..opts.bins)
                    .map(|b| format!("[{:.4}, {:.4})", lo + b as f64 * width, lo + (b + 1) as f64 * width))
                    .collect();
                Attribute {
                    name: names[c].clone(),
                    values,
                    codes: raw.iter().map(|&x| bin_of(x, lo, hi, opts.bins)).collect(),
                    numeric: Some(raw.iter().map(|&x| ((x - lo) / span).clamp(0.0, 1.0)).collect()),
                }
            }
        };
        attributes.push(attr);
    }
    Ok(Table {
        name: name.to_string(),
        attributes,
        class: class_codes,
        class_values: [class_values[1 - positive].clone(), class_values[positive].clone()],
        dropped,
    })
}

fn class_index(spec: &str, names: &[String]) -> Result<usize> {
    ensure!(
        !spec.is_empty(),
        "the class column is required (--class-col N, 0-based, or a header name)"
    );
    if let Ok(i) = spec.parse::<usize>() {
        return Ok(i);
    }
    names
        .iter()
        .position(|n| n == spec)
        .with_context(|| format!("no column named {spec:?} (columns: {})", names.join(", ")))
}

/// Parses a domain file: per column `D v…` or `C lo hi`, with an optional first line holding the count.
fn parse_domain(text: &str) -> Result<Vec<ColumnKind>> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty()).peekable();
    let mut declared = None;
    if let Some(first) = lines.peek() {
        if let Ok(n) = first.parse::<usize>() {
            declared = Some(n);
            lines.next();
        }
    }
    let mut kinds = Vec::new();
    for (i, line) in lines.enumerate() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("D") => {
                let values: Vec<String> = f.map(str::to_string).collect();
                ensure!(
                    !values.is_empty(),
                    "domain line {}: a discrete column needs values",
                    i + 1
                );
                kinds.push(ColumnKind::Discrete(values));
            }
            Some("C") => {
                let b: Vec<f64> = f
                    .map(|x| x.parse::<f64>())
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("domain line {}", i + 1))?;
                ensure!(
                    b.len() == 2 && b[0] < b[1],
                    "domain line {}: expected `C lo hi` with lo < hi",
                    i + 1
                );
                kinds.push(ColumnKind::Continuous(b[0], b[1]));
            }
            _ => bail!(
                "domain line {}: expected `D values…` or `C lo hi`, found {line:?}",
                i + 1
            ),
        }
    }
    if let Some(d) = declared {
        ensure!(
            d == kinds.len(),
            "domain file declares {d} columns and describes {}",
            kinds.len()
        );
    }
    Ok(kinds)
}

/// Reads a `.dat` table (see the module documentation).
pub fn load_dat(path: &Path, name: &str, opts: &TableOptions) -> Result<Table> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty()).peekable();
    let mut declared = None;
    let mut rows: Vec<Vec<String>> = Vec::new();
    // A first line with a single field is the row count, unless the table has one column.
    if let Some(first) = lines.peek() {
        let fields: Vec<&str> = first.split_whitespace().collect();
        let second_width = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .nth(1)
            .map(|l| l.split_whitespace().count());
        if fields.len() == 1 && second_width.is_some_and(|w| w > 1) {
            declared = Some(
                fields[0]
                    .parse::<usize>()
                    .with_context(|| format!("{}: row-count line", path.display()))?,
            );
            lines.next();
        }
    }
    for (i, line) in lines.enumerate() {
        let fields: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        if let Some(first) = rows.first() {
            ensure!(
                fields.len() == first.len(),
                "{}: row {} has {} values, expected {}",
                path.display(),
                i + 1,
                fields.len(),
                first.len()
            );
        }
        rows.push(fields);
    }
    if let Some(d) = declared {
        ensure!(
            d == rows.len(),
            "{}: row-count line says {d}, found {} rows",
            path.display(),
            rows.len()
        );
    }
    ensure!(!rows.is_empty(), "{}: no rows", path.display());
    let width = rows[0].len();
    let domain_path = opts.domain.clone().unwrap_or_else(|| path.with_extension("domain"));
    let kinds = if domain_path.exists() {
        let d = std::fs::read_to_string(&domain_path).with_context(|| format!("reading {}", domain_path.display()))?;
        let k = parse_domain(&d).with_context(|| format!("parsing {}", domain_path.display()))?;
        ensure!(
            k.len() == width,
            "{} describes {} columns, the table has {width}",
            domain_path.display(),
            k.len()
        );
        k
    } else {
        ensure!(
            rows.iter().flatten().all(|v| v == "0" || v == "1"),
            "{}: no domain file {} and the values are not all 0/1",
            path.display(),
            domain_path.display()
        );
        vec![ColumnKind::Discrete(vec!["0".into(), "1".into()]); width]
    };
    let names: Vec<String> = (0..width).map(|c| format!("a{c}")).collect();
    let class = class_index(&opts.class_col, &names)?;
    assemble(name, &names, &rows, &kinds, class, opts, 0)
}

/// Reads a CSV table (see the module documentation).
pub fn load_csv(path: &Path, name: &str, opts: &TableOptions) -> Result<Table> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_path(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let mut all: Vec<Vec<String>> = Vec::new();
    for rec in reader.records() {
        let rec = rec.with_context(|| format!("reading {}", path.display()))?;
        let row: Vec<String> = rec.iter().map(str::to_string).collect();
        if row.iter().all(|f| f.is_empty()) {
            continue;
        }
        all.push(row);
    }
    ensure!(!all.is_empty(), "{}: no rows", path.display());
    let width = all[0].len();
    let header = match opts.header {
        Some(h) => h,
        None => {
            let first = &all[0];
            let rest = &all[1..all.len().min(1001)];
            let non_numeric_first = first.iter().all(|f| parse_number(f).is_none());
            let numeric_col_below = (0..width)
                .any(|c| !rest.is_empty() && rest.iter().all(|r| r.get(c).is_some_and(|v| parse_number(v).is_some())));
            let absent_below = (0..width).all(|c| rest.iter().all(|r| r.get(c) != Some(&first[c])));
            non_numeric_first && (numeric_col_below || (absent_below && rest.len() >= 10))
        }
    };
    let names: Vec<String> = if header {
        all[0].clone()
    } else {
        (0..width).map(|c| format!("c{c}")).collect()
    };
    let data = &all[usize::from(header)..];
    let mut rows = Vec::with_capacity(data.len());
    let mut dropped = 0;
    for (i, r) in data.iter().enumerate() {
        ensure!(
            r.len() == width,
            "{}: record {} has {} fields, expected {width}",
            path.display(),
            i + 1,
            r.len()
        );
        if r.iter().any(|f| f.is_empty() || f == "?") {
            dropped += 1;
            continue;
        }
        rows.push(r.clone());
    }
    ensure!(!rows.is_empty(), "{}: every record has a missing value", path.display());
    let class = class_index(&opts.class_col, &names)?;
    let kinds: Vec<ColumnKind> = (0..width)
        .map(|c| {
            let distinct = sorted_values(rows.iter().map(|r| r[c].clone()).collect());
            let numeric = distinct.iter().all(|v| parse_number(v).is_some());
            if c != class && numeric && distinct.len() > opts.max_levels {
                let xs = rows.iter().filter_map(|r| parse_number(&r[c]));
                let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
                ColumnKind::Continuous(lo, hi)
            } else {
                ColumnKind::Discrete(distinct)
            }
        })
        .collect();
    assemble(name, &names, &rows, &kinds, class, opts, dropped)
}

/// Reads a table, `.dat` or CSV by extension (`.dat` or not).
pub fn load(path: &Path, name: &str, opts: &TableOptions) -> Result<Table> {
    let dat = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("dat"));
    if dat {
        load_dat(path, name, opts)
    } else {
        load_csv(path, name, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dpmo-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn opts(class: &str) -> TableOptions {
        TableOptions {
            class_col: class.into(),
            ..TableOptions::default()
        }
    }

    #[test]
    fn dat_with_and_without_count_line_and_domain() {
        let p = tmp("a.dat", "2\n0 1 1\n1\t0\t1\n");
        let t = load(&p, "a", &opts("1")).unwrap();
        assert_eq!((t.len(), t.attributes.len()), (2, 2));
        assert_eq!(t.class, vec![1, 0]);
        assert_eq!(t.attributes[1].codes, vec![1, 1]);
        assert_eq!(t.attributes[1].name, "a2");
        let q = tmp("b.dat", "0 1 1\n1 0 1\n");
        assert_eq!(load(&q, "b", &opts("1")).unwrap().class, t.class);
        assert!(load(&tmp("c.dat", "3\n0 1\n1 0\n"), "c", &opts("0")).is_err());
        assert!(load(&tmp("d.dat", "0 1\n1\n"), "d", &opts("0")).is_err());
        assert!(
            load(&tmp("e.dat", "0 2\n1 0\n"), "e", &opts("0")).is_err(),
            "non-binary without a domain"
        );
        // With a domain file: a three-valued column and a continuous one.
        let p = tmp("f.dat", "0 2 5.0\n1 0 7.5\n1 1 10\n");
        tmp("f.domain", "3\nD 0 1\nD 0 1 2\nC 5 10\n");
        let t = load(&p, "f", &opts("0")).unwrap();
        assert_eq!(t.attributes[0].codes, vec![2, 0, 1]);
        assert_eq!(t.attributes[1].numeric.as_deref(), Some(&[0.0, 0.5, 1.0][..]));
        assert_eq!(t.attributes[1].codes, vec![0, 2, 4]);
        assert!(load(&p, "f", &opts("1")).is_err(), "a three-valued class");
    }

    #[test]
    fn csv_header_guess_missing_values_and_kinds() {
        let mut text = String::from("age,colour,label\n");
        for i in 0..40 {
            text.push_str(&format!(
                "{},{},{}\n",
                20 + i,
                ["red", "blue"][i % 2],
                ["no", "yes"][(i / 3) % 2]
            ));
        }
        text.push_str("?,red,yes\n");
        let p = tmp("t.csv", &text);
        let t = load(&p, "t", &opts("label")).unwrap();
        assert_eq!((t.len(), t.dropped), (40, 1));
        assert_eq!(t.class_values, ["no".to_string(), "yes".to_string()]);
        assert!(t.attributes[0].numeric.is_some(), "40 distinct ages: continuous");
        assert_eq!(t.attributes[1].values, vec!["blue", "red"]);
        let by_index = load(&p, "t", &opts("2")).unwrap();
        assert_eq!(by_index.class, t.class);
        // Without a header the columns are c0, c1, …
        let q = tmp("u.csv", "1,a,0\n2,b,1\n3,a,1\n");
        let u = load(&q, "u", &opts("2")).unwrap();
        assert_eq!(u.len(), 3);
        assert_eq!(u.attributes[0].name, "c0");
        let pos = TableOptions {
            positive: Some("0".into()),
            ..opts("2")
        };
        assert_eq!(load(&q, "u", &pos).unwrap().class, vec![1, 0, 0]);
        assert!(load(&q, "u", &opts("9")).is_err());
        assert!(load(&q, "u", &opts("")).is_err());
    }
}
