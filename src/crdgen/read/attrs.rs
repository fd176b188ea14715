//! Attribute parsing: `#[serde(...)]` and `#[schemars(...)]` merged the way schemars_derive does
//! (a schemars keyword overrides the serde one of the same name), `#[validate(...)]` and
//! `#[garde(...)]` (validation keywords schemars reads), doc comments,
//! `#[kube(...)]` and `#[x_kube(...)]`, and serde's rename rules.

use std::borrow::Cow;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Token};

use crate::syntax::meta::{self, Args, DerivePath};
use crate::syntax::{DocComments, Pos, SetAsideAttrs};

/// One item inside `#[serde(...)]` / `#[schemars(...)]`, at the place of its name.
#[derive(Debug, Clone)]
pub(crate) struct MetaItem {
    pub name: String,
    pub pos: Pos,
    pub kind: MetaKind,
}

#[derive(Debug, Clone)]
pub(crate) enum MetaKind {
    Flag,
    Value(Value),
    List(TokenStream),
    Not,
}

/// The value after `name =`: syn's expression, or a literal read without syn (see
/// [`crate::syntax::meta`]).
#[derive(Debug, Clone)]
pub(crate) enum Value {
    Expr(Box<Expr>),
    Lit(meta::Lit),
}

impl Value {
    /// The value of a string literal.
    pub fn str(&self) -> Option<String> {
        match self {
            Value::Expr(e) => lit_str(e),
            Value::Lit(l) => l.str_value().map(str::to_string),
        }
    }

    /// The value as syn's expression (a literal read without syn is parsed at its place, so its
    /// span is the file's).
    pub fn expr(&self) -> Cow<'_, Expr> {
        match self {
            Value::Expr(e) => Cow::Borrowed(e),
            Value::Lit(l) => Cow::Owned(
                crate::syntax::pos::parse_at(&l.text, l.pos)
                    // The reader takes only literals syn parses; should one not, it is no value.
                    .unwrap_or_else(|_| Expr::Verbatim(TokenStream::new())),
            ),
        }
    }

    /// Where the value is written.
    pub fn pos(&self) -> Pos {
        match self {
            Value::Expr(e) => e.span().into(),
            Value::Lit(l) => l.pos,
        }
    }
}

impl MetaItem {
    pub fn str_value(&self) -> Option<String> {
        match &self.kind {
            MetaKind::Value(v) => v.str(),
            _ => None,
        }
    }
}

impl From<meta::Meta> for MetaItem {
    fn from(m: meta::Meta) -> Self {
        MetaItem {
            name: m.name,
            pos: m.pos,
            kind: match m.arg {
                meta::Arg::Flag => MetaKind::Flag,
                meta::Arg::Not => MetaKind::Not,
                meta::Arg::Lit(l) => MetaKind::Value(Value::Lit(l)),
            },
        }
    }
}

/// An attribute that does not read: where, and what is wrong (syn's words, or ours in its style).
#[derive(Debug, Clone)]
pub(crate) struct AttrError {
    pub pos: Pos,
    pub message: String,
}

impl From<syn::Error> for AttrError {
    fn from(e: syn::Error) -> Self {
        AttrError {
            pos: e.span().into(),
            message: e.to_string(),
        }
    }
}

pub(crate) fn lit_str(e: &Expr) -> Option<String> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(lit_str_value(s)),
        Expr::Group(g) => lit_str(&g.expr),
        _ => None,
    }
}

/// The value of a string literal. Most literals (doc comments above all) have no escapes: their
/// text between the quotes is the value, without syn's character-by-character unescaping.
fn lit_str_value(s: &syn::LitStr) -> String {
    let repr = s.token().to_string();
    match repr.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        // `\r` too: a CRLF inside a literal means `\n`.
        Some(inner) if !inner.contains(['\\', '\r', '"']) => inner.to_string(),
        _ => s.value(),
    }
}

fn parse_meta_item(input: ParseStream) -> syn::Result<MetaItem> {
    if input.peek(Token![!]) {
        let bang: Token![!] = input.parse()?;
        let ident = input.call(syn::Ident::parse_any)?;
        return Ok(MetaItem {
            name: ident.to_string(),
            pos: bang.span.into(),
            kind: MetaKind::Not,
        });
    }
    let ident = input.call(syn::Ident::parse_any)?;
    let pos = ident.span().into();
    let name = ident.to_string();
    let kind = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        MetaKind::Value(Value::Expr(Box::new(parse_value(input)?)))
    } else if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        MetaKind::List(content.parse()?)
    } else {
        MetaKind::Flag
    };
    Ok(MetaItem { name, pos, kind })
}

