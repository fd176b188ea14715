//! Reading: the user's crate as the compiler would see it, without compiling it (module tree,
//! names and types, `#[cfg]`, attributes, literal values, and where each thing was written).

pub mod attrs;
pub mod cfg;
pub mod loader;
pub mod locate;
pub mod place_attrs;
pub mod resolve;
pub mod sources;
pub mod type_info;
pub mod watched;
