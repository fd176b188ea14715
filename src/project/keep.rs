//! What a rewrite of `PROJECT` keeps of the file it replaces: the keys operator-rs does not know
//! (kubebuilder's PROJECT carries plugin keys, `plugins:` and per-resource ones, and tools
//! add their own) and the user's comments. Known keys are operator-rs's to write; an unknown
//! key is carried over at its place in the tree (top level, a resource matched by group, version
//! and kind, or one of a resource's sections); each comment goes back above (or after) the line
//! it was written at, found by its text, or at the end when that line is gone: never lost.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// A YAML tree that keeps the order of keys (serde_json's maps sort them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum Node {
    Map(IndexMap<String, Node>),
    List(Vec<Node>),
    Scalar(serde_json::Value),
}

/// Where a map sits in PROJECT, for the keys operator-rs writes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Crd,
    Resource,
    Api,
    Webhooks,
    DeployImage,
}

impl Level {
    /// Every key operator-rs's types write at this level (the test below keeps this list and
    /// the types in step).
    fn known(self) -> &'static [&'static str] {
        match self {
            Level::Top => &[
                "version",
                "domain",
                "repo",
                "projectName",
                "crateName",
                "layout",
                "cliVersion",
                "cliSource",
                "commands",
                "k8sOpenapiFeature",
                "namespaced",
                "multigroup",
                "sharded",
                "resources",
                "crd",
            ],
            Level::Crd => &["knownFormatsOnly", "maxDescLen"],
            Level::Resource => &[
                "group",
                "domain",
                "version",
                "kind",
                "plural",
                "api",
                "controller",
                "core",
                "external",
                "fromCrd",
                "externalCrate",
                "namespaced",
                "path",
                "deployImage",
                "webhooks",
            ],
            Level::Api => &["crdVersion", "namespaced", "storage"],
            Level::Webhooks => &[
                "defaulting",
                "validation",
                "conversion",
                "spoke",
                "webhookVersion",
            ],
            Level::DeployImage => &["image", "containerPort", "containerCommand", "runAsUser"],
        }
    }

    fn child(self, key: &str) -> Option<Level> {
        match (self, key) {
            (Level::Top, "crd") => Some(Level::Crd),
            (Level::Resource, "api") => Some(Level::Api),
            (Level::Resource, "webhooks") => Some(Level::Webhooks),
            (Level::Resource, "deployImage") => Some(Level::DeployImage),
            _ => None,
        }
    }
}

/// `new` (the body operator-rs renders, without its header) with the unknown keys and the
/// comments of `old` (the whole file it replaces).
pub(super) fn keep(new: &str, old: &str, header: &str) -> String {
    let old_body = old.strip_prefix(header).unwrap_or(old);
    let merged = with_unknown_keys(new, old_body).unwrap_or_else(|| new.to_string());
    with_comments(&merged, old_body)
}

fn with_unknown_keys(new: &str, old: &str) -> Option<String> {
    let old: Node = serde_saphyr::from_str(old).ok()?;
    let mut tree: Node = serde_saphyr::from_str(new).ok()?;
    if !merge(&mut tree, &old, Level::Top) {
        return None;
    }
    serde_saphyr::to_string(&tree).ok()
}

/// Carry `old`'s unknown keys into `new` at `level`; whether any was.
fn merge(new: &mut Node, old: &Node, level: Level) -> bool {
    let (Node::Map(new), Node::Map(old)) = (new, old) else {
        return false;
    };
    let mut changed = false;
    for (key, old_value) in old {
        match new.get_mut(key) {
            None if !level.known().contains(&key.as_str()) => {
                new.insert(key.clone(), old_value.clone());
                changed = true;
            }
            None => {}
            Some(new_value) => {
                if let Some(child) = level.child(key) {
                    changed |= merge(new_value, old_value, child);
                } else if level == Level::Top && key == "resources" {
                    changed |= merge_resources(new_value, old_value);
                }
            }
        }
    }
    changed
}

/// Each resource takes the unknown keys of the old resource of its group, version and kind.
fn merge_resources(new: &mut Node, old: &Node) -> bool {
    let (Node::List(new), Node::List(old)) = (new, old) else {
        return false;
    };
    let id = |n: &Node| match n {
        Node::Map(m) => Some(["group", "version", "kind"].map(|k| m.get(k).cloned())),
        _ => None,
    };
    let mut changed = false;
    for item in new.iter_mut() {
        let wanted = id(item);
        if let Some(before) = old.iter().find(|o| wanted.is_some() && id(o) == wanted) {
            changed |= merge(item, before, Level::Resource);
        }
    }
    changed
}

/// A line split into its YAML content and its trailing comment (from the `#`), the `#` found
/// outside quotes and after a space, as YAML reads it.
fn split_comment(line: &str) -> (&str, Option<&str>) {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if double => escaped = true,
            '"' if !single => double = !double,
            '\'' if !double => single = !single,
            '#' if !single && !double && prev.is_whitespace() => {
                return (line[..i].trim_end(), Some(&line[i..]));
            }
            _ => {}
        }
        prev = c;
    }
    (line.trim_end(), None)
}

/// What identifies a line: its text (or its key), and which occurrence of that text it is.
type Anchor = (String, usize);

