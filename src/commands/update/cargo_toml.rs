//! The three-way merge of a project's `Cargo.toml` by its structure, where git's line merge
//! conflicts: tables and keys (dependencies, features, profiles, workspace), not lines. A key
//! only one side changed takes that side's value (one the user added stays; one the scaffold
//! removed and the user never touched goes); tables changed on both sides are merged key by key;
//! a key both sides changed differently conflicts on that key alone, between git's markers. The
//! file is written back without comments, so a file with a comment of the user's is left to the
//! line merge.

use toml::{Table, Value};

/// A key both sides changed differently: where, and each side's value (`None`: removed).
#[derive(Debug, Clone, PartialEq)]
struct Conflict {
    user: Option<Value>,
    new: Option<Value>,
}

/// The merged text and whether it has conflicts; `None` when a side is not TOML (the line merge
/// stands).
pub fn merge(path: &str, ancestor: &str, user: &str, new: &str) -> Option<(String, bool)> {
    // The structure has no comments: a comment of the user's would be lost, so the line merge
    // (and its markers around the user's lines) stands.
    let before: std::collections::HashSet<&str> = ancestor.lines().collect();
    if (user.lines()).any(|l| l.contains('#') && !before.contains(l)) {
        return None;
    }
    let parse = |text: &str| text.parse::<Table>().ok();
    let (ancestor, user, new) = (parse(ancestor)?, parse(user)?, parse(new)?);
    let mut conflicts = Vec::new();
    let merged = merge_tables(Some(&ancestor), &user, &new, &mut conflicts);
    let mut text = toml::to_string(&merged).ok()?;
    for (index, conflict) in conflicts.iter().enumerate() {
        let marker = placeholder(index);
        let line = text
            .lines()
            .find(|l| l.ends_with(&format!("\"{marker}\"")))?;
        let key = line
            .strip_suffix(&format!("\"{marker}\""))?
            .strip_suffix(" = ")?;
        let side = |value: &Option<Value>| match value {
            Some(v) => format!("{key} = {v}\n"),
            None => String::new(),
        };
        let block = format!(
            "<<<<<<< {path} (yours)\n{}=======\n{}>>>>>>> {path} (scaffold of this operator-rs)",
            side(&conflict.user),
            side(&conflict.new)
        );
        text = text.replacen(line, &block, 1);
    }
    Some((text, !conflicts.is_empty()))
}

/// The stand-in value of the `index`th conflicting key while the merged table is written.
fn placeholder(index: usize) -> String {
    format!("operator-rs-update-conflict-{index}")
}

fn merge_tables(
    ancestor: Option<&Table>,
    user: &Table,
    new: &Table,
    conflicts: &mut Vec<Conflict>,
) -> Table {
    let mut out = Table::new();
    let keys = (user.keys())
        .chain(new.keys().filter(|k| !user.contains_key(*k)))
        .cloned()
        .collect::<Vec<_>>();
    for key in keys {
        let a = ancestor.and_then(|t| t.get(&key));
        let (u, n) = (user.get(&key), new.get(&key));
        let value = match (a, u, n) {
            (_, u, n) if u == n => u.cloned(),
            (a, u, n) if a == u => n.cloned(),
            (a, u, n) if a == n => u.cloned(),
            (a, Some(Value::Table(u)), Some(Value::Table(n))) => {
                let a = match a {
                    Some(Value::Table(a)) => Some(a),
                    _ => None,
                };
                Some(Value::Table(merge_tables(a, u, n, conflicts)))
            }
            (_, u, n) => {
                let index = conflicts.len();
                conflicts.push(Conflict {
                    user: u.cloned(),
                    new: n.cloned(),
                });
                Some(Value::String(placeholder(index)))
            }
        };
        if let Some(value) = value {
            out.insert(key, value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANCESTOR: &str = r#"[package]
name = "op"
version = "0.1.0"

[dependencies]
kube = { version = "4", features = ["runtime"] }
serde = "1"

[profile.dev.package.old-crate]
opt-level = 3
"#;

    #[test]
    fn keys_merge_by_structure_and_a_scaffold_removal_goes() {
        // The user added a dependency next to the line the scaffold changed, and a feature.
        let user = ANCESTOR.replace("serde = \"1\"\n", "serde = \"1\"\nhttp = \"1\"\n")
            + "\n[features]\nmine = []\n";
        let new = ANCESTOR
            .replace(
                "kube = { version = \"4\", features = [\"runtime\"] }",
                "kube = { version = \"5\", features = [\"runtime\"] }\nschemars = \"1\"",
            )
            .replace("\n[profile.dev.package.old-crate]\nopt-level = 3\n", "");
        let (text, conflicts) = merge("Cargo.toml", ANCESTOR, &user, &new).unwrap();
        assert!(!conflicts, "{text}");
        let merged: Table = text.parse().unwrap();
        let deps = merged["dependencies"].as_table().unwrap();
        assert_eq!(deps["kube"]["version"].as_str(), Some("5"));
        assert_eq!(
            deps["http"].as_str(),
            Some("1"),
            "the user's dependency stays"
        );
        assert_eq!(
            deps["schemars"].as_str(),
            Some("1"),
            "the scaffold's is added"
        );
        assert!(
            merged.get("profile").is_none(),
            "the removed profile goes:\n{text}"
        );
        assert!(merged["features"].get("mine").is_some());
    }

    #[test]
    fn a_key_both_changed_conflicts_alone() {
        let user = ANCESTOR.replace("serde = \"1\"", "serde = \"1.0.200\"");
        let new = ANCESTOR
            .replace("serde = \"1\"", "serde = \"2\"")
            .replace("version = \"4\"", "version = \"5\"");
        let (text, conflicts) = merge("Cargo.toml", ANCESTOR, &user, &new).unwrap();
        assert!(conflicts);
        assert!(
            text.contains("<<<<<<< Cargo.toml (yours)\nserde = \"1.0.200\"\n=======\nserde = \"2\"\n>>>>>>> Cargo.toml (scaffold of this operator-rs)"),
            "{text}"
        );
        assert_eq!(text.matches("<<<<<<<").count(), 1, "{text}");
        assert!(text.contains("version = \"5\""), "{text}");
        assert_eq!(merge("Cargo.toml", ANCESTOR, "not [toml", ANCESTOR), None);
        // A comment of the user's would be lost: the line merge stands.
        let commented = ANCESTOR.replace("serde = \"1\"", "serde = \"1\" # the user's");
        assert_eq!(merge("Cargo.toml", ANCESTOR, &commented, &new), None);
    }
}
