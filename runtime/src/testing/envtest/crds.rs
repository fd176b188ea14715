//! CustomResourceDefinitions into the control plane: read from a project's YAML (one or more
//! documents per file), applied server-side, and waited for until established and served.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::Envtest;
use super::error::{Error, Result};

/// How long a CRD may take to be established and served.
const CRD_TIMEOUT: Duration = Duration::from_secs(30);
/// The field manager of envtest's server-side applies.
pub(crate) const FIELD_MANAGER: &str = "envtest";

impl Envtest {
    /// Installs every CustomResourceDefinition in `path` (a file, or a folder such as a
    /// project's `config/crd/bases` whose `.yaml`/`.yml`/`.json` files are read in name
    /// order; `kustomization.yaml` is skipped) by server-side apply, and returns once each is
    /// established and its API served. Returns the CRDs as the API server stored them.
    ///
    /// A file that is not YAML, a document that is not a CRD, or a CRD the API server
    /// refuses is an error naming the file (and line, document or CRD) and the reason.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let crds = Envtest::shared()?.install_crds("config/crd/bases").await?;
    /// assert!(!crds.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn install_crds(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<Vec<CustomResourceDefinition>> {
        install_crds_with(&self.client()?, path.as_ref()).await
    }

    /// Installs one CustomResourceDefinition (for example `MyKind::crd()` of a type with
    /// `#[derive(CustomResource)]`) like [`Envtest::install_crds`].
    ///
    /// ```no_run
    /// # async fn f(crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition) -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// // crd = Memcached::crd()
    /// Envtest::shared()?.install_crd(&crd).await?;
    /// # Ok(()) }
    /// ```
    pub async fn install_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition> {
        install(&self.client()?, Path::new("(in code)"), crd).await
    }
}

/// [`Envtest::install_crds`] on any cluster, as `client` (an admin's).
///
/// ```no_run
/// # async fn f() -> anyhow::Result<()> {
/// use operator_rs_runtime::testing::envtest::install_crds_with;
///
/// let admin = kube::Client::try_default().await?;
/// install_crds_with(&admin, "config/crd/bases".as_ref()).await?;
/// # Ok(()) }
/// ```
pub async fn install_crds_with(
    client: &Client,
    path: &Path,
) -> Result<Vec<CustomResourceDefinition>> {
    let mut installed = Vec::new();
    for (file, crd) in read_crds(path)? {
        installed.push(install(client, &file, &crd).await?);
    }
    Ok(installed)
}

/// Applies `crd` (read from `file`) and waits until it is established and served.
async fn install(
    client: &Client,
    file: &Path,
    crd: &CustomResourceDefinition,
) -> Result<CustomResourceDefinition> {
    let name = crd.name_any();
    let api = Api::<CustomResourceDefinition>::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    match api.patch(&name, &params, &Patch::Apply(crd)).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) => {
            return Err(Error::CrdRefused {
                name,
                path: file.to_owned(),
                reason: format!(
                    "{} ({}, HTTP {})",
                    status.message, status.reason, status.code
                ),
            });
        }
        Err(error) => {
            return Err(Error::api(
                format!("applying CustomResourceDefinition {name}"),
                error,
            ));
        }
    }
    wait_until_served(client, &api, &name).await
}

