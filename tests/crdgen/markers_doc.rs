//! `docs/markers.md` is true: every row of its tables is parsed (a row that does not parse fails
//! the test, so the page cannot rot), its Rust snippets are built into kinds of a project made by
//! `operator-rs init` and `create api`, one `operator-rs generate crds` run writes their CRDs, and
//! each expected fragment must be in the CRD of its kind. The "guesses" the page says are refused
//! must be refused, with the text it quotes, and those it warns about warned about. The kinds
//! (all but the refused guesses) are also written to
//! `fixtures/crdgen/markers_doc.rs`, which `tests/crdgen/differential.rs` compiles with kube-derive
//! and compares with the static reader; this test fails when that file is not what the page
//! renders to (`UPDATE_MARKERS_FIXTURE=1 cargo test --test crdgen markers_doc` rewrites it).

use crate::common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

const DOC: &str = "docs/markers.md";
const FIXTURE: &str = "fixtures/crdgen/markers_doc.rs";
/// Where the cases go in the project (a module of the version `create api` made).
const MODULE_FILE: &str = "src/api/v1/markers_doc.rs";
const GROUP: &str = "markers.example.com";

/// Every controller-gen CRD marker the page must have a row for (controller-tools
/// `pkg/crd/markers`: validation, CRD, topology and package markers).
const MARKERS: &[&str] = &[
    "+kubebuilder:validation:Maximum",
    "+kubebuilder:validation:Minimum",
    "+kubebuilder:validation:ExclusiveMaximum",
    "+kubebuilder:validation:ExclusiveMinimum",
    "+kubebuilder:validation:MultipleOf",
    "+kubebuilder:validation:MinProperties",
    "+kubebuilder:validation:MaxProperties",
    "+kubebuilder:validation:MinLength",
    "+kubebuilder:validation:MaxLength",
    "+kubebuilder:validation:Pattern",
    "+kubebuilder:validation:MinItems",
    "+kubebuilder:validation:MaxItems",
    "+kubebuilder:validation:UniqueItems",
    "+kubebuilder:validation:Enum",
    "+kubebuilder:validation:Format",
    "+kubebuilder:validation:Type",
    "+kubebuilder:validation:XPreserveUnknownFields",
    "+kubebuilder:validation:XEmbeddedResource",
    "+kubebuilder:validation:XIntOrString",
    "+kubebuilder:validation:XValidation:rule=",
    "+kubebuilder:validation:XValidation:message=",
    "+kubebuilder:validation:XValidation:messageExpression=",
    "+kubebuilder:validation:XValidation:reason=",
    "+kubebuilder:validation:XValidation:fieldPath=",
    "+kubebuilder:validation:XValidation:optionalOldSelf=",
    "+kubebuilder:validation:items:Maximum",
    "+kubebuilder:validation:items:Enum",
    "+kubebuilder:validation:items:XValidation",
    "+kubebuilder:validation:items:MultipleOf",
    "+kubebuilder:validation:Required",
    "+kubebuilder:validation:Optional",
    "+optional",
    "+required",
    "+k8s:optional",
    "+k8s:required",
    "+nullable",
    "+default",
    "+kubebuilder:default",
    "+kubebuilder:example",
    "+kubebuilder:validation:EmbeddedResource",
    "+kubebuilder:validation:Schemaless",
    "+k8s:immutable",
    "+kubebuilder:validation:ExactlyOneOf",
    "+kubebuilder:validation:AtMostOneOf",
    "+kubebuilder:validation:AtLeastOneOf",
    "+k8s:enum",
    "+kubebuilder:pruning:PreserveUnknownFields",
    "+kubebuilder:title",
    "+kubebuilder:externalDocs",
    "+kubebuilder:subresource:status",
    "+kubebuilder:subresource:scale",
    "+kubebuilder:printcolumn",
    "+kubebuilder:resource:path=",
    "+kubebuilder:resource:singular=",
    "+kubebuilder:resource:shortName=",
    "+kubebuilder:resource:categories=",
    "+kubebuilder:resource:scope=",
    "+kubebuilder:storageversion",
    "+kubebuilder:skipversion",
    "+kubebuilder:unservedversion",
    "+kubebuilder:deprecatedversion",
    "+kubebuilder:metadata:annotations=",
    "+kubebuilder:metadata:labels=",
    "+kubebuilder:selectablefield",
    "+listType=atomic",
    "+listType=set",
    "+listType=map",
    "+listMapKey=",
    "+mapType=atomic",
    "+structType=atomic",
    "+groupName=",
    "+versionName=",
    "+kubebuilder:skip",
];

