//! The CLI's commands end to end on scaffolded projects, one test binary: `init` and `create api`
//! (`commands`), `edit api` (`edit_api`), `create webhook` (`webhook`), rerunning commands
//! (`rerun`), rustfmt-clean rendering (`formatting`), the multigroup layout (`multigroup`) and
//! sharded managers (`init --sharded`,
//! `edit --sharded`: `sharded`).

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod edit_api;
mod formatting;
mod multigroup;
mod rerun;
mod sharded;
mod webhook;
