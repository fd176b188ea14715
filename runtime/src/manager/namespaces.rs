//! Which namespaces the controllers watch: every one (a cluster-scoped manager), or those a
//! namespace-scoped manager is confined to (its own, or those `--watch-namespace` names), like
//! controller-runtime's `cache.Options.DefaultNamespaces`.

use std::collections::BTreeSet;

/// The namespaces the controllers' caches and watches cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchNamespaces {
    /// Every namespace (one cluster-wide watch per kind).
    All,
    /// Only these (one watch per namespace, merged); never empty.
    Only(BTreeSet<String>),
}

/// Why `--watch-namespace` was refused.
#[derive(Debug, thiserror::Error)]
pub enum WatchNamespaceError {
    #[error(
        "--watch-namespace (WATCH_NAMESPACE) {name:?} is not a namespace name: a DNS-1123 label, 1 to 63 lowercase letters, digits and '-', starting and ending with a letter or digit\n  e.g. --watch-namespace team-a,team-b"
    )]
    /// A name that is not a DNS-1123 label.
    Invalid {
        /// The name as given.
        name: String,
    },
}

impl WatchNamespaces {
    /// The scope of a manager given `--watch-namespace`'s `names` (blank items ignored):
    /// those names when there are any; else its own namespace, `own()`, when it is
    /// namespace-scoped; else every namespace.
    pub fn resolve(
        names: &[String],
        namespaced: bool,
        own: impl FnOnce() -> String,
    ) -> Result<Self, WatchNamespaceError> {
        let mut set = BTreeSet::new();
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            if !is_namespace_name(name) {
                return Err(WatchNamespaceError::Invalid { name: name.into() });
            }
            set.insert(name.to_string());
        }
        if set.is_empty() && namespaced {
            set.insert(own());
        }
        Ok(if set.is_empty() {
            Self::All
        } else {
            Self::Only(set)
        })
    }

    /// Whether `namespace` is watched.
    pub fn contains(&self, namespace: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(set) => set.contains(namespace),
        }
    }
}

impl std::fmt::Display for WatchNamespaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::All => f.write_str("all namespaces"),
            Self::Only(set) => f.write_str(&set.iter().cloned().collect::<Vec<_>>().join(",")),
        }
    }
}

/// A DNS-1123 label, as Kubernetes names namespaces.
fn is_namespace_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(names: &[&str], namespaced: bool) -> Result<WatchNamespaces, WatchNamespaceError> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        WatchNamespaces::resolve(&names, namespaced, || "own".into())
    }

    fn only(names: &[&str]) -> WatchNamespaces {
        WatchNamespaces::Only(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn a_namespaced_manager_watches_its_own_namespace_unless_told_others() {
        assert_eq!(resolve(&[], true).unwrap(), only(&["own"]));
        assert_eq!(resolve(&[""], true).unwrap(), only(&["own"]));
        assert_eq!(
            resolve(&["b", " a ", "b", ""], true).unwrap(),
            only(&["a", "b"])
        );
    }

    #[test]
    fn a_cluster_scoped_manager_watches_everything_unless_restricted() {
        assert_eq!(resolve(&[], false).unwrap(), WatchNamespaces::All);
        assert_eq!(resolve(&["a"], false).unwrap(), only(&["a"]));
        assert!(WatchNamespaces::All.contains("x") && !only(&["a"]).contains("x"));
    }

    #[test]
    fn refuses_what_is_not_a_namespace_name() {
        for bad in ["Team", "a_b", "-a", "a-", "a.b", &"a".repeat(64)] {
            let err = resolve(&[bad], true).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{bad:?}")) && err.contains("e.g."),
                "{err}"
            );
        }
        assert!(resolve(&[&"a".repeat(63)], true).is_ok());
    }
}
