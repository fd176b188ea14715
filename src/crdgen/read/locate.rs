//! Where a place of a kind's schema is written in its Rust types: the field a schema path
//! (`.spec.items[*].name`, as kube-apiserver's messages write it) leads to, and the
//! `#[serde(default ..)]` that gives it its default. A refused default points at the latter; a
//! refusal of what no attribute wrote (a field's type: a bare `serde_json::Value`, a tuple) at
//! the field, rather than at the kind.

use std::rc::Rc;

use crate::crdgen::error::Location;
use crate::crdgen::read::loader::DefId;
use crate::crdgen::read::resolve::Ty;
use crate::crdgen::read::type_info::{Model, TypeInfo};

/// One step of a schema path.
#[derive(Debug, PartialEq, Eq)]
enum Step<'a> {
    /// `.name`: a property.
    Property(&'a str),
    /// `[*]`: the items of a list.
    Items,
    /// `.*`: the values of a map.
    Values,
}

/// The steps of `path`. A property named with `.` or `[` in it cannot be told apart from two
/// steps: the walk then finds no such field and stops short (a location less precise, never a
/// wrong one unless both fields exist).
fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[*]") {
            out.push(Step::Items);
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let name = &r[..end];
            out.push(if name == "*" {
                Step::Values
            } else {
                Step::Property(name)
            });
            rest = &r[end..];
        } else {
            break;
        }
    }
    out
}

/// What a refusal at a place points at: the field there, or the `#[serde(default ..)]` that gave
/// its default (the field's own, else its struct's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Field,
    Default,
}

/// The kind whose schema is walked: its spec struct, and its `#[kube(status = "..")]` type.
pub(crate) struct KindTypes<'a> {
    pub spec: DefId,
    pub status: Option<&'a str>,
}

/// Where the `part` of the field at `path` is written; where the deepest field on `path` is when
/// the walk stops short of it (`None` when the path leads to no field of the kind's types, or
/// leaves them at once).
pub(crate) fn field_at(
    krate: &Model,
    kind: &KindTypes<'_>,
    path: &str,
    part: Part,
) -> Option<Location> {
    let mut steps = steps(path).into_iter();
    let mut ty = match steps.next()? {
        Step::Property("spec") => Ty::User(kind.spec),
        Step::Property("status") => {
            let module = krate.defs[kind.spec].module;
            let path: syn::Type = syn::parse_str(kind.status?).ok()?;
            krate.resolve_type(module, &path, Some(kind.spec)).ok()?
        }
        _ => return None,
    };
    let mut found: Option<Hit> = None;
    let mut at_end = true;
    // The struct that has no field for the next step (a field removed from it), if the walk
    // stops there.
    let mut stopped_in: Option<DefId> = None;
    for step in steps {
        ty = unwrapped(ty);
        at_end = false;
        ty = match (step, ty) {
            (Step::Items, Ty::Seq(_, item) | Ty::Array(item, _)) => *item,
            (Step::Values, Ty::Map(value)) => *value,
            (Step::Property(name), Ty::User(d)) => {
                let Some(hit) = property(krate, d, name, 0) else {
                    stopped_in = Some(d);
                    break;
                };
                at_end = true;
                let next = hit.ty.clone();
                found = Some(hit);
                next
            }
            _ => break,
        };
    }
    // No field on the path at all (`.status.observedGeneration` removed): the struct that held
    // it (the status struct), not the kind.
    let Some(hit) = found else {
        let d = stopped_in?;
        return Some(krate.def_loc(d, krate.defs[d].ident().span()));
    };
    Some(match part {
        Part::Default if at_end => hit.default,
        _ => hit.field,
    })
}

/// A field found on a path: where it is, where its default comes from, its schema's type.
struct Hit {
    field: Location,
    default: Location,
    ty: Ty,
}

/// `Option`, `Box`, `Rc`, `Arc`: the schema of what they hold.
fn unwrapped(mut ty: Ty) -> Ty {
    while let Ty::Option(inner) | Ty::Boxed(inner) = ty {
        ty = *inner;
    }
    ty
}

/// How deep `#[serde(flatten)]` fields are followed (a type cannot flatten itself for real).
const MAX_FLATTEN: usize = 16;

/// The field of the definition `d` named `name` in the schema (a flattened field's fields
/// included; for an enum, a field of one of its variants).
fn property(krate: &Model, d: DefId, name: &str, depth: usize) -> Option<Hit> {
    if depth > MAX_FLATTEN {
        return None;
    }
    let info: Rc<TypeInfo> = TypeInfo::of(krate, d).ok()?;
    let fields = info
        .fields
        .iter()
        .chain(info.variants.iter().flat_map(|v| &v.fields));
    let mut flattened = Vec::new();
    for f in fields.filter(|f| !f.skip_de) {
        if f.flatten {
            flattened.push(f);
        } else if f.de_name == name {
            let default = f.default_at.or(info.default_at).unwrap_or(f.span.into());
            return Some(Hit {
                field: krate.mod_loc(info.module, f.span),
                default: krate.mod_loc(info.module, default),
                ty: f.schema_type().clone(),
            });
        }
    }
    flattened
        .into_iter()
        .find_map(|f| match unwrapped(f.schema_type().clone()) {
            Ty::User(inner) => property(krate, inner, name, depth + 1),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_steps() {
        use Step::*;
        assert_eq!(
            steps(".spec.items[*].ports.*.name"),
            vec![
                Property("spec"),
                Property("items"),
                Items,
                Property("ports"),
                Values,
                Property("name")
            ]
        );
        assert_eq!(steps(".spec[*][*]"), vec![Property("spec"), Items, Items]);
        assert_eq!(steps(""), vec![]);
        assert_eq!(steps("spec"), vec![]);
    }
}
