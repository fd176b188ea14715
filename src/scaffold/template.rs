//! The embedded templates and their front matter. Each template under `templates/<command>/`
//! declares, in a leading tera comment, its output path, its if-exists policy, an optional
//! condition, and (for fragments) the marker it is inserted at:
//!
//! ```text
//! {#- operator-rs
//! path: src/controllers/{{ kind_snake }}.rs
//! if_exists: error
//! when: controller
//! -#}
//! ```
//!
//! A fragment that renders differently for one kind also lists the entries it owns
//! (`owns: {{ kind_snake }}_{{ version }} {{ kind_snake }}_{{ version }}_faults`), so that a re-run
//! in another variant replaces them (see `scaffold::insertion_points`).

use include_dir::{Dir, include_dir};
use serde::Deserialize;

use anyhow::{Context, Result, bail};

/// Every template, embedded in the binary: the installed tool needs no files beside it.
pub static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

const OPEN: &str = "{#- operator-rs";
const CLOSE: &str = "-#}";

/// What to do when a template's output file already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IfExists {
    /// The user's file: refuse, unless `--force` (then overwrite).
    Error,
    /// Keep the existing file as it is (fragments may still be inserted into it).
    Skip,
    /// Owned by the tool: always rewritten.
    Overwrite,
}

/// A template's declaration of itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrontMatter {
    /// Output path relative to the project root; rendered with tera.
    pub path: String,
    #[serde(default = "default_if_exists")]
    pub if_exists: IfExists,
    /// A boolean context key (`controller`, or `not builtin`): render only when it holds.
    #[serde(default)]
    pub when: Option<String>,
    /// For fragments: the marker name (`+operator-rs:scaffold:<marker>`) to insert before.
    #[serde(default)]
    pub marker: Option<String>,
    /// For fragments that render differently for one kind (by flavour, scope, controller): the
    /// names, rendered with tera and separated by spaces, of every entry (Rust item, YAML
    /// sequence entry) any variant inserts. A re-run replaces those entries instead of adding a
    /// second copy, and removes them when `when:` no longer holds.
    #[serde(default)]
    pub owns: Option<String>,
    /// For fragments: when the file or its marker is missing, leave the file as it is instead
    /// of failing (a marker that projects made by earlier versions lack).
    #[serde(default)]
    pub optional: bool,
}

fn default_if_exists() -> IfExists {
    IfExists::Error
}

/// One embedded template.
#[derive(Debug, Clone)]
pub struct Template {
    /// Its path under `templates/`, e.g. `api/src/controllers/kind.rs.tera`; also its tera name.
    pub name: String,
    pub front: FrontMatter,
    pub body: &'static str,
}

impl Template {
    pub fn is_fragment(&self) -> bool {
        self.front.marker.is_some()
    }
}

/// Parse the front matter at the start of a template.
pub fn parse_front_matter(name: &str, body: &str) -> Result<FrontMatter> {
    let Some(rest) = body.strip_prefix(OPEN) else {
        bail!("template {name} does not start with a `{OPEN}` front matter");
    };
    let Some(end) = rest.find(CLOSE) else {
        bail!("template {name}: front matter is not closed with `{CLOSE}`");
    };
    serde_saphyr::from_str(&rest[..end])
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("template {name}: invalid front matter"))
}

/// The body of a template without its front matter and the line break that closes it (tera
/// never sees the front matter).
fn strip_front_matter(body: &str) -> &str {
    match body
        .strip_prefix(OPEN)
        .and_then(|rest| rest.find(CLOSE).map(|end| &rest[end + CLOSE.len()..]))
    {
        Some(rest) => rest
            .strip_prefix("\r\n")
            .or_else(|| rest.strip_prefix('\n'))
            .unwrap_or(rest),
        None => body,
    }
}

/// Whether a template body is plain text (no tera syntax at all): it renders to itself.
pub fn is_static(body: &str) -> bool {
    !(body.contains("{{") || body.contains("{%") || body.contains("{#"))
}

/// The bodies of every embedded Rust template that is plain text: they render to themselves, so
/// their output is known to parse (the `static_rust_templates_parse` test checks it).
pub fn static_rust_bodies() -> Vec<&'static str> {
    rust_file_bodies()
        .into_iter()
        .filter(|b| is_static(b))
        .collect()
}

