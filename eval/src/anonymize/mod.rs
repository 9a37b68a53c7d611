//! Private data generalization (Fouad, Elbassioni and Bertino, *Towards a Differentially Private Data
//! Anonymization*; `dpmo::generalize`) evaluated on Adult: value generalization hierarchies
//! ([`hierarchy`], files in `eval/hierarchies/adult/`), the records ([`microdata`]), their chain products
//! and counts ([`space`]), the per-record models and Algorithm 3 ([`mechanism`]), the full-domain
//! k-anonymity baseline ([`kanon`]) and the experiment `generalize-adult` ([`generalize_adult`]).

pub mod generalize_adult;
pub mod hierarchy;
pub mod kanon;
pub mod mechanism;
pub mod microdata;
pub mod space;