/// One code span of a Rust cell, by where it goes.
#[derive(Debug, Clone, PartialEq)]
enum Snippet {
    /// `... pub name: Type`: a field of the spec struct.
    Field(String),
    /// `#[kube(...)]`: on the `CustomResource` struct.
    KindAttr(String),
    /// Any other attribute: on the spec struct.
    SpecAttr(String),
    /// `fn`, `struct`, `enum`: next to the spec struct.
    Item(String),
}

/// Where a check looks in a CRD, and what it expects there.
#[derive(Debug, Clone)]
enum Check {
    /// `generate crds` fails and says this.
    Refused(String),
    /// `generate crds` succeeds and warns this.
    Warns(String),
    /// The JSON is contained in the CRD at this place.
    At { place: String, want: Value },
}

/// One kind to generate: one alternative of a row.
#[derive(Debug, Clone)]
struct Case {
    /// Line of the page (1-based).
    line: usize,
    marker: String,
    snippets: Vec<Snippet>,
    checks: Vec<Check>,
}

/// The page, parsed: the cases of the marker tables, the guesses, and every marker named.
#[derive(Debug, Default)]
struct Page {
    cases: Vec<Case>,
    guesses: Vec<Case>,
    markers: Vec<String>,
}

/// The code spans of a Markdown cell (CommonMark: a run of n backticks up to the next run of
/// exactly n), with the text between them.
fn spans(cell: &str) -> Result<Vec<(String, String)>, String> {
    let chars: Vec<char> = cell.chars().collect();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            text.push(chars[i]);
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|c| **c == '`').count();
        let start = i + n;
        let mut j = start;
        let close = loop {
            if j >= chars.len() {
                break None;
            }
            if chars[j] == '`' {
                let m = chars[j..].iter().take_while(|c| **c == '`').count();
                if m == n {
                    break Some(j);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        let Some(close) = close else {
            return Err(format!("an unclosed code span in `{cell}`"));
        };
        let mut code: String = chars[start..close].iter().collect();
        if code.len() > 2 && code.starts_with(' ') && code.ends_with(' ') {
            code = code[1..code.len() - 1].to_string();
        }
        out.push((std::mem::take(&mut text), code));
        i = close + n;
    }
    Ok(out)
}

/// The cells of a table row (GFM: `\|` is a `|` inside a cell).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

fn classify(code: &str) -> Result<Snippet, String> {
    let code = code.trim();
    let is_item = code.starts_with("fn ")
        || code.contains("pub struct ")
        || code.contains("pub enum ")
        || code.starts_with("struct ")
        || code.starts_with("enum ");
    if is_item {
        return Ok(Snippet::Item(code.to_string()));
    }
    if let Some(at) = code.rfind("pub ")
        && code[at + 4..].contains(':')
        && !code[at..].contains(']')
    {
        return Ok(Snippet::Field(code.to_string()));
    }
    if code.starts_with("#[kube(") && code.ends_with(")]") {
        return Ok(Snippet::KindAttr(code.to_string()));
    }
    if code.starts_with("#[") && code.ends_with(']') {
        return Ok(Snippet::SpecAttr(code.to_string()));
    }
    Err(format!(
        "`{code}` is neither a field (`pub name: Type`), an attribute (`#[...]`) nor an item (`fn`, `pub struct`, `pub enum`)"
    ))
}

/// The alternatives of a Rust cell: its spans, split where the text between them says "or".
fn alternatives(cell: &str) -> Result<Vec<Vec<Snippet>>, String> {
    let mut out: Vec<Vec<Snippet>> = vec![Vec::new()];
    for (before, code) in spans(cell)? {
        if before.split_whitespace().any(|w| w == "or") && !out.last().unwrap().is_empty() {
            out.push(Vec::new());
        }
        out.last_mut().unwrap().push(classify(&code)?);
    }
    out.retain(|a| !a.is_empty());
    for a in &out {
        if !a.iter().any(|s| !matches!(s, Snippet::Item(_))) {
            return Err("an alternative with only helper items (no field or attribute)".into());
        }
    }
    Ok(out)
}

fn check(code: &str) -> Result<Check, String> {
    let (place, rest) = code.split_once(' ').ok_or_else(|| {
        format!("`{code}` is not `<place> <JSON>`, `refused <text>` nor `warns <text>`")
    })?;
    match place {
        "refused" => return Ok(Check::Refused(rest.trim().to_string())),
        "warns" => return Ok(Check::Warns(rest.trim().to_string())),
        _ => {}
    }
    place_path(place)?;
    let want = serde_json::from_str(rest.trim())
        .map_err(|e| format!("`{rest}` in `{code}` is not JSON: {e}"))?;
    Ok(Check::At {
        place: place.to_string(),
        want,
    })
}

fn checks(cell: &str, refusals: bool) -> Result<Vec<Check>, String> {
    let mut out = Vec::new();
    for (_, code) in spans(cell)? {
        let c = check(&code)?;
        if matches!(c, Check::Refused(_) | Check::Warns(_)) && !refusals {
            return Err(format!(
                "`{code}`: a marker row shows what is generated; refusals and warnings go in the guesses table"
            ));
        }
        out.push(c);
    }
    if out.is_empty() {
        return Err(format!("no check in `{cell}`"));
    }
    Ok(out)
}

/// The JSON pointer of a place: `spec.ports[].name` → the schema of `name` in the items.
fn place_path(place: &str) -> Result<Vec<String>, String> {
    let (head, mut rest) = match place.find(['.', '[']) {
        Some(i) => (&place[..i], &place[i..]),
        None => (place, ""),
    };
    let schema = ["spec", "versions", "0", "schema", "openAPIV3Schema"];
    let mut path: Vec<String> = match head {
        "crd" => vec![],
        "version" => ["spec", "versions", "0"].map(String::from).to_vec(),
        "schema" => schema.map(String::from).to_vec(),
        "spec" | "status" => schema
            .iter()
            .chain(&["properties", head])
            .map(|s| s.to_string())
            .collect(),
        other => {
            return Err(format!(
                "unknown place `{other}` (crd, version, schema, spec, status)"
            ));
        }
    };
    if !rest.is_empty() && !matches!(head, "spec" | "status") {
        return Err(format!(
            "`{place}`: only spec and status have properties and items"
        ));
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[]") {
            path.push("items".into());
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Err(format!("`{place}`: an empty property name"));
            }
            path.push("properties".into());
            path.push(r[..end].to_string());
            rest = &r[end..];
        } else {
            return Err(format!("`{place}`: expected `.name` or `[]` at `{rest}`"));
        }
    }
    Ok(path)
}

