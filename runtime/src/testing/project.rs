//! A project's `PROJECT` file as the test harnesses read it: the keys that change how an
//! operator under test runs (`namespaced`, `resources`), nothing else.

use std::path::Path;

use serde_json::Value;

/// The PROJECT file of the project in `dir`, as JSON; the error says which file and why.
pub(crate) fn read(dir: &Path) -> Result<Value, String> {
    let path = dir.join("PROJECT");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{}: not YAML: {e}", path.display()))
}

/// Whether `project` (a PROJECT file) is namespace-scoped: `namespaced: true`
/// (`init --namespaced`, `edit --namespaced`).
pub(crate) fn namespaced(project: &Value) -> bool {
    project["namespaced"].as_bool().unwrap_or(false)
}

/// How many resources (a kind in one version) `project` lists.
pub(crate) fn resources(project: &Value) -> usize {
    project["resources"].as_array().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_scope_and_the_resources() {
        let project: Value = serde_saphyr::from_str(
            "domain: example.com\nnamespaced: true\nresources:\n- kind: A\n- kind: B\n",
        )
        .unwrap();
        assert!(namespaced(&project));
        assert_eq!(resources(&project), 2);
        let cluster: Value = serde_saphyr::from_str("domain: example.com\n").unwrap();
        assert!(!namespaced(&cluster));
        assert_eq!(resources(&cluster), 0);
    }
}
