//! The smoke run of `make test`: every experiment of the registry, run through the command line on the
//! small graph and table committed under `eval/fixtures` (CSV with a header line), with the smoke settings.
//! Checks that each writes `summary.csv` with the documented columns and at least one row, its report and
//! its plots — and that nothing needs `../shared`.

use std::path::{Path, PathBuf};
use std::process::Command;

const COLUMNS: &str = "experiment,dataset,method,epsilon,k,metric,mean,stderr,runs";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpmo-eval"));
    c.env("RUST_BACKTRACE", "0");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

fn run(args: &[&str]) -> String {
    let out = bin().args(args).output().expect("running dpmo-eval");
    assert!(
        out.status.success(),
        "dpmo-eval {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_experiment_runs_on_the_csv_fixtures_and_writes_a_tidy_summary() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("eval-smoke");
    let _ = std::fs::remove_dir_all(&out);
    let graph = fixture("small_graph.csv");
    let table = fixture("small_table.csv");
    let adult = fixture("small_adult.data");
    let list = run(&["list"]);
    let mut seen = 0;
    for line in list.lines().filter(|l| !l.starts_with(' ')) {
        let mut f = line.split_whitespace();
        let (name, needs) = (f.next().unwrap(), f.next().unwrap());
        let mut args = vec![
            "run",
            name,
            "--smoke",
            "--out",
            out.to_str().unwrap(),
            "--data",
            "/nonexistent",
        ];
        match needs {
            "--graph" => args.extend(["--graph", graph.to_str().unwrap()]),
            "--table" => args.extend(["--table", table.to_str().unwrap(), "--class-col", "label"]),
            "--records" => args.extend(["--table", adult.to_str().unwrap()]),
            other => panic!("unknown input kind {other}"),
        }
        run(&args);
        let dir = out.join(name);
        let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
        let mut lines = summary.lines();
        assert_eq!(lines.next(), Some(COLUMNS), "{name}");
        let rows: Vec<&str> = lines.collect();
        assert!(!rows.is_empty(), "{name}: empty summary");
        for r in &rows {
            let fields: Vec<&str> = r.split(',').collect();
            assert_eq!(fields.len(), 9, "{name}: {r}");
            assert_eq!(fields[0], name);
            assert!(fields[1].starts_with("small_"), "{name}: dataset name {}", fields[1]);
            assert!(fields[6].parse::<f64>().unwrap().is_finite(), "{name}: mean in {r}");
            assert!(fields[8].parse::<usize>().unwrap() >= 1, "{name}: runs in {r}");
        }
        let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(report.contains("small_"), "{name}: the report names the dataset");
        let pngs = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                let p = e.as_ref().unwrap().path();
                p.extension().is_some_and(|x| x == "png")
                    && p.file_name().unwrap().to_string_lossy().starts_with("small-")
            })
            .count();
        assert!(pngs >= 1, "{name}: no plot named after the dataset");
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} experiments listed");
}

#[test]
fn dataset_command_describes_the_fixtures() {
    let g = run(&[
        "dataset",
        "--graph",
        fixture("small_graph.csv").to_str().unwrap(),
        "--k",
        "3",
    ]);
    assert!(g.contains("150 nodes, 346 edges"), "{g}");
    assert!(g.contains("Pareto front"), "{g}");
    assert!(g.contains("top-3"), "{g}");
    let t = run(&[
        "dataset",
        "--table",
        fixture("small_table.csv").to_str().unwrap(),
        "--class-col",
        "label",
    ]);
    assert!(t.contains("600 records × 5 attributes"), "{t}");
}

#[test]
fn bad_inputs_are_clear_errors() {
    let missing = bin()
        .args([
            "run",
            "motkin-pareto",
            "--smoke",
            "--data",
            "/nonexistent/shared/data",
            "--out",
        ])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("eval-bad"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let e = String::from_utf8_lossy(&missing.stderr);
    assert!(e.contains("/nonexistent/shared/data") && e.contains("--data"), "{e}");
    let wrong = bin()
        .args(["run", "diffpid3", "--smoke", "--graph"])
        .arg(fixture("small_graph.csv"))
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("needs a table"));
    let no_class = bin()
        .args(["dataset", "--table"])
        .arg(fixture("small_table.csv"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&no_class.stderr).contains("--class-col"));
    let k = bin()
        .args(["run", "diffpid3", "--smoke", "--k", "3", "--table"])
        .arg(fixture("small_table.csv"))
        .args(["--class-col", "label"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&k.stderr).contains("has no k"));
}
