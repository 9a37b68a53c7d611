//! PrivPareto top-3 on a small social graph: the most influential accounts by degree and egocentric density
//! together (PrivPareto paper, §4 and §7), with local sensitivity and automatic saturation.
//!
//! `cargo run --example privpareto_graph`

use dpmo::dampen::Dampening;
use dpmo::graph::Csr;
use dpmo::multi::privpareto_scratch_len;
use dpmo::sensitivity::degree::{degree_all, degree_delta_table, DEGREE_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::egodensity::{egodensity_all, egodensity_delta_table, EGODENSITY_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{select_privpareto, Arithmetic, Dominance, ParetoSensitivity, Selector};

/// Adjacency lists of an undirected graph in compressed sparse rows.
fn csr(n: usize, edges: &[(u32, u32)]) -> (Vec<usize>, Vec<u32>) {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    let mut offsets = vec![0];
    let mut neighbours = Vec::new();
    for mut list in adj {
        list.sort();
        neighbours.extend(list);
        offsets.push(neighbours.len());
    }
    (offsets, neighbours)
}

fn main() -> Result<(), dpmo::Error> {
    // Two hubs (0, 1), a tight triangle (2, 3, 4) and a few leaves.
    let edges = [
        (0, 5),
        (0, 6),
        (0, 7),
        (0, 8),
        (0, 2),
        (1, 8),
        (1, 9),
        (1, 3),
        (2, 3),
        (3, 4),
        (2, 4),
        (5, 6),
    ];
    let n = 10;
    let (offsets, neighbours) = csr(n, &edges);
    let g = Csr::new(&offsets, &neighbours)?;

    let (mut degree, mut ego) = (vec![0.0; n], vec![0.0; n]);
    degree_all(&g, &mut degree)?;
    egodensity_all(&g, &mut ego)?;
    let utilities: Vec<f64> = degree.iter().zip(&ego).flat_map(|(&d, &e)| [d, e]).collect();

    // Admissible local sensitivities of both objectives (edge-DP), tabulated for 8 distances.
    let cols = 8;
    let (mut dd, mut de) = (vec![0.0; n * cols], vec![0.0; n * cols]);
    degree_delta_table(&g, cols, &mut dd)?;
    egodensity_delta_table(&g, cols, &mut de)?;
    let deltas = [
        LocalSensitivity::new(
            DeltaSource::Table {
                values: &dd,
                columns: cols,
            },
            DEGREE_GLOBAL_SENSITIVITY,
            cols,
            n,
        )?,
        LocalSensitivity::new(
            DeltaSource::Table {
                values: &de,
                columns: cols,
            },
            EGODENSITY_GLOBAL_SENSITIVITY,
            cols,
            n,
        )?,
    ];

    let need = privpareto_scratch_len(n, 2)?;
    let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
    let mut top3 = [0usize; 3];
    let mut rng = dpmo::GeneratorState::chacha20([11; 32]).load()?; // fixed seed: reproducible demo only
    select_privpareto(
        &mut rng,
        &utilities,
        2,
        Dominance::Textbook,
        ParetoSensitivity::Local {
            deltas: &deltas,
            max_distance: 0,
            dampening: Dampening::Plain,
        },
        Selector::Exponential,
        2.0, // ε for all three picks together (2/3 each)
        &mut top3,
        &mut values,
        &mut indices,
        Arithmetic::Exact,
    )?;
    println!("top-3 accounts by (degree, egodensity): {top3:?}");
    Ok(())
}
