//! The attributes `generate crds` reads on every type, variant and field of the crate
//! (`#[serde]`, `#[schemars]`, `#[validate]`, `#[garde]`, `#[x_kube]`), parsed once when the crate
//! is loaded: the check of their keys ([`crate::crdgen::check::source_checks`]) and the schema's reading of them
//! ([`super::type_info`]) share the parse.

use crate::crdgen::read::attrs::{self, Merged, MetaItem, MetaKind, SERDE_KEYWORDS};
use crate::syntax::SetAsideAttrs;
use crate::syntax::meta::DerivePath;

/// The items of each attribute at one place, in order; `Err`: the first of its kind that does
/// not parse (reported by whoever reads it, as the compiler would).
#[derive(Debug)]
pub(crate) struct PlaceAttrs {
    pub serde: syn::Result<Vec<MetaItem>>,
    pub schemars: syn::Result<Vec<MetaItem>>,
    pub validate: syn::Result<Vec<MetaItem>>,
    pub garde: syn::Result<Vec<MetaItem>>,
    pub x_kube: syn::Result<Vec<MetaItem>>,
}

impl PlaceAttrs {
    pub fn parse(attrs: &[syn::Attribute], set_aside: &mut SetAsideAttrs) -> Self {
        PlaceAttrs {
            serde: attrs::meta_items_aside(attrs, "serde", set_aside),
            schemars: attrs::meta_items(attrs, "schemars"),
            validate: attrs::meta_items(attrs, "validate"),
            garde: attrs::meta_items(attrs, "garde"),
            x_kube: attrs::meta_items(attrs, "x_kube"),
        }
    }

    /// The items of `#[<name>(...)]`, for a name of [`attrs::CHECKED_ATTRS`].
    pub fn of(&self, name: &str) -> &syn::Result<Vec<MetaItem>> {
        match name {
            "serde" => &self.serde,
            "schemars" => &self.schemars,
            "validate" => &self.validate,
            "garde" => &self.garde,
            "x_kube" => &self.x_kube,
            other => unreachable!("`#[{other}]` is not read at every place"),
        }
    }
}

/// The attributes of one definition: its own, its fields' (a struct), its variants' and their
/// fields' (an enum), in declaration order; and the paths it derives.
#[derive(Debug)]
pub(crate) struct DefAttrs {
    pub own: PlaceAttrs,
    pub fields: Vec<PlaceAttrs>,
    pub variants: Vec<(PlaceAttrs, Vec<PlaceAttrs>)>,
    pub derives: Vec<DerivePath>,
}

impl PlaceAttrs {
    /// The items of one place's attributes merged as schemars reads them; the first attribute that
    /// does not parse (in the order `schemars`, `serde`, `validate`, `garde`) is the error.
    pub fn merged(&self) -> syn::Result<Merged<'_>> {
        let place = self;
        fn items(parsed: &syn::Result<Vec<MetaItem>>) -> syn::Result<&[MetaItem]> {
            parsed.as_deref().map_err(syn::Error::clone)
        }
        let schemars = items(&place.schemars)?;
        let serde_all = items(&place.serde)?;
        let validate = items(&place.validate)?;
        let garde = items(&place.garde)?;
        let mut schemars_names: Vec<&str> = Vec::new();
        let mut unset: Vec<&str> = Vec::new();
        let mut serde = Vec::new();
        for m in schemars {
            if matches!(m.kind, MetaKind::Not) {
                unset.push(&m.name);
            } else if SERDE_KEYWORDS.contains(&m.name.as_str()) {
                schemars_names.push(&m.name);
                serde.push(m);
            }
        }
        if schemars_names.contains(&"skip") {
            schemars_names.push("skip_serializing");
            schemars_names.push("skip_deserializing");
        }
        let mut serde_with = Vec::new();
        for m in serde_all {
            if m.name == "with" || m.name == "serialize_with" {
                serde_with.push(m);
                continue;
            }
            if !schemars_names.contains(&m.name.as_str())
                && !unset.contains(&m.name.as_str())
                && SERDE_KEYWORDS.contains(&m.name.as_str())
            {
                serde.push(m);
            }
        }
        Ok(Merged {
            serde,
            schemars,
            serde_with,
            validate,
            garde,
        })
    }
}
