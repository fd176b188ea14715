//! CEL, as kube-apiserver compiles an `x-kubernetes-validations` rule: the parser and macro
//! expansion ([`expr`]), the declarations a rule sees (`self`, `oldSelf`, the schema's types:
//! [`decl`], [`types`]), the type checker ([`checker`]), and the cost estimator ([`coster`])
//! with the API server's budgets ([`cost`]). It knows nothing of Rust or of kube-derive: its
//! input is a rule and the schema it sits on.

pub mod checker;
pub mod cost;
pub mod coster;
pub mod decl;
pub mod expr;
pub mod types;
