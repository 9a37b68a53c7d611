//! `dpmo-eval`: the papers' applications with dpmo on the bundled datasets or on anyone's graph or table,
//! with CSV results, plots and a report generated from the results.
//!
//! ```text
//! dpmo-eval list                                          # the experiments
//! dpmo-eval dataset --graph edges.csv [--directed]        # what the loader reads, ties at the top-k boundary
//! dpmo-eval dataset --table data.csv --class-col income   # shape of a table
//! dpmo-eval run motkin-pareto --graph edges.csv --runs 100 --epsilons 1,10 --out build/mine
//! dpmo-eval run dpmoet-pareto --table data.csv --class-col 13
//! dpmo-eval run privtopk-ebc                              # on the bundled Enron (--data ../shared/data)
//! dpmo-eval run generalize-adult --table my_adult.csv      # records with Adult's columns
//! dpmo-eval reproduce --out eval/results --report eval/REPRODUCTION.md   # what `make reproduce` runs
//! ```
//!
//! Output goes to `build/eval` unless `--out` says otherwise; each experiment writes `<out>/<experiment>/`
//! with `summary.csv` (experiment, dataset, method, epsilon, k, metric, mean, stderr, runs), its per-run CSV
//! files, its plots and `report.md`.

mod anonymize;
mod data;
mod experiments;
mod graph;
mod harness;
mod output;
mod report;
mod scores;
mod tabular;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use data::edges::{EdgeListOptions, Format, Header};
use data::table::TableOptions;
use data::{Bundled, GraphData, TableData};
use harness::{Experiment, Job, Needs, Settings};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "dpmo-eval",
    about = "The papers' experiments with dpmo, on the bundled datasets or your own"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Auto,
    Whitespace,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
enum HeaderArg {
    Auto,
    Yes,
    No,
}

/// Where the data comes from.
#[derive(Args, Clone)]
struct Input {
    /// Folder of the bundled datasets (enron/, nltcs/, adult/), used when no --graph/--table is given.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    /// An edge list: SNAP (white space) or CSV, with or without a header line.
    #[arg(long, conflicts_with = "table")]
    graph: Option<PathBuf>,
    /// Each line of --graph is an arc u → v (the experiments use the underlying undirected graph); without
    /// it each line is an undirected edge.
    #[arg(long, requires = "graph")]
    directed: bool,
    /// Field separator of --graph.
    #[arg(long, value_enum, default_value = "auto")]
    format: FormatArg,
    /// Whether the first line of --graph or of a CSV --table is a header.
    #[arg(long, value_enum, default_value = "auto")]
    header: HeaderArg,
    /// A classification table: `.dat` (with its `.domain` file beside it) or CSV.
    #[arg(long)]
    table: Option<PathBuf>,
    /// The class column of --table: 0-based index or header name.
    #[arg(long, requires = "table")]
    class_col: Option<String>,
    /// The positive class value (default: the larger of the two values).
    #[arg(long, requires = "table")]
    positive: Option<String>,
    /// The domain file of a `.dat` table (default: beside it, `.domain`).
    #[arg(long, requires = "table")]
    domain: Option<PathBuf>,
    /// A numeric CSV column with more distinct values than this is continuous.
    #[arg(long, default_value_t = 16)]
    max_levels: usize,
    /// Equal-width bins of a continuous attribute for ID3.
    #[arg(long, default_value_t = 5)]
    bins: usize,
    /// Display name of the dataset (default: the file name without extension).
    #[arg(long)]
    name: Option<String>,
}

impl Input {
    fn user(&self) -> bool {
        self.graph.is_some() || self.table.is_some()
    }

    fn edge_options(&self) -> EdgeListOptions {
        EdgeListOptions {
            format: match self.format {
                FormatArg::Auto => Format::Auto,
                FormatArg::Whitespace => Format::Whitespace,
                FormatArg::Csv => Format::Csv,
            },
            header: match self.header {
                HeaderArg::Auto => Header::Auto,
                HeaderArg::Yes => Header::Yes,
                HeaderArg::No => Header::No,
            },
            directed: self.directed,
        }
    }

