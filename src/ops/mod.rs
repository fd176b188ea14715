//! The work below the commands, as cargo's `ops/` is below its command files: a command module
//! reads its arguments, validates them and plans; what several commands do, and the one way
//! each scaffolding command finishes, is here, so no command calls another.
//!
//! - [`finish`](mod@finish): the finishing step every scaffolding command ends in (record, regenerate,
//!   refuse, check, write, print);
//! - [`regenerate`]: the manifests regenerated into what a command writes;
//! - [`relayout`]: the move between the single-group and multigroup layouts (`edit
//!   --multigroup`);
//! - [`settings`]: the switch of the manager's scope and sharding (`edit --namespaced`,
//!   `edit --sharded`);
//! - [`scaffold_record`]: PROJECT's record of the scaffold, and the replay of a project's
//!   commands it is computed from (`update` proves its ancestor with it).

pub mod finish;
pub mod regenerate;
pub mod relayout;
pub mod scaffold_record;
pub mod settings;

pub use finish::{Existing, Plan, finish};
pub use regenerate::Crds;
