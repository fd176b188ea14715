//! What this operator-rs promises the projects it makes: its version and its scaffold's
//! fingerprint, the identity of what its scaffolding commands write. PROJECT records the
//! fingerprint of the scaffold a project is on, `operator-rs version` prints it, and `update`
//! accepts an ancestor binary only when it prints the one PROJECT records.

/// The version of this operator-rs (semver; pre-1.0 a minor bump for breaking changes).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The fingerprint of this operator-rs's scaffold, `sha256:<64 hex digits>`: recorded in
/// `scaffold.fingerprint` at the repository's root, and checked by a test against the scaffold
/// the reference scenarios make (and against CHANGELOG.md's entry for [`VERSION`]).
pub fn scaffold_fingerprint() -> &'static str {
    include_str!("../scaffold.fingerprint").trim()
}