    fn table_options(&self) -> Result<TableOptions> {
        Ok(TableOptions {
            class_col: self
                .class_col
                .clone()
                .context("--table needs --class-col N (the class column: 0-based index or header name)")?,
            positive: self.positive.clone(),
            max_levels: self.max_levels,
            bins: self.bins,
            header: match self.header {
                HeaderArg::Auto => None,
                HeaderArg::Yes => Some(true),
                HeaderArg::No => Some(false),
            },
            domain: self.domain.clone(),
        })
    }

    fn graphs(&self) -> Result<Vec<GraphData>> {
        match &self.graph {
            Some(p) => Ok(vec![data::user_graph(p, self.name.as_deref(), self.edge_options())?]),
            None if self.table.is_some() => bail!("this needs a graph (--graph FILE), not a table"),
            None => Ok(vec![data::bundled_graph(&self.data, Bundled::Enron)?]),
        }
    }

    fn records(&self) -> Result<Vec<anonymize::microdata::Microdata>> {
        let h = anonymize::hierarchy::adult()?;
        match &self.table {
            Some(p) => Ok(vec![anonymize::microdata::load(
                p,
                &data::name_of(p, self.name.as_deref()),
                &h,
            )?]),
            None if self.graph.is_some() => {
                bail!("this needs records with Adult's columns (--table FILE), not a graph")
            }
            None => Ok(vec![anonymize::microdata::bundled_adult(&self.data, &h)?]),
        }
    }

    fn tables(&self) -> Result<Vec<TableData>> {
        match &self.table {
            Some(p) => Ok(vec![data::user_table(p, self.name.as_deref(), &self.table_options()?)?]),
            None if self.graph.is_some() => bail!("this needs a table (--table FILE --class-col N), not a graph"),
            None => Ok(vec![
                data::bundled_table(&self.data, Bundled::Nltcs)?,
                data::bundled_table(&self.data, Bundled::Adult)?,
            ]),
        }
    }
}

/// The experiment settings.
#[derive(Args, Clone)]
struct Run {
    /// Repetitions per setting (default: the paper's).
    #[arg(long)]
    runs: Option<usize>,
    /// Privacy budgets, comma-separated (default: the paper's grid).
    #[arg(long, value_delimiter = ',')]
    epsilons: Option<Vec<f64>>,
    /// k, comma-separated where the experiment takes several (see `list`).
    #[arg(long, value_delimiter = ',')]
    k: Option<Vec<usize>>,
    /// Seed of the experiment generators (Xoshiro256++: reproducible simulation, not for releases).
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Small repetition counts and grids: a fast check that everything runs.
    #[arg(long)]
    smoke: bool,
    /// Output folder.
    #[arg(long, default_value = "build/eval")]
    out: PathBuf,
}

impl Run {
    fn settings(&self) -> Result<Settings> {
        if let Some(r) = self.runs {
            if r == 0 {
                bail!("--runs must be at least 1");
            }
        }
        if let Some(e) = &self.epsilons {
            if e.is_empty() || e.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
                bail!("--epsilons must be positive finite numbers");
            }
        }
        if let Some(k) = &self.k {
            if k.is_empty() || k.contains(&0) {
                bail!("--k must be positive integers");
            }
        }
        let mut eps = self.epsilons.clone();
        if let Some(e) = eps.as_mut() {
            e.sort_by(f64::total_cmp);
            e.dedup();
        }
        Ok(Settings {
            runs: self.runs,
            epsilons: eps,
            ks: self.k.clone(),
            seed: self.seed,
            smoke: self.smoke,
        })
    }
}

