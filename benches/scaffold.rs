//! Wall-time benchmarks of the release binary, as a user runs it (process start included):
//! `init`, `create api`, and the two together. `generate crds` on projects of 1 to 200 kinds is
//! measured by `cargo bench --bench crdgen`.
//! Run: `cargo bench --bench scaffold` (add `-- --quick` for fewer rounds). Figures go to
//! BENCHMARKS.md, with the load average the bench prints before and after (wall times on a shared
//! machine mean little without it).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_operator-rs")
}

fn run(dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("operator-rs runs");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

struct Stats {
    min: Duration,
    median: Duration,
    mean: Duration,
}

fn stats(mut xs: Vec<Duration>) -> Stats {
    xs.sort();
    let mean = xs.iter().sum::<Duration>() / xs.len() as u32;
    Stats {
        min: xs[0],
        median: xs[xs.len() / 2],
        mean,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The 1-, 5- and 15-minute load averages (Linux), or a note that they are unknown.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown (no /proc/loadavg)".into())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 5 } else { 30 };
    let load_before = load_average();

    // init + create api, each round in a fresh folder.
    let (mut init, mut api, mut both) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rounds {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(format!("bench-op-{i}"));
        std::fs::create_dir(&dir).unwrap();
        let a = run(
            &dir,
            &[
                "init",
                "--domain",
                "example.com",
                "--repo",
                "github.com/acme/bench-op",
            ],
        );
        let b = run(
            &dir,
            &[
                "create",
                "api",
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
            ],
        );
        init.push(a);
        api.push(b);
        both.push(a + b);
    }
    println!(
        "scaffold ({rounds} rounds, fresh folder each; load average {load_before} before, {} after):",
        load_average()
    );
    for (name, xs) in [
        ("init", init),
        ("create api", api),
        ("init + create api", both),
    ] {
        let s = stats(xs);
        println!(
            "  {name:<20} min {:>10}  median {:>10}  mean {:>10}",
            ms(s.min),
            ms(s.median),
            ms(s.mean)
        );
    }
}
