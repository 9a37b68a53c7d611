//! A small benchmark harness that tells the truth, shared by the `cargo bench` targets (`harness = false`).
//!
//! - **CPU time** of the process (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`), not wall time: on a shared
//!   machine another job's load shows up in wall time but (mostly) not here. The load average is printed at
//!   the start and the end ([`Session`]) so that a noisy run can be recognised anyway.
//! - **Interleaved rounds**: [`interleaved`] runs every contender once per round, in turn, for at least
//!   [`Options::rounds`] rounds (5 or more), so that a slow drift of the machine (frequency, cache
//!   neighbours, other jobs) hits all contenders alike instead of whichever ran last.
//! - Each contender is first calibrated (that run is discarded, it doubles as a warm-up): a round repeats a
//!   fast call until it lasts at least [`Options::min_round`] of CPU time, and per-call times are reported.
//! - **Min and median** over the rounds ([`Summary`]); ratios are taken between medians ([`ratio`]).
//!
//! Typical use:
//!
//! ```ignore
//! let opts = harness::Options::from_args();          // `-- --quick` for fewer, shorter rounds
//! let session = harness::Session::start("pareto");   // prints the load average
//! let [lib, naive] = harness::interleaved(&opts, [&mut || run_lib(), &mut || run_naive()]);
//! println!("{} {} ratio {:.1}", lib, naive, harness::ratio(&naive, &lib));
//! session.end();                                      // prints the load average again
//! ```
#![allow(dead_code)]

use std::fmt;
use std::time::Duration;

/// CPU time consumed by this process so far, all threads included.
pub fn cpu_now() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The CPU time one call of `f` takes.
pub fn cpu_time_of(f: &mut dyn FnMut()) -> Duration {
    let start = cpu_now();
    f();
    cpu_now().saturating_sub(start)
}

/// The 1-, 5- and 15-minute load averages and the runnable/total task counts from `/proc/loadavg`, or
/// `"unavailable"` off Linux.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unavailable".into())
}

/// How many rounds, and how long each round of one contender lasts at least.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Rounds per measurement (at least 5).
    pub rounds: usize,
    /// A round repeats a fast call until it has used this much CPU time.
    pub min_round: Duration,
    /// `--quick` was given: benches may also skip their largest sizes.
    pub quick: bool,
}

impl Options {
    /// 7 rounds of ≥ 50 ms, or with `--quick` among the arguments 5 rounds of ≥ 10 ms.
    pub fn from_args() -> Options {
        let quick = std::env::args().any(|a| a == "--quick");
        if quick {
            Options {
                rounds: 5,
                min_round: Duration::from_millis(10),
                quick,
            }
        } else {
            Options {
                rounds: 7,
                min_round: Duration::from_millis(50),
                quick,
            }
        }
    }
}

/// Per-call CPU time of one contender over the rounds.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Fastest round, per call.
    pub min: Duration,
    /// Median round, per call.
    pub median: Duration,
    /// Rounds measured.
    pub rounds: usize,
    /// Calls per round.
    pub calls: u32,
}

impl Summary {
    /// The median in seconds.
    pub fn secs(&self) -> f64 {
        self.median.as_secs_f64()
    }
}

/// `median 12.3 ms (min 12.1 ms, 7×3 calls)`.
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (min {}, {}×{})",
            human(self.median),
            human(self.min),
            self.rounds,
            self.calls
        )
    }
}

/// A duration in s, ms, µs or ns with three significant digits.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.3} µs", s * 1e6)
    } else {
        format!("{:.1} ns", s * 1e9)
    }
}

/// Median over medians: how many times slower `slow` is than `fast` (> 1 when `fast` is faster).
pub fn ratio(slow: &Summary, fast: &Summary) -> f64 {
    slow.median.as_secs_f64() / fast.median.as_secs_f64().max(1e-12)
}

/// Times the contenders in interleaved rounds: after one calibration call each (discarded), round r runs
/// contender 0 for its calls, then contender 1, and so on, for `opts.rounds` rounds. Returns one
/// [`Summary`] per contender, in order.
pub fn interleaved<const N: usize>(opts: &Options, mut fs: [&mut dyn FnMut(); N]) -> [Summary; N] {
    let calls: Vec<u32> = fs
        .iter_mut()
        .map(|f| {
            let once = cpu_time_of(*f).max(Duration::from_nanos(1));
            let want = opts.min_round.as_secs_f64() / once.as_secs_f64();
            want.ceil().clamp(1.0, 1e9) as u32
        })
        .collect();
    let rounds = opts.rounds.max(5);
    let mut samples = vec![Vec::with_capacity(rounds); N];
    for _ in 0..rounds {
        for (k, f) in fs.iter_mut().enumerate() {
            let start = cpu_now();
            for _ in 0..calls[k] {
                f();
            }
            samples[k].push(cpu_now().saturating_sub(start) / calls[k]);
        }
    }
    std::array::from_fn(|k| {
        let s = &mut samples[k];
        s.sort();
        Summary {
            min: s[0],
            median: s[s.len() / 2],
            rounds,
            calls: calls[k],
        }
    })
}

/// One contender alone: [`interleaved`] with N = 1.
pub fn measure(opts: &Options, f: &mut dyn FnMut()) -> Summary {
    let [s] = interleaved(opts, [f]);
    s
}

/// Prints the load average when a benchmark starts and when it ends.
pub struct Session {
    name: String,
    start: Duration,
}

impl Session {
    /// Prints `== name: CPU time, interleaved rounds, load average …`.
    pub fn start(name: &str) -> Session {
        println!(
            "== {name}: CPU time of the process (clock_gettime CLOCK_PROCESS_CPUTIME_ID), contenders interleaved \
             over ≥ 5 rounds, median (min) per call; load average at start: {}",
            load()
        );
        Session {
            name: name.into(),
            start: cpu_now(),
        }
    }

    /// Prints the load average and the CPU time the benchmark used.
    pub fn end(self) {
        println!(
            "== {}: done, {} of CPU time; load average at end: {}",
            self.name,
            human(cpu_now().saturating_sub(self.start)),
            load()
        );
    }
}
