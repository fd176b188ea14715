//! Built-in Kubernetes kinds: every top-level resource type of k8s-openapi, which a project can
//! write a controller for with `create api --resource=false`. The list of types is generated
//! (`src/builtin_kinds.rs`); their group, version, kind, plural and scope come from the types'
//! own `k8s_openapi::Resource` constants, so they cannot drift from the crate.

use std::sync::LazyLock;

use k8s_openapi::Resource;

/// One built-in kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinKind {
    /// The API group: `apps`, `networking.k8s.io`, or `""` for core/v1.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// The Rust path of the type, e.g. `k8s_openapi::api::apps::v1::Deployment`.
    pub rust_path: String,
}

fn kind_of<T: Resource>(path: &str) -> BuiltinKind {
    BuiltinKind {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        plural: T::URL_PATH_SEGMENT,
        namespaced: std::any::type_name::<T::Scope>().ends_with("NamespaceResourceScope"),
        rust_path: format!("k8s_openapi::{}", path.replace(' ', "")),
    }
}

macro_rules! builtin_kinds {
    ($($($seg:ident)::+),* $(,)?) => {
        fn all_kinds() -> Vec<BuiltinKind> {
            vec![$(kind_of::<k8s_openapi::$($seg)::+>(stringify!($($seg)::+))),*]
        }
    };
}

include!("builtin_kinds.rs");

/// Every built-in kind k8s-openapi knows.
pub static ALL: LazyLock<Vec<BuiltinKind>> = LazyLock::new(all_kinds);

/// The built-in kind a user means by `--group <group> --version <version> --kind <kind>`:
/// `core` or an empty group is core/v1; `networking` also finds `networking.k8s.io`, `rbac` finds
/// `rbac.authorization.k8s.io`, as kubebuilder's core groups do.
pub fn lookup(group: &str, version: &str, kind: &str) -> Option<&'static BuiltinKind> {
    ALL.iter()
        .find(|b| b.version == version && b.kind == kind && group_matches(b.group, group))
}

fn group_matches(actual: &str, given: &str) -> bool {
    if given.is_empty() || given == "core" {
        return actual.is_empty();
    }
    actual == given || (actual.starts_with(&format!("{given}.")) && actual.ends_with(".k8s.io"))
}

/// Whether `group` names a built-in group at all (used to explain a miss).
pub fn is_builtin_group(group: &str) -> bool {
    ALL.iter().any(|b| group_matches(b.group, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_common_kinds_with_their_own_metadata() {
        let d = lookup("apps", "v1", "Deployment").unwrap();
        assert_eq!(d.rust_path, "k8s_openapi::api::apps::v1::Deployment");
        assert_eq!(d.plural, "deployments");
        assert!(d.namespaced);
        let p = lookup("core", "v1", "Pod").unwrap();
        assert_eq!(p.group, "");
        assert_eq!(lookup("", "v1", "Pod"), Some(p));
        let n = lookup("core", "v1", "Namespace").unwrap();
        assert!(!n.namespaced);
        assert_eq!(
            lookup("networking", "v1", "Ingress").unwrap().group,
            "networking.k8s.io"
        );
        assert_eq!(
            lookup("rbac", "v1", "ClusterRole").unwrap().group,
            "rbac.authorization.k8s.io"
        );
        assert!(lookup("apps", "v1", "Deploymnt").is_none());
        assert!(lookup("apps", "v2", "Deployment").is_none());
        assert!(is_builtin_group("batch") && !is_builtin_group("cache"));
    }

    #[test]
    fn lists_no_subresources() {
        assert!(ALL.len() > 90, "{}", ALL.len());
        // Scale and policy/v1 Eviction are subresources (SubResourceScope), not kinds to watch.
        assert!(
            ALL.iter()
                .all(|b| b.kind != "Scale" && !(b.group == "policy" && b.kind == "Eviction"))
        );
        assert!(lookup("policy", "v1", "Eviction").is_none());
    }
}
