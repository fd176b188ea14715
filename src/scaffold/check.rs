//! The check of the Rust a command is about to write: every file parses, and no file declares
//! one name twice at its top level (a kind clashing with a generated name). A refused check
//! writes nothing, rather than leave a project that does not compile.
//!
//! It parses at item level, and only the items it cannot vouch for: a file is cut into its
//! top-level items (`entries::rust_items`), and an item byte-identical to a plain-text top-level
//! item of an embedded template (of a whole file, not a fragment) is known to parse (the `template_items_are_known_good` test parses each
//! one and checks the names read from its head), so only the items rendered from the context
//! (and those a user wrote) are parsed. Items parse on their own as they do in their file, so
//! the file parses when each of them does; when one does not, the whole file is parsed, which
//! gives the error with its file:line:col.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use anyhow::{Result, anyhow, bail};

use crate::workspace::rust_items::{
    self, Namespace, duplicate_name, file_declared_names, first_duplicate,
};

/// A file's verdict: `Err` the parse error; `Ok` the first name declared twice, if any.
type Verdict = std::result::Result<Option<String>, String>;

/// Refuse when a Rust file of `pending` does not parse or declares a name twice; `kind` (the
/// kind the command adds) names the fix of a clash. `parsed`: the verdicts already known of some
/// of these files, by path (the CRD reader parses most of what `create api` writes: see
/// [`crate::workspace::Overlay::parsed`]).
pub fn check(
    pending: &BTreeMap<PathBuf, String>,
    parsed: &HashMap<PathBuf, Option<String>>,
    kind: Option<&str>,
) -> Result<()> {
    let whole_templates = super::template::static_rust_bodies();
    for (path, text) in pending {
        if path.extension().is_none_or(|e| e != "rs")
            // The vendored runtime is this binary's own copy of a crate that compiles (and the
            // `vendored_runtime` test holds it byte-identical).
            || path.starts_with(crate::vendor::DIR)
            // A plain-text template's output (the `static_rust_templates_are_valid` test).
            || whole_templates.contains(&text.as_str())
        {
            continue;
        }
        // The same text parsed already in this run (by the CRD reader): its verdict.
        let verdict = match parsed.get(path) {
            Some(dup) => Ok(dup.clone()),
            None => verdict(path, text),
        };
        if let Some(dup) = verdict.map_err(|e| anyhow!(e))? {
            let hint = kind
                .map(|k| {
                    format!(
                        "pick another --kind, e.g. `{k}Resource`, or rename `{dup}` in that file"
                    )
                })
                .unwrap_or_else(|| format!("rename one `{dup}`"));
            bail!(
                "{}: the name `{dup}` would be defined twice, which Rust refuses; {hint}. Nothing was written.",
                path.display()
            );
        }
    }
    Ok(())
}

/// A file's verdict from its items: the known ones vouched for, the others parsed; the whole
/// file parsed when that does not settle it.
fn verdict(path: &Path, text: &str) -> Verdict {
    let Some(items) = rust_items::split(text, false) else {
        return whole_file(path, text);
    };
    let mut names = Vec::new();
    for (at, item) in items.iter().enumerate() {
        let trimmed = item.trim();
        if trimmed.is_empty() {
            continue;
        }
        match KNOWN_GOOD.get(trimmed) {
            Some(known) if at == 0 || !known.inner => names.extend(known.names.iter().cloned()),
            _ => match crate::syntax::parse_file(item) {
                Ok((file, _)) if at == 0 || file.attrs.is_empty() => {
                    names.extend(file_declared_names(&file))
                }
                _ => return whole_file(path, text),
            },
        }
    }
    Ok(first_duplicate(names))
}

fn whole_file(path: &Path, text: &str) -> Verdict {
    match crate::syntax::parse_file(text) {
        Ok((file, _)) => Ok(duplicate_name(&file)),
        Err(e) => {
            let at = e.span().start();
            Err(format!(
                "{}:{}:{}: the generated file does not parse ({e}); this is a bug in operator-rs, or a user edit left the file unparseable",
                path.display(),
                at.line,
                at.column + 1
            ))
        }
    }
}

