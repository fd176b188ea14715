//! The regeneration of the manifests into what a scaffolding command is about to write: RBAC,
//! webhook configurations and (when the command changes a kind) the CRDs, run on the command's
//! [`Overlay`] so that what it writes leaves them in step with the code, as `generate manifests`
//! would.

use anyhow::Result;

use crate::project::Project;
use crate::workspace::Overlay;

/// Whether [`regenerate_into`] derives the CRDs too, and what a CRD that cannot be derived does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crds {
    /// Leave the CRDs alone (the command changes no kind).
    Skip,
    /// Derive them; one that cannot be derived statically is reported and scaffolding goes on
    /// (`create api`: the user's next edit fixes it).
    Report,
    /// Derive them with every check `generate crds` runs; any refusal refuses the command, so
    /// nothing is written (`edit api`: its change is all or nothing).
    Require,
}

/// Run the generators on what a command is about to write and add their files to it, so that
/// `init`, `create api` and `edit api` leave role.yaml and the CRDs in step with the code.
pub fn regenerate_into(overlay: &mut Overlay<'_>, project: &Project, crds: Crds) -> Result<()> {
    let mut outputs = vec![
        crate::rbac::generate(&*overlay, project)?,
        crate::webhookgen::generate(&*overlay, project)?,
    ];
    if crds != Crds::Skip {
        // What the reader parses here is most of what the command then checks before writing:
        // its verdicts go with the overlay.
        let generated = crate::crdgen::read(&*overlay).and_then(|found| {
            let parsed: Vec<_> = found.parsed().cloned().collect();
            let out = crate::crdgen::assemble(&*overlay, found, project, true)?;
            Ok((out, parsed))
        });
        let generated = generated.map(|(out, parsed)| {
            for (rel, duplicate) in parsed {
                overlay.record_parsed(rel, duplicate);
            }
            out
        });
        match generated {
            Ok(out) => outputs.push(out),
            // Two kinds claiming one CRD or name: writing would lose one.
            Err(e @ crate::crdgen::CrdgenError::Clash(_)) => {
                anyhow::bail!("{e}\n  Nothing was written.");
            }
            // A kind the compiler never sees: writing would drop its CRD.
            Err(e @ crate::crdgen::CrdgenError::Unreached { .. }) => anyhow::bail!("{e}"),
            Err(e) if crds == Crds::Require => {
                anyhow::bail!(
                    "{e}\n  `operator-rs generate crds` would refuse the kinds as this command would leave them. Nothing was written."
                );
            }
            Err(e) => crate::errln!(
                "warning: the CRDs were not regenerated: {e}\n  Fix that, then run `operator-rs generate crds` (or `operator-rs generate crds --exact`)."
            ),
        }
    }
    for out in outputs {
        for w in &out.warnings {
            crate::errln!("warning: {w}");
        }
        for f in out.files {
            overlay.put(f.path, f.contents);
        }
        for s in out.stale {
            overlay.remove(s);
        }
    }
    Ok(())
}
