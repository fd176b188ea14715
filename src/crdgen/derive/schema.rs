//! Schema emulation: what `#[derive(JsonSchema)]` (schemars_derive 1.2) and `#[derive(KubeSchema)]`
//! (kube-derive 5) would emit for the crate's types, built with the same `SchemaGenerator` and the
//! same schemars helper functions. Only the derive macros' logic is emulated: std, serde_json and
//! k8s-openapi schemas come from the real types (`generator.subschema_for::<T>()`), generic std
//! containers (`Option<T>`, `Vec<T>`, maps, `Box<T>`) run their real impls over [`Dyn`], a
//! placeholder type whose schema is the next pending [`Ty`]. What the attributes say about each
//! type is the type model read before ([`crate::crdgen::read::type_info`]).
//!
//! schemars calls a type's `json_schema` with the generator alone, so `Dyn` finds its crate and
//! its pending types in the one [`Generation`] that [`with_crate`] sets up for the generator's
//! run and tears down after it (see [`Generation`] for why not in the generator itself).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::Span;
use schemars::{_private as sp, JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};

use crate::crdgen::error::{CrdgenError, FIX_EXACT};
use crate::crdgen::k8s;
use crate::crdgen::read::loader::{DefId, ModId};
use crate::crdgen::read::resolve::{Leaf, SeqKind, Ty};
use crate::crdgen::read::type_info::values::Eval;
use crate::crdgen::read::type_info::{
    DeriveKind, FieldInfo, Model, Rule, SerdeDefault, Style, Tag, TypeInfo, VariantInfo, With,
    unsupported,
};

// ---------------------------------------------------------------------------------------------
// The generator side: `Dyn` and the generation it reads.

/// What one run of the schema generator over a crate's types needs beside the generator: the
/// crate, the types `Dyn` stands for, the first error, and the definitions being derived (a type
/// met again inside itself is recursive).
///
/// schemars gives `json_schema` nothing but the generator, and the one place the generator
/// carries a value of ours, its settings' transforms (`SchemaGenerator::transforms_mut`), takes
/// only `Send` values, which the crate is not (its syntax trees hold proc-macro2 spans): so the
/// generation sits in one thread-local slot, filled by [`with_crate`] for the closure it runs and
/// emptied when the closure returns (or unwinds), never read outside it.
struct Generation {
    krate: Rc<Model>,
    jobs: Vec<Ty>,
    err: Option<CrdgenError>,
    stack: Vec<DefId>,
}

thread_local! {
    /// The [`Generation`] under way on this thread, only inside [`with_crate`].
    static GENERATION: RefCell<Option<Generation>> = const { RefCell::new(None) };
}

/// `f` over the generation under way.
fn generation<R>(f: impl FnOnce(&mut Generation) -> R) -> R {
    GENERATION.with(|g| {
        let mut g = g.borrow_mut();
        f(g.as_mut()
            .expect("the schema generator runs inside `with_crate`"))
    })
}

/// A placeholder type: its schema is the schema of the [`Ty`] pushed last. `OPTION` is what it
/// says of itself to `#[serde(flatten)]` (`_schemars_private_is_option`, which schemars asks
/// with no argument at all): whether the type it stands for is an `Option`.
pub(crate) struct Dyn<const OPTION: bool = false>;

fn pop_job() -> Ty {
    generation(|g| g.jobs.pop()).unwrap_or(Ty::Leaf(Leaf::Unit))
}

fn push_job(t: &Ty) {
    generation(|g| g.jobs.push(t.clone()));
}

fn set_err(e: CrdgenError) {
    generation(|g| {
        if g.err.is_none() {
            g.err = Some(e);
        }
    });
}

fn krate() -> Rc<Model> {
    generation(|g| g.krate.clone())
}

impl<const OPTION: bool> JsonSchema for Dyn<OPTION> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Dyn".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let t = pop_job();
        subschema(g, &t)
    }
    fn _schemars_private_non_optional_json_schema(g: &mut SchemaGenerator) -> Schema {
        let t = pop_job();
        non_optional(g, &t)
    }
    fn _schemars_private_is_option() -> bool {
        OPTION
    }
}

/// `#[serde(flatten)]`'s schema of `ty` (`required` unless the field is optional), as schemars'
/// derive makes it.
fn flattened(g: &mut SchemaGenerator, ty: &Ty, required: bool) -> Schema {
    let option = is_option(ty);
    push_job(ty);
    if option {
        sp::json_schema_for_flatten::<Dyn<true>>(g, required)
    } else {
        sp::json_schema_for_flatten::<Dyn<false>>(g, required)
    }
}