/// Waits until the CRD `name` is established and discovery lists its resource in every
/// served version.
async fn wait_until_served(
    client: &Client,
    api: &Api<CustomResourceDefinition>,
    name: &str,
) -> Result<CustomResourceDefinition> {
    let deadline = Instant::now() + CRD_TIMEOUT;
    loop {
        let crd = (api.get(name).await)
            .map_err(|e| Error::api(format!("reading CustomResourceDefinition {name}"), e))?;
        let conditions = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        if let Some(refused) = conditions
            .iter()
            .find(|c| c.type_ == "NamesAccepted" && c.status == "False")
        {
            return Err(Error::CrdRefused {
                name: name.to_owned(),
                path: PathBuf::from("(applied)"),
                reason: format!(
                    "{}: {}",
                    refused.reason.as_deref().unwrap_or("NamesNotAccepted"),
                    refused.message.as_deref().unwrap_or_default()
                ),
            });
        }
        let established = conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        let last = if established {
            match unserved_version(client, &crd).await {
                None => return Ok(crd),
                Some(version) => {
                    format!("established, but discovery does not list it in {version} yet")
                }
            }
        } else {
            format!("not established; conditions: {}", describe(&conditions))
        };
        if Instant::now() >= deadline {
            return Err(Error::CrdNotEstablished {
                name: name.to_owned(),
                reason: last,
                timeout: CRD_TIMEOUT,
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The first served `group/version` of `crd` whose discovery does not list its plural yet.
async fn unserved_version(client: &Client, crd: &CustomResourceDefinition) -> Option<String> {
    let plural = &crd.spec.names.plural;
    for version in crd.spec.versions.iter().filter(|v| v.served) {
        let group_version = format!("{}/{}", crd.spec.group, version.name);
        let listed = (client.list_api_group_resources(&group_version).await)
            .is_ok_and(|list| list.resources.iter().any(|r| &r.name == plural));
        if !listed {
            return Some(group_version);
        }
    }
    None
}

fn describe(
    conditions: &[k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionCondition],
) -> String {
    if conditions.is_empty() {
        return "none".into();
    }
    let described: Vec<String> = conditions
        .iter()
        .map(|c| {
            format!(
                "{}={} ({})",
                c.type_,
                c.status,
                c.message.as_deref().unwrap_or_default()
            )
        })
        .collect();
    described.join(", ")
}

/// The CRDs in `path` (a file or a folder), with the file each came from.
pub(crate) fn read_crds(path: &Path) -> Result<Vec<(PathBuf, CustomResourceDefinition)>> {
    let files = manifest_files(path)?;
    let mut crds = Vec::new();
    for file in files {
        for (index, document) in read_documents(&file)?.into_iter().enumerate() {
            let kind = document
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("(no kind)");
            if kind != "CustomResourceDefinition" {
                return Err(Error::Manifest {
                    path: file,
                    message: format!(
                        "document {} is a {kind}, not a CustomResourceDefinition; pass a folder \
                         of CRDs only, such as config/crd/bases (`operator-rs generate crds` writes it)",
                        index + 1
                    ),
                });
            }
            let crd = serde_json::from_value(document).map_err(|e| Error::Manifest {
                path: file.clone(),
                message: format!(
                    "document {} is not a valid CustomResourceDefinition: {e}",
                    index + 1
                ),
            })?;
            crds.push((file.clone(), crd));
        }
    }
    if crds.is_empty() {
        return Err(Error::Manifest {
            path: path.to_owned(),
            message: "holds no CustomResourceDefinition; pass a project's config/crd/bases \
                      (`operator-rs generate crds` writes it) or a CRD file"
                .into(),
        });
    }
    Ok(crds)
}

/// The YAML documents of `file` (empty documents skipped).
pub(crate) fn read_documents(file: &Path) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
    parse_documents(file, &text)
}

/// The YAML documents of `text`, read from `origin` (empty documents skipped).
pub(crate) fn parse_documents(origin: &Path, text: &str) -> Result<Vec<Value>> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| Error::Manifest {
        path: origin.to_owned(),
        message: format!("not valid YAML: {e}"),
    })?;
    Ok(documents.into_iter().filter(|d| !d.is_null()).collect())
}

/// The manifest files of `path`: itself, or a folder's YAML and JSON files in name order.
fn manifest_files(path: &Path) -> Result<Vec<PathBuf>> {
    let metadata = std::fs::metadata(path).map_err(|e| {
        Error::io(
            format!("reading {} (the CRDs to install)", path.display()),
            e,
        )
    })?;
    if metadata.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let entries =
        std::fs::read_dir(path).map_err(|e| Error::io(format!("listing {}", path.display()), e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|file| file.is_file())
        .filter(|file| {
            let name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let manifest = [".yaml", ".yml", ".json"]
                .iter()
                .any(|ext| name.ends_with(ext));
            manifest && !name.starts_with("kustomization.")
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
";

    #[test]
    fn reads_every_document_of_every_yaml_file_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let second = CRD
            .replace("widgets", "gadgets")
            .replace("Widget", "Gadget")
            .replace("widget", "gadget");
        std::fs::write(
            dir.path().join("b.yaml"),
            format!("---\n{CRD}---\n{second}"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("a.yml"),
            CRD.replace("widgets", "bolts")
                .replace("Widget", "Bolt")
                .replace("widget", "bolt"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("kustomization.yaml"),
            "resources: [b.yaml]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("README.md"), "not a manifest").unwrap();
        let names: Vec<String> = read_crds(dir.path())
            .unwrap()
            .into_iter()
            .map(|(_, crd)| crd.name_any())
            .collect();
        assert_eq!(
            names,
            [
                "bolts.example.com",
                "widgets.example.com",
                "gadgets.example.com"
            ]
        );
    }

    #[test]
    fn bad_yaml_names_the_file_and_line_and_other_kinds_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("broken.yaml");
        std::fs::write(
            &broken,
            "kind: CustomResourceDefinition\nmetadata: [unclosed\n",
        )
        .unwrap();
        let message = read_crds(&broken).unwrap_err().to_string();
        assert!(
            message.starts_with(&broken.display().to_string()),
            "{message}"
        );
        assert!(message.contains("line"), "no line in: {message}");

        let role = dir.path().join("role.yaml");
        std::fs::write(
            &role,
            format!("{CRD}---\nkind: ClusterRole\nmetadata: {{name: x}}\n"),
        )
        .unwrap();
        let message = read_crds(&role).unwrap_err().to_string();
        assert!(message.contains("document 2 is a ClusterRole"), "{message}");

        let empty = tempfile::tempdir().unwrap();
        let message = read_crds(empty.path()).unwrap_err().to_string();
        assert!(
            message.contains("holds no CustomResourceDefinition"),
            "{message}"
        );
    }
}
