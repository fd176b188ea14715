//! `generate crds --exact`: the same files through the compiler. Writes a small harness crate under
//! `target/operator-rs-crdgen/` that depends on the user's crate and prints `crd()` for each kind
//! the static reader found (as JSON), runs it, and merges versions exactly like the static path.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::crdgen::derive::crd::KindDef;
use crate::crdgen::read::loader;
use crate::project::Project;
use crate::workspace::{DiskTree, GeneratorOutput};

/// Generate the CRDs through the compiler (see the module doc); `apiserver_checks`: refuse what
/// kube-apiserver would refuse, as the static reader does.
pub fn generate_exact(
    root: &Path,
    project: &Project,
    apiserver_checks: bool,
) -> Result<GeneratorOutput> {
    let checks = if apiserver_checks {
        crate::crdgen::Checks::ApiServer
    } else {
        crate::crdgen::Checks::None
    };
    let tree = DiskTree::new(root);
    let mut found =
        crate::crdgen::static_kinds(&tree, false, None).map_err(|e| anyhow::anyhow!("{e}"))?;
    if found.kinds.is_empty() {
        return finish(&tree, Vec::new(), found.warnings, project, checks);
    }
    // The Rust path of each generated root struct, as seen from a dependent crate, in the crate
    // the reader found it in.
    let mut paths = Vec::new();
    for k in &found.kinds {
        paths.push(root_path(&found.crates[k.krate], k)?);
    }
    let harness = root.join("target/operator-rs-crdgen");
    std::fs::create_dir_all(harness.join("src"))
        .with_context(|| format!("creating {}", harness.join("src").display()))?;
    let package = package_name(root)?;
    let cargo = format!(
        "[package]\nname = \"operator-rs-crdgen-harness\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n[dependencies]\nuser = {{ path = {:?}, package = {:?} }}\nkube = {{ version = \"5\", default-features = false, features = [\"derive\"] }}\nserde_json = \"1\"\n",
        root.canonicalize()
            .unwrap_or_else(|_| root.to_path_buf())
            .display()
            .to_string(),
        package
    );
    let mut main = String::from("use kube::CustomResourceExt;\n\nfn main() {\n");
    for p in &paths {
        main.push_str(&format!(
            "    println!(\"{{}}\", serde_json::to_string(&{p}::crd()).unwrap());\n"
        ));
    }
    main.push_str("}\n");
    write_if_changed(&harness.join("Cargo.toml"), &cargo)?;
    write_if_changed(&harness.join("src/main.rs"), &main)?;
    // Reuse the user's lockfile so the harness builds the same dependency versions.
    if let Ok(lock) = std::fs::read_to_string(root.join("Cargo.lock")) {
        let _ = write_if_changed(&harness.join("Cargo.lock"), &lock);
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target/crdgen-exact"));
    crate::errln!(
        "building the --exact harness in {} (cold: kube and the crate compile, minutes; warm: seconds)",
        target_dir.display()
    );
    let started = std::time::Instant::now();
    // cargo's own progress (Compiling ..., errors) goes straight to the user's terminal.
    let output = crate::cargo_command::cargo()
        .arg("run")
        .arg("--manifest-path")
        .arg(harness.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running cargo for the --exact harness")?;
    if !output.status.success() {
        bail!("the --exact harness failed (cargo's messages are above)");
    }
    crate::errln!(
        "--exact harness built and run in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let stdout = String::from_utf8(output.stdout).context("harness output is not UTF-8")?;
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() != found.kinds.len() {
        bail!(
            "the --exact harness printed {} CRDs for {} kinds",
            lines.len(),
            found.kinds.len()
        );
    }
    for (k, line) in found.kinds.iter_mut().zip(lines) {
        k.crd = serde_json::from_str(line).context("parsing a CRD printed by the harness")?;
    }
    let (crds, warnings) =
        crate::crdgen::merge_kinds(found, project, checks).map_err(|e| anyhow::anyhow!("{e}"))?;
    finish(&tree, crds, warnings, project, checks)
}

/// The files of `crds`, the reader's warnings, and the stale files of `config/crd/bases`.
fn finish(
    tree: &DiskTree,
    crds: Vec<crate::crdgen::KindCrd>,
    warnings: Vec<String>,
    project: &Project,
    checks: crate::crdgen::Checks,
) -> Result<GeneratorOutput> {
    let mut out = crate::crdgen::emit::output::files(tree, crds, &project.crd, checks)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    out.warnings.extend(warnings);
    crate::crdgen::mark_stale(tree, &mut out).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(out)
}

fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The name of the package at `root`, as cargo reads its manifest (`cargo metadata`: a TOML
/// parser of our own would be a second reading of Cargo.toml, and the harness runs cargo anyway).
fn package_name(root: &Path) -> Result<String> {
    let manifest = root.join("Cargo.toml");
    let output = crate::cargo_command::cargo()
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo could not read {}:\n{}",
            manifest.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("parsing cargo metadata's output")?;
    let wanted = manifest.canonicalize().unwrap_or(manifest.clone());
    (metadata["packages"].as_array().into_iter().flatten())
        .find(|p| {
            p["manifest_path"]
                .as_str()
                .is_some_and(|m| Path::new(m).canonicalize().ok().as_ref() == Some(&wanted))
        })
        .and_then(|p| p["name"].as_str().map(str::to_owned))
        .with_context(|| format!("{} has no [package]", manifest.display()))
}

/// The path by which the harness (another crate) names the struct kube-derive generates for `k`:
/// through public modules, or a `pub use` that re-exports it (`create api` keeps each kind in a
/// private module and re-exports its types).
fn root_path(krate: &loader::Crate, k: &KindDef) -> Result<String> {
    let library = Path::new(crate::crdgen::CRATE_ROOTS[0]);
    if krate.files.first().map(PathBuf::as_path) != Some(library) {
        bail!(
            "{}: `{}` is in the binary crate, and `--exact` builds a crate that depends on the \
             library ({}): move the kind into the library's modules",
            k.loc,
            k.kind,
            library.display()
        );
    }
    let def = &krate.defs[k.def];
    let root_name = root_struct_name(def.attrs()).unwrap_or_else(|| k.kind.clone());
    if !matches!(def.vis(), syn::Visibility::Public(_)) {
        let vis = def.vis();
        let shown = match quote::quote!(#vis).to_string().replace(' ', "") {
            v if v.is_empty() => "private".to_string(),
            v => format!("`{v}`"),
        };
        bail!(
            "{}: `{root_name}` (the struct #[derive(CustomResource)] generates) has the visibility of `{}`, which is {shown}, so it cannot be named from outside the crate, as `--exact` must (it builds a crate that calls `{root_name}::crd()`): make `{}` `pub`",
            k.loc,
            def.ident(),
            def.ident()
        );
    }
    match public_path(krate, def.module, &root_name) {
        Some(path) => Ok(std::iter::once("user".to_string())
            .chain(path)
            .collect::<Vec<_>>()
            .join("::")),
        None => bail!(
            "{}: `{root_name}` (the struct #[derive(CustomResource)] generates) cannot be named from \
             outside the crate, as `--exact` must (it builds a crate that calls `{root_name}::crd()`): \
             make its module public (`pub mod`) or re-export it (`pub use ...::{root_name};`)",
            k.loc
        ),
    }
}

/// The shortest path from the crate root by which another crate names `name`, declared in the
/// module `target`: through `pub mod`s, and the `pub use`s of public modules that re-export it
/// (by its name, renamed, or with a glob of its module) or re-export a module on the way.
fn public_path(krate: &loader::Crate, target: usize, name: &str) -> Option<Vec<String>> {
    let mut queue = std::collections::VecDeque::from([(0usize, Vec::<String>::new())]);
    let mut seen = std::collections::HashSet::new();
    while let Some((m, path)) = queue.pop_front() {
        if !seen.insert(m) {
            continue;
        }
        let named = |last: &str| path.iter().cloned().chain([last.to_string()]).collect();
        if m == target {
            return Some(named(name));
        }
        let module = &krate.modules[m];
        for u in module.uses.iter().filter(|u| u.public && !u.leading_colon) {
            if u.glob {
                if module_at(krate, m, &u.path) == Some(target) {
                    return Some(named(name));
                }
                continue;
            }
            let Some((last, prefix)) = u.path.split_last() else {
                continue;
            };
            let from = module_at(krate, m, prefix);
            if from == Some(target) && last == name {
                return Some(named(&u.name));
            }
            // A re-exported module: what is public in it is public under the new name too.
            if let Some(re) = module_at(krate, m, &u.path) {
                queue.push_back((re, named(&u.name)));
            }
        }
        for (child_name, &child) in &module.children {
            if krate.modules[child].public {
                queue.push_back((child, named(child_name)));
            }
        }
    }
    None
}

/// The module `path` names from module `m` (`crate::`, `self::`, `crate::crdgen::`, child modules).
fn module_at(krate: &loader::Crate, m: usize, path: &[String]) -> Option<usize> {
    let mut at = m;
    for (i, seg) in path.iter().enumerate() {
        at = match seg.as_str() {
            "crate" if i == 0 => 0,
            "self" if i == 0 => at,
            "super" => krate.modules[at].parent?,
            child => *krate.modules[at].children.get(child)?,
        };
    }
    Some(at)
}

fn root_struct_name(attrs: &[syn::Attribute]) -> Option<String> {
    let items = crate::crdgen::read::attrs::meta_items(attrs, "kube").ok()?;
    items
        .iter()
        .find(|i| i.name == "root")
        .and_then(|i| i.str_value())
}