/// Run `f` as one generation over `krate`'s types (see [`Generation`]); the first error raised
/// inside wins. The generation before (none, unless a generator runs inside another) is back in
/// place when it returns, as when `f` unwinds.
pub(crate) fn with_crate<R>(krate: Rc<Model>, f: impl FnOnce() -> R) -> Result<R, CrdgenError> {
    /// Puts the previous generation back, returning the one it replaces.
    struct Restore(Option<Generation>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            GENERATION.with(|g| *g.borrow_mut() = previous);
        }
    }
    let fresh = Generation {
        krate,
        jobs: Vec::new(),
        err: None,
        stack: Vec::new(),
    };
    let restore = Restore(GENERATION.with(|g| g.borrow_mut().replace(fresh)));
    let r = f();
    let err = generation(|g| g.err.take());
    drop(restore);
    match err {
        Some(e) => Err(e),
        None => Ok(r),
    }
}

fn is_option(t: &Ty) -> bool {
    match t {
        Ty::Option(_) => true,
        Ty::User(d) => {
            let k = krate();
            match TypeInfo::of(&k, *d) {
                Ok(info) => transparent_type(&info)
                    .map(|t| is_option(&t))
                    .unwrap_or(false),
                Err(_) => false,
            }
        }
        _ => false,
    }
}

/// `get_transparent_type`: the type a container forwards everything to.
fn transparent_type(info: &TypeInfo) -> Option<Ty> {
    if let Some(With::Type(t)) = &info.with
        && info.common.is_default()
    {
        return Some(t.clone());
    }
    if info.transparent
        && let Some(f) = info.fields.iter().find(|f| f.transparent_marker)
        && info.common.is_default()
        && f.attrs_default()
    {
        return Some(f.ty.clone());
    }
    None
}

/// `generator.subschema_for::<T>()`.
pub(crate) fn subschema(g: &mut SchemaGenerator, t: &Ty) -> Schema {
    match t {
        Ty::Leaf(l) => leaf_schema(g, *l),
        Ty::Option(inner) => {
            push_job(inner);
            g.subschema_for::<Option<Dyn>>()
        }
        // schemars' impls for sequences and string-keyed maps, with the items' schema moved in
        // where `json_schema!` would serialize a copy of it (quadratic in the nesting of lists).
        Ty::Seq(kind, inner) => {
            let items = subschema(g, inner).to_value();
            let mut s = serde_json::Map::new();
            s.insert("type".into(), "array".into());
            if matches!(kind, SeqKind::BTreeSet | SeqKind::HashSet) {
                s.insert("uniqueItems".into(), true.into());
            }
            s.insert("items".into(), items);
            Schema::from(s)
        }
        Ty::Map(v) => {
            let values = subschema(g, v).to_value();
            let mut s = serde_json::Map::new();
            s.insert("type".into(), "object".into());
            s.insert("additionalProperties".into(), values);
            Schema::from(s)
        }
        Ty::Boxed(inner) => {
            push_job(inner);
            g.subschema_for::<Box<Dyn>>()
        }
        Ty::Tuple(items) => {
            for i in items.iter().rev() {
                push_job(i);
            }
            match items.len() {
                1 => g.subschema_for::<(Dyn,)>(),
                2 => g.subschema_for::<(Dyn, Dyn)>(),
                3 => g.subschema_for::<(Dyn, Dyn, Dyn)>(),
                4 => g.subschema_for::<(Dyn, Dyn, Dyn, Dyn)>(),
                _ => {
                    set_err(CrdgenError::Versions(
                        "tuples of more than 4 elements are not supported statically; use --exact"
                            .into(),
                    ));
                    Schema::default()
                }
            }
        }
        Ty::Array(inner, n) => {
            push_job(inner);
            let mut s = json!({"type": "array", "items": Value::Null});
            let item = pop_job();
            s["items"] = subschema(g, &item).to_value();
            s["minItems"] = (*n).into();
            s["maxItems"] = (*n).into();
            Schema::try_from(s).unwrap_or_default()
        }
        Ty::K8s(p) => match k8s::lookup(p) {
            Some(t) => t.schema(g),
            None => Schema::default(),
        },
        Ty::User(d) => user_schema(g, *d),
    }
}

