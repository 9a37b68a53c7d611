//! A single-objective private selection: which of four products to feature, from private purchase counts
//! (sensitivity 1: one customer changes one count by at most one), with a privacy budget.
//!
//! `cargo run --example select`

use dpmo::privacy::PrivacyBudget;
use dpmo::select::{select_exponential, select_permute_and_flip};
use dpmo::GeneratorState;
use std::io::Read;

/// A ChaCha20 generator seeded from the operating system (the production choice).
fn os_generator() -> dpmo::Generator {
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .expect("no /dev/urandom");
    GeneratorState::chacha20(seed).load().expect("a fresh state is valid")
}

fn main() -> Result<(), dpmo::Error> {
    let mut rng = os_generator();
    let mut budget = PrivacyBudget::new(1.0)?;
    let counts = [120.0, 95.0, 130.0, 40.0];

    // The exponential mechanism: P(r) ∝ exp(ε · count_r / 2), exactly.
    budget.charge(0.5)?;
    let featured = select_exponential(&mut rng, &counts, 1.0, 0.5)?;

    // Permute-and-flip: never less accurate than the exponential mechanism at the same ε.
    let mut perm = [0usize; 4];
    budget.charge(0.5)?;
    let runner_up = select_permute_and_flip(&mut rng, &counts, 1.0, 0.5, &mut perm)?;

    println!("featured product: {featured}, second release: {runner_up}");
    println!("privacy spent: epsilon = {} of {}", budget.spent(), budget.total());
    Ok(())
}
