//! The Gini index split criterion of decision-tree induction (Local Dampening paper, §5.2 "Gini Index",
//! after Friedman and Schuster's DiffPID3), with its global sensitivity Δ = 2.
//!
//! Gini(T, A) = −Σ_j τ_j · (1 − Σ_c (τ_{j,c} / τ_j)²), over the attribute values j with τ_j > 0: larger
//! is better, 0 for a pure split. Neighbour relation: datasets differing by one added or removed record.
//! The paper uses the global sensitivity only (its local sensitivity is not much smaller); the brute-force
//! test checks |Gini(x) − Gini(y)| ≤ 2 on all small contingency tables.

use super::info_gain::Contingency;

/// Δ = 2: the global sensitivity of the Gini utility under add/remove-one-record neighbours.
pub const GINI_GLOBAL_SENSITIVITY: f64 = 2.0;

/// The Gini utility −Σ_j (τ_j − Σ_c τ_{j,c}² / τ_j) of an attribute's contingency counts.
/// Neighbour relation: one record added or removed; Δ = [`GINI_GLOBAL_SENSITIVITY`].
pub fn gini_utility(table: &Contingency) -> f64 {
    let mut u = 0.0;
    for j in 0..table.values() {
        let tj = table.value_total(j) as f64;
        if tj == 0.0 {
            continue;
        }
        let mut sq = 0.0;
        for c in 0..table.classes() {
            let x = table.count(j, c) as f64;
            sq += x * x;
        }
        u -= tj - sq / tj;
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_and_mixed() {
        let pure = Contingency::new(&[3, 0, 0, 2], 2, 2).unwrap();
        assert_eq!(gini_utility(&pure), 0.0);
        let mixed = Contingency::new(&[1, 1], 1, 2).unwrap();
        assert_eq!(gini_utility(&mixed), -1.0);
    }
}
