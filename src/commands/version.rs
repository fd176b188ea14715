//! `operator-rs version`: the tool's version and the versions of what it scaffolds.

/// The text `version` prints.
pub fn text() -> String {
    format!(
        "operator-rs: {}\nscaffold:    {}\nkube:        5.0.0\nk8s-openapi: 0.29.0 (feature {})\nschemars:    1\nOS/Arch:     {}/{}\n",
        crate::release::VERSION,
        crate::release::scaffold_fingerprint(),
        crate::project::K8S_OPENAPI_FEATURE,
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