/// The value after `key =`. A lone literal (most values: `"name"`, `10`) is what syn's expression
/// parser would make of it, `Expr::Lit`, taken without running that parser; anything else is
/// parsed as an expression.
fn parse_value(input: ParseStream) -> syn::Result<Expr> {
    let lone_literal = input.cursor().literal().is_some_and(|(_, rest)| {
        rest.eof() || rest.punct().is_some_and(|(p, _)| p.as_char() == ',')
    });
    if lone_literal {
        return Ok(Expr::Lit(syn::ExprLit {
            attrs: Vec::new(),
            lit: input.parse()?,
        }));
    }
    input.parse()
}

/// Parse a comma-separated list of meta items.
pub(crate) fn parse_meta_list(tokens: TokenStream) -> syn::Result<Vec<MetaItem>> {
    let parser = |input: ParseStream| {
        let mut out = Vec::new();
        while !input.is_empty() {
            out.push(parse_meta_item(input)?);
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(out)
    };
    parser.parse2(tokens)
}

/// Every item of every `#[<name>(...)]` attribute, in order.
pub(crate) fn meta_items(attrs: &[syn::Attribute], name: &str) -> syn::Result<Vec<MetaItem>> {
    meta_items_aside(attrs, name, &mut SetAsideAttrs::default())
}

/// [`meta_items`] of a file whose attributes read without syn are in `set_aside` (moved out of it).
pub(crate) fn meta_items_aside(
    attrs: &[syn::Attribute],
    name: &str,
    set_aside: &mut SetAsideAttrs,
) -> syn::Result<Vec<MetaItem>> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident(name)) {
        match &a.meta {
            syn::Meta::List(l) => out.extend(parse_meta_list(l.tokens.clone())?),
            syn::Meta::Path(_) => {
                if let Some(Args::Serde(items)) = set_aside.take(a.pound_token.span.into()) {
                    out.extend(items.into_iter().map(MetaItem::from));
                }
            }
            syn::Meta::NameValue(nv) => {
                return Err(syn::Error::new(
                    nv.span(),
                    format!("expected #[{name}(...)]"),
                ));
            }
        }
    }
    Ok(out)
}

/// The keywords schemars lets serde_derive_internals parse (a schemars one overrides serde's).
pub(crate) const SERDE_KEYWORDS: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "deny_unknown_fields",
    "tag",
    "content",
    "untagged",
    "default",
    "skip",
    "skip_serializing",
    "skip_serializing_if",
    "skip_deserializing",
    "flatten",
    "remote",
    "transparent",
    "into",
    "from",
    "try_from",
];

/// The effective serde items after schemars' override rules, plus the schemars-only items
/// (what [`super::place_attrs::PlaceAttrs::merged`] gives).
pub(crate) struct Merged<'a> {
    pub serde: Vec<&'a MetaItem>,
    pub schemars: &'a [MetaItem],
    /// `#[serde(with/serialize_with = ...)]` items (kept as serde has them).
    pub serde_with: Vec<&'a MetaItem>,
    pub validate: &'a [MetaItem],
    /// `#[garde(...)]`, which schemars reads for validation keywords too.
    pub garde: &'a [MetaItem],
}

/// serde's `RenameRule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum RenameRule {
    #[default]
    None,
    LowerCase,
    UpperCase,
    PascalCase,
    CamelCase,
    SnakeCase,
    ScreamingSnakeCase,
    KebabCase,
    ScreamingKebabCase,
}

