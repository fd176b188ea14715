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

/// The body of a template without its front matter and the line break that closes it (tera 1
/// does not honour `-#}`'s right trim on comments, so the engine strips it).
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

/// A template body made cheap for tera to parse. Tera's pest grammar costs hundreds of
/// instructions per byte of literal text, and most of a template is literal text; so every run of
/// literal text is replaced by a variable (`{{ _N }}`) whose value is that text (a short name:
/// tera reads each character of an identifier several times).
/// Only the non-blank core of a run is replaced: its leading and trailing whitespace stays in the
/// skeleton, so tera's `{%-`/`-%}` trimming sees exactly the nodes it saw before and renders
/// byte-identical output (the `renders_like_the_original` test checks every embedded template).
/// `{% raw %}` blocks, tags and comments are kept as they are.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    pub skeleton: String,
    /// The variables the skeleton refers to, with their text.
    pub texts: Vec<(String, String)>,
}

/// Fold the `if` chains of `body` that `ctx` decides (see [`super::fold`]), then split it into a
/// skeleton and its texts; `next` numbers the variables (unique across calls).
pub fn prepare(body: &str, ctx: &tera::Context, next: &mut usize) -> Prepared {
    let folded = super::fold::fold(body, ctx);
    skeleton(&folded, next)
}

fn skeleton(body: &str, next: &mut usize) -> Prepared {
    let mut out = Prepared {
        skeleton: String::with_capacity(body.len() / 4 + 64),
        texts: Vec::new(),
    };
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < body.len() {
        // A text run ends where a tag, an expression or a comment starts.
        let start = i;
        let mut j = i;
        while j < body.len() {
            if bytes[j] == b'{' && j + 1 < body.len() && matches!(bytes[j + 1], b'{' | b'%' | b'#')
            {
                break;
            }
            j += 1;
        }
        if j > start {
            push_text(&mut out, &body[start..j], next);
        }
        if j >= body.len() {
            break;
        }
        // Copy the tag through its closing delimiter.
        let close = match bytes[j + 1] {
            b'{' => "}}",
            b'%' => "%}",
            _ => "#}",
        };
        let Some(end) = body[j + 2..].find(close).map(|e| j + 2 + e + 2) else {
            // Unclosed: leave the rest to tera (it reports the error).
            out.skeleton.push_str(&body[j..]);
            break;
        };
        let tag = &body[j..end];
        out.skeleton.push_str(tag);
        i = end;
        if close == "%}" && tag_name(tag) == "raw" {
            // Keep a raw block verbatim, through its `endraw` tag.
            let mut k = i;
            loop {
                let Some(open) = body[k..].find("{%").map(|o| k + o) else {
                    out.skeleton.push_str(&body[i..]);
                    return out;
                };
                let Some(shut) = body[open + 2..].find("%}").map(|e| open + 2 + e + 2) else {
                    out.skeleton.push_str(&body[i..]);
                    return out;
                };
                if tag_name(&body[open..shut]) == "endraw" {
                    out.skeleton.push_str(&body[i..shut]);
                    i = shut;
                    break;
                }
                k = open + 2;
            }
        }
    }
    out
}

/// The word of a `{% ... %}` tag (`raw` for `{%- raw -%}`).
fn tag_name(tag: &str) -> &str {
    tag.trim_start_matches("{%")
        .trim_end_matches("%}")
        .trim_start_matches('-')
        .trim_end_matches('-')
        .trim()
}

fn push_text(out: &mut Prepared, text: &str, next: &mut usize) {
    let core = text.trim();
    if core.is_empty() {
        out.skeleton.push_str(text);
        return;
    }
    let lead = text.len() - text.trim_start().len();
    let core_end = lead + core.len();
    let name = format!("_{next}");
    *next += 1;
    out.skeleton.push_str(&text[..lead]);
    out.skeleton.push_str("{{ ");
    out.skeleton.push_str(&name);
    out.skeleton.push_str(" }}");
    out.skeleton.push_str(&text[core_end..]);
    out.texts.push((name, core.to_string()));
}

/// Whether a template body is plain text (no tera syntax at all): it renders to itself.
pub fn is_static(body: &str) -> bool {
    !(body.contains("{{") || body.contains("{%") || body.contains("{#"))
}

