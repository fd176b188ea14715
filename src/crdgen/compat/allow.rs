//! The project's allowances for `--check-compat`: `config/compat.yaml`, a file reviewed in the
//! pull request that makes an intended break pass. Its form is crdify's configuration (a list
//! of `validations`, each a rule's `name` and its `enforcement`: `Error`, `Warn` or `None`),
//! narrowed, as crdify cannot, to one CRD, one version and one field (a schema path and
//! everything below it). Every name in it is checked against the rules and the CRDs compared:
//! a malformed file or an allowance naming what does not exist is refused at its line:column
//! with a valid example.

use std::path::Path;

use anyhow::{Result, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{Finding, Rule, Severity};
use crate::crdgen::KindCrd;

/// The file, relative to the project root.
pub const FILE: &str = "config/compat.yaml";

/// A valid file, for messages.
pub const EXAMPLE: &str = "validations:\n  - name: servedVersionRemoval     # a rule of --check-compat (crdify's names)\n    enforcement: Warn              # Error, Warn (reported, does not fail) or None (not reported)\n    crd: cronjobs.batch.example.com  # optional: only this CRD\n    version: v1                    # optional: only this version\n    field: .spec.schedule          # optional: only this schema path and below";

/// What becomes of a finding an allowance matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Fails the check (a warning's rule made fatal).
    Error,
    /// Reported as a warning; never fails the check.
    Warn,
    /// Not reported.
    None,
}

/// One allowance, where it is in the file.
#[derive(Debug, Clone)]
pub struct Allowance {
    pub rule: Rule,
    pub enforcement: Enforcement,
    pub crd: Option<String>,
    pub version: Option<String>,
    pub field: Option<String>,
    /// `config/compat.yaml:<line>:<column>` of its `name`.
    pub at: String,
}

impl Allowance {
    fn matches(&self, f: &Finding) -> bool {
        self.rule == f.rule
            && self.crd.as_ref().is_none_or(|c| *c == f.crd)
            && (self.version.as_ref()).is_none_or(|v| f.version.as_ref() == Some(v))
            && self.field.as_ref().is_none_or(|p| within(&f.path, p))
    }
}