/// `T::_schemars_private_non_optional_json_schema`.
fn non_optional(g: &mut SchemaGenerator, t: &Ty) -> Schema {
    match t {
        Ty::Option(inner) => non_optional(g, inner),
        Ty::User(d) => {
            let k = krate();
            if let Ok(info) = TypeInfo::of(&k, *d)
                && let Some(inner) = transparent_type(&info)
            {
                return non_optional(g, &inner);
            }
            subschema(g, t)
        }
        _ => subschema(g, t),
    }
}

fn leaf_schema(g: &mut SchemaGenerator, l: Leaf) -> Schema {
    match l {
        Leaf::Bool => g.subschema_for::<bool>(),
        Leaf::I8 => g.subschema_for::<i8>(),
        Leaf::I16 => g.subschema_for::<i16>(),
        Leaf::I32 => g.subschema_for::<i32>(),
        Leaf::I64 => g.subschema_for::<i64>(),
        Leaf::I128 => g.subschema_for::<i128>(),
        Leaf::Isize => g.subschema_for::<isize>(),
        Leaf::U8 => g.subschema_for::<u8>(),
        Leaf::U16 => g.subschema_for::<u16>(),
        Leaf::U32 => g.subschema_for::<u32>(),
        Leaf::U64 => g.subschema_for::<u64>(),
        Leaf::U128 => g.subschema_for::<u128>(),
        Leaf::Usize => g.subschema_for::<usize>(),
        Leaf::F32 => g.subschema_for::<f32>(),
        Leaf::F64 => g.subschema_for::<f64>(),
        Leaf::Char => g.subschema_for::<char>(),
        Leaf::String => g.subschema_for::<String>(),
        Leaf::Unit => g.subschema_for::<()>(),
        Leaf::JsonValue => g.subschema_for::<serde_json::Value>(),
        Leaf::JsonMap => g.subschema_for::<serde_json::Map<String, Value>>(),
        Leaf::PathBuf => g.subschema_for::<std::path::PathBuf>(),
        Leaf::NonZeroU32 => g.subschema_for::<std::num::NonZeroU32>(),
        Leaf::NonZeroU64 => g.subschema_for::<std::num::NonZeroU64>(),
        Leaf::NonZeroI32 => g.subschema_for::<std::num::NonZeroI32>(),
        Leaf::NonZeroI64 => g.subschema_for::<std::num::NonZeroI64>(),
        Leaf::IpAddr => g.subschema_for::<std::net::IpAddr>(),
        Leaf::Ipv4Addr => g.subschema_for::<std::net::Ipv4Addr>(),
        Leaf::Ipv6Addr => g.subschema_for::<std::net::Ipv6Addr>(),
        Leaf::SocketAddr => g.subschema_for::<std::net::SocketAddr>(),
        Leaf::NonZeroU8 => g.subschema_for::<std::num::NonZeroU8>(),
        Leaf::NonZeroU16 => g.subschema_for::<std::num::NonZeroU16>(),
        Leaf::NonZeroU128 => g.subschema_for::<std::num::NonZeroU128>(),
        Leaf::NonZeroUsize => g.subschema_for::<std::num::NonZeroUsize>(),
        Leaf::NonZeroI8 => g.subschema_for::<std::num::NonZeroI8>(),
        Leaf::NonZeroI16 => g.subschema_for::<std::num::NonZeroI16>(),
        Leaf::NonZeroI128 => g.subschema_for::<std::num::NonZeroI128>(),
        Leaf::NonZeroIsize => g.subschema_for::<std::num::NonZeroIsize>(),
        Leaf::SocketAddrV4 => g.subschema_for::<std::net::SocketAddrV4>(),
        Leaf::SocketAddrV6 => g.subschema_for::<std::net::SocketAddrV6>(),
        Leaf::StdDuration => g.subschema_for::<std::time::Duration>(),
        Leaf::SystemTime => g.subschema_for::<std::time::SystemTime>(),
        Leaf::KubeDuration => g.subschema_for::<kube_core::Duration>(),
        // schemars' `formatted_string_impl!` (chrono04, jiff02) and its uuid1 and url2 impls.
        Leaf::FormattedString(format) => schemars::json_schema!({
            "type": "string",
            "format": format,
        }),
        // schemars' semver1 impl.
        Leaf::SemVer => schemars::json_schema!({
            "type": "string",
            "pattern": r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
        }),
    }
}