fn parse_page(text: &str) -> Result<Page, Vec<String>> {
    let mut page = Page::default();
    let mut errors = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut table: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        if !line.trim_start().starts_with('|') {
            table = None;
            continue;
        }
        let row = cells(line);
        if table.is_none() {
            let is_header = lines
                .get(i + 1)
                .is_some_and(|l| l.trim_start().starts_with("|---"));
            if !is_header {
                errors.push(format!("{DOC}:{n}: a table row outside a table"));
                continue;
            }
            table = Some(match row[0].as_str() {
                "controller-gen marker" if row.len() == 4 => "markers",
                "You might write" if row.len() == 3 => "guesses",
                _ => {
                    errors.push(format!(
                        "{DOC}:{n}: a table this test cannot read (its header is neither `controller-gen marker | Rust | Generated (checked) | Notes` nor `You might write | What happens (checked) | Instead`)"
                    ));
                    "unknown"
                }
            });
            continue;
        }
        if line.trim_start().starts_with("|---") {
            continue;
        }
        let parsed = match table {
            Some("markers") => marker_row(n, &row, &mut page),
            Some("guesses") => guess_row(n, &row, &mut page),
            _ => Ok(()),
        };
        if let Err(e) = parsed {
            errors.push(format!("{DOC}:{n}: {e}"));
        }
    }
    if errors.is_empty() {
        Ok(page)
    } else {
        Err(errors)
    }
}

