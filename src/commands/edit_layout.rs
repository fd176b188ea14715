//! `operator-rs edit --multigroup[=BOOL]`: move a project between the single-group layout
//! (`src/api/<version>/`) and the multigroup one (`src/api/<group>/<version>/`, kubebuilder's
//! `edit --multigroup`); the move itself is planned in [`crate::ops::relayout`].

use std::path::Path;

use anyhow::Result;

use crate::ops::{self, relayout};
use crate::project::Project;
use crate::workspace::DiskTree;

/// `operator-rs edit --multigroup[=BOOL]`: moves the project under `root` to the multigroup
/// layout (`multigroup`) or back to the single-group one.
pub fn run(root: &Path, multigroup: bool) -> Result<()> {
    let before = Project::load(root)?;
    let name = relayout::layout_name;
    if before.multigroup == multigroup {
        crate::errln!(
            "{} is already in the {} layout; nothing to change.",
            before.project_name,
            name(multigroup)
        );
        return Ok(());
    }
    let disk = DiskTree::new(root);
    let relayout = relayout::plan(&disk, &before, multigroup)?;
    ops::finish(root, relayout.plan)?;
    relayout::remove_emptied_folders(root, &relayout.emptied);
    crate::errln!(
        "\n{} is now in the {} layout: {}.",
        before.project_name,
        name(multigroup),
        if multigroup {
            "src/api/<group>/<version>/<kind>.rs, src/controllers/<group>/<kind>.rs, src/webhooks/<group>/<version>/"
        } else {
            "src/api/<version>/<kind>.rs, src/controllers/<kind>.rs, src/webhooks/<version>/"
        }
    );
    if !relayout.kept.is_empty() {
        crate::errln!(
            "These module files hold code of yours, so they stay, but no module declares them any more: move what you wrote, then delete them:\n  {}",
            relayout.kept.join("\n  ")
        );
    }
    Ok(())
}
