//! The attributes `generate crds` reads on every type, variant and field of the crate
//! (`#[serde]`, `#[schemars]`, `#[validate]`, `#[garde]`, `#[x_kube]`), parsed once when the crate
//! is loaded: the check of their keys ([`crate::crdgen::check::source_checks`]) and the schema's reading of them
//! ([`super::type_info`]) share the parse.

use crate::crdgen::read::attrs::{self, MetaItem};
use crate::crdgen::read::loader::DefItem;
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
    fn parse(attrs: &[syn::Attribute], set_aside: &mut SetAsideAttrs) -> Self {
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

impl DefAttrs {
    /// `set_aside`: the attributes of the definition's file read without syn.
    pub fn parse(item: &DefItem, own: &[syn::Attribute], set_aside: &mut SetAsideAttrs) -> Self {
        let fields_of = |fields: &syn::Fields, set_aside: &mut SetAsideAttrs| {
            fields
                .iter()
                .map(|f| PlaceAttrs::parse(&f.attrs, set_aside))
                .collect()
        };
        let (fields, variants) = match item {
            DefItem::Struct(s) => (fields_of(&s.fields, set_aside), Vec::new()),
            DefItem::Enum(e) => (
                Vec::new(),
                e.variants
                    .iter()
                    .map(|v| {
                        let own = PlaceAttrs::parse(&v.attrs, set_aside);
                        (own, fields_of(&v.fields, set_aside))
                    })
                    .collect(),
            ),
            DefItem::Alias(_) => (Vec::new(), Vec::new()),
        };
        DefAttrs {
            own: PlaceAttrs::parse(own, set_aside),
            fields,
            variants,
            derives: attrs::derive_paths(own, set_aside),
        }
    }
}