fn user_schema(g: &mut SchemaGenerator, d: DefId) -> Schema {
    let k = krate();
    if generation(|g| g.stack.contains(&d)) {
        let def = &k.defs[d];
        // Not a limit of the static reader: through the compiler (`--exact`) schemars emits the
        // same `$ref`, so no command of operator-rs can make a CRD of it.
        let ident = def.ident();
        set_err(CrdgenError::KubeCannotRender {
            loc: k.mod_loc(def.module, ident.span()),
            what: format!(
                "the recursive type `{ident}`: a CRD's schema is structural, with no `$ref`, so it cannot describe a type that contains itself (schemars emits a `$ref` for it, with `--exact` as without, and kube-apiserver refuses it)"
            ),
            fix: format!(
                "bound the depth with distinct types (a `{ident}` holding a `{ident}Leaf` without the recursive field), or make the recursive field schemaless: `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))] pub children: serde_json::Value`"
            ),
        });
        return Schema::default();
    }
    generation(|g| g.stack.push(d));
    let r = derive(g, &k, d);
    generation(|g| g.stack.pop());
    match r {
        Ok(s) => s,
        Err(e) => {
            set_err(e);
            Schema::default()
        }
    }
}

/// The manual `impl JsonSchema for X` of the crate, if any.
fn manual_impl(krate: &Model, d: DefId) -> Option<(ModId, Span)> {
    for (im, imp) in &krate.impls {
        let Some((_, tp, _)) = &imp.trait_ else {
            continue;
        };
        if tp
            .segments
            .last()
            .map(|s| s.ident != "JsonSchema")
            .unwrap_or(true)
        {
            continue;
        }
        if let syn::Type::Path(p) = &*imp.self_ty
            && matches!(krate.resolve_path(*im, &p.path, 0), Some(crate::crdgen::read::loader::Res::Def(x)) if x == d)
        {
            return Some((*im, imp.impl_token.span));
        }
    }
    None
}

fn derive(g: &mut SchemaGenerator, krate: &Model, d: DefId) -> Result<Schema, CrdgenError> {
    let info = TypeInfo::of(krate, d)?;
    match info.derive {
        Some(DeriveKind::JsonSchema) => derive_json(g, krate, &info),
        Some(DeriveKind::KubeSchema) => derive_kube(g, krate, &info),
        None => {
            if let Some((m, span)) = manual_impl(krate, d) {
                return Err(unsupported(
                    krate,
                    m,
                    span,
                    format!("a hand-written `impl JsonSchema for {}`", info.ident),
                    format!(
                        "{FIX_EXACT}, or derive `JsonSchema` and express the schema with attributes"
                    ),
                ));
            }
            Err(unsupported(
                krate,
                info.module,
                info.span,
                format!(
                    "the type `{}`, which does not derive `JsonSchema`",
                    info.ident
                ),
                "add `#[derive(JsonSchema)]` (kube-derive needs it too)",
            ))
        }
    }
}

/// `#[derive(KubeSchema)]`: the derived schema, plus struct rules and per-field x-kube properties.
fn derive_kube(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
) -> Result<Schema, CrdgenError> {
    let mut s = derive_json(g, krate, info)?;
    for r in &info.rules {
        kube_core::validate(&mut s, r.clone()).map_err(|e| CrdgenError::Versions(e.to_string()))?;
    }
    for f in &info.fields {
        if f.rules.is_empty() && f.merge_strategy.is_none() {
            continue;
        }
        let mut merge = expr_for_struct(
            g,
            krate,
            info,
            std::slice::from_ref(f),
            &info.default,
            info.deny_unknown_fields,
        )?;
        for r in &f.rules {
            kube_core::validate_property(&mut merge, 0, r.clone())
                .map_err(|e| CrdgenError::Versions(e.to_string()))?;
        }
        if let Some(st) = &f.merge_strategy {
            kube_core::merge_strategy_property(&mut merge, 0, st.clone())
                .map_err(|e| CrdgenError::Versions(e.to_string()))?;
        }
        kube_core::merge_properties(&mut s, &mut merge);
    }
    Ok(s)
}

/// `#[derive(JsonSchema)]`: `expr_for_container`.
pub(crate) fn derive_json(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
) -> Result<Schema, CrdgenError> {
    if let Some(t) = transparent_type(info) {
        return Ok(subschema(g, &t));
    }
    let mut s = if let Some(With::Type(t)) = &info.with {
        subschema(g, t)
    } else if let Some(With::Schema(s)) = &info.with {
        s.clone()
    } else if info.transparent {
        let f = info
            .fields
            .iter()
            .find(|f| f.transparent_marker)
            .ok_or_else(|| {
                unsupported(
                    krate,
                    info.module,
                    info.span,
                    "a transparent type without a serialized field",
                    FIX_EXACT,
                )
            })?;
        only_field_schema(g, krate, info, f)?
    } else if let Some(from) = &info.from {
        subschema(g, from)
    } else if info.is_enum {
        expr_for_enum(g, krate, info)?
    } else {
        match info.style {
            Style::Unit => g.subschema_for::<()>(),
            Style::Newtype => only_field_schema(g, krate, info, &info.fields[0])?,
            Style::Tuple => expr_for_tuple(g, krate, info, &info.fields)?,
            Style::Struct => expr_for_struct(
                g,
                krate,
                info,
                &info.fields,
                &info.default,
                info.deny_unknown_fields,
            )?,
        }
    };
    info.common.apply(&mut s);
    info.common.apply_post(&mut s);
    Ok(s)
}

