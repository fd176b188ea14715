//! What `generate crds` refuses or warns about in the source before deriving anything: an unknown
//! key in `#[serde]`, `#[schemars]`, `#[x_kube]`, `#[garde]`, `#[validate]` or `#[kube]` (the
//! compiler rejects it; guessing would silently change the CRD), a name in `#[kube(...)]` that the
//! command line would refuse (no path is ever built from an unchecked name), two kinds whose CRDs
//! or names collide; and it warns about item macros the static reader cannot see into, and about
//! `#[kube(...)]` where kube-derive ignores it. controller-gen's CRD markers written as comments
//! (`// +kubebuilder:validation:Maximum=10`) are refused: operator-rs reads attributes, and the
//! CRD would silently lack what they ask for.

use std::collections::BTreeMap;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use crate::crdgen::derive::crd::KindDef;
use crate::crdgen::error::{CrdgenError, FIX_EXACT, Location};
use crate::crdgen::read::attrs::{self, Position};
use crate::crdgen::read::loader::{Crate, DefId, DefItem};
use crate::names::{self, NameError};

/// Every unknown attribute key on every type, variant and field of the crate. An attribute that
/// does not parse is left to the readers (and to the compiler).
pub(crate) fn check_attribute_keys(krate: &Crate) -> Result<(), CrdgenError> {
    for (d, parsed) in krate.attrs.iter().enumerate() {
        let mut places = vec![(&parsed.own, Position::Container)];
        places.extend(parsed.fields.iter().map(|f| (f, Position::Field)));
        for (variant, fields) in &parsed.variants {
            places.push((variant, Position::Variant));
            places.extend(fields.iter().map(|f| (f, Position::Field)));
        }
        for (place, pos) in places {
            for attr in attrs::CHECKED_ATTRS {
                let Ok(items) = place.of(attr) else { continue };
                if let Some((span, what)) = attrs::unknown_key(items, attr, pos) {
                    return Err(CrdgenError::Source {
                        loc: krate.def_loc(d, span),
                        what,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The derives that read a schema, and so the definitions whose attributes and `#[cfg]` change
/// a CRD.
const SCHEMA_DERIVES: &[&str] = &[
    "CustomResource",
    "JsonSchema",
    "JsonSchema_repr",
    "KubeSchema",
];

/// The helper attributes each known derive declares (serde_derive, schemars_derive, kube-derive
/// 5, garde's and validator's `Validate`, the standard derives). A definition with a derive not
/// listed here is not checked: that derive may declare any helper.
const HELPERS: &[(&str, &[&str])] = &[
    ("CustomResource", &["kube"]),
    ("Resource", &["resource"]),
    ("KubeSchema", &["x_kube", "schemars", "validate"]),
    ("JsonSchema", &["schemars", "serde", "validate", "garde"]),
    ("JsonSchema_repr", &["schemars", "serde"]),
    ("Serialize", &["serde"]),
    ("Deserialize", &["serde"]),
    ("Validate", &["validate", "garde"]),
    ("Default", &["default"]),
    ("Clone", &[]),
    ("Copy", &[]),
    ("Debug", &[]),
    ("PartialEq", &[]),
    ("Eq", &[]),
    ("PartialOrd", &[]),
    ("Ord", &[]),
    ("Hash", &[]),
];

/// The derives that declare `#[<attr>]`, for the fix (the first is the one to add).
fn owners(attr: &str) -> Vec<&'static str> {
    HELPERS
        .iter()
        .filter(|(_, helpers)| helpers.contains(&attr))
        .map(|(d, _)| *d)
        .collect()
}

/// The attributes of a definition the reader reads (`doc = "..."` included: it is a description).
fn is_read(meta: &syn::Meta) -> bool {
    let p = meta.path();
    [
        "derive", "serde", "schemars", "kube", "x_kube", "validate", "garde", "repr",
    ]
    .iter()
    .any(|n| p.is_ident(n))
        || (p.is_ident("doc") && matches!(meta, syn::Meta::NameValue(_)))
}

/// What the compiler refuses, or decides only per build, in the definitions that make a schema:
/// a helper attribute (`#[x_kube]`, `#[kube]`, `#[schemars]`, `#[serde]`...) without a derive
/// that declares it (rustc: "cannot find attribute"; the reader would read or drop it silently);
/// `KubeSchema` beside `JsonSchema` (two impls of one trait) or on what is not a struct with
/// named fields (kube-derive refuses it); and a `#[cfg_attr]` carrying an attribute the reader
/// reads, or a `#[cfg]` on the definition, its module, a field or a variant, whose value depends
/// on the build (the reader cannot know whether the compiler sees it).
pub(crate) fn check_derives_and_cfg(krate: &Crate) -> Result<(), CrdgenError> {
    for (d, def) in krate.defs.iter().enumerate() {
        let derives = krate.derives(d);
        let conditional_schema = def.attrs().iter().any(|a| {
            crate::crdgen::read::cfg::cfg_attr(a).is_some_and(|(_, inner)| {
                inner.iter().any(|m| {
                    m.path().is_ident("derive")
                        && SCHEMA_DERIVES
                            .iter()
                            .any(|n| m.to_token_stream().to_string().contains(n))
                })
            })
        });
        let schema = derives.iter().any(|n| SCHEMA_DERIVES.contains(&n.as_str()));
        if !schema && !conditional_schema {
            continue;
        }
        let ident = def.ident();
        let mut places: Vec<(&[syn::Attribute], &str)> = vec![(def.attrs(), "the type")];
        places.extend(member_attrs(&def.item));
        // `#[cfg]` and `#[cfg_attr]` first: what they hide decides the rest.
        if let Some(at) = &krate.modules[def.module].undecided_cfg {
            return Err(CrdgenError::Unsupported {
                loc: krate.def_loc(d, ident.span()),
                what: format!(
                    "`{ident}` is in a module behind a `#[cfg(...)]` whose value depends on the build (at {at}): the static reader cannot tell whether the compiler sees it"
                ),
                fix: FIX_EXACT.to_string(),
            });
        }
        for (attrs, place) in &places {
            if let Some(a) = crate::crdgen::read::cfg::undecided(attrs) {
                return Err(CrdgenError::Unsupported {
                    loc: krate.def_loc(d, a.pound_token.span),
                    what: format!(
                        "`{}` on {place} of `{ident}` depends on the build (features, target, `--cfg` flags): the static reader cannot tell whether the compiler sees what it guards",
                        crate::crdgen::read::cfg::written(a)
                    ),
                    fix: FIX_EXACT.to_string(),
                });
            }
            for a in attrs.iter() {
                let Some((pred, inner)) = crate::crdgen::read::cfg::cfg_attr(a) else {
                    continue;
                };
                let Some(read) = inner.iter().find(|m| is_read(m)) else {
                    continue;
                };
                let name = read.path().to_token_stream().to_string();
                let (what, fix) = match crate::crdgen::read::cfg::eval(&pred) {
                    // Never applies: the compiler never sees it, nor does the reader.
                    Some(false) => continue,
                    Some(true) => (
                        format!(
                            "`{}` on {place} of `{ident}`: its condition always holds, but the static reader reads `#[{name}]` only written as itself",
                            crate::crdgen::read::cfg::written(a)
                        ),
                        format!(
                            "write it without `cfg_attr`: `#[{}]`, or {}",
                            crate::crdgen::read::cfg::written(read),
                            FIX_EXACT.trim_start_matches("run ")
                        ),
                    ),
                    None => (
                        format!(
                            "`{}` on {place} of `{ident}`: whether `#[{name}]` applies depends on the build (features, target, `--cfg` flags), which the static reader cannot know",
                            crate::crdgen::read::cfg::written(a)
                        ),
                        format!(
                            "{FIX_EXACT}, or write `#[{}]` without `cfg_attr`",
                            crate::crdgen::read::cfg::written(read)
                        ),
                    ),
                };
                return Err(CrdgenError::Unsupported {
                    loc: krate.def_loc(d, a.pound_token.span),
                    what,
                    fix,
                });
            }
        }
        check_derive_shape(krate, d, derives)?;
        // A derive this table does not know may declare any helper.
        if !derives
            .iter()
            .all(|n| HELPERS.iter().any(|(known, _)| known == n))
        {
            continue;
        }
        for (attrs, place) in &places {
            for a in attrs.iter() {
                let Some(attr) = ["kube", "x_kube", "schemars", "serde", "validate", "garde"]
                    .into_iter()
                    .find(|n| a.path().is_ident(n))
                else {
                    continue;
                };
                let declared = HELPERS.iter().any(|(n, helpers)| {
                    helpers.contains(&attr) && derives.contains(&n.to_string())
                });
                if declared {
                    continue;
                }
                let owners = owners(attr);
                // `KubeSchema` implements `JsonSchema`: deriving that too would clash.
                let addable: Vec<&str> = owners
                    .iter()
                    .copied()
                    .filter(|o| {
                        !(derives.iter().any(|n| n == "KubeSchema") && o.starts_with("JsonSchema"))
                    })
                    .collect();
                let derived = if derives.is_empty() {
                    "derives nothing".to_string()
                } else {
                    format!("derives {}", derives.join(", "))
                };
                let fix = match attr {
                    "x_kube" if derives.iter().any(|n| n == "JsonSchema") => format!(
                        "derive `KubeSchema` instead of `JsonSchema` (it implements `JsonSchema` and reads `#[x_kube]`): `#[derive(KubeSchema)]` on `{ident}`"
                    ),
                    _ => format!(
                        "add `{}` to `#[derive(...)]` of `{ident}`, or remove the attribute",
                        addable.join("` or `")
                    ),
                };
                return Err(CrdgenError::Source {
                    loc: krate.def_loc(d, a.pound_token.span),
                    what: format!(
                        "`#[{attr}(...)]` on {place} of `{ident}`, which {derived}: only a type that derives {} may carry it (rustc refuses it: cannot find attribute `{attr}` in this scope). Fix: {fix}",
                        owners
                            .iter()
                            .map(|o| format!("`{o}`"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                });
            }
        }
    }
    Ok(())
}

/// `KubeSchema` beside `JsonSchema` (two impls of `JsonSchema`: rustc's E0119), or on an enum or
/// a struct without named fields (kube-derive: "Unsupported shape").
fn check_derive_shape(krate: &Crate, d: DefId, derives: &[String]) -> Result<(), CrdgenError> {
    if !derives.iter().any(|n| n == "KubeSchema") {
        return Ok(());
    }
    let def = &krate.defs[d];
    let ident = def.ident();
    let at = def
        .attrs()
        .iter()
        .find(|a| a.path().is_ident("derive"))
        .map_or(ident.span(), |a| a.pound_token.span);
    if derives.iter().any(|n| n == "JsonSchema") {
        return Err(CrdgenError::Source {
            loc: krate.def_loc(d, at),
            what: format!(
                "`{ident}` derives both `KubeSchema` and `JsonSchema`: `KubeSchema` implements `JsonSchema` itself, so rustc refuses the second impl (E0119). Fix: keep `KubeSchema` (it reads `#[x_kube]`, `#[schemars]` and `#[serde]`) and remove `JsonSchema`"
            ),
        });
    }
    let named =
        matches!(&def.item, DefItem::Struct(s) if matches!(s.fields, syn::Fields::Named(_)));
    if !named {
        return Err(CrdgenError::Source {
            loc: krate.def_loc(d, at),
            what: format!(
                "`{ident}` derives `KubeSchema`, which kube-derive supports only on a struct with named fields (it refuses this one: Unsupported shape). Fix: derive `JsonSchema` instead (an enum's rules go on the field that holds it: `#[x_kube(validation = \"...\")]`)"
            ),
        });
    }
    Ok(())
}

/// The `#[kube(...)]` of a `#[derive(CustomResource)]` struct (its parsed `items`): known keys
/// only, and every name by the command line's rules.
pub(crate) fn check_kube_attrs(
    krate: &Crate,
    d: DefId,
    items: &[attrs::MetaItem],
) -> Result<(), CrdgenError> {
    if let Some((span, what)) = attrs::unknown_key(items, "kube", Position::Container) {
        return Err(CrdgenError::Source {
            loc: krate.def_loc(d, span),
            what,
        });
    }
    /// The keys kube-derive takes more than once; any other given twice is a compile error.
    const MULTIPLE: &[&str] = &[
        "category",
        "shortname",
        "printcolumn",
        "selectable",
        "annotation",
        "label",
        "validation",
        "derive",
        "attr",
    ];
    for (i, it) in items.iter().enumerate() {
        if !MULTIPLE.contains(&it.name.as_str()) && items[..i].iter().any(|o| o.name == it.name) {
            return Err(CrdgenError::Source {
                loc: krate.def_loc(d, it.pos),
                what: format!(
                    "`{}` is given twice in `#[kube(...)]`; kube-derive refuses that: keep one",
                    it.name
                ),
            });
        }
    }
    for it in items {
        let Some(value) = it.str_value() else {
            continue;
        };
        let example = |v: &str| format!("#[kube({} = \"{v}\")]", it.name);
        let checked = match it.name.as_str() {
            "group" => names::validate_crd_group(&value, &example("cache.example.com")),
            "version" => names::validate_crd_version(&value, &example("v1alpha1")),
            "kind" => names::validate_kind_name(&value, &example("Memcached")),
            "plural" => names::validate_resource_name("plural", &value, &example("memcacheds")),
            "singular" => names::validate_resource_name("singular", &value, &example("memcached")),
            "shortname" => names::validate_resource_name("short name", &value, &example("mc")),
            "category" => names::validate_resource_name("category", &value, &example("all")),
            _ => Ok(()),
        };
        if let Err(e) = checked {
            return Err(name_error(krate.def_loc(d, it.pos), e));
        }
    }
    Ok(())
}

/// The plural kube-derive derives (when `#[kube(plural)]` is absent) by the rule the written
/// one gets, and the CRD's name `<plural>.<group>` within the API server's 253 characters;
/// refused at the attribute that makes it (`plural`, else `singular`, else `kind`; `group` for
/// the length).
pub(crate) fn check_crd_name(
    krate: &Crate,
    d: DefId,
    items: &[attrs::MetaItem],
    plural: &str,
    group: &str,
) -> Result<(), CrdgenError> {
    let at = |keys: &[&str]| {
        let pos = keys
            .iter()
            .find_map(|k| items.iter().find(|it| it.name == *k))
            .map(|it| it.pos)
            .unwrap_or_else(|| krate.defs[d].ident().span().into());
        krate.def_loc(d, pos)
    };
    if !items.iter().any(|it| it.name == "plural")
        && let Err(mut e) =
            names::validate_resource_name("plural", plural, "#[kube(plural = \"memcacheds\")]")
    {
        e.rule = format!(
            "(not written: kube-derive derives it from the singular, else the kind; set one with `#[kube(plural = \"...\")]`) {}",
            e.rule
        );
        return Err(name_error(at(&["singular", "kind"]), e));
    }
    names::validate_crd_name(plural, group, "#[kube(group = \"cache.example.com\")]")
        .map_err(|e| name_error(at(&["group"]), e))
}

fn name_error(loc: Location, e: NameError) -> CrdgenError {
    CrdgenError::Source {
        loc,
        what: e.to_string(),
    }
}

/// Two kinds may not share a CRD (plural.group, hence its file), nor, in one group, any of their
/// plural, singular and short names (the API server refuses the second), nor a short name at all
/// (kubectl could not tell them apart).
pub(crate) fn check_clashes(kinds: &[KindDef]) -> Result<(), CrdgenError> {
    // One entry per kind (its first version): its location and names.
    let mut seen: BTreeMap<(String, String), &KindDef> = BTreeMap::new();
    for k in kinds {
        seen.entry((k.group.clone(), k.kind.clone())).or_insert(k);
    }
    let mut claimed: BTreeMap<String, (&KindDef, String)> = BTreeMap::new();
    for k in seen.values() {
        let names = &k.crd.spec.names;
        let mut claims = vec![(
            format!("crd {}.{}", names.plural, k.group),
            format!(
                "the CRD name `{}.{}` (and its file {})",
                names.plural,
                k.group,
                crate::crdgen::kind::crd_path(&k.group, &names.plural).display()
            ),
        )];
        // A shortened file name is unique by its hash; checked all the same, so no CRD is lost.
        let file = crate::crdgen::kind::crd_path(&k.group, &names.plural);
        claims.push((
            format!("file {}", file.display()),
            format!("the file {}", file.display()),
        ));
        let mut in_group = vec![("plural", names.plural.clone())];
        in_group.extend(names.singular.clone().map(|s| ("singular", s)));
        for s in names.short_names.iter().flatten() {
            in_group.push(("short name", s.clone()));
            claims.push((format!("short {s}"), format!("the short name `{s}`")));
        }
        for (what, n) in &in_group {
            claims.push((
                format!("name {} {n}", k.group),
                format!("`{n}` (a {what}) in the group {}", k.group),
            ));
        }
        // Kinds and list kinds share one namespace per group: the API server's naming controller
        // does not accept a CRD whose kind or list kind (`<Kind>List`) another CRD there uses.
        let list_kind = names
            .list_kind
            .clone()
            .unwrap_or_else(|| format!("{}List", names.kind));
        for n in [&names.kind, &list_kind] {
            claims.push((
                format!("kind {} {n}", k.group),
                format!("`{n}` (as a kind or a list kind) in the group {}", k.group),
            ));
        }
        claims.sort();
        claims.dedup_by(|a, b| a.0 == b.0);
        for (key, shown) in claims {
            if let Some((other, _)) = claimed.get(&key)
                && (other.group != k.group || other.kind != k.kind)
            {
                return Err(CrdgenError::Clash(format!(
                    "{} {} (at {}) and {} {} (at {}) both claim {shown}: one would overwrite or hide the other. \
                     Give one of them another name (another kind, or e.g. `#[kube(plural = \"...\")]`, `#[kube(singular = \"...\")]` or another `shortname`)",
                    other.group, other.kind, other.loc, k.group, k.kind, k.loc
                )));
            }
            claimed.insert(key, (k, shown));
        }
    }
    Ok(())
}

/// The attributes of a type's members, with what they are on: each field's, and each enum
/// variant's and its fields'.
fn member_attrs(item: &DefItem) -> Vec<(&[syn::Attribute], &'static str)> {
    let mut places: Vec<(&[syn::Attribute], &'static str)> = Vec::new();
    match item {
        DefItem::Struct(s) => places.extend(s.fields.iter().map(|f| (&f.attrs[..], "a field"))),
        DefItem::Enum(e) => {
            for v in &e.variants {
                places.push((&v.attrs, "a variant"));
                places.extend(v.fields.iter().map(|f| (&f.attrs[..], "a field")));
            }
        }
        DefItem::Alias(_) => {}
    }
    places
}

/// Warnings for `#[kube(...)]` on a field or a variant: kube-derive reads `#[kube]` only on the
/// `#[derive(CustomResource)]` struct, so there it compiles and does nothing (a guess such as
/// `#[kube(validation = "...")]` on a field would be silently lost).
pub(crate) fn kube_attr_warnings(krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for (d, def) in krate.defs.iter().enumerate() {
        let places = member_attrs(&def.item);
        for (attrs, place) in places {
            for a in attrs.iter().filter(|a| a.path().is_ident("kube")) {
                out.push(format!(
                    "{}: `#[kube(...)]` on {place} does nothing: kube-derive reads it only on the `#[derive(CustomResource)]` struct. For a CEL rule on a field write `#[x_kube(validation = \"...\")]` and derive `KubeSchema` (operator-rs's docs/markers.md has every marker's Rust form)",
                    krate.def_loc(d, a.span())
                ));
            }
        }
    }
    out
}

/// Warnings for item macro invocations, which may expand to a kind the static reader cannot see.
pub(crate) fn macro_warnings(krate: &Crate) -> Vec<String> {
    item_macros(krate)
        .into_iter()
        .map(|(loc, name)| format!(
            "{loc}: the static reader cannot see what the macro `{name}!` expands to; if it defines a `#[derive(CustomResource)]` kind, that kind gets no CRD here: run `operator-rs generate crds --exact` (derives through the compiler)"
        ))
        .collect()
}

/// The item macros of the crate that may define types (a kind the static reader cannot see):
/// where each is invoked, and its name.
pub(crate) fn item_macros(krate: &Crate) -> Vec<(Location, String)> {
    /// Standard item macros that define no types.
    const HARMLESS: &[&str] = &[
        "thread_local",
        "compile_error",
        "assert",
        "const_assert",
        "static_assertions",
    ];
    let mut out = Vec::new();
    for m in &krate.modules {
        for (span, name) in &m.item_macros {
            if !HARMLESS.contains(&name.as_str()) {
                out.push((loc_of(krate, m.file, *span), name.clone()));
            }
        }
    }
    out
}

fn loc_of(krate: &Crate, file: usize, span: Span) -> Location {
    krate.loc(file, span)
}

/// The names of controller-gen's CRD markers (`+kubebuilder:<name>...`): what a Go type says in
/// comments and a Rust type says in attributes (docs/markers.md). `rbac` and `webhook` markers
/// are comments in operator-rs too, and `object` markers need nothing in Rust.
const CRD_MARKERS: &[&str] = &[
    "validation",
    "default",
    "printcolumn",
    "subresource",
    "resource",
    "storageversion",
    "unservedversion",
    "deprecatedversion",
    "selectablefield",
    "skipversion",
    "pruning",
    "title",
    "example",
    "metadata",
];

/// A controller-gen CRD marker in a comment of the crate's own files (not in the generated types
/// of external kinds): refused at its place with the attribute to write instead.
pub(crate) fn check_comment_markers(
    tree: &dyn crate::workspace::SourceTree,
    krate: &Crate,
) -> Result<(), CrdgenError> {
    for (i, file) in krate.files.iter().enumerate() {
        if krate.external.get(i).copied().unwrap_or(false) {
            continue;
        }
        let Ok(Some(text)) = tree.read(file) else {
            continue;
        };
        // A file that does not lex is the parser's to report.
        let Ok(comments) = crate::markers::line_comments(&text) else {
            continue;
        };
        for c in comments {
            let body = c.body();
            let Some(rest) = body.strip_prefix("+kubebuilder:") else {
                continue;
            };
            let name = rest.split([':', '=']).next().unwrap_or_default();
            if !CRD_MARKERS.contains(&name) {
                continue;
            }
            let column = c.column
                + c.text
                    .find('+')
                    .map_or(0, |at| c.text[..at].chars().count());
            return Err(CrdgenError::Source {
                loc: Location {
                    file: file.clone(),
                    line: c.line,
                    column,
                },
                what: format!(
                    "`{body}` is a controller-gen marker written as a comment, which operator-rs does not read: the CRD would silently lack it. Write it as an attribute (docs/markers.md lists every marker's), e.g. `#[schemars(range(max = 10))] pub replicas: i32` for `+kubebuilder:validation:Maximum=10`"
                ),
            });
        }
    }
    Ok(())
}