impl RenameRule {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => Self::LowerCase,
            "UPPERCASE" => Self::UpperCase,
            "PascalCase" => Self::PascalCase,
            "camelCase" => Self::CamelCase,
            "snake_case" => Self::SnakeCase,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnakeCase,
            "kebab-case" => Self::KebabCase,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebabCase,
            _ => return None,
        })
    }

    pub fn or(self, other: Self) -> Self {
        if self == Self::None { other } else { self }
    }

    pub fn apply_to_variant(self, variant: &str) -> String {
        use RenameRule::*;
        match self {
            None | PascalCase => variant.to_owned(),
            LowerCase => variant.to_ascii_lowercase(),
            UpperCase => variant.to_ascii_uppercase(),
            CamelCase => variant[..1].to_ascii_lowercase() + &variant[1..],
            SnakeCase => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            ScreamingSnakeCase => SnakeCase.apply_to_variant(variant).to_ascii_uppercase(),
            KebabCase => SnakeCase.apply_to_variant(variant).replace('_', "-"),
            ScreamingKebabCase => ScreamingSnakeCase
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    pub fn apply_to_field(self, field: &str) -> String {
        use RenameRule::*;
        match self {
            None | LowerCase | SnakeCase => field.to_owned(),
            UpperCase => field.to_ascii_uppercase(),
            PascalCase => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            CamelCase => {
                let pascal = PascalCase.apply_to_field(field);
                pascal[..1].to_ascii_lowercase() + &pascal[1..]
            }
            ScreamingSnakeCase => field.to_ascii_uppercase(),
            KebabCase => field.replace('_', "-"),
            ScreamingKebabCase => ScreamingSnakeCase.apply_to_field(field).replace('_', "-"),
        }
    }
}

/// `rename = "x"` or `rename(serialize = "a", deserialize = "b")`: the deserialize side (schemars'
/// default contract is Deserialize), and the serialize side (for default values).
pub(crate) fn ser_de_str(m: &MetaItem) -> Result<(Option<String>, Option<String>), AttrError> {
    match &m.kind {
        MetaKind::Value(v) => {
            let s = v.str().ok_or_else(|| AttrError {
                pos: m.pos,
                message: format!("`{}` expects a string", m.name),
            })?;
            Ok((Some(s.clone()), Some(s)))
        }
        MetaKind::List(ts) => {
            let items = parse_meta_list(ts.clone())?;
            let mut ser = None;
            let mut de = None;
            for i in items {
                match i.name.as_str() {
                    "serialize" => ser = i.str_value(),
                    "deserialize" => de = i.str_value(),
                    _ => {}
                }
            }
            Ok((ser, de))
        }
        _ => Err(AttrError {
            pos: m.pos,
            message: format!("`{}` expects a value", m.name),
        }),
    }
}

/// The doc comment as schemars_derive joins it: lines joined with `\n`, one leading space removed.
/// `docs`: the doc comments the loader set aside from the file (see `syntax::DocComments`).
/// `Err` when a doc attribute is not a plain string (e.g. `include_str!`).
pub(crate) fn doc(attrs: &[syn::Attribute], docs: &DocComments) -> Result<Option<String>, Span> {
    let mut out: Option<String> = None;
    for a in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let owned;
        // Lines joined with `\n`, each less one leading space.
        let lines = match &a.meta {
            syn::Meta::NameValue(nv) => {
                owned = lit_str(&nv.value).ok_or_else(|| nv.value.span())?;
                owned.strip_prefix(' ').unwrap_or(&owned)
            }
            // A run of doc comments set aside is a bare `#[doc]` at the first comment's place.
            syn::Meta::Path(_) => {
                let at = a.pound_token.span.start();
                match docs.at(at.line, at.column) {
                    Some(joined) => joined,
                    None => continue,
                }
            }
            syn::Meta::List(_) => continue,
        };
        match &mut out {
            None => out = Some(lines.to_string()),
            Some(o) => {
                o.push('\n');
                o.push_str(lines);
            }
        }
    }
    Ok(out)
}

/// The paths in `#[derive(...)]`, as written (see `Crate::derives` for what they name); those
/// read without syn are moved out of `set_aside`.
pub(crate) fn derive_paths(
    attrs: &[syn::Attribute],
    set_aside: &mut SetAsideAttrs,
) -> Vec<DerivePath> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        if let syn::Meta::Path(_) = a.meta {
            if let Some(Args::Derive(paths)) = set_aside.take(a.pound_token.span.into()) {
                out.extend(paths);
            }
            continue;
        }
        let _ = a.parse_nested_meta(|m| {
            out.push(DerivePath {
                leading_colon: m.path.leading_colon.is_some(),
                segments: m
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect(),
            });
            Ok(())
        });
    }
    out
}

/// Where an attribute sits: on a type, on an enum variant, or on a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    Container,
    Variant,
    Field,
}

