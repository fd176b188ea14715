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
    let merged = merge_tables(Some(&ancestor), &user, &new, "", &mut conflicts);
    let mut text = render(&merged);
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

/// Merge the table named `name` (dotted; empty: the file). A dependency is one value (its
/// inline table conflicts as a whole).
fn merge_tables(
    ancestor: Option<&Table>,
    user: &Table,
    new: &Table,
    name: &str,
    conflicts: &mut Vec<Conflict>,
) -> Table {
    let mut out = Table::new();
    // The user's keys in their order; a key the scaffold added after the key it follows there.
    let mut keys: Vec<String> = user.keys().cloned().collect();
    let mut previous: Option<&String> = None;
    for key in new.keys() {
        if !keys.contains(key) {
            let at = previous
                .and_then(|p| keys.iter().position(|k| k == p))
                .map_or(keys.len(), |i| i + 1);
            keys.insert(at, key.clone());
        }
        previous = Some(key);
    }
    for key in keys {
        let a = ancestor.and_then(|t| t.get(&key));
        let (u, n) = (user.get(&key), new.get(&key));
        let value = match (a, u, n) {
            (_, u, n) if u == n => u.cloned(),
            (a, u, n) if a == u => n.cloned(),
            (a, u, n) if a == n => u.cloned(),
            (a, Some(Value::Table(u)), Some(Value::Table(n))) if !holds_dependencies(name) => {
                let a = match a {
                    Some(Value::Table(a)) => Some(a),
                    _ => None,
                };
                let child = match name {
                    "" => key.clone(),
                    _ => format!("{name}.{key}"),
                };
                Some(Value::Table(merge_tables(a, u, n, &child, conflicts)))
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

/// Whether the table named `name` lists dependencies (`[dependencies]`, `[dev-dependencies]`,
/// `[target.'cfg(unix)'.build-dependencies]`, `[workspace.dependencies]`): each written inline.
fn holds_dependencies(name: &str) -> bool {
    name.ends_with("dependencies")
}

/// The merged file as Cargo.toml is written: top-level tables as sections (`[package]`,
/// `[profile.release]`, `[[bin]]`), each dependency on one line (`kube = { version = "5" }`).
fn render(table: &Table) -> String {
    let mut out = String::new();
    section(&mut out, "", table);
    out.trim_start().to_string()
}

fn section(out: &mut String, name: &str, table: &Table) {
    if holds_dependencies(name) {
        out.push_str(&format!("\n[{name}]\n"));
        for (key, value) in table {
            out.push_str(&format!("{} = {value}\n", quoted(key)));
        }
        return;
    }
    let inline = |v: &Value| !matches!(v, Value::Table(_)) && !is_table_array(v);
    let plain: Vec<_> = table.iter().filter(|(_, v)| inline(v)).collect();
    let nested: Vec<_> = table.iter().filter(|(_, v)| !inline(v)).collect();
    if !name.is_empty() && (!plain.is_empty() || nested.is_empty()) {
        out.push_str(&format!("\n[{name}]\n"));
    }
    for (key, value) in &plain {
        out.push_str(&format!("{} = {value}\n", quoted(key)));
    }
    for (key, value) in nested {
        let child = match name {
            "" => quoted(key),
            _ => format!("{name}.{}", quoted(key)),
        };
        match value {
            Value::Table(t) => section(out, &child, t),
            Value::Array(items) => {
                for item in items {
                    if let Value::Table(t) = item {
                        out.push_str(&format!("\n[[{child}]]\n"));
                        for (k, v) in t {
                            out.push_str(&format!("{} = {v}\n", quoted(k)));
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_table_array(value: &Value) -> bool {
    matches!(value, Value::Array(items) if !items.is_empty() && items.iter().all(|i| matches!(i, Value::Table(_))))
}

/// A key as TOML writes it: bare when it can be.
fn quoted(key: &str) -> String {
    let bare =
        !key.is_empty() && (key.chars()).all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match bare {
        true => key.to_string(),
        false => Value::String(key.to_string()).to_string(),
    }
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
        assert!(
            text.contains("kube = { version = \"5\", features = [\"runtime\"] }\n"),
            "a dependency stays on one line:\n{text}"
        );
        let order: Vec<&str> = (text.lines())
            .filter_map(|l| l.split_once(" = ").map(|(k, _)| k))
            .filter(|k| ["kube", "schemars", "serde", "http"].contains(k))
            .collect();
        assert_eq!(
            order,
            ["kube", "schemars", "serde", "http"],
            "in the file's order"
        );
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
