//! The dominance relation between two candidates' utility vectors (PrivPareto paper, §4.1).

use core::cmp::Ordering;

/// Which dominance relation the Pareto score counts. Larger utilities are better.
///
/// With utility vectors a = (2, 3) and b = (2, 3) (an exact tie) and c = (2, 4):
/// - [`Dominance::Textbook`]: c dominates a and b; a and b do not dominate each other.
/// - [`Dominance::Weak`]: c dominates a and b, and a and b *also* dominate each other.
///
/// So with `Textbook` the Pareto front keeps all tied optima (PS = 0 for each), and with `Weak` a group of
/// k exact copies on the front all score −(k − 1). The sensitivity δ^PS of Def. 4.5 is the same function
/// for both relations (see [`crate::pareto::pareto_sensitivity`]), and both are checked admissible by
/// brute force in the test suite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Dominance {
    /// r′ dominates r when u_i(r′) ≥ u_i(r) for every objective i and u_i(r′) > u_i(r) for at least one:
    /// the usual Pareto dominance, and the default because ties then do not penalise each other.
    #[default]
    Textbook = 0,
    /// r′ dominates r when r′ ≠ r and u_i(r′) ≥ u_i(r) for every objective i: the relation ⪰ of the
    /// PrivPareto paper (Def. 4.3), under which exact ties dominate each other.
    Weak = 1,
}

impl Dominance {
    /// Whether the utility vector `a` dominates `b` under this relation (a and b belong to two distinct
    /// candidates; the slices have one entry per objective and should have equal lengths — extra entries
    /// of the longer one are ignored). Comparisons are IEEE: −0 and +0 tie.
    pub fn dominates(self, a: &[f64], b: &[f64]) -> bool {
        let mut strictly_better = false;
        for (&ai, &bi) in a.iter().zip(b) {
            match ai.partial_cmp(&bi) {
                Some(Ordering::Greater) => strictly_better = true,
                Some(Ordering::Equal) => {}
                // Worse, or incomparable (NaN): not dominating.
                Some(Ordering::Less) | None => return false,
            }
        }
        match self {
            Dominance::Textbook => strictly_better,
            Dominance::Weak => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_dominate_only_weakly() {
        let (a, b, c) = ([2.0, 3.0], [2.0, 3.0], [2.0, 4.0]);
        assert!(!Dominance::Textbook.dominates(&a, &b));
        assert!(Dominance::Weak.dominates(&a, &b));
        assert!(Dominance::Textbook.dominates(&c, &a));
        assert!(Dominance::Weak.dominates(&c, &a));
        assert!(!Dominance::Weak.dominates(&a, &c));
        assert!(Dominance::Weak.dominates(&[0.0], &[-0.0]));
        assert_eq!(Dominance::default(), Dominance::Textbook);
    }
}