/// Every key the derive that owns `#[<attr>(...)]` accepts at `pos` (serde_derive 1, schemars 1,
/// kube-derive 5's `CustomResource` and `KubeSchema`, garde, validator); `None`: not one we check.
pub(crate) fn known_keys(attr: &str, pos: Position) -> Option<&'static [&'static str]> {
    use Position::*;
    Some(match (attr, pos) {
        ("serde", Container) => &[
            "rename",
            "rename_all",
            "rename_all_fields",
            "deny_unknown_fields",
            "tag",
            "content",
            "untagged",
            "bound",
            "default",
            "remote",
            "transparent",
            "from",
            "try_from",
            "into",
            "crate",
            "expecting",
            "variant_identifier",
            "field_identifier",
        ],
        ("serde", Variant) => &[
            "rename",
            "alias",
            "rename_all",
            "skip",
            "skip_serializing",
            "skip_deserializing",
            "serialize_with",
            "deserialize_with",
            "with",
            "bound",
            "borrow",
            "other",
            "untagged",
        ],
        ("serde", Field) => &[
            "rename",
            "alias",
            "default",
            "flatten",
            "skip",
            "skip_serializing",
            "skip_deserializing",
            "skip_serializing_if",
            "serialize_with",
            "deserialize_with",
            "with",
            "borrow",
            "bound",
            "getter",
        ],
        ("schemars", _) => &[
            "rename",
            "rename_all",
            "rename_all_fields",
            "deny_unknown_fields",
            "tag",
            "content",
            "untagged",
            "default",
            "skip",
            "skip_serializing",
            "skip_serializing_if",
            "skip_deserializing",
            "flatten",
            "remote",
            "transparent",
            "into",
            "from",
            "try_from",
            "bound",
            "serialize_with",
            "with",
            "title",
            "description",
            "example",
            "extend",
            "transform",
            "schema_with",
            "crate",
            "inline",
            "_unstable_ref_variants",
            "length",
            "range",
            "required",
            "pattern",
            "regex",
            "contains",
            "inner",
            "email",
            "url",
            "ip",
        ],
        ("x_kube", Field) => &["validation", "merge_strategy"],
        ("x_kube", _) => &["crates", "validation", "cel"],
        ("kube", Container) => &[
            "group",
            "version",
            "kind",
            "doc",
            "root",
            "plural",
            "singular",
            "namespaced",
            "no_spec",
            "derive",
            "attr",
            "schema",
            "status",
            "category",
            "shortname",
            "printcolumn",
            "selectable",
            "scale",
            "crates",
            "annotation",
            "label",
            "validation",
            "cel",
            "storage",
            "served",
            "deprecated",
        ],
        ("garde", _) => &[
            "skip",
            "required",
            "ascii",
            "alphanumeric",
            "email",
            "url",
            "ip",
            "ipv4",
            "ipv6",
            "credit_card",
            "phone_number",
            "length",
            "matches",
            "range",
            "contains",
            "prefix",
            "suffix",
            "pattern",
            "custom",
            "dive",
            "inner",
            "keys",
            "adapt",
            "context",
            "allow_unvalidated",
            "transparent",
        ],
        ("validate", _) => &[
            "email",
            "url",
            "length",
            "range",
            "must_match",
            "contains",
            "does_not_contain",
            "custom",
            "regex",
            "credit_card",
            "phone",
            "non_control_character",
            "required",
            "required_nested",
            "nested",
            "ip",
            "schema",
        ],
        _ => return None,
    })
}

/// The attributes whose keys are checked (the compiler rejects an unknown key in each).
pub(crate) const CHECKED_ATTRS: &[&str] = &["serde", "schemars", "x_kube", "garde", "validate"];

/// The first of the items of an `#[<attr>(...)]` (all of them at one place) that its derive does
/// not know, with the closest valid key: `(span, message)`.
pub(crate) fn unknown_key(items: &[MetaItem], attr: &str, pos: Position) -> Option<(Pos, String)> {
    let known = known_keys(attr, pos)?;
    let bad = items.iter().find(|m| !known.contains(&m.name.as_str()))?;
    let hint = match crate::suggest::suggest(&bad.name, known) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("the keys it takes here: {}", known.join(", ")),
    };
    let place = match pos {
        Position::Container => "a type",
        Position::Variant => "a variant",
        Position::Field => "a field",
    };
    Some((
        bad.pos,
        format!(
            "unknown key `{}` in `#[{attr}(...)]` on {place}: the compiler rejects it, and operator-rs will not guess what it means; {hint}",
            bad.name
        ),
    ))
}
