//! The per-user store of envtest binaries, laid out as setup-envtest lays out its own:
//! `<bin-dir>/k8s/<version>-<os>-<arch>/{etcd,kube-apiserver,kubectl}` (default bin-dir:
//! `$XDG_CACHE_HOME/operator-rs/envtest`). A version's folder appears whole or not at all: the
//! archive is downloaded to a temporary file beside it, checked against the index's SHA-512,
//! unpacked into a temporary folder, and that folder renamed into place.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::fetch::{self, Location};
use super::index::{Archive, Platform, Selector, Version};

/// The binaries a folder must hold to run a control plane (what the runtime's envtest starts).
pub const REQUIRED: [&str; 2] = ["etcd", "kube-apiserver"];

/// The per-user folder envtest binaries go to when `--bin-dir` is not given: the XDG cache
/// (`$XDG_CACHE_HOME`, else `~/.cache`; `~/Library/Caches` on macOS).
pub fn default_bin_dir() -> Result<PathBuf> {
    let cache = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .context(
                    "neither XDG_CACHE_HOME nor HOME is set: give the folder with --bin-dir <DIR>",
                )?;
            if cfg!(target_os = "macos") {
                home.join("Library/Caches")
            } else {
                home.join(".cache")
            }
        }
    };
    Ok(cache.join("operator-rs").join("envtest"))
}

/// What a folder lacks to run a control plane: the required binaries it has not (executable).
pub fn missing_binaries(dir: &Path) -> Vec<&'static str> {
    let executable = |name: &str| {
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    REQUIRED.into_iter().filter(|b| !executable(b)).collect()
}

/// The store under one bin-dir.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store under `bin_dir` (made absolute: the folder printed is used from anywhere).
    pub fn new(bin_dir: &Path) -> Result<Self> {
        let root = std::path::absolute(bin_dir)
            .with_context(|| format!("the folder {}", bin_dir.display()))?;
        Ok(Store { root })
    }

    /// Where the versions are.
    pub fn versions_dir(&self) -> PathBuf {
        self.root.join("k8s")
    }

    /// The folder of `version` for `platform`.
    pub fn dir_of(&self, version: Version, platform: &Platform) -> PathBuf {
        (self.versions_dir()).join(format!("{version}-{}-{}", platform.os, platform.arch))
    }

    /// The versions installed for `platform` (folders holding the required binaries), newest first.
    pub fn installed(&self, platform: &Platform) -> Vec<Version> {
        let suffix = format!("-{}-{}", platform.os, platform.arch);
        let Ok(entries) = std::fs::read_dir(self.versions_dir()) else {
            return Vec::new();
        };
        let mut found: Vec<Version> = entries
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                Version::parse(name.strip_suffix(&suffix)?)
            })
            .filter(|v| missing_binaries(&self.dir_of(*v, platform)).is_empty())
            .collect();
        found.sort_by_key(|v| std::cmp::Reverse(*v));
        found
    }

    /// The newest installed version `selector` accepts.
    pub fn best_installed(&self, selector: &Selector, platform: &Platform) -> Option<Version> {
        (self.installed(platform).into_iter()).find(|v| selector.matches(*v))
    }

    /// Downloads `archive` from `from`, checks it, and installs it; its folder. Nothing is left
    /// in the store when any step fails.
    pub fn install(
        &self,
        archive: &Archive,
        from: &Location,
        platform: &Platform,
    ) -> Result<PathBuf> {
        let versions = self.versions_dir();
        std::fs::create_dir_all(&versions)
            .with_context(|| format!("creating {}", versions.display()))?;
        let final_dir = self.dir_of(archive.version, platform);
        // Temporary files start with a dot: never a version's folder, removed when dropped.
        let mut download = tempfile::Builder::new()
            .prefix(".download-")
            .tempfile_in(&versions)
            .with_context(|| format!("creating a temporary file in {}", versions.display()))?;
        let got = fetch::download(from, download.as_file_mut()).with_context(|| {
            format!(
                "downloading {} from {from}: nothing was installed; run the command again",
                archive.name
            )
        })?;
        if got.sha512 != archive.sha512 {
            bail!(
                "{} from {from} ({} bytes) has SHA-512 {}, but the index says {}: the download is \
                 corrupt or not the archive the index names, so nothing was installed. Run the \
                 command again; if it persists, the index or the server is wrong (give another \
                 with --index)",
                archive.name,
                got.bytes,
                got.sha512,
                archive.sha512
            );
        }
        let unpacked = tempfile::Builder::new()
            .prefix(".unpack-")
            .tempdir_in(&versions)
            .with_context(|| format!("creating a temporary folder in {}", versions.display()))?;
        unpack(download.path(), unpacked.path()).with_context(|| {
            format!(
                "unpacking {} (its SHA-512 matched the index): nothing was installed",
                archive.name
            )
        })?;
        let missing = missing_binaries(unpacked.path());
        if !missing.is_empty() {
            bail!(
                "{} has no {}: it is not an envtest archive (controller-tools/envtest/etcd, \
                 kube-apiserver, kubectl), so nothing was installed",
                archive.name,
                missing.join(" nor ")
            );
        }
        // A folder of this version that lacks a binary (removed by hand) is replaced.
        if final_dir.exists() && !missing_binaries(&final_dir).is_empty() {
            std::fs::remove_dir_all(&final_dir)
                .with_context(|| format!("removing the incomplete {}", final_dir.display()))?;
        }
        let staged = unpacked.keep();
        if let Err(e) = std::fs::rename(&staged, &final_dir) {
            let _ = std::fs::remove_dir_all(&staged);
            // Another run installed the same version meanwhile: use it.
            if !missing_binaries(&final_dir).is_empty() {
                return Err(e)
                    .with_context(|| format!("moving the binaries into {}", final_dir.display()));
            }
        }
        Ok(final_dir)
    }
}

/// Unpacks the regular files of the `.tar.gz` `archive` into `into`, each by its file name
/// (the archives hold `controller-tools/envtest/<binary>`), executable.
fn unpack(archive: &Path, into: &Path) -> Result<()> {
    let file = std::fs::File::open(archive)?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
    let entries = tar.entries().context("not a gzip-compressed tar archive")?;
    for entry in entries {
        let mut entry = entry.context("not a gzip-compressed tar archive")?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().context("an entry's name")?.into_owned();
        let Some(name) = path.file_name().filter(|n| !n.is_empty()) else {
            continue;
        };
        let target = into.join(name);
        let mut out = std::fs::File::create(&target)
            .with_context(|| format!("writing {}", target.display()))?;
        std::io::copy(&mut entry, &mut out)
            .with_context(|| format!("unpacking {}", path.display()))?;
        out.set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
