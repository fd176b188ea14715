//! What this operator-rs promises the projects it makes: its version and its scaffold's
//! fingerprint, the identity of what its scaffolding commands write. PROJECT records the
//! fingerprint of the scaffold a project is on, `operator-rs version` prints it, and `update`
//! accepts an ancestor binary only when it prints the one PROJECT records. [`api`] is the
//! runtime crate's public API as a listing, the other half of what a release promises.

pub mod api;

/// The version of this operator-rs (semver; pre-1.0 a minor bump for breaking changes).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The fingerprint of this operator-rs's scaffold, `sha256:<64 hex digits>`: recorded in
/// `scaffold.fingerprint` at the repository's root, and checked by a test against the scaffold
/// the reference scenarios make (and against CHANGELOG.md's entry for [`VERSION`]).
pub fn scaffold_fingerprint() -> &'static str {
    include_str!("../../scaffold.fingerprint").trim()
}

/// The fingerprint of a scaffold's files, `sha256:<hex>`: the SHA-256 of each file's path
/// (`/`-separated, relative), its length and its bytes, in the order of the paths, so that
/// neither the order the files were written in nor the machine changes it.
pub fn fingerprint_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut files: Vec<(&str, &[u8])> = files.into_iter().collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    let mut data = Vec::new();
    for (path, bytes) in files {
        data.extend_from_slice(path.as_bytes());
        data.push(0);
        data.extend_from_slice(bytes.len().to_string().as_bytes());
        data.push(0);
        data.extend_from_slice(bytes);
    }
    format!("sha256:{}", crate::fromcrd::sha256_hex(&data))
}
