//! Where a kind's Rust modules live, in the project's layout: the single-group one
//! (`src/api/<version>/<kind>.rs`, `src/controllers/<kind>.rs`, `src/webhooks/<version>/`) or
//! the multigroup one (PROJECT `multigroup: true`, kubebuilder's `--multigroup`):
//! `src/api/<group>/<version>/<kind>.rs`, `src/controllers/<group>/<kind>.rs`,
//! `src/webhooks/<group>/<version>/`, so two groups may each have a kind of one name.

use super::{Project, Resource};
use crate::names;

/// The module under `src/api/` that holds the types of kinds from other projects' CRDs
/// (`create api --from-crd`): no group of the project's own kinds may have it in the
/// multigroup layout.
pub const EXTERNAL_MODULE: &str = "external";

/// The layout of one project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// PROJECT's `multigroup`.
    pub multigroup: bool,
}

impl Project {
    /// The layout the project's kinds are laid out in.
    pub fn layout(&self) -> Layout {
        Layout {
            multigroup: self.multigroup,
        }
    }
}

impl Layout {
    /// The module of `r`'s group under `src/api/`, `src/controllers/` and `src/webhooks/`
    /// (`ship`; `cert_manager` for `cert-manager`; `core` for core/v1): empty in the
    /// single-group layout.
    pub fn group_module(self, r: &Resource) -> String {
        if !self.multigroup {
            return String::new();
        }
        let group = if r.group.is_empty() {
            r.qualified_group()
        } else {
            r.group.clone()
        };
        names::module_name(&group)
    }

    /// The group's folder with a trailing `/` (`ship/`), or empty: what goes between
    /// `src/api/` (`src/controllers/`, `src/webhooks/`) and the version or kind.
    pub fn group_dir(self, r: &Resource) -> String {
        match self.group_module(r) {
            g if g.is_empty() => g,
            g => format!("{g}/"),
        }
    }

    /// The same as a Rust path prefix (`ship::`), or empty.
    pub fn group_path(self, r: &Resource) -> String {
        match self.group_module(r) {
            g if g.is_empty() => g,
            g => format!("{g}::"),
        }
    }

    /// The Rust path of the types of a kind this project owns: `crate::api::v1::Frigate`, or
    /// `crate::api::ship::v1::Frigate` in the multigroup layout.
    pub fn api_type(self, r: &Resource) -> String {
        format!(
            "crate::api::{}{}::{}",
            self.group_path(r),
            r.version,
            r.kind
        )
    }

    /// The file of a kind's types: `src/api/v1/frigate.rs`, `src/api/ship/v1/frigate.rs`.
    pub fn api_file(self, r: &Resource) -> String {
        format!(
            "src/api/{}{}/{}.rs",
            self.group_dir(r),
            r.version,
            names::kind_snake(&r.kind)
        )
    }

    /// The file of a kind's controller: `src/controllers/frigate.rs`,
    /// `src/controllers/ship/frigate.rs`.
    pub fn controller_file(self, r: &Resource) -> String {
        self.controller_module_file(r, &names::kind_snake(&r.kind))
    }

    /// The file of a controller module `module` beside the controllers of `r`'s group (a
    /// second controller of a kind, `captain_backup`): `src/controllers/captain_backup.rs`,
    /// `src/controllers/crew/captain_backup.rs`.
    pub fn controller_module_file(self, r: &Resource, module: &str) -> String {
        format!("src/controllers/{}{module}.rs", self.group_dir(r))
    }

    /// The `mod.rs` that declares the controller modules of `r`'s group:
    /// `src/controllers/mod.rs`, `src/controllers/ship/mod.rs`.
    pub fn controllers_mod_file(self, r: &Resource) -> String {
        format!("src/controllers/{}mod.rs", self.group_dir(r))
    }

    /// The folder of a version's webhooks of `r`'s group: `src/webhooks/v1`,
    /// `src/webhooks/ship/v1`.
    pub fn webhook_dir(self, r: &Resource, version: &str) -> String {
        format!("src/webhooks/{}{version}", self.group_dir(r))
    }

    /// The file of the admission webhooks (defaulting, validation) of `r`'s kind at its version:
    /// `src/webhooks/v1/frigate.rs`, `src/webhooks/ship/v1/frigate.rs`.
    pub fn webhook_file(self, r: &Resource) -> String {
        format!(
            "{}/{}.rs",
            self.webhook_dir(r, &r.version),
            names::kind_snake(&r.kind)
        )
    }

    /// The file of the conversion of `r`'s kind at the spoke `version`:
    /// `src/webhooks/v2/frigate_conversion.rs`, `src/webhooks/ship/v2/frigate_conversion.rs`.
    pub fn conversion_file(self, r: &Resource, version: &str) -> String {
        format!(
            "{}/{}_conversion.rs",
            self.webhook_dir(r, version),
            names::kind_snake(&r.kind)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frigate(group: &str) -> Resource {
        Resource {
            controller: true,
            ..Resource::new(group, "example.com", "v1", "Frigate", "frigates")
        }
    }

    #[test]
    fn single_group_paths_are_by_version_multigroup_by_group_then_version() {
        let single = Layout { multigroup: false };
        let multi = Layout { multigroup: true };
        let r = frigate("ship");
        assert_eq!(single.api_file(&r), "src/api/v1/frigate.rs");
        assert_eq!(multi.api_file(&r), "src/api/ship/v1/frigate.rs");
        assert_eq!(single.api_type(&r), "crate::api::v1::Frigate");
        assert_eq!(multi.api_type(&r), "crate::api::ship::v1::Frigate");
        assert_eq!(single.controller_file(&r), "src/controllers/frigate.rs");
        assert_eq!(multi.controller_file(&r), "src/controllers/ship/frigate.rs");
        assert_eq!(multi.webhook_dir(&r, "v2"), "src/webhooks/ship/v2");
        assert_eq!(single.webhook_file(&r), "src/webhooks/v1/frigate.rs");
        assert_eq!(multi.webhook_file(&r), "src/webhooks/ship/v1/frigate.rs");
        assert_eq!(
            single.conversion_file(&r, "v2"),
            "src/webhooks/v2/frigate_conversion.rs"
        );
        assert_eq!(
            multi.conversion_file(&r, "v2"),
            "src/webhooks/ship/v2/frigate_conversion.rs"
        );
        assert_eq!(
            multi.controller_module_file(&r, "frigate_backup"),
            "src/controllers/ship/frigate_backup.rs"
        );
        assert_eq!(single.controllers_mod_file(&r), "src/controllers/mod.rs");
        assert_eq!(
            multi.controllers_mod_file(&r),
            "src/controllers/ship/mod.rs"
        );
        // A group that is no Rust identifier as it is.
        assert_eq!(multi.group_module(&frigate("sea-going")), "sea_going");
        assert_eq!(multi.group_module(&frigate("crate")), "crate_");
        // An empty group is the domain.
        assert_eq!(multi.group_module(&frigate("")), "example_com");
    }
}