/// `expr_for_field` without its post-mutators (the caller adds the default first).
fn field_schema(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
    f: &FieldInfo,
) -> Result<Schema, CrdgenError> {
    let _ = (krate, info);
    let mut s = match &f.with {
        Some(With::Schema(s)) => s.clone(),
        _ if f.validation.required => non_optional(g, f.schema_type()),
        _ => subschema(g, f.schema_type()),
    };
    f.common.apply(&mut s);
    f.validation.apply(&mut s);
    if f.skip_de {
        s.insert("readOnly".into(), true.into());
    }
    if f.skip_ser {
        s.insert("writeOnly".into(), true.into());
    }
    Ok(s)
}

fn expr_for_tuple(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
    fields: &[FieldInfo],
) -> Result<Schema, CrdgenError> {
    let mut prefix = Vec::new();
    for f in fields.iter().filter(|f| !f.skip_de) {
        let mut s = field_schema(g, krate, info, f)?;
        f.common.apply_post(&mut s);
        prefix.push(s.to_value());
    }
    let len = prefix.len();
    let mut map = serde_json::Map::new();
    map.insert("type".into(), "array".into());
    if !prefix.is_empty() {
        map.insert("prefixItems".into(), prefix.into());
        map.insert("minItems".into(), len.into());
    }
    map.insert("maxItems".into(), len.into());
    Ok(Schema::from(map))
}

fn expr_for_struct(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
    fields: &[FieldInfo],
    default: &SerdeDefault,
    deny: bool,
) -> Result<Schema, CrdgenError> {
    let mut schema = if deny {
        Schema::try_from(json!({"type": "object", "additionalProperties": false}))
            .unwrap_or_default()
    } else {
        Schema::try_from(json!({"type": "object"})).unwrap_or_default()
    };
    // The container default, member by member, computed once when a field needs it.
    let mut container_default: Option<Vec<Value>> = None;
    // Which field gave each property, for clashes through a flattened field.
    let mut keys: HashMap<String, &FieldInfo> = HashMap::new();
    for f in fields.iter().filter(|f| !f.skip_de) {
        if f.flatten {
            if let Some(With::Schema(_)) = &f.with {
                return Err(unsupported(
                    krate,
                    info.module,
                    f.span,
                    "a `#[serde(flatten)]` field with `schema_with`",
                    FIX_EXACT,
                ));
            }
            let sub = flattened(g, f.schema_type(), f.validation.required);
            let flattened = (sub.get("properties").and_then(Value::as_object))
                .map(|p| p.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default();
            for key in flattened {
                claim_key(krate, info, &mut keys, key, f)?;
            }
            sp::flatten(&mut schema, sub);
            continue;
        }
        claim_key(krate, info, &mut keys, f.de_name.clone(), f)?;
        let mut s = field_schema(g, krate, info, f)?;
        let container_has_default = *default != SerdeDefault::None;
        if !(f.skip_ser || (f.default == SerdeDefault::None && !container_has_default)) {
            let mut ev = Eval::new(krate);
            let value = match &f.default {
                SerdeDefault::None => {
                    if container_default.is_none() {
                        container_default = Some(container_default_members(krate, info, default)?);
                    }
                    let idx = info
                        .fields
                        .iter()
                        .position(|x| x.ident == f.ident)
                        .unwrap_or(0);
                    container_default
                        .as_ref()
                        .and_then(|c| c.get(idx).cloned())
                        .unwrap_or(Value::Null)
                }
                SerdeDefault::Default => ev.default_value(&f.ty, info.module, f.span)?,
                SerdeDefault::Path(p) => {
                    ev.call_fn(p, &f.ty, info.module, Some(info.def), f.span)?
                }
            };
            let keep = match &f.skip_ser_if {
                Some(pred) => !ev.predicate(pred, &value, info.module, f.span)?,
                None => true,
            };
            if keep {
                s.insert("default".into(), value);
            }
        }
        f.common.apply_post(&mut s);
        let has_default = container_has_default || f.default != SerdeDefault::None;
        let has_skip_if = f.skip_ser_if.is_some();
        let required_attr = f.validation.required;
        // A `schema_with` function's schema is never an `Option`'s (schemars asks the function's
        // stand-in type, which is not one).
        let of_option = match &f.with {
            Some(With::Schema(_)) => false,
            _ => is_option(f.schema_type()),
        };
        let is_optional = if has_skip_if && has_default {
            true
        } else {
            has_default || (!required_attr && of_option)
        };
        sp::insert_object_property(&mut schema, &f.de_name, is_optional, s);
    }
    Ok(schema)
}

/// Records that `field` gives the property `key` of `info`'s object, refusing a key another
/// field gave already. Through `#[serde(flatten)]` (a flattened struct's field named as one of the
/// outer struct's, or as one of another flattened struct's), serde compiles both: it writes the key
/// twice and, reading, gives it to the first field only (the other's is then missing), and the
/// CRD keeps one property. Two named fields are refused before ([`one_key_per_field`]).
fn claim_key<'f>(
    krate: &Model,
    info: &TypeInfo,
    keys: &mut HashMap<String, &'f FieldInfo>,
    key: String,
    field: &'f FieldInfo,
) -> Result<(), CrdgenError> {
    let via = |f: &FieldInfo| {
        if f.flatten {
            format!("the flattened field `{}`", f.ident)
        } else {
            format!("the field `{}`", f.ident)
        }
    };
    if let Some(other) = keys.get(&key) {
        return Err(CrdgenError::Source {
            loc: krate.mod_loc(info.module, field.span),
            what: format!(
                "{} of `{}` gives the JSON key {key:?}, and so does {} (at {}): serde writes the key twice and reads it into one of them only, and the CRD has one property for both; give each a key of its own, e.g. `#[serde(rename = \"{key}2\")]` on the field named {key:?}",
                via(field),
                info.ident,
                via(other),
                krate.mod_loc(info.module, other.span),
            ),
        });
    }
    keys.insert(key, field);
    Ok(())
}