/// The content lines of `text` (by index) with what identifies each: its text, and its key
/// (`  storage:`), for a line whose value changed.
fn anchors(text: &str) -> Vec<(usize, Anchor, Anchor)> {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let content = split_comment(line).0;
        if content.trim().is_empty() {
            continue;
        }
        let key = match content.find(':') {
            Some(at) => content[..=at].to_string(),
            None => content.to_string(),
        };
        let mut count = |s: &str| {
            let n = seen.entry(s.to_string()).or_default();
            *n += 1;
            *n
        };
        let whole = (content.to_string(), count(&format!("L{content}")));
        let by_key = (key.clone(), count(&format!("K{key}")));
        out.push((i, whole, by_key));
    }
    out
}

/// `new` with `old`'s comments put back: each block of comment lines above the line it preceded,
/// each trailing comment after its line; comments whose line is gone at the end.
fn with_comments(new: &str, old: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    if !old_lines.iter().any(|l| l.contains('#')) {
        return new.to_string();
    }
    let new_lines: Vec<&str> = new.lines().collect();
    let new_anchors = anchors(new);
    let mut above: Vec<Vec<String>> = vec![Vec::new(); new_lines.len()];
    let mut after: Vec<Option<String>> = vec![None; new_lines.len()];
    let mut orphans: Vec<String> = Vec::new();
    let mut block: Vec<String> = Vec::new();
    let old_anchors: std::collections::HashMap<usize, _> = (anchors(old).into_iter())
        .map(|(at, whole, by_key)| (at, (whole, by_key)))
        .collect();
    for (i, line) in old_lines.iter().enumerate() {
        if line.trim_start().starts_with('#') {
            block.push(line.trim_start().to_string());
            continue;
        }
        let (content, trailing) = split_comment(line);
        if content.trim().is_empty() {
            continue;
        }
        let Some((whole, by_key)) = old_anchors.get(&i) else {
            continue;
        };
        let place = (new_anchors.iter())
            .find(|(_, w, _)| w == whole)
            .or_else(|| new_anchors.iter().find(|(_, _, k)| k == by_key))
            .map(|(at, _, _)| *at);
        match place {
            Some(at) => {
                above[at].append(&mut block);
                if let Some(t) = trailing {
                    after[at] = Some(t.to_string());
                }
            }
            None => {
                orphans.append(&mut block);
                orphans.extend(trailing.map(str::to_string));
            }
        }
    }
    orphans.append(&mut block);
    let mut out = String::with_capacity(new.len() + old.len() / 4);
    for (i, line) in new_lines.iter().enumerate() {
        let indent = &line[..line.len() - line.trim_start().len()];
        for c in &above[i] {
            out.push_str(&format!("{indent}{c}\n"));
        }
        out.push_str(line);
        if let Some(t) = &after[i] {
            out.push(' ');
            out.push_str(t);
        }
        out.push('\n');
    }
    for c in orphans {
        out.push_str(&c);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_keys_are_the_keys_the_types_write() {
        use crate::project::*;
        let full = Project {
            version: "3".into(),
            domain: "d.io".into(),
            repo: "r".into(),
            project_name: "p".into(),
            crate_name: "p".into(),
            layout: vec![LAYOUT.into()],
            cli_version: "0".into(),
            cli_source: "--git u --rev c operator-rs".into(),
            scaffold: None,
            commands: vec!["init --domain d.io".into()],
            k8s_openapi_feature: "v1_37".into(),
            namespaced: true,
            multigroup: true,
            sharded: true,
            crd: CrdSettings {
                known_formats_only: true,
                max_desc_len: Some(1),
                ..CrdSettings::default()
            },
            resources: vec![Resource {
                group: "g".into(),
                domain: "d.io".into(),
                version: "v1".into(),
                kind: "K".into(),
                plural: "ks".into(),
                api: Some(Api {
                    crd_version: "v1".into(),
                    namespaced: true,
                    storage: true,
                }),
                controller: true,
                core: true,
                external: true,
                from_crd: Some(FromCrd {
                    file: "f".into(),
                    sha256: "s".into(),
                    crd_version: "v1".into(),
                    namespaced: true,
                }),
                external_crate: Some("c@1".into()),
                namespaced: Some(false),
                path: "p".into(),
                deploy_image: Some(DeployImage {
                    image: "i".into(),
                    container_port: Some(1),
                    container_command: vec!["c".into()],
                    run_as_user: Some(1),
                }),
                webhooks: Some(ResourceWebhooks {
                    defaulting: true,
                    validation: true,
                    conversion: true,
                    spoke: vec!["v2".into()],
                    webhook_version: "v1".into(),
                }),
            }],
        };
        let tree: Node = serde_saphyr::from_str(&full.render().unwrap()).unwrap();
        fn check(node: &Node, level: Level) {
            let Node::Map(m) = node else {
                panic!("{node:?}")
            };
            let keys: Vec<&str> = m.keys().map(String::as_str).collect();
            assert_eq!(keys, level.known(), "{level:?}");
            for (k, v) in m {
                if let Some(child) = level.child(k) {
                    check(v, child);
                }
            }
        }
        check(&tree, Level::Top);
        let Node::Map(top) = &tree else { panic!() };
        let Some(Node::List(rs)) = top.get("resources") else {
            panic!()
        };
        check(&rs[0], Level::Resource);
    }

    #[test]
    fn trailing_comments_are_found_outside_quotes() {
        assert_eq!(split_comment("a: b # c"), ("a: b", Some("# c")));
        assert_eq!(split_comment("a: \"b # c\""), ("a: \"b # c\"", None));
        assert_eq!(split_comment("a: 'b # c' # d"), ("a: 'b # c'", Some("# d")));
        assert_eq!(split_comment("a: b#c"), ("a: b#c", None));
    }
}