fn marker_row(line: usize, row: &[String], page: &mut Page) -> Result<(), String> {
    let [marker, rust, generated, _notes] = row else {
        return Err(format!("{} cells; a marker row has 4", row.len()));
    };
    let names: Vec<String> = spans(marker)?.into_iter().map(|(_, c)| c).collect();
    if names.is_empty() || names.iter().any(|m| !m.starts_with('+')) {
        return Err(format!(
            "the first cell must name markers as code (`+kubebuilder:...`): `{marker}`"
        ));
    }
    page.markers.extend(names.iter().cloned());
    let not_supported = rust.to_lowercase().starts_with("not supported");
    let alts = alternatives(rust)?;
    if alts.is_empty() {
        if !not_supported {
            return Err(format!(
                "no Rust snippet in `{rust}`, and it does not say \"not supported\""
            ));
        }
        if generated != "—" {
            return Err(format!(
                "a row with no snippet says `—` in its check cell, not `{generated}`"
            ));
        }
        return Ok(());
    }
    let checks = checks(generated, false)?;
    for snippets in alts {
        page.cases.push(Case {
            line,
            marker: names.join(", "),
            snippets,
            checks: checks.clone(),
        });
    }
    Ok(())
}

fn guess_row(line: usize, row: &[String], page: &mut Page) -> Result<(), String> {
    let [guess, happens, _instead] = row else {
        return Err(format!("{} cells; a guess row has 3", row.len()));
    };
    let mut alts = alternatives(guess)?;
    if alts.len() != 1 {
        return Err(format!(
            "a guess is one snippet (with its helpers): `{guess}`"
        ));
    }
    page.guesses.push(Case {
        line,
        marker: "a guess".into(),
        snippets: alts.remove(0),
        checks: checks(happens, true)?,
    });
    Ok(())
}

/// The kind name of the n-th case.
fn kind_of(n: usize) -> String {
    format!("Case{n}")
}

/// The snippets of `case` of one sort, each between `before` and `after`.
fn joined(case: &Case, sort: fn(&Snippet) -> Option<&String>, before: &str, after: &str) -> String {
    case.snippets
        .iter()
        .filter_map(sort)
        .map(|code| format!("{before}{code}{after}"))
        .collect()
}

/// The module of one case, as `operator-rs` and kube-derive both read it.
fn render_case(out: &mut String, n: usize, case: &Case) {
    let kind = kind_of(n);
    let uses_x_kube = case.snippets.iter().any(|s| match s {
        Snippet::Field(c) | Snippet::SpecAttr(c) => c.contains("#[x_kube("),
        _ => false,
    });
    let schema_derive = if uses_x_kube {
        "KubeSchema"
    } else {
        "JsonSchema"
    };
    let kind_attrs = joined(
        case,
        |s| match s {
            Snippet::KindAttr(c) => Some(c),
            _ => None,
        },
        "",
        "\n",
    );
    let spec_attrs = joined(
        case,
        |s| match s {
            Snippet::SpecAttr(c) => Some(c),
            _ => None,
        },
        "",
        "\n",
    );
    let fields = joined(
        case,
        |s| match s {
            Snippet::Field(c) => Some(c),
            _ => None,
        },
        "",
        ",\n",
    );
    let items = joined(
        case,
        |s| match s {
            Snippet::Item(c) => Some(c),
            _ => None,
        },
        "\n",
        "\n",
    );
    out.push_str(&format!(
        "\n/// {DOC} line {}: `{}`.\npub mod case_{n} {{\n",
        case.line,
        case.marker.replace('`', "'")
    ));
    out.push_str("#![allow(unused_imports)]\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;\nuse k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\nuse kube::{CustomResource, KubeSchema};\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\nuse std::collections::BTreeMap;\n\n");
    out.push_str(&format!(
        "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, {schema_derive})]\n#[kube(group = \"{GROUP}\", version = \"v1\", kind = \"{kind}\")]\n{kind_attrs}#[serde(rename_all = \"camelCase\")]\n{spec_attrs}pub struct {kind}Spec {{\n{fields}}}\n{items}}}\n"
    ));
}

/// What one `generate crds` run builds: the cases of the marker tables, then the guesses it
/// accepts (so kube-derive compiles those too, and shows that it does what the page says).
fn generated(page: &Page) -> Vec<&Case> {
    let accepted = page
        .guesses
        .iter()
        .filter(|g| !g.checks.iter().any(|c| matches!(c, Check::Refused(_))));
    page.cases.iter().chain(accepted).collect()
}

