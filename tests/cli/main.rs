//! The CLI's commands end to end on scaffolded projects, one test binary: `init` and `create api`
//! (`commands`), `edit api` (`edit_api`), `create webhook` (`webhook`), rerunning commands
//! (`rerun`), rustfmt-clean rendering (`formatting`) and sharded managers (`init --sharded`,
//! `edit --sharded`: `sharded`).

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod edit_api;
mod formatting;
mod rerun;
mod sharded;
mod webhook;
