//! Local dampening (Local Dampening paper, Def. 3.8): select with a per-candidate local sensitivity δ instead
//! of the global Δ, here for utilities whose global sensitivity (10) is much larger than their typical local
//! one.
//!
//! `cargo run --example local_dampening`

use dpmo::dampen::Dampening;
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{local_dampening_probabilities, local_dampening_scratch_len, select_local_dampening, Arithmetic, Selector};

fn main() -> Result<(), dpmo::Error> {
    let utilities = [9.0, 8.5, 3.0, 1.0];
    // δ(x, t, r): how much u(r) can change at distance t from the data (admissible, Def. 3.3), as a table
    // of 3 distances per candidate; Δ = 10 from t = 3 on.
    #[rustfmt::skip]
    let table = [
        1.0, 2.0, 4.0,
        1.0, 2.0, 4.0,
        0.5, 1.0, 2.0,
        0.5, 1.0, 2.0,
    ];
    let delta = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: 3,
        },
        10.0,
        3,
        4,
    )?;
    let epsilon = 1.0;

    let mut probabilities = [0.0; 4];
    local_dampening_probabilities(&utilities, &delta, Dampening::Plain, epsilon, &mut probabilities)?;
    println!("probabilities: {probabilities:.3?}");

    let mut rng = dpmo::GeneratorState::chacha20([7; 32]).load()?; // fixed seed: reproducible demo only
    let mut scratch = vec![0.0; local_dampening_scratch_len(utilities.len())?];
    let chosen = select_local_dampening(
        &mut rng,
        &utilities,
        &delta,
        Dampening::Plain,
        Selector::PermuteAndFlip,
        epsilon,
        &mut scratch,
        &mut [0; 4],
        Arithmetic::Exact,
    )?;
    println!("chosen: {chosen}");
    Ok(())
}
