//! The records to generalize: Adult's seven quasi-identifiers as leaves of their hierarchies.
//!
//! Reads `adult.data` (15 comma-separated fields per line, no header: the UCI format) or any CSV with a
//! header line that names the seven columns (`age`, `workclass`, `education`, `marital-status`, `race`,
//! `sex`, `native-country`; other columns are ignored). Records with a missing value ('?' in any field, or an
//! empty one of the seven) are dropped, as is customary for Adult (30,162 of the 32,561 rows of `adult.data`
//! remain);
//! a value that is not a leaf of its hierarchy is an error naming it.

use super::hierarchy::Vgh;
use anyhow::{bail, ensure, Context, Result};
use std::path::Path;

/// Column of each hierarchy attribute in the UCI `adult.data` layout.
const UCI_COLUMNS: [usize; 7] = [0, 1, 3, 5, 8, 9, 13];

/// Records as leaf ids, row-major (k = 7 per record).
pub struct Microdata {
    /// Display name.
    pub name: String,
    /// m × k node ids.
    pub records: Vec<u32>,
    /// Rows read.
    pub rows: usize,
    /// Rows dropped for a missing value.
    pub dropped: usize,
}

impl Microdata {
    /// The number of records m.
    pub fn len(&self, k: usize) -> usize {
        self.records.len() / k
    }
}

/// Loads a file (see the module docs) against the hierarchies `h` (in the order of [`super::hierarchy::ADULT`]).
pub fn load(path: &Path, name: &str, h: &[Vgh]) -> Result<Microdata> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('|')
    });
    let split = |l: &str| -> Vec<String> {
        l.split(',')
            .map(|f| f.trim().trim_end_matches('.').to_string())
            .collect()
    };
    let Some((_, first)) = lines.next() else {
        bail!("{}: no record", path.display());
    };
    let first_fields = split(first);
    let header = h.iter().all(|v| first_fields.iter().any(|f| f == &v.attribute));
    let columns: Vec<usize> = if header {
        h.iter()
            .map(|v| first_fields.iter().position(|f| f == &v.attribute).unwrap_or(0))
            .collect()
    } else {
        ensure!(
            first_fields.len() == 15,
            "{}: neither a header naming the columns {} nor the 15 fields of UCI adult.data",
            path.display(),
            h.iter().map(|v| v.attribute.as_str()).collect::<Vec<_>>().join(", ")
        );
        UCI_COLUMNS.to_vec()
    };
    let width = first_fields.len();
    let body: Vec<(usize, &str)> = if header {
        lines.collect()
    } else {
        std::iter::once((0, first)).chain(lines).collect()
    };
    let mut records = Vec::with_capacity(body.len() * h.len());
    let mut dropped = 0;
    for (line_no, line) in &body {
        let f = split(line);
        ensure!(
            f.len() == width,
            "{}, line {}: {} fields, expected {width}",
            path.display(),
            line_no + 1,
            f.len()
        );
        if f.iter().any(|x| x == "?") || columns.iter().any(|&c| f[c].is_empty()) {
            dropped += 1;
            continue;
        }
        for (v, &c) in h.iter().zip(&columns) {
            let leaf = v.leaves.get(&f[c]).with_context(|| {
                format!(
                    "{}, line {}: {} = {:?} is not a leaf of its hierarchy (eval/hierarchies/adult/{}.csv)",
                    path.display(),
                    line_no + 1,
                    v.attribute,
                    f[c],
                    v.attribute
                )
            })?;
            records.push(*leaf);
        }
    }
    ensure!(!records.is_empty(), "{}: no complete record", path.display());
    Ok(Microdata {
        name: name.into(),
        records,
        rows: body.len(),
        dropped,
    })
}

/// The bundled Adult training file, checked against its published shape (32,561 rows, 30,162 complete).
pub fn bundled_adult(data: &Path, h: &[Vgh]) -> Result<Microdata> {
    crate::data::check_data_folder(data)?;
    let d = load(&data.join("adult/adult.data"), "Adult", h)?;
    ensure!(
        (d.rows, d.len(h.len())) == (32_561, 30_162),
        "adult.data: {} rows, {} complete, expected 32,561 and 30,162",
        d.rows,
        d.len(h.len())
    );
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fixture_and_a_header_csv() {
        let h = super::super::hierarchy::adult().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/small_adult.data");
        let d = load(&fixture, "small_adult", &h).unwrap();
        assert_eq!((d.rows, d.dropped, d.len(7)), (50, 2, 48));
        let dir = std::env::temp_dir().join(format!("dpmo-microdata-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("t.csv");
        std::fs::write(
            &csv,
            "id,sex,age,race,workclass,education,marital-status,native-country\n\
             1,Male,30,White,Private,HS-grad,Divorced,Canada\n2,Female,?,White,Private,HS-grad,Divorced,Canada\n",
        )
        .unwrap();
        let d = load(&csv, "t", &h).unwrap();
        assert_eq!((d.len(7), d.dropped), (1, 1));
        assert_eq!(h[0].names[d.records[0] as usize], "30");
        assert_eq!(h[6].names[d.records[6] as usize], "Canada");
        std::fs::write(&csv, "age,workclass,education,marital-status,race,sex,native-country\n300,Private,HS-grad,Divorced,White,Male,Canada\n").unwrap();
        let e = load(&csv, "t", &h).err().unwrap().to_string();
        assert!(e.contains("age = \"300\""), "{e}");
        std::fs::remove_dir_all(dir).ok();
    }
}
