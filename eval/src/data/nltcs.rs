//! NLTCS (National Long Term Care Survey, binarized): 21,574 records × 16 binary attributes; the reference
//! experiments take column 13 (0-based) as the class, leaving 15 binary predictive attributes.

use super::dat::{BinaryMatrix, Table};
use anyhow::{ensure, Result};
use std::path::Path;

/// The class column used by the papers' experiments.
pub const CLASS_COLUMN: usize = 13;

/// Loads `nltcs/nltcs.dat` under the data folder and checks its published shape.
pub fn load(data: &Path) -> Result<Table> {
    let m = BinaryMatrix::load(&data.join("nltcs/nltcs.dat"))?;
    ensure!(
        m.rows == 21_574 && m.cols == 16,
        "NLTCS shape {} x {}, expected 21574 x 16",
        m.rows,
        m.cols
    );
    m.into_table("NLTCS", CLASS_COLUMN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nltcs_shape() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
        if !data.join("nltcs/nltcs.dat").exists() {
            eprintln!("skipping: no shared data");
            return;
        }
        let t = load(&data).unwrap();
        assert_eq!(t.len(), 21_574);
        assert_eq!(t.attributes.len(), 15);
        assert_eq!(t.positives(), 8_697);
        assert!(t
            .attributes
            .iter()
            .all(|a| a.cardinality() == 2 && a.codes.iter().all(|&c| c < 2)));
    }
}
