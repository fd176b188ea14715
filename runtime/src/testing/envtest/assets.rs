//! Where the control plane's binaries are: `$KUBEBUILDER_ASSETS`, laid out as kubebuilder's
//! `setup-envtest` lays it out (`etcd`, `kube-apiserver`, optionally `kube-controller-manager`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::{Error, Result};

/// The variable naming the folder of the binaries.
///
/// ```
/// use operator_rs_runtime::testing::envtest::ASSETS_VAR;
///
/// let assets = std::env::var_os(ASSETS_VAR); // e.g. ~/.cache/k8s-assets/1.36.2
/// ```
pub const ASSETS_VAR: &str = "KUBEBUILDER_ASSETS";

/// The binaries of one control plane.
#[derive(Clone, Debug)]
pub(crate) struct Assets {
    pub(crate) etcd: PathBuf,
    pub(crate) apiserver: PathBuf,
    /// Present only when the folder has it (setup-envtest's folders do not).
    pub(crate) controller_manager: Option<PathBuf>,
}

impl Assets {
    /// The binaries in `$KUBEBUILDER_ASSETS`.
    pub(crate) fn from_env() -> Result<Self> {
        let dir = std::env::var_os(ASSETS_VAR)
            .filter(|dir| !dir.is_empty())
            .ok_or(Error::AssetsUnset)?;
        Self::in_dir(Path::new(&dir))
    }

    /// The binaries in `dir`; etcd and kube-apiserver must be there.
    pub(crate) fn in_dir(dir: &Path) -> Result<Self> {
        let required = |binary: &'static str| {
            let path = dir.join(binary);
            if is_executable(&path) {
                Ok(path)
            } else {
                Err(Error::BinaryMissing { binary, path })
            }
        };
        let controller_manager = dir.join("kube-controller-manager");
        Ok(Self {
            etcd: required("etcd")?,
            apiserver: required("kube-apiserver")?,
            controller_manager: is_executable(&controller_manager).then_some(controller_manager),
        })
    }
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `$KUBEBUILDER_ASSETS` is set. When it is not, writes one line to the test's stderr
/// (past the test harness's capture, so it shows even for a passing test) saying the test is
/// skipped and how to run it.
pub(crate) fn available() -> bool {
    if std::env::var_os(ASSETS_VAR).is_some_and(|dir| !dir.is_empty()) {
        return true;
    }
    let test = crate::testing::current_test();
    crate::testing::uncaptured(&format!(
        "skipped {test}: {ASSETS_VAR} is not set; run `export {ASSETS_VAR}=$(operator-rs envtest)` \
         (or setup-envtest's `use -p path`) to run it on a real control plane"
    ));
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_etcd_names_the_missing_binary_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let error = Assets::in_dir(dir.path()).unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error, Error::BinaryMissing { binary: "etcd", .. }),
            "{error:?}"
        );
        assert!(
            message.contains(&dir.path().join("etcd").display().to_string()),
            "{message}"
        );
        assert!(message.contains("operator-rs envtest"), "{message}");

        for binary in ["etcd", "kube-apiserver"] {
            let path = dir.path().join(binary);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let assets = Assets::in_dir(dir.path()).unwrap();
        assert_eq!(
            assets.controller_manager, None,
            "kube-controller-manager is optional"
        );
    }
}