#[derive(Subcommand)]
enum Command {
    /// List the experiments.
    List,
    /// Describe a dataset as the loader reads it: shape, Pareto front, ties at the top-k boundaries.
    Dataset {
        #[command(flatten)]
        input: Input,
        /// A bundled dataset instead of a file: enron, nltcs or adult (from --data).
        #[arg(long, conflicts_with_all = ["graph", "table"])]
        bundled: Option<String>,
        /// The k values whose top-k boundaries are described.
        #[arg(long, value_delimiter = ',', default_value = "3,5,10,20")]
        k: Vec<usize>,
    },
    /// Run one experiment.
    Run {
        /// Experiment name (see `list`).
        name: String,
        #[command(flatten)]
        input: Input,
        #[command(flatten)]
        run: Run,
    },
    /// Run every experiment on the bundled datasets and write the reproduction report.
    Reproduce {
        /// Folder of the bundled datasets.
        #[arg(long, default_value = "../shared/data")]
        data: PathBuf,
        #[command(flatten)]
        run: Run,
        /// The report (default: <out>/REPRODUCTION.md).
        #[arg(long)]
        report: Option<PathBuf>,
    },
}

/// Runs one experiment into `<out>/<name>/`; returns its section with the timing line.
fn run_experiment(
    e: &Experiment,
    settings: &Settings,
    out: &Path,
    link_from: &Path,
    graphs: &[GraphData],
    tables: &[TableData],
    records: &[anonymize::microdata::Microdata],
) -> Result<(String, String, Option<u64>)> {
    if settings.ks.is_some() && e.k_means.is_none() {
        bail!("{} has no k (see `dpmo-eval list`)", e.name);
    }
    let dir = out.join(e.name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let job = Job {
        experiment: e.name,
        settings,
        link: harness::relative_link(link_from, &dir),
        dir: dir.clone(),
        graphs,
        tables,
        records,
    };
    let measured = harness::reset_peak_rss();
    let start = Instant::now();
    let outcome = (e.run)(&job).with_context(|| format!("experiment {}", e.name))?;
    let wall = start.elapsed().as_secs_f64();
    let peak = if measured { harness::peak_rss() } else { None };
    harness::write_summary(&dir, e.name, &outcome.summary)?;
    let body = format!(
        "{}\n\n*Timing: wall time {wall:.1} s on {} threads; peak resident memory {} (the whole process, data \
         included). Files: `{}/` (`summary.csv`, per-run CSV, plots).*\n",
        outcome.body.trim_end(),
        rayon::current_num_threads(),
        harness::show_bytes(peak),
        job.link,
    );
    eprintln!("{}: {wall:.1} s, peak RSS {}", e.name, harness::show_bytes(peak));
    Ok((outcome.title, body, peak))
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::List => {
            for e in experiments::ALL {
                let needs = match e.needs {
                    Needs::Graph => "--graph",
                    Needs::Table => "--table",
                    Needs::Records => "--records",
                };
                println!("{:<18} {:<8} {}", e.name, needs, e.about);
                if let Some(k) = e.k_means {
                    println!("{:<27} --k: {k}", "");
                }
            }
        }
        Command::Dataset { input, bundled, k } => {
            if let Some(b) = bundled {
                match b.as_str() {
                    "enron" => print!(
                        "{}",
                        graph::describe(&data::bundled_graph(&input.data, Bundled::Enron)?, &k)?
                    ),
                    "nltcs" => print!(
                        "{}",
                        tabular::describe(&data::bundled_table(&input.data, Bundled::Nltcs)?)
                    ),
                    "adult" => print!(
                        "{}",
                        tabular::describe(&data::bundled_table(&input.data, Bundled::Adult)?)
                    ),
                    other => bail!("unknown bundled dataset {other:?}: enron, nltcs or adult"),
                }
            } else if input.graph.is_some() {
                for g in input.graphs()? {
                    print!("{}", graph::describe(&g, &k)?);
                }
            } else if input.table.is_some() {
                for t in input.tables()? {
                    print!("{}", tabular::describe(&t));
                }
            } else {
                bail!("give --graph FILE, --table FILE --class-col N, or --bundled enron|nltcs|adult");
            }
        }
        Command::Run { name, input, run } => {
            let Some(e) = experiments::find(&name) else {
                bail!("unknown experiment {name}; see `dpmo-eval list`");
            };
            let settings = run.settings()?;
            let (graphs, tables, records) = match e.needs {
                Needs::Graph => (input.graphs()?, vec![], vec![]),
                Needs::Table => (vec![], input.tables()?, vec![]),
                Needs::Records => (vec![], vec![], input.records()?),
            };
            let dir = run.out.join(e.name);
            let (title, body, _) = run_experiment(e, &settings, &run.out, &dir, &graphs, &tables, &records)?;
            let report = dir.join("report.md");
            std::fs::write(&report, format!("# {title}\n\n{body}"))
                .with_context(|| format!("writing {}", report.display()))?;
            if !input.user() {
                eprintln!("(bundled data from {})", input.data.display());
            }
            println!(
                "# {title}\n\n{body}\nwrote {} and {}",
                report.display(),
                dir.join("summary.csv").display()
            );
        }
        Command::Reproduce { data, run, report } => reproduce(&data, &run, report)?,
    }
    Ok(())
}

