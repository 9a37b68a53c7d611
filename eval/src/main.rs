//! `dpmo-eval`: the papers' applications on real data with dpmo, their CSV results, plots and the
//! reproduction report `eval/REPRODUCTION.md`.
//!
//! ```text
//! dpmo-eval dataset enron                 # loader check: nodes, edges, max degree
//! dpmo-eval reproduce                     # every experiment at the documented repetition counts
//! dpmo-eval reproduce --smoke             # a small, fast version of every experiment (make test)
//! dpmo-eval run <experiment> [--smoke]    # one experiment
//! ```

mod data;
mod experiments;
mod graph;
mod output;
mod tabular;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "dpmo-eval", about = "Reproduce the papers' experiments with dpmo")]
struct Cli {
    /// Folder holding the shared datasets (enron/, nltcs/, adult/).
    #[arg(long, global = true, default_value = "../shared/data")]
    data: PathBuf,
    /// Folder for CSV files and plots.
    #[arg(long, global = true, default_value = "eval/results")]
    out: PathBuf,
    /// Seed of the experiment generators (Xoshiro256++: reproducible simulation, not for releases).
    #[arg(long, global = true, default_value_t = 2026)]
    seed: u64,
    /// Small repetition counts and grids: a fast check that every experiment runs.
    #[arg(long, global = true)]
    smoke: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the shape of a dataset as the loader reads it.
    Dataset {
        /// enron, nltcs or adult
        name: String,
    },
    /// Run one experiment.
    Run {
        /// Experiment name (see `list`).
        name: String,
    },
    /// List the experiments.
    List,
    /// Run every experiment and write the reproduction report.
    Reproduce {
        /// Where to write the report.
        #[arg(long, default_value = "eval/REPRODUCTION.md")]
        report: PathBuf,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let ctx = experiments::Context {
        data: cli.data.clone(),
        out: cli.out.clone(),
        seed: cli.seed,
        smoke: cli.smoke,
    };
    match cli.command {
        Command::Dataset { name } => match name.as_str() {
            "enron" => {
                let g = data::snap::Graph::load(&ctx.data.join("enron/Email-Enron.txt"))?;
                g.csr()?;
                println!(
                    "enron: {} nodes, {} edges, max degree {}",
                    g.node_count(),
                    g.edge_count(),
                    g.max_degree()
                );
            }
            "nltcs" => println!("{}", data::nltcs::load(&ctx.data)?.describe()),
            "adult" => {
                let t = data::adult::load(&ctx.data)?;
                println!("{}", t.describe());
                for a in &t.attributes {
                    let kind = if a.numeric.is_some() { "continuous" } else { "discrete" };
                    println!("  {:<15} {:<10} {} codes", a.name, kind, a.cardinality());
                }
            }
            other => bail!("unknown dataset {other}"),
        },
        Command::List => {
            for e in experiments::all() {
                println!("{:<20} {}", e.name, e.about);
            }
        }
        Command::Run { name } => {
            let Some(e) = experiments::all().into_iter().find(|e| e.name == name) else {
                bail!("unknown experiment {name}; see `dpmo-eval list`");
            };
            let start = Instant::now();
            let section = (e.run)(&ctx)?;
            println!(
                "{}\n\n{}\n(wall time {:.1} s)",
                section.title,
                section.body,
                start.elapsed().as_secs_f64()
            );
        }
        Command::Reproduce { report } => {
            let start = Instant::now();
            let mut doc = String::from(experiments::REPORT_PREAMBLE);
            for e in experiments::all() {
                eprintln!("== {}", e.name);
                let t = Instant::now();
                let s = (e.run)(&ctx)?;
                doc.push_str(&format!(
                    "\n## {}\n\n{}\n\nWall time: {:.1} s.\n",
                    s.title,
                    s.body,
                    t.elapsed().as_secs_f64()
                ));
            }
            doc.push_str(&format!("\nTotal wall time: {:.1} s.\n", start.elapsed().as_secs_f64()));
            if !ctx.smoke {
                std::fs::write(&report, doc)?;
                println!("wrote {}", report.display());
            } else {
                println!("{doc}");
            }
        }
    }
    Ok(())
}
