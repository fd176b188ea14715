//! placeholder (the crdgen helper replaces this file)
use crate::project::Project;
use crate::workspace::{GeneratorOutput, SourceTree};
pub fn generate(_tree: &dyn SourceTree, _project: &Project) -> anyhow::Result<GeneratorOutput> {
    Ok(GeneratorOutput::default())
}
pub fn generate_exact(_root: &std::path::Path, _project: &Project) -> anyhow::Result<GeneratorOutput> {
    Ok(GeneratorOutput::default())
}