/// The members of the container's default value (`Self::default()` or `path()`), serialized.
fn container_default_members(
    krate: &Model,
    info: &TypeInfo,
    default: &SerdeDefault,
) -> Result<Vec<Value>, CrdgenError> {
    let mut ev = Eval::new(krate);
    let whole = match default {
        SerdeDefault::Default => ev.user_default(info.def, info.span)?,
        SerdeDefault::Path(p) => ev.call_fn(
            p,
            &Ty::User(info.def),
            info.module,
            Some(info.def),
            info.span,
        )?,
        SerdeDefault::None => Value::Null,
    };
    // Re-derive member values: serialized object keyed by serialize names (skipped members absent).
    let mut out = Vec::new();
    for f in &info.fields {
        let v = whole.get(&f.ser_name).cloned();
        match v {
            Some(v) => out.push(v),
            None if f.skip_ser => out.push(Value::Null),
            None => {
                // Omitted by skip_serializing_if: the member's value is what the predicate skipped.
                out.push(
                    match f
                        .skip_ser_if
                        .as_deref()
                        .map(|p| p.rsplit("::").next().unwrap_or(p))
                    {
                        Some("is_none") => Value::Null,
                        Some("is_empty") => ev.default_value(&f.ty, info.module, f.span)?,
                        _ => Value::Null,
                    },
                );
            }
        }
    }
    Ok(out)
}

