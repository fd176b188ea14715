//! `#[cfg(...)]` and `#[cfg_attr(...)]` as the static reader can decide them: predicates whose
//! value holds whatever the build (`test`, which `generate crds` never is, and `all`/`any`/`not`
//! of such), and the attributes a `cfg_attr` carries. A predicate that depends on the build
//! (`feature = "..."`, `unix`, `debug_assertions`, a `--cfg` flag...) has no static value: the
//! reader refuses it where it changes a schema (see [`crate::crdgen::check::source_checks`]) and points to
//! `--exact`, which compiles the crate.

use proc_macro2::{Delimiter, TokenTree};
use syn::Token;
use syn::punctuated::Punctuated;

/// The value of a cfg predicate in every build `generate crds` stands for (`None`: it depends on
/// the build).
pub(crate) fn eval(pred: &syn::Meta) -> Option<bool> {
    match pred {
        syn::Meta::Path(p) if p.is_ident("test") => Some(false),
        syn::Meta::List(l) => {
            let args = l
                .parse_args_with(Punctuated::<syn::Meta, Token![,]>::parse_terminated)
                .ok()?;
            let values: Vec<Option<bool>> = args.iter().map(eval).collect();
            if l.path.is_ident("all") {
                if values.contains(&Some(false)) {
                    Some(false)
                } else if values.iter().all(Option::is_some) {
                    Some(true)
                } else {
                    None
                }
            } else if l.path.is_ident("any") {
                if values.contains(&Some(true)) {
                    Some(true)
                } else if values.iter().all(Option::is_some) {
                    Some(false)
                } else {
                    None
                }
            } else if l.path.is_ident("not") && values.len() == 1 {
                values[0].map(|v| !v)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The value of the `#[cfg(...)]` attributes among `attrs` (all must hold): `Some(true)` when
/// there is none.
pub(crate) fn holds(attrs: &[syn::Attribute]) -> Option<bool> {
    let mut out = Some(true);
    for a in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        match a.parse_args::<syn::Meta>().ok().and_then(|m| eval(&m)) {
            Some(false) => return Some(false),
            Some(true) => {}
            None => out = None,
        }
    }
    out
}

/// The first `#[cfg(...)]` among `attrs` whose value depends on the build.
pub(crate) fn undecided(attrs: &[syn::Attribute]) -> Option<&syn::Attribute> {
    attrs.iter().find(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .ok()
                .and_then(|m| eval(&m))
                .is_none()
    })
}

/// A `#[cfg_attr(predicate, attr, ...)]`: its predicate and the attributes it carries (`None`
/// when it is not one, or does not parse: the compiler reports that).
pub(crate) fn cfg_attr(a: &syn::Attribute) -> Option<(syn::Meta, Vec<syn::Meta>)> {
    if !a.path().is_ident("cfg_attr") {
        return None;
    }
    let args = a
        .parse_args_with(Punctuated::<syn::Meta, Token![,]>::parse_terminated)
        .ok()?;
    let mut args = args.into_iter();
    let pred = args.next()?;
    Some((pred, args.collect()))
}

/// Attribute tokens as people write them (`#[cfg(feature = "x")]`, not the token stream's
/// `# [cfg (feature = "x")]`), for messages.
pub(crate) fn written(tokens: impl quote::ToTokens) -> String {
    fn push(out: &mut String, ts: proc_macro2::TokenStream) {
        let mut word_before = false;
        for tt in ts {
            match tt {
                TokenTree::Ident(_) | TokenTree::Literal(_) => {
                    if word_before {
                        out.push(' ');
                    }
                    out.push_str(&tt.to_string());
                    word_before = true;
                }
                TokenTree::Punct(p) => {
                    match p.as_char() {
                        ',' => out.push_str(", "),
                        '=' if p.spacing() == proc_macro2::Spacing::Alone => out.push_str(" = "),
                        c => out.push(c),
                    }
                    word_before = false;
                }
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::None => ("", ""),
                    };
                    out.push_str(open);
                    push(out, g.stream());
                    out.push_str(close);
                    word_before = false;
                }
            }
        }
    }
    let mut out = String::new();
    push(&mut out, tokens.into_token_stream());
    out
}

#[cfg(test)]
mod tests {
    use super::{eval, written};

    #[test]
    fn attributes_are_shown_as_written() {
        let a: syn::Attribute =
            syn::parse_quote!(#[cfg_attr(all(), serde(rename_all = "camelCase", crate = "x::y"))]);
        assert_eq!(
            written(&a),
            "#[cfg_attr(all(), serde(rename_all = \"camelCase\", crate = \"x::y\"))]"
        );
    }

    fn of(s: &str) -> Option<bool> {
        eval(&syn::parse_str(s).unwrap())
    }

    #[test]
    fn decides_only_what_no_build_changes() {
        assert_eq!(of("test"), Some(false));
        assert_eq!(of("not(test)"), Some(true));
        assert_eq!(of("all()"), Some(true));
        assert_eq!(of("any()"), Some(false));
        assert_eq!(of("all(test, feature = \"x\")"), Some(false));
        assert_eq!(of("any(not(test), unix)"), Some(true));
        assert_eq!(of("any(test, unix)"), None);
        assert_eq!(of("feature = \"x\""), None);
        assert_eq!(of("debug_assertions"), None);
        assert_eq!(of("not(feature = \"x\")"), None);
    }
}