/// The bodies of every embedded Rust template that is plain text: they render to themselves, so
/// their output is known to parse (the `static_rust_templates_parse` test checks it).
pub fn static_rust_bodies() -> Vec<&'static str> {
    fn walk(dir: &'static Dir<'static>, out: &mut Vec<&'static str>) {
        for file in dir.files() {
            if !file.path().to_string_lossy().ends_with(".rs.tera") {
                continue;
            }
            if let Some(body) = file.contents_utf8().map(strip_front_matter)
                && is_static(body)
            {
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

    fn contexts() -> Vec<tera::Context> {
        let mut out = Vec::new();
        for variant in 0..8u32 {
            let bit = |n: u32| variant & (1 << n) != 0;
            let mut c = tera::Context::new();
            for (k, v) in [
                ("project_name", "memcached-operator"),
                ("crate_name", "memcached_operator"),
                ("domain", "example.com"),
                (
                    "repo",
                    if bit(0) {
                        ""
                    } else {
                        "github.com/acme/memcached-operator"
                    },
                ),
                ("owner", if bit(1) { "" } else { "Acme" }),
                ("license", if bit(2) { "none" } else { "apache2" }),
                ("year", "2026"),
                ("cli_version", "0.1.0"),
                ("operator_rs_git", ""),
                ("k8s_feature", "v1_37"),
                ("image", "controller:latest"),
                ("group", "cache"),
                ("version", "v1alpha1"),
                ("kind", "Memcached"),
                ("kind_snake", "memcached"),
                ("kind_lower", "memcached"),
                ("plural", "memcacheds"),
                (
                    "full_group",
                    if bit(1) { "apps" } else { "cache.example.com" },
                ),
                ("api_version", "cache.example.com/v1alpha1"),
                ("rust_type", "crate::api::v1alpha1::Memcached"),
                ("finalizer", "cache.example.com/finalizer"),
                ("container_image", if bit(0) { "memcached:1.6" } else { "" }),
            ] {
                c.insert(k, v);
            }
            for (i, k) in [
                "namespaced",
                "resource",
                "controller",
                "builtin",
                "deploy_image",
                "first_in_version",
            ]
            .iter()
            .enumerate()
            {
                c.insert(*k, &!(variant + i as u32).is_multiple_of(3));
            }
            if bit(0) {
                c.insert("container_port", &11211);
                c.insert("run_as_user", &1001);
                c.insert("container_command", &vec!["memcached", "-m=64"]);
            } else {
                c.insert("container_command", &Vec::<String>::new());
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn renders_like_the_original() {
        let mut compared = 0;
        for cmd in ["init", "api"] {
            for t in templates_for(cmd).unwrap() {
                for ctx in contexts() {
                    let Ok(want) = tera::Tera::one_off(t.body, &ctx, false) else {
                        continue;
                    };
                    let mut next = 0;
                    let p = prepare(t.body, &ctx, &mut next);
                    assert!(p.skeleton.len() <= t.body.len() + 40 * p.texts.len());
                    let mut full = ctx.clone();
                    for (k, v) in &p.texts {
                        full.insert(k.clone(), v);
                    }
                    let got = tera::Tera::one_off(&p.skeleton, &full, false)
                        .unwrap_or_else(|e| panic!("{}: {e:?}", t.name));
                    assert_eq!(got, want, "{}", t.name);
                    compared += 1;
                }
            }
        }
        assert!(compared > 100, "{compared}");
    }

    #[test]
    fn prepare_keeps_whitespace_control_and_raw_blocks() {
        let body = "a  \n  {%- if x -%}\n  b {{ y }} c\n{% endif %}\n{% raw %}{{ z }}{% endraw %}\n{# c #}d";
        let mut next = 0;
        let p = prepare(body, &tera::Context::new(), &mut next);
        assert!(
            p.skeleton.contains("{% raw %}{{ z }}{% endraw %}"),
            "{}",
            p.skeleton
        );
        let mut ctx = tera::Context::new();
        ctx.insert("x", &true);
        ctx.insert("y", "Y");
        let want = tera::Tera::one_off(body, &ctx, false).unwrap();
        for (k, v) in &p.texts {
            ctx.insert(k.clone(), v);
        }
        assert_eq!(tera::Tera::one_off(&p.skeleton, &ctx, false).unwrap(), want);
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
        crate::commands::duplicate_type_name(file)
    }

    #[test]
    fn every_embedded_template_declares_itself() {
        for cmd in ["init", "api"] {
            let ts = templates_for(cmd).unwrap();
            assert!(!ts.is_empty(), "no templates for {cmd}");
        }
    }
}
