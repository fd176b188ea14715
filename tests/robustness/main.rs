//! Robustness of the CLI, one test binary: hostile or broken input (`input`), property tests
//! of the name validators and the YAML value path (`props`), broken user sources (`source`),
//! and writes that never leave a half-written project (`writes`).

#[path = "../common/mod.rs"]
mod common;

mod input;
mod props;
mod source;
mod writes;
