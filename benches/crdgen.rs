//! `generate crds` at scale (issue 12). Wall times of the release binary as a user runs it (process
//! start included), and the in-process cost per schema node of `crdgen::crds_unchecked`:
//! - the real-world corpus of `fixtures/crdgen-realworld/` (20 large public CRDs) in one crate
//!   (with `--skip-apiserver-checks`: kopium's types give non-structural schemas);
//! - projects of 1 to 200 `create api` kinds;
//! - one kind of about 250 fields spread over 1 to 30 nested levels.
//!
//! Run: `cargo bench --bench crdgen` (`-- --quick` for 5 rounds). Figures go to BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use operator_rs::crdgen;
use operator_rs::project::Project;
use operator_rs::workspace::DiskTree;
use serde_json::Value;

fn run(dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_operator-rs"))
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

fn median(mut xs: Vec<Duration>) -> (Duration, Duration) {
    xs.sort();
    (xs[xs.len() / 2], xs[0])
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Schema nodes of a CRD (every JSON object under `openAPIV3Schema` that is a schema).
fn nodes(v: &Value) -> usize {
    let Value::Object(m) = v else { return 0 };
    let mut n = 1;
    for (k, c) in m {
        n += match (k.as_str(), c) {
            ("properties" | "patternProperties", Value::Object(ps)) => ps.values().map(nodes).sum(),
            ("items" | "additionalProperties" | "not", c) => nodes(c),
            ("anyOf" | "oneOf" | "allOf", Value::Array(a)) => a.iter().map(nodes).sum(),
            _ => 0,
        };
    }
    n
}

/// The generator's wall time (binary) and in-process time per schema node, on the crate at `dir`
/// (`extra`: arguments of `generate crds`).
fn measure(label: &str, dir: &Path, rounds: usize, extra: &[&str]) {
    let args: Vec<&str> = ["generate", "crds"].iter().chain(extra).copied().collect();
    run(dir, &args);
    let wall = median((0..rounds).map(|_| run(dir, &args)).collect());
    let project = Project::load(dir).expect("PROJECT");
    let tree = DiskTree::new(dir);
    let crds = crdgen::crds_unchecked(&tree, &project).expect("crds");
    let total: usize = crds
        .iter()
        .flat_map(|k| &k.crd.spec.versions)
        .filter_map(|v| v.schema.as_ref()?.open_api_v3_schema.as_ref())
        .map(|s| nodes(&serde_json::to_value(s).unwrap()))
        .sum();
    let inproc = median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                crdgen::crds_unchecked(&tree, &project).expect("crds");
                t.elapsed()
            })
            .collect(),
    );
    println!(
        "  {label:<28} wall median {:>10} (min {:>10})  in-process {:>10}  {:>6} nodes  {:>6.0} ns/node",
        ms(wall.0),
        ms(wall.1),
        ms(inproc.0),
        total,
        inproc.0.as_nanos() as f64 / total as f64
    );
}

fn project_file(dir: &Path) {
    let p = Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "bench".into(),
        crate_name: "bench".into(),
        layout: vec![operator_rs::project::LAYOUT.into()],
        cli_version: "0.1.0".into(),
        cli_source: String::new(),
        scaffold: None,
        commands: Vec::new(),
        k8s_openapi_feature: "v1_37".into(),
        namespaced: false,
        multigroup: false,
        sharded: false,
        resources: Vec::new(),
        crd: Default::default(),
    };
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("PROJECT"), p.render().unwrap()).unwrap();
}

fn realworld(dir: &Path) {
    project_file(dir);
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen-realworld");
    let mut lib = String::new();
    let mut files: Vec<_> = std::fs::read_dir(&from)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for f in files {
        let m = f.file_stem().unwrap().to_str().unwrap().to_string();
        lib.push_str(&format!("pub mod {m};\n"));
        std::fs::copy(&f, dir.join(format!("src/{m}.rs"))).unwrap();
    }
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
}

/// One kind with `fields` fields spread over `depth` nested structs.
fn deep(dir: &Path, depth: usize, fields: usize) {
    project_file(dir);
    let mut s = String::from(
        "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"deep.example.com\", version = \"v1\", kind = \"Deep\", namespaced)]\npub struct DeepSpec {\n    pub level: Level1,\n}\n",
    );
    let per = fields / depth;
    for l in 1..=depth {
        s.push_str(&format!(
            "\n/// Level {l}.\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[serde(rename_all = \"camelCase\")]\npub struct Level{l} {{\n"
        ));
        for f in 0..per {
            let ty = ["String", "Option<i32>", "Vec<String>", "Option<bool>"][f % 4];
            s.push_str(&format!(
                "    /// Field {f} of level {l}.\n    pub field_{f}: {ty},\n"
            ));
        }
        if l < depth {
            s.push_str(&format!("    pub next: Option<Level{}>,\n", l + 1));
        }
        s.push_str("}\n");
    }
    std::fs::write(dir.join("src/lib.rs"), s).unwrap();
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 5 } else { 30 };
    println!("generate crds, median of {rounds} runs:");

    let tmp = tempfile::tempdir().unwrap();
    realworld(tmp.path());
    // kopium writes `serde_json::Value` for preserve-unknown-fields objects: kube-derive's CRDs of
    // 4 corpus kinds are non-structural (kube-apiserver would refuse them; so do our checks).
    measure(
        "real-world corpus (20 CRDs)",
        tmp.path(),
        rounds,
        &["--skip-apiserver-checks"],
    );

    for n in [1usize, 10, 50, 100, 200] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("scale-op");
        std::fs::create_dir(&dir).unwrap();
        run(&dir, &["init", "--domain", "example.com"]);
        for k in 0..n {
            let kind = format!("Kind{k}");
            run(
                &dir,
                &[
                    "create",
                    "api",
                    "--group",
                    "g",
                    "--version",
                    "v1",
                    "--kind",
                    &kind,
                    "--controller=false",
                ],
            );
        }
        measure(&format!("{n} create-api kinds"), &dir, rounds, &[]);
    }

    for depth in [1usize, 2, 5, 10, 20, 30] {
        let tmp = tempfile::tempdir().unwrap();
        deep(tmp.path(), depth, 240);
        measure(
            &format!("240 fields, {depth} levels deep"),
            tmp.path(),
            rounds,
            &[],
        );
    }
}