/// The bodies of the embedded Rust templates of whole files (`*.rs.tera`, fragments left out),
/// without their front matter.
pub fn rust_file_bodies() -> Vec<&'static str> {
    fn walk(dir: &'static Dir<'static>, out: &mut Vec<&'static str>) {
        for file in dir.files() {
            if !file.path().to_string_lossy().ends_with(".rs.tera") {
                continue;
            }
            let Some(text) = file.contents_utf8() else {
                continue;
            };
            let body = strip_front_matter(text);
            // A fragment's front matter names its marker (read without parsing the YAML).
            let front = &text[..text.len() - body.len()];
            if !front.lines().any(|l| l.starts_with("marker:")) {
                out.push(body);
            }
        }
        for sub in dir.dirs() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(&TEMPLATES, &mut out);
    out
}

/// Every template of one command (`init`, `api`), in a stable order: files first, then fragments.
pub fn templates_for(command: &str) -> Result<Vec<Template>> {
    let dir = TEMPLATES
        .get_dir(command)
        .with_context(|| format!("no templates for `{command}` are embedded"))?;
    let mut out = Vec::new();
    collect(dir, &mut out)?;
    out.sort_by(|a, b| (a.is_fragment(), &a.name).cmp(&(b.is_fragment(), &b.name)));
    Ok(out)
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<Template>) -> Result<()> {
    for file in dir.files() {
        let name = file.path().to_string_lossy().into_owned();
        if !name.ends_with(".tera") {
            continue;
        }
        let body = file
            .contents_utf8()
            .with_context(|| format!("template {name} is not UTF-8"))?;
        let front = parse_front_matter(&name, body)?;
        let body = strip_front_matter(body);
        out.push(Template { name, front, body });
    }
    for sub in dir.dirs() {
        collect(sub, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_front_matter() {
        let fm = parse_front_matter(
            "t",
            "{#- operator-rs\npath: src/{{ kind_snake }}.rs\nif_exists: skip\nwhen: not builtin\nmarker: kinds\n-#}\nbody",
        )
        .unwrap();
        assert_eq!(fm.path, "src/{{ kind_snake }}.rs");
        assert_eq!(fm.if_exists, IfExists::Skip);
        assert_eq!(fm.when.as_deref(), Some("not builtin"));
        assert_eq!(fm.marker.as_deref(), Some("kinds"));
    }

    #[test]
    fn body_starts_after_the_front_matter_line() {
        assert_eq!(
            strip_front_matter("{#- operator-rs\npath: a\n-#}\nX\n"),
            "X\n"
        );
        assert_eq!(strip_front_matter("{#- operator-rs\npath: a\n-#}X"), "X");
    }

    #[test]
    fn front_matter_defaults_to_error_policy() {
        let fm = parse_front_matter("t", "{#- operator-rs\npath: a\n-#}").unwrap();
        assert_eq!(fm.if_exists, IfExists::Error);
    }

    #[test]
    fn rejects_missing_or_unknown_front_matter() {
        assert!(parse_front_matter("t", "no front matter").is_err());
        assert!(parse_front_matter("t", "{#- operator-rs\npath: a\n").is_err());
        let err = format!(
            "{:#}",
            parse_front_matter("t", "{#- operator-rs\npath: a\nifexists: skip\n-#}").unwrap_err()
        );
        assert!(err.contains("ifexists"), "{err}");
    }

    #[test]
    fn static_rust_templates_are_valid() {
        let bodies = static_rust_bodies();
        assert!(!bodies.is_empty());
        for body in bodies {
            let file = syn::parse_file(body).expect("a plain-text Rust template parses");
            let f = dup_name(&file);
            assert!(f.is_none(), "duplicate name {f:?} in {body:.80}");
        }
    }

    fn dup_name(file: &syn::File) -> Option<String> {
        crate::workspace::rust_items::duplicate_name(file)
    }

    #[test]
    fn every_embedded_template_declares_itself() {
        for cmd in ["init", "api"] {
            let ts = templates_for(cmd).unwrap();
            assert!(!ts.is_empty(), "no templates for {cmd}");
        }
    }
}