/// Every experiment on the bundled datasets. Results are written to `<out>.partial` and moved to `<out>`
/// only when every experiment succeeded, so a failed run leaves the previous results untouched.
fn reproduce(data: &Path, run: &Run, report: Option<PathBuf>) -> Result<()> {
    data::check_data_folder(data)?;
    let settings = run.settings()?;
    if settings.ks.is_some() {
        bail!("reproduce runs every experiment with its own k; --k applies to `run` only");
    }
    let report = report.unwrap_or_else(|| run.out.join("REPRODUCTION.md"));
    let report_dir = report.parent().map(Path::to_path_buf).unwrap_or_default();
    let report_dir = if report_dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        report_dir
    };
    let staging = PathBuf::from(format!("{}.partial", run.out.display()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).with_context(|| format!("removing {}", staging.display()))?;
    }
    std::fs::create_dir_all(&staging)?;
    let start = Instant::now();
    harness::reset_peak_rss();
    let graphs = vec![data::bundled_graph(data, Bundled::Enron)?];
    let tables = vec![
        data::bundled_table(data, Bundled::Nltcs)?,
        data::bundled_table(data, Bundled::Adult)?,
    ];
    let records = vec![anonymize::microdata::bundled_adult(
        data,
        &anonymize::hierarchy::adult()?,
    )?];
    let load_s = start.elapsed().as_secs_f64();
    let mut sections = Vec::new();
    let mut peak: Option<u64> = harness::peak_rss();
    for e in experiments::ALL {
        eprintln!("== {}", e.name);
        let (g, t, r): (&[GraphData], &[TableData], &[anonymize::microdata::Microdata]) = match e.needs {
            Needs::Graph => (&graphs, &[], &[]),
            Needs::Table => (&[], &tables, &[]),
            Needs::Records => (&[], &[], &records),
        };
        // Links are computed against the final folder, where the files will be.
        let (title, body, p) = run_experiment(e, &settings, &staging, &report_dir, g, t, r)?;
        peak = peak.max(p);
        let body = body.replace(
            &harness::relative_link(&report_dir, &staging),
            &harness::relative_link(&report_dir, &run.out),
        );
        sections.push((title, body));
    }
    let wall = start.elapsed().as_secs_f64();
    let doc = report::document(&sections, &settings, wall, load_s, peak);
    if run.out.exists() {
        std::fs::remove_dir_all(&run.out).with_context(|| format!("removing the old {}", run.out.display()))?;
    }
    std::fs::rename(&staging, &run.out)
        .with_context(|| format!("moving {} to {}", staging.display(), run.out.display()))?;
    if let Some(parent) = report.parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent)?;
        }
    }
    std::fs::write(&report, doc).with_context(|| format!("writing {}", report.display()))?;
    println!("wrote {} and {} in {wall:.0} s", report.display(), run.out.display());
    Ok(())
}
