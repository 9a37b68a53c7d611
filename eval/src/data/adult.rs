//! UCI Adult: `adult.data` (32,561 rows) + `adult.test` (16,281 rows, first line a comment, labels ending
//! with '.'); rows with a missing value ('?') are dropped, leaving 45,222 records.
//!
//! Attributes (as in the PrivPareto authors' loader): the 4 continuous ones — age, capital-gain,
//! capital-loss, hours-per-week — and 8 discrete ones — workclass, education-num (16 levels),
//! marital-status, occupation, relationship, race, sex, native-country. fnlwgt (a sampling weight) and
//! education (a duplicate of education-num) are not used. Class: income >50K.
//!
//! Continuous attributes carry both forms the papers use: min-max normalized to [0, 1] (DP-MOET splits
//! on thresholds, PrivPareto paper §6.2.2) and a discretization into fixed, public bins (ID3 splits on
//! discrete values, Local Dampening paper §5.2 "Continuous Attributes"; the paper does not give its bins,
//! ours are [`BINS`]). Discrete value codes follow the order of `adult.names`, so they do not depend on
//! the data.

use super::table::{Attribute, Table};
use anyhow::{bail, ensure, Context, Result};
use std::path::Path;

/// Values of the discrete attributes in `adult.names` order.
const WORKCLASS: &str =
    "Private, Self-emp-not-inc, Self-emp-inc, Federal-gov, Local-gov, State-gov, Without-pay, Never-worked";
const MARITAL: &str =
    "Married-civ-spouse, Divorced, Never-married, Separated, Widowed, Married-spouse-absent, Married-AF-spouse";
const OCCUPATION: &str = "Tech-support, Craft-repair, Other-service, Sales, Exec-managerial, Prof-specialty, Handlers-cleaners, Machine-op-inspct, Adm-clerical, Farming-fishing, Transport-moving, Priv-house-serv, Protective-serv, Armed-Forces";
const RELATIONSHIP: &str = "Wife, Own-child, Husband, Not-in-family, Other-relative, Unmarried";
const RACE: &str = "White, Asian-Pac-Islander, Amer-Indian-Eskimo, Other, Black";
const SEX: &str = "Female, Male";
const COUNTRY: &str = "United-States, Cambodia, England, Puerto-Rico, Canada, Germany, Outlying-US(Guam-USVI-etc), India, Japan, Greece, South, China, Cuba, Iran, Honduras, Philippines, Italy, Poland, Jamaica, Vietnam, Mexico, Portugal, Ireland, France, Dominican-Republic, Laos, Ecuador, Taiwan, Haiti, Columbia, Hungary, Guatemala, Nicaragua, Scotland, Thailand, Yugoslavia, El-Salvador, Trinadad&Tobago, Peru, Hong, Holand-Netherlands";

/// Fixed bin edges of the continuous attributes for ID3: a value v falls in bin i when edges[i-1] ≤ v < edges[i].
pub const BINS: [(&str, &[f64]); 4] = [
    ("age", &[25.0, 35.0, 45.0, 55.0, 65.0]),
    ("capital-gain", &[1.0, 5000.0, 10000.0]),
    ("capital-loss", &[1.0, 2000.0]),
    ("hours-per-week", &[35.0, 40.0, 41.0, 50.0]),
];

/// Column indices in the raw files.
const AGE: usize = 0;
const WORK: usize = 1;
const EDU_NUM: usize = 4;
const MAR: usize = 5;
const OCC: usize = 6;
const REL: usize = 7;
const RAC: usize = 8;
const SX: usize = 9;
const GAIN: usize = 10;
const LOSS: usize = 11;
const HOURS: usize = 12;
const CTRY: usize = 13;
const INCOME: usize = 14;

fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(|v| v.trim().to_string()).collect()
}

/// Raw complete rows (fields trimmed, label '.' removed) of one file.
fn read_rows(path: &Path, out: &mut Vec<Vec<String>>) -> Result<usize> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut total = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('|') {
            continue;
        }
        total += 1;
        let fields: Vec<String> = line
            .split(',')
            .map(|f| f.trim().trim_end_matches('.').to_string())
            .collect();
        if fields.len() != 15 {
            bail!("{}: a row with {} fields", path.display(), fields.len());
        }
        if fields.iter().any(|f| f == "?") {
            continue;
        }
        out.push(fields);
    }
    Ok(total)
}

fn bin(v: f64, edges: &[f64]) -> u8 {
    edges.iter().filter(|&&e| v >= e).count() as u8
}