/// Whether schema path `path` is `field` or below it.
fn within(path: &str, field: &str) -> bool {
    let field = field.trim_end_matches('.');
    path == field
        || path
            .strip_prefix(field)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The allowances of the project, in the file's order.
#[derive(Debug, Clone, Default)]
pub struct Allowances(pub Vec<Allowance>);

impl Allowances {
    /// The last allowance of the file that matches `f` (a later line overrides an earlier one).
    pub fn applying(&self, f: &Finding) -> Option<&Allowance> {
        self.0.iter().rev().find(|a| a.matches(f))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Repr {
    #[serde(default)]
    validations: Vec<EntryRepr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryRepr {
    name: Spanned<String>,
    enforcement: Spanned<String>,
    crd: Option<Spanned<String>>,
    version: Option<Spanned<String>>,
    field: Option<Spanned<String>>,
    /// Why the break is intended, for the reviewer (not read).
    #[allow(dead_code)]
    reason: Option<String>,
}

/// `config/compat.yaml` of the project at `root` (none: no allowances), checked against the
/// rules and the CRDs of both revisions.
pub fn load(root: &Path, old: &[KindCrd], new: &[KindCrd]) -> Result<Allowances> {
    let path = root.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Allowances::default()),
        Err(e) => bail!("reading {FILE}: {e}"),
    };
    parse(&text, old, new)
}

/// The allowances of `text` (the file's contents).
pub fn parse(text: &str, old: &[KindCrd], new: &[KindCrd]) -> Result<Allowances> {
    let refuse = |line: u64, column: u64, what: String| -> anyhow::Error {
        anyhow::anyhow!(
            "{FILE}:{line}:{column}: {what}\n  ({FILE} lists allowances for `generate crds --check-compat`, as crdify's configuration does), e.g.\n{}",
            EXAMPLE
                .lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    };
    if text.trim().is_empty() {
        return Ok(Allowances::default());
    }
    let repr: Repr = serde_saphyr::from_str(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
        let message = e.to_string();
        let first = message.lines().next().unwrap_or("").to_string();
        refuse(line, column, format!("not a valid file: {first}"))
    })?;
    let at = |s: &serde_saphyr::Location| (s.line(), s.column());
    let mut out = Vec::new();
    for e in repr.validations {
        let (line, column) = at(&e.name.referenced);
        let rule = Rule::ALL
            .iter()
            .copied()
            .find(|r| r.id() == e.name.value)
            .ok_or_else(|| {
                let ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
                let hint = crate::suggest::suggest(&e.name.value, &ids)
                    .map_or(String::new(), |s| format!("did you mean {s}? "));
                refuse(
                    line,
                    column,
                    format!(
                        "unknown rule {:?}: {hint}the rules are {}",
                        e.name.value,
                        ids.join(", ")
                    ),
                )
            })?;
        let enforcement = match e.enforcement.value.as_str() {
            "Error" => Enforcement::Error,
            "Warn" => Enforcement::Warn,
            "None" => Enforcement::None,
            other => {
                let (l, c) = at(&e.enforcement.referenced);
                return Err(refuse(
                    l,
                    c,
                    format!("unknown enforcement {other:?}: it is Error, Warn or None (crdify's)"),
                ));
            }
        };
        let both = || old.iter().chain(new);
        let name = |k: &KindCrd| k.crd.metadata.name.clone().unwrap_or_default();
        if let Some(crd) = &e.crd
            && !both().any(|k| name(k) == crd.value)
        {
            let (l, c) = at(&crd.referenced);
            let mut names: Vec<String> = both().map(name).collect();
            names.sort();
            names.dedup();
            return Err(refuse(
                l,
                c,
                format!(
                    "no CRD {:?} in the project, at either revision: the CRDs are {}",
                    crd.value,
                    names.join(", ")
                ),
            ));
        }
        let crd_matches = |k: &KindCrd| e.crd.as_ref().is_none_or(|c| name(k) == c.value);
        let versions = || {
            both()
                .filter(|k| crd_matches(k))
                .flat_map(|k| k.crd.spec.versions.iter())
        };
        if let Some(version) = &e.version
            && !versions().any(|v| v.name == version.value)
        {
            let (l, c) = at(&version.referenced);
            let mut names: Vec<String> = versions().map(|v| v.name.clone()).collect();
            names.sort();
            names.dedup();
            return Err(refuse(
                l,
                c,
                format!(
                    "no version {:?} of {}: the versions are {}",
                    version.value,
                    e.crd.as_ref().map_or("any CRD", |c| c.value.as_str()),
                    names.join(", ")
                ),
            ));
        }
        if let Some(field) = &e.field {
            let (l, c) = at(&field.referenced);
            let known = versions()
                .filter(|v| e.version.as_ref().is_none_or(|w| v.name == w.value))
                .filter_map(|v| v.schema.as_ref()?.open_api_v3_schema.as_ref())
                .any(|s| has_path(s, &field.value));
            if !known {
                return Err(refuse(
                    l,
                    c,
                    format!(
                        "no field {:?} in the schema of {}{} at either revision: a field is a schema path as --check-compat prints it (`.spec.schedule`, `.spec.items[*].name`, `.spec.labels.*`)",
                        field.value,
                        e.crd.as_ref().map_or("any CRD", |c| c.value.as_str()),
                        e.version
                            .as_ref()
                            .map_or(String::new(), |v| format!(" version {}", v.value))
                    ),
                ));
            }
        }
        out.push(Allowance {
            rule,
            enforcement,
            crd: e.crd.map(|c| c.value),
            version: e.version.map(|v| v.value),
            field: e.field.map(|f| f.value),
            at: format!("{FILE}:{line}:{column}"),
        });
    }
    Ok(Allowances(out))
}

/// Whether `schema` has the place `path` (`.a.b[*].c`, `.m.*` for a map's values).
fn has_path(schema: &JSONSchemaProps, path: &str) -> bool {
    let Some(rest) = path.strip_prefix('.') else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let mut at = schema;
    for seg in rest.split('.') {
        let name = seg.trim_end_matches("[*]");
        let lists = (seg.len() - name.len()) / "[*]".len();
        at = if name == "*" {
            match &at.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(v)) => v,
                _ => return false,
            }
        } else {
            match at.properties.as_ref().and_then(|p| p.get(name)) {
                Some(p) => p,
                None => return false,
            }
        };
        for _ in 0..lists {
            at = match &at.items {
                Some(JSONSchemaPropsOrArray::Schema(i)) => i,
                _ => return false,
            };
        }
    }
    true
}

/// The severity of `f` once the allowances apply, and the allowance that decided it; `None`:
/// not reported.
pub fn graded<'a>(
    allowances: &'a Allowances,
    f: &Finding,
) -> (Option<Severity>, Option<&'a Allowance>) {
    match allowances.applying(f) {
        None => (Some(f.severity), None),
        Some(a) => (
            match a.enforcement {
                Enforcement::Error => Some(Severity::Error),
                Enforcement::Warn => Some(Severity::Warning),
                Enforcement::None => None,
            },
            Some(a),
        ),
    }
}
