//! `operator-rs envtest`: the control-plane binaries of the integration tests for a Kubernetes
//! version, installed from the envtest releases index into the per-user store (or found there,
//! offline), and their folder printed for `KUBEBUILDER_ASSETS`, as `setup-envtest use -p path`.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::{EnvtestArgs, EnvtestPrint};
use crate::envtest::fetch::{self, Location};
use crate::envtest::index::{DEFAULT_INDEX, Index, Platform, SELECTOR_RULE, Selector};
use crate::envtest::store::{self, Store};

/// The variable the tests read the folder from.
const ASSETS_VAR: &str = "KUBEBUILDER_ASSETS";

/// Runs `envtest` in `root` (the project whose Kubernetes version is the default).
pub fn run(root: &Path, args: &EnvtestArgs) -> Result<()> {
    let dir = assets_dir(root, args)?;
    let shown = dir.display().to_string();
    match args.print {
        EnvtestPrint::Path => crate::outln!("{shown}"),
        EnvtestPrint::Env => crate::outln!("export {ASSETS_VAR}={}", shlex::try_quote(&shown)?),
    }
    Ok(())
}

/// The folder of the binaries: KUBEBUILDER_ASSETS (`--use-env`), an installed version, or one
/// installed now.
fn assets_dir(root: &Path, args: &EnvtestArgs) -> Result<std::path::PathBuf> {
    if args.use_env
        && let Some(dir) = std::env::var_os(ASSETS_VAR).filter(|d| !d.is_empty())
    {
        let dir = std::path::PathBuf::from(dir);
        let missing = store::missing_binaries(&dir);
        if !missing.is_empty() {
            bail!(
                "{ASSETS_VAR}={} has no executable {}: point it at a folder of the control-plane \
                 binaries, or unset it to install them (`operator-rs envtest`)",
                dir.display(),
                missing.join(" nor ")
            );
        }
        return Ok(dir);
    }
    let selector = match &args.version {
        Some(text) => {
            Selector::parse(text).map_err(|e| anyhow!("{e}\n  e.g. operator-rs envtest 1.36.x"))?
        }
        None => project_version(root)?.unwrap_or(Selector::parse("latest").expect("a selector")),
    };
    let platform = Platform::current();
    let bin_dir = match &args.bin_dir {
        Some(dir) => dir.clone(),
        None => store::default_bin_dir()?,
    };
    let store = Store::new(&bin_dir)?;
    let installed = store.installed(&platform);
    let listed = |versions: &[crate::envtest::index::Version]| match versions {
        [] => "none".to_string(),
        some => (some.iter().map(|v| v.to_string()))
            .collect::<Vec<_>>()
            .join(", "),
    };
    if (args.installed_only || !selector.check_index)
        && let Some(version) = store.best_installed(&selector, &platform)
    {
        return Ok(store.dir_of(version, &platform));
    }
    if args.installed_only {
        bail!(
            "no installed envtest version matches {selector} for {platform} in {} (installed: {}); \
             run without -i/--installed-only to download it (needs the network or a local --index)",
            store.versions_dir().display(),
            listed(&installed)
        );
    }
    let index_at = Location::parse(args.index.as_deref().unwrap_or(DEFAULT_INDEX), None);
    let text = fetch::read_text(&index_at).map_err(|e| {
        anyhow!(
            "could not read the envtest releases index {index_at}: {}\n  offline? `operator-rs envtest -i` \
             uses a version installed in {} (installed: {}); or give an index file or URL with \
             --index (or OPERATOR_RS_ENVTEST_INDEX)",
            crate::output::error_text(&e),
            store.versions_dir().display(),
            listed(&installed)
        )
    })?;
    let index = Index::parse(&text).map_err(|e| anyhow!("the envtest index {index_at}: {e}"))?;
    let Some(archive) = index.select(&selector, &platform) else {
        let available: Vec<String> = (index.for_platform(&platform).iter())
            .map(|a| a.version.to_string())
            .take(12)
            .collect();
        bail!(
            "the envtest index {index_at} has no release matching {selector} for {platform} \
             (newest first: {}); pick one of them, e.g. operator-rs envtest {}\n  ({SELECTOR_RULE})",
            if available.is_empty() {
                "none".to_string()
            } else {
                available.join(", ")
            },
            available.first().map_or("latest", String::as_str),
        );
    };
    let dir = store.dir_of(archive.version, &platform);
    if store::missing_binaries(&dir).is_empty() {
        return Ok(dir);
    }
    let link = Location::parse(&archive.link, Some(&index_at));
    crate::errln!(
        "installing envtest {} ({platform}) from {link}",
        archive.version
    );
    let dir = store.install(archive, &link, &platform)?;
    crate::errln!("installed envtest {} in {}", archive.version, dir.display());
    Ok(dir)
}

/// In a project (a folder with `PROJECT`), its Kubernetes version: the minor of its
/// k8s-openapi feature (`v1_37`: 1.37.x).
fn project_version(root: &Path) -> Result<Option<Selector>> {
    if !root.join("PROJECT").is_file() {
        return Ok(None);
    }
    let path = root.join("Cargo.toml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let manifest: toml::Table =
        toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    let features = (manifest.get("dependencies"))
        .and_then(|d| d.get("k8s-openapi"))
        .and_then(|k| k.get("features"))
        .and_then(|f| f.as_array());
    let minor = (features.into_iter().flatten())
        .filter_map(|f| f.as_str()?.strip_prefix("v1_")?.parse::<u64>().ok())
        .max();
    Ok(minor.map(|m| Selector::parse(&format!("1.{m}.x")).expect("a selector")))
}