/// A plain-text item of a template: what it declares, and whether it opens with an inner
/// attribute (then it is known good only at the start of a file).
struct Known {
    names: Vec<(Namespace, String)>,
    inner: bool,
}

/// Every plain-text item of the embedded Rust templates, by its text without surrounding
/// whitespace.
static KNOWN_GOOD: LazyLock<HashMap<&'static str, Known>> = LazyLock::new(|| {
    let mut out = HashMap::new();
    for body in super::template::rust_file_bodies() {
        for item in rust_items::split(body, true).unwrap_or_default() {
            let item = item.trim();
            if item.is_empty() || !super::template::is_static(item) {
                continue;
            }
            let names = rust_items::declared_names(item);
            let inner = rust_items::has_inner_attribute(item);
            out.insert(item, Known { names, inner });
        }
    }
    out
});

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(src: &str) -> Option<String> {
        duplicate_name(&syn::parse_str(src).unwrap())
    }

    #[test]
    fn finds_names_declared_twice_in_one_namespace() {
        assert_eq!(dup("use a::{B, C};\nstruct B;").as_deref(), Some("B"));
        assert_eq!(dup("use a::{B as D, C};\nstruct B;\nuse x::*;"), None);
        assert_eq!(
            dup("fn t() {}\nmod m { fn t() {} }\nasync fn t() {}").as_deref(),
            Some("t")
        );
        // A function and a module of one name live in two namespaces.
        assert_eq!(dup("fn t() {}\nmod t {}"), None);
        assert_eq!(dup("const _: () = ();\nconst _: () = ();"), None);
    }

    /// Every plain-text item of a template parses alone (as it does in its file), declares
    /// what its head says, and is a file's start only where it opens with an inner attribute.
    #[test]
    fn template_items_are_known_good() {
        assert!(KNOWN_GOOD.len() > 50, "{}", KNOWN_GOOD.len());
        for (text, known) in KNOWN_GOOD.iter() {
            let file: syn::File = syn::parse_file(text)
                .unwrap_or_else(|e| panic!("a template item does not parse alone ({e}):\n{text}"));
            assert_eq!(known.inner, !file.attrs.is_empty(), "{text}");
            let mut want = file_declared_names(&file);
            let mut got = known.names.clone();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{text}");
        }
    }

    fn check_one(text: &str) -> Result<()> {
        let pending = BTreeMap::from([(PathBuf::from("src/x.rs"), text.to_string())]);
        check(&pending, &HashMap::new(), Some("Memcached"))
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_with_where() {
        // An item cut short, an item cut wrong, an inner attribute past the start.
        for (text, at) in [
            ("fn a() {}\nfn b( {}\n", "src/x.rs:2:"),
            ("fn a() {}\nstruct S { a: u8 }}\n", "src/x.rs:2:"),
            (
                "fn a() {}\n#![allow(dead_code)]\nfn b() {}\n",
                "src/x.rs:2:",
            ),
        ] {
            let err = check_one(text).unwrap_err().to_string();
            assert!(
                err.contains(at) && err.contains("does not parse"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn a_name_twice_is_refused_known_items_included() {
        // A template's own item (known good, not parsed) and a rendered one of the same name.
        let (text, _) = KNOWN_GOOD
            .iter()
            .find(|(_, k)| !k.inner && k.names.iter().any(|(ns, _)| *ns == Namespace::Value))
            .expect("a template function");
        let name = &KNOWN_GOOD[text].names[0].1;
        let clash = format!("{text}\n\nfn {name}() {{}}\n");
        let err = check_one(&clash).unwrap_err().to_string();
        assert!(
            err.contains(&format!("`{name}` would be defined twice")),
            "{err}"
        );
        assert!(check_one(&format!("{text}\n")).is_ok());
    }
}