fn expr_for_enum(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
) -> Result<Schema, CrdgenError> {
    if info.variants.is_empty() {
        return Ok(Schema::from(false));
    }
    let deny = info.deny_unknown_fields;
    match &info.tag {
        Tag::Internal(t) if tagged_variants(info) < 2 => Err(unsupported(
            krate,
            info.module,
            info.tag_span,
            format!(
                "the internally tagged enum `{}` (`#[serde(tag = {t:?})]`) with one variant (internal tagging is not emulated)",
                info.ident
            ),
            FIX_EXACT,
        )),
        Tag::Internal(t) => Err(tag_conflict(
            krate,
            info,
            format!("internally tagged (`#[serde(tag = {t:?})]`)"),
        )),
        Tag::Adjacent(t, c) if tagged_variants(info) >= 2 => Err(tag_conflict(
            krate,
            info,
            format!("adjacently tagged (`#[serde(tag = {t:?}, content = {c:?})]`)"),
        )),
        Tag::External => {
            let live: Vec<&VariantInfo> = info.variants.iter().filter(|v| !v.skip_de).collect();
            let has_unit = live.iter().any(|v| v.style == Style::Unit && !v.untagged);
            let has_data = live.iter().any(|v| v.style != Style::Unit || v.untagged);
            if has_unit && has_data {
                return Err(CrdgenError::KubeCannotRender {
                    loc: krate.mod_loc(info.module, info.span),
                    what: format!(
                        "the enum `{}` mixes unit and data variants: kube-core's structural rewriter panics on it in `crd()`",
                        info.ident
                    ),
                    fix: "make every variant carry data (e.g. `Variant {}`), or split the enum"
                        .into(),
                });
            }
            let (unit, complex): (Vec<&VariantInfo>, Vec<&VariantInfo>) = live
                .iter()
                .partition(|v| v.style == Style::Unit && v.attrs_default() && !v.untagged);
            let mut unit_map = serde_json::Map::new();
            unit_map.insert("type".into(), "string".into());
            unit_map.insert(
                "enum".into(),
                Value::Array(
                    unit.iter()
                        .map(|v| Value::from(v.de_name.clone()))
                        .collect(),
                ),
            );
            let unit_schema = Schema::from(unit_map);
            if complex.is_empty() {
                return Ok(unit_schema);
            }
            let mut schemas: Vec<Value> = Vec::new();
            if !unit.is_empty() {
                schemas.push(unit_schema.to_value());
            }
            let mut unique = true;
            for v in complex {
                if v.untagged {
                    unique = false;
                    schemas.push(untagged_variant(g, krate, info, v, deny, true)?.to_value());
                    continue;
                }
                let mut s = if v.style == Style::Unit && v.with.is_none() {
                    sp::new_unit_enum_variant(&v.de_name)
                } else {
                    let sub = untagged_variant(g, krate, info, v, deny, false)?;
                    externally_tagged_variant(&v.de_name, sub)
                };
                v.common.apply(&mut s);
                v.common.apply_post(&mut s);
                schemas.push(s.to_value());
            }
            Ok(one_of(unique, schemas))
        }
        Tag::Untagged => {
            let mut schemas = Vec::new();
            for v in info.variants.iter().filter(|v| !v.skip_de) {
                schemas.push(untagged_variant(g, krate, info, v, deny, true)?.to_value());
            }
            Ok(one_of(false, schemas))
        }
        Tag::Adjacent(tag, content) => {
            let mut schemas = Vec::new();
            let mut unique = true;
            for v in info.variants.iter().filter(|v| !v.skip_de) {
                if v.untagged {
                    unique = false;
                    schemas.push(untagged_variant(g, krate, info, v, deny, true)?.to_value());
                    continue;
                }
                let mut props = serde_json::Map::new();
                props.insert(tag.clone(), json!({"type": "string", "const": v.de_name}));
                let mut required = vec![Value::from(tag.clone())];
                if !(v.style == Style::Unit && v.with.is_none()) {
                    props.insert(
                        content.clone(),
                        untagged_variant(g, krate, info, v, deny, false)?.to_value(),
                    );
                    required.push(content.clone().into());
                }
                let mut obj = serde_json::Map::new();
                obj.insert("type".into(), "object".into());
                obj.insert("properties".into(), props.into());
                obj.insert("required".into(), required.into());
                if deny {
                    obj.insert("additionalProperties".into(), false.into());
                }
                let mut s = Schema::from(obj);
                v.common.apply(&mut s);
                v.common.apply_post(&mut s);
                schemas.push(s.to_value());
            }
            Ok(one_of(unique, schemas))
        }
    }
}

/// `schemars::_private::new_externally_tagged_enum_variant`, with the variant's schema moved in
/// rather than serialized into a copy.
fn externally_tagged_variant(variant: &str, sub: Schema) -> Schema {
    let mut obj = serde_json::Map::new();
    obj.insert("type".into(), "object".into());
    let mut props = serde_json::Map::new();
    props.insert(variant.into(), sub.to_value());
    obj.insert("properties".into(), props.into());
    obj.insert("required".into(), vec![Value::from(variant)].into());
    obj.insert("additionalProperties".into(), false.into());
    Schema::from(obj)
}

/// The variants that carry a tag (deserializable, not `#[serde(untagged)]`).
fn tagged_variants(info: &TypeInfo) -> usize {
    info.variants
        .iter()
        .filter(|v| !v.skip_de && !v.untagged)
        .count()
}