/// The fixture: every case of [`generated`], and `crds()` listing their CRDs.
fn render_fixture(page: &Page) -> String {
    let mut out = String::from(
        "//! Generated by `tests/crdgen/markers_doc.rs` from `docs/markers.md`: one kind per Rust alternative of\n//! each row (`UPDATE_MARKERS_FIXTURE=1 cargo test --test crdgen markers_doc` rewrites it). Compiled with\n//! kube-derive by `tests/crdgen/differential.rs`.\n",
    );
    let cases = generated(page);
    for (n, case) in cases.iter().enumerate() {
        render_case(&mut out, n + 1, case);
    }
    out.push_str("\n/// Every kind above, as kube-derive builds its CRD.\npub fn crds() -> Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> {\nuse kube::CustomResourceExt;\nvec![\n");
    for n in 1..=cases.len() {
        out.push_str(&format!("case_{n}::{}::crd(),\n", kind_of(n)));
    }
    out.push_str("]\n}\n");
    rustfmt(&out)
}

fn rustfmt(source: &str) -> String {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rustfmt runs (it comes with the toolchain)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "rustfmt refuses the rendered cases (a snippet of {DOC} is not Rust?):\n{}\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Is `want` in `got`: objects by key (`null`: absent), arrays element by element, numbers as
/// numbers.
fn contains(got: Option<&Value>, want: &Value, at: &str) -> Result<(), String> {
    match (got, want) {
        (None, Value::Null) => Ok(()),
        (Some(g), Value::Null) => Err(format!("{at}: expected absent, found {g}")),
        (None, _) => Err(format!("{at}: absent, expected {want}")),
        (Some(Value::Object(g)), Value::Object(w)) => {
            for (k, v) in w {
                contains(g.get(k), v, &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (Some(Value::Array(g)), Value::Array(w)) => {
            if g.len() != w.len() {
                return Err(format!(
                    "{at}: {} elements, expected {}: {}",
                    g.len(),
                    w.len(),
                    Value::Array(g.clone())
                ));
            }
            for (i, (gi, wi)) in g.iter().zip(w).enumerate() {
                contains(Some(gi), wi, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Some(Value::Number(g)), Value::Number(w)) if g.as_f64() == w.as_f64() => Ok(()),
        (Some(g), w) if g == w => Ok(()),
        (Some(g), w) => Err(format!("{at}: found {g}, expected {w}")),
    }
}

fn at<'a>(crd: &'a Value, place: &str) -> Option<&'a Value> {
    let mut v = crd;
    for step in place_path(place).expect("checked when parsed") {
        v = match v {
            Value::Array(a) => a.get(step.parse::<usize>().ok()?)?,
            other => other.get(&step)?,
        };
    }
    Some(v)
}

/// Every CRD under `config/crd/bases`, by kind.
fn crds_by_kind(dir: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir.join("config/crd/bases")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") && !p.ends_with("kustomization.yaml") {
            let crd: Value = serde_saphyr::from_str(&std::fs::read_to_string(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.insert(
                crd["spec"]["names"]["kind"].as_str().unwrap().to_string(),
                crd,
            );
        }
    }
    out
}

fn describe(case: &Case) -> String {
    format!("{DOC}:{} ({})", case.line, case.marker)
}

fn read_page() -> Page {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(DOC)).unwrap();
    match parse_page(&text) {
        Ok(p) => p,
        Err(errors) => panic!(
            "{DOC} has rows this test cannot read:\n{}",
            errors.join("\n")
        ),
    }
}

/// A project with one kind made by `create api`, where the cases are written.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::init_project("markers");
    let dir = common::project_dir(&tmp, "markers");
    common::ok(
        &dir,
        &common::words("create api --group probe --version v1 --kind Probe"),
    );
    let mod_rs = dir.join("src/api/v1/mod.rs");
    let mut text = std::fs::read_to_string(&mod_rs).unwrap();
    text.push_str("mod markers_doc;\n");
    std::fs::write(&mod_rs, text).unwrap();
    (tmp, dir)
}

#[test]
fn every_controller_gen_marker_has_a_row() {
    let page = read_page();
    let missing: Vec<&&str> = MARKERS
        .iter()
        .filter(|m| !page.markers.iter().any(|p| p.starts_with(**m)))
        .collect();
    assert!(missing.is_empty(), "{DOC} has no row for {missing:?}");
}

#[test]
fn the_fixture_is_what_the_page_renders() {
    let page = read_page();
    let rendered = render_fixture(&page);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    if std::env::var_os("UPDATE_MARKERS_FIXTURE").is_some() {
        std::fs::write(&path, &rendered).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == rendered,
        "{FIXTURE} is not what {DOC} renders to; rewrite it with `UPDATE_MARKERS_FIXTURE=1 cargo test --test crdgen markers_doc` (and run `cargo test --test crdgen differential` to compile it with kube-derive)"
    );
}

#[test]
fn every_row_generates_what_it_says() {
    let page = read_page();
    let (_tmp, dir) = project();
    let cases = generated(&page);
    std::fs::write(dir.join(MODULE_FILE), render_fixture(&page)).unwrap();
    let run = common::run(&dir, &["generate", "crds"]);
    assert_eq!(
        run.code, 0,
        "generate crds refused the cases of {DOC}:\n{}\n(the line is in {MODULE_FILE}, the same as {FIXTURE}; each case's comment names its line of {DOC})",
        run.stderr
    );
    let crds = crds_by_kind(&dir);
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let kind = kind_of(i + 1);
        let Some(crd) = crds.get(&kind) else {
            failures.push(format!("{}: no CRD for {kind}", describe(case)));
            continue;
        };
        for c in &case.checks {
            let found = match c {
                Check::At { place, want } => contains(at(crd, place), want, place),
                Check::Warns(says) if run.stderr.contains(says.as_str()) => Ok(()),
                Check::Warns(says) => Err(format!(
                    "no warning saying {says:?}; stderr:\n{}",
                    run.stderr
                )),
                Check::Refused(_) => Ok(()),
            };
            if let Err(e) = found {
                failures.push(format!("{} ({kind}): {e}", describe(case)));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_guesses_it_refuses_are_refused() {
    let page = read_page();
    let (_tmp, dir) = project();
    let mut failures = Vec::new();
    for g in &page.guesses {
        let Some(says) = g.checks.iter().find_map(|c| match c {
            Check::Refused(s) => Some(s),
            _ => None,
        }) else {
            continue;
        };
        let mut source = String::new();
        render_case(&mut source, 1, g);
        std::fs::write(dir.join(MODULE_FILE), rustfmt(&source)).unwrap();
        let run = common::run(&dir, &["generate", "crds"]);
        let located = run.stderr.contains(&format!("{MODULE_FILE}:"));
        if run.code == 0 || !run.stderr.contains(says.as_str()) || !located {
            failures.push(format!(
                "{}: expected a refusal at {MODULE_FILE}:line:col saying {says:?}; exit {}, stderr:\n{}",
                describe(g),
                run.code,
                run.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_row_the_test_cannot_read_fails() {
    let bad = [
        // A Rust cell with prose in a code span.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `range` | `spec {}` | |\n",
        // No check for a snippet.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `pub a: i32` | | |\n",
        // A check that is not JSON.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `pub a: i32` | `spec.a {max: 1}` | |\n",
        // An unknown place.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `pub a: i32` | `field.a {}` | |\n",
        // "not supported" with no snippet and a check.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | not supported | `spec {}` | |\n",
        // Neither a snippet nor "not supported".
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | use a CEL rule | — | |\n",
        // A refusal in a marker table.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `pub a: i32` | `refused no` | |\n",
        // A table of another shape.
        "| Marker | Rust |\n|---|---|\n| `+x` | `pub a: i32` |\n",
        // A missing cell.
        "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `pub a: i32` | `spec {}` |\n",
    ];
    for text in bad {
        assert!(parse_page(text).is_err(), "parsed: {text}");
    }
    let good = "| controller-gen marker | Rust | Generated (checked) | Notes |\n|---|---|---|---|\n| `+x` | `#[schemars(range(max = 1))] pub a: i32` or `pub b: Option<E>` with `pub enum E { A }` | `spec.a[].b {\"x\": [1, null]}` | |\n";
    let page = parse_page(good).unwrap();
    assert_eq!(page.cases.len(), 2);
    assert_eq!(
        page.cases[1].snippets,
        vec![
            Snippet::Field("pub b: Option<E>".into()),
            Snippet::Item("pub enum E { A }".into())
        ]
    );
}