fn bin_labels(edges: &[f64]) -> Vec<String> {
    let mut labels = vec![format!("<{}", edges[0])];
    for w in edges.windows(2) {
        labels.push(format!("[{},{})", w[0], w[1]));
    }
    labels.push(format!(">={}", edges[edges.len() - 1]));
    labels
}

/// Loads Adult from its folder (`adult.data`, `adult.test`) and checks the published record counts (a fixture
/// check of the bundled copy).
pub fn load(folder: &Path) -> Result<Table> {
    let mut rows = Vec::new();
    let n_train = read_rows(&folder.join("adult.data"), &mut rows)?;
    let n_test = read_rows(&folder.join("adult.test"), &mut rows)?;
    ensure!(
        n_train == 32_561 && n_test == 16_281,
        "Adult files hold {n_train} + {n_test} rows"
    );
    ensure!(
        rows.len() == 45_222,
        "Adult: {} complete records, expected 45222",
        rows.len()
    );
    let mut attributes = Vec::new();
    let continuous = |col: usize, name: &str, edges: &[f64]| -> Result<Attribute> {
        let raw: Vec<f64> = rows
            .iter()
            .map(|r| r[col].parse::<f64>().with_context(|| format!("{name}: {:?}", r[col])))
            .collect::<Result<_>>()?;
        let (lo, hi) = raw
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
        Ok(Attribute {
            name: name.into(),
            values: bin_labels(edges),
            codes: raw.iter().map(|&v| bin(v, edges)).collect(),
            numeric: Some(raw.iter().map(|&v| (v - lo) / (hi - lo)).collect()),
        })
    };
    let discrete = |col: usize, name: &str, values: Vec<String>| -> Result<Attribute> {
        let codes = rows
            .iter()
            .map(|r| {
                values
                    .iter()
                    .position(|v| *v == r[col])
                    .map(|p| p as u8)
                    .with_context(|| format!("{name}: unknown value {:?}", r[col]))
            })
            .collect::<Result<_>>()?;
        Ok(Attribute {
            name: name.into(),
            values,
            codes,
            numeric: None,
        })
    };
    attributes.push(continuous(AGE, "age", BINS[0].1)?);
    attributes.push(discrete(WORK, "workclass", split_list(WORKCLASS))?);
    attributes.push(discrete(
        EDU_NUM,
        "education-num",
        (1..=16).map(|i| i.to_string()).collect(),
    )?);
    attributes.push(discrete(MAR, "marital-status", split_list(MARITAL))?);
    attributes.push(discrete(OCC, "occupation", split_list(OCCUPATION))?);
    attributes.push(discrete(REL, "relationship", split_list(RELATIONSHIP))?);
    attributes.push(discrete(RAC, "race", split_list(RACE))?);
    attributes.push(discrete(SX, "sex", split_list(SEX))?);
    attributes.push(continuous(GAIN, "capital-gain", BINS[1].1)?);
    attributes.push(continuous(LOSS, "capital-loss", BINS[2].1)?);
    attributes.push(continuous(HOURS, "hours-per-week", BINS[3].1)?);
    attributes.push(discrete(CTRY, "native-country", split_list(COUNTRY))?);
    let class = rows
        .iter()
        .map(|r| match r[INCOME].as_str() {
            ">50K" => Ok(1),
            "<=50K" => Ok(0),
            other => bail!("income label {other:?}"),
        })
        .collect::<Result<_>>()?;
    Ok(Table {
        name: "Adult".into(),
        attributes,
        class,
        class_values: ["<=50K".into(), ">50K".into()],
        dropped: n_train + n_test - rows.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adult_shape() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/adult");
        if !folder.join("adult.data").exists() {
            eprintln!("skipping: no shared data");
            return;
        }
        let t = load(&folder).unwrap();
        assert_eq!(t.len(), 45_222);
        assert_eq!(t.attributes.len(), 12);
        assert_eq!(t.attributes.iter().filter(|a| a.numeric.is_some()).count(), 4);
        assert_eq!(t.positives(), 11_208);
        for a in &t.attributes {
            assert!(a.codes.iter().all(|&c| (c as usize) < a.cardinality()), "{}", a.name);
            if let Some(v) = &a.numeric {
                assert!(v.iter().all(|x| (0.0..=1.0).contains(x)));
            }
        }
        assert_eq!(t.attributes[11].cardinality(), 41);
        assert_eq!(bin(40.0, BINS[3].1), 2);
        assert_eq!(bin(0.0, BINS[1].1), 0);
    }
}