/// kube-core's structural rewriter hoists the variants' properties into one object and panics
/// when the tag property differs between them, which it does for every internally or adjacently
/// tagged enum with two variants or more (kube-rs/kube#1279).
fn tag_conflict(krate: &Model, info: &TypeInfo, how: String) -> CrdgenError {
    CrdgenError::KubeCannotRender {
        loc: krate.mod_loc(info.module, info.tag_span),
        what: format!(
            "the {how} enum `{}`: kube-core's structural rewriter panics on it in `crd()` (the tag property differs per variant; kube-rs/kube#1279)",
            info.ident
        ),
        fix: "use an externally tagged enum, `#[serde(untagged)]`, or a struct with a `type` field and optional members".into(),
    }
}

fn one_of(unique: bool, schemas: Vec<Value>) -> Schema {
    let mut map = serde_json::Map::new();
    map.insert(
        if unique { "oneOf" } else { "anyOf" }.into(),
        Value::Array(schemas),
    );
    Schema::from(map)
}

fn untagged_variant(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
    v: &VariantInfo,
    deny: bool,
    actually_untagged: bool,
) -> Result<Schema, CrdgenError> {
    let mut s = if let Some(With::Type(t)) = &v.with {
        subschema(g, t)
    } else if let Some(With::Schema(s)) = &v.with {
        s.clone()
    } else {
        match v.style {
            Style::Unit => g.subschema_for::<()>(),
            Style::Newtype => only_field_schema(g, krate, info, &v.fields[0])?,
            Style::Tuple => expr_for_tuple(g, krate, info, &v.fields)?,
            Style::Struct => expr_for_struct(g, krate, info, &v.fields, &SerdeDefault::None, deny)?,
        }
    };
    if actually_untagged {
        v.common.apply(&mut s);
        v.common.apply_post(&mut s);
    }
    Ok(s)
}

/// What the schema of the root struct kube-derive generates (`Kind { metadata, spec, status }`) is
/// made from.
#[derive(Debug, Clone)]
pub(crate) struct RootSpec {
    pub spec: Ty,
    pub status: Option<Ty>,
    pub no_spec: bool,
    pub doc: String,
    pub root_name: String,
    pub rules: Vec<Rule>,
}

/// The root's schema as `into_root_schema_for` makes it, before the generator's transforms (which
/// [`crate::crdgen::derive::transforms::run`] applies).
pub(crate) fn root_schema(g: &mut SchemaGenerator, root: &RootSpec) -> Schema {
    let mut s = Schema::try_from(json!({"type": "object"})).unwrap_or_default();
    if root.no_spec {
        push_job(&root.spec);
        let sub = sp::json_schema_for_flatten::<Dyn>(g, false);
        sp::flatten(&mut s, sub);
    } else {
        let spec = subschema(g, &root.spec);
        sp::insert_object_property(&mut s, "spec", is_option(&root.spec), spec);
    }
    if let Some(st) = &root.status {
        let status = subschema(g, &Ty::Option(Box::new(st.clone())));
        sp::insert_object_property(&mut s, "status", true, status);
    }
    let doc = root.doc.strip_prefix(' ').unwrap_or(&root.doc);
    let (title, desc) = sp::get_title_and_description(doc);
    sp::insert_metadata_property_if_nonempty(&mut s, "title", title.to_string());
    sp::insert_metadata_property_if_nonempty(&mut s, "description", desc.to_string());
    for r in &root.rules {
        if let Err(e) = kube_core::validate(&mut s, r.clone()) {
            set_err(CrdgenError::Versions(e.to_string()));
        }
    }
    let obj = s.ensure_object();
    obj.entry("title")
        .or_insert_with(|| root.root_name.as_str().into());
    let defs = g.take_definitions(false);
    if !defs.is_empty() {
        let comps = obj
            .entry("components")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(c) = comps
            && let Value::Object(_) = c.entry("schemas").or_insert_with(|| json!({}))
            && let Some(Value::Object(target)) = c.get_mut("schemas")
        {
            target.extend(defs);
        }
    }
    s
}

/// The schema of a single field standing for its container (a newtype, a transparent struct):
/// the field's schema with its attributes applied after it, as schemars' derive does.
fn only_field_schema(
    g: &mut SchemaGenerator,
    krate: &Model,
    info: &TypeInfo,
    f: &FieldInfo,
) -> Result<Schema, CrdgenError> {
    let mut s = field_schema(g, krate, info, f)?;
    f.common.apply_post(&mut s);
    Ok(s)
}
