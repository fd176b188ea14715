//! Storage version migration of one kind, as kube-storage-version-migrator does it: the
//! steps are in the docs of [`crate::storage`], which re-exports what an operator uses.

use std::fmt;
use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams, ResourceExt,
};
use kube::core::GroupVersionKind;
use serde_json::json;

/// How the objects are rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// This client lists and rewrites every object (works on every server, reports progress
    /// per page). The default: the StorageVersionMigration API is not served by default before
    /// Kubernetes 1.37 and needs kube-controller-manager's migrator running.
    #[default]
    Rewrite,
    /// A `storagemigration.k8s.io` StorageVersionMigration, carried out by
    /// kube-controller-manager; refused when the server does not serve the API.
    StorageVersionMigration,
}

/// What to migrate and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The kind's API group (`cache.example.com`).
    pub group: String,
    /// The kind (`Memcached`).
    pub kind: String,
    /// How the objects are rewritten.
    pub method: Method,
    /// Objects per list page ([`Method::Rewrite`]; default 500, as kubectl's `--chunk-size`).
    pub page_size: u32,
    /// How long to wait for a StorageVersionMigration to finish (default 10 minutes).
    pub timeout: Duration,
}

impl Options {
    /// Migrate `kind` of `group` with the default method, page size and timeout.
    pub fn new(group: impl Into<String>, kind: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
            method: Method::default(),
            page_size: 500,
            timeout: Duration::from_secs(600),
        }
    }
}

/// What happened to the objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Objects written back (an object already in the storage version is counted too: the
    /// server skips its write).
    pub rewritten: usize,
    /// Objects deleted between the list and their write (skipped).
    pub gone: usize,
    /// Writes that met a conflict and were retried on the object read again.
    pub conflicts: usize,
    /// Times the list restarted because its continue token expired.
    pub restarts: usize,
}

/// The outcome of a migration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The CRD's name (`memcacheds.cache.example.com`).
    pub crd: String,
    /// The storage version every object is now stored in.
    pub storage_version: String,
    /// `status.storedVersions` before the migration.
    pub stored_before: Vec<String>,
    /// False when `storedVersions` was already the storage version alone (nothing was done).
    pub migrated: bool,
    /// The objects ([`Method::Rewrite`]).
    pub counts: Counts,
}

/// Progress of a migration, handed to the caller's callback as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// The CRD was found: objects are to be moved to `storage_version`.
    Started {
        /// The CRD's name.
        crd: String,
        /// Its storage version.
        storage_version: String,
        /// Its `status.storedVersions`.
        stored_versions: Vec<String>,
    },
    /// `storedVersions` is already the storage version alone: nothing to do.
    AlreadyMigrated {
        /// The CRD's name.
        crd: String,
        /// Its storage version.
        storage_version: String,
    },
    /// A page of `objects` was listed and is about to be written.
    Listed {
        /// The page's number, from 1.
        page: usize,
        /// Objects on it.
        objects: usize,
    },
    /// A page was written; the counts so far.
    Written {
        /// The page's number, from 1.
        page: usize,
        /// The counts so far.
        counts: Counts,
    },
    /// The continue token expired: the list starts again from the beginning.
    ListRestarted,
    /// A StorageVersionMigration was created.
    MigrationCreated {
        /// Its name.
        name: String,
    },
    /// `status.storedVersions` was set to the storage version alone.
    Narrowed {
        /// The CRD's name.
        crd: String,
        /// `storedVersions` before.
        from: Vec<String>,
        /// The storage version.
        to: String,
    },
}

impl fmt::Display for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Progress::Started {
                crd,
                storage_version,
                stored_versions,
            } => write!(
                f,
                "{crd}: storage version {storage_version}, stored versions [{}]: rewriting every object in {storage_version}",
                stored_versions.join(", ")
            ),
            Progress::AlreadyMigrated {
                crd,
                storage_version,
            } => write!(
                f,
                "{crd}: every object is stored in {storage_version} (status.storedVersions is [{storage_version}]): nothing to migrate"
            ),
            Progress::Listed { page, objects } => write!(
                f,
                "page {page}: {objects} object{}",
                if *objects == 1 { "" } else { "s" }
            ),
            Progress::Written { page, counts } => write!(
                f,
                "page {page} done: {} rewritten, {} deleted meanwhile, {} conflicts retried",
                counts.rewritten, counts.gone, counts.conflicts
            ),
            Progress::ListRestarted => {
                write!(
                    f,
                    "the list's continue token expired: listing again from the start"
                )
            }
            Progress::MigrationCreated { name } => {
                write!(f, "StorageVersionMigration {name} created; waiting for it")
            }
            Progress::Narrowed { crd, from, to } => write!(
                f,
                "{crd}: status.storedVersions [{}] -> [{to}]",
                from.join(", ")
            ),
        }
    }
}

/// Why a migration was refused or failed. Nothing is narrowed unless every object was
/// rewritten; running the migration again completes an interrupted or failed one.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    /// No CRD serves the kind in the group.
    #[error(
        "no CustomResourceDefinition for kind {kind} in group {group} on this cluster{known}\n  install it first (e.g. `make install`, or kubectl apply -f config/crd/bases/)"
    )]
    CrdNotFound {
        /// The group asked for.
        group: String,
        /// The kind asked for.
        kind: String,
        /// `; ...` naming the CRDs of the group, or of the kind in other groups.
        known: String,
    },
    /// The CRD marks no version `storage: true`.
    #[error(
        "CustomResourceDefinition {crd} has no storage version (no version says `storage: true`), so there is nothing to migrate to\n  e.g. operator-rs edit api --group <group> --version <version> --kind <Kind> --storage, then apply the CRD"
    )]
    NoStorageVersion {
        /// The CRD's name.
        crd: String,
    },
    /// The user may not do what the migration needs.
    #[error(
        "not allowed to {verb} {resource} (a storage migration needs to {needs}){reason}\n  ask a cluster admin for these rights, or run it with a kubeconfig (--kubeconfig, --context) that has them"
    )]
    Forbidden {
        /// The verb refused.
        verb: String,
        /// The resource (`memcacheds.cache.example.com`, `customresourcedefinitions/status`).
        resource: String,
        /// Everything the migration needs.
        needs: String,
        /// `: <the server's reason>` when it gave one.
        reason: String,
    },
    /// The storage version changed while the objects were rewritten: `storedVersions` is
    /// left alone (run the migration again).
    #[error(
        "the storage version of {crd} changed from {before} to {after} during the migration; status.storedVersions is left as it was: run the migration again"
    )]
    StorageVersionChanged {
        /// The CRD's name.
        crd: String,
        /// The storage version migrated to.
        before: String,
        /// The storage version now.
        after: String,
    },
    /// An object could not be written back (for example, it does not validate against the
    /// storage version's schema).
    #[error(
        "rewriting {object}: {source}\n  fix or delete the object, then run the migration again (the objects before it are done)"
    )]
    Rewrite {
        /// `namespace/name` or `name`.
        object: String,
        /// What the server said.
        #[source]
        source: kube::Error,
    },
    /// The server does not serve the StorageVersionMigration API.
    #[error(
        "this server does not serve storagemigration.k8s.io (StorageVersionMigration is served by default from Kubernetes 1.37; in 1.35/1.36 behind the StorageVersionMigrator feature gate and --runtime-config=storagemigration.k8s.io/v1beta1=true)\n  migrate with the default method instead (drop --method storage-version-migration)"
    )]
    MigrationApiNotServed,
    /// The StorageVersionMigration failed.
    #[error("StorageVersionMigration {name} failed: {message}")]
    MigrationFailed {
        /// Its name.
        name: String,
        /// Its Failed condition's message.
        message: String,
    },
    /// The StorageVersionMigration did not finish in time.
    #[error(
        "StorageVersionMigration {name} did not finish within {timeout:?}: is kube-controller-manager running its storage-version-migrator-controller? (Kubernetes 1.35/1.36: kube-controller-manager --feature-gates=StorageVersionMigrator=true,InformerResourceVersion=true); status.storedVersions is left as it was"
    )]
    MigrationTimedOut {
        /// Its name.
        name: String,
        /// The time waited.
        timeout: Duration,
    },
    /// A request to the API server failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done.
        action: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
}

/// Shorthand for results of this module.
pub type Result<T, E = MigrationError> = std::result::Result<T, E>;

fn api_error(action: impl Into<String>) -> impl FnOnce(kube::Error) -> MigrationError {
    move |source| MigrationError::Api {
        action: action.into(),
        source,
    }
}

fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// Migrates every object of `options.kind` to its CRD's storage version and narrows the CRD's
/// `status.storedVersions` to it; `progress` hears each step. See the [module docs](crate::storage).
pub async fn migrate(
    client: &kube::Client,
    options: &Options,
    mut progress: impl FnMut(&Progress),
) -> Result<Report> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let crd = find_crd(&crds, &options.group, &options.kind).await?;
    let name = crd.name_any();
    let storage = storage_version(&crd)?;
    let stored_before = stored_versions(&crd);
    let plural = crd.spec.names.plural.clone();
    let namespaced = crd.spec.scope == "Namespaced";
    let mut report = Report {
        crd: name.clone(),
        storage_version: storage.clone(),
        stored_before: stored_before.clone(),
        migrated: false,
        counts: Counts::default(),
    };
    if stored_before == [storage.clone()] {
        progress(&Progress::AlreadyMigrated {
            crd: name,
            storage_version: storage,
        });
        return Ok(report);
    }
    check_access(client, options.method, &options.group, &plural, &name).await?;
    progress(&Progress::Started {
        crd: name.clone(),
        storage_version: storage.clone(),
        stored_versions: stored_before.clone(),
    });
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&options.group, &storage, &crd.spec.names.kind),
        &plural,
    );
    match options.method {
        Method::Rewrite => {
            report.counts = rewrite_all(
                client,
                &resource,
                namespaced,
                options.page_size,
                &mut progress,
            )
            .await?
        }
        Method::StorageVersionMigration => {
            run_storage_version_migration(
                client,
                &options.group,
                &plural,
                options.timeout,
                &mut progress,
            )
            .await?
        }
    }
    narrow(&crds, &name, &storage, &mut progress).await?;
    report.migrated = true;
    Ok(report)
}

/// The CRD of `kind` in `group`, or a refusal naming what there is.
async fn find_crd(
    crds: &Api<CustomResourceDefinition>,
    group: &str,
    kind: &str,
) -> Result<CustomResourceDefinition> {
    let all = crds.list(&ListParams::default()).await.map_err(|e| {
        forbidden_or(
            e,
            "list",
            "customresourcedefinitions",
            Method::Rewrite,
            "listing CustomResourceDefinitions",
        )
    })?;
    let mut in_group = Vec::new();
    let mut elsewhere = Vec::new();
    for crd in all.items {
        if crd.spec.group == group && crd.spec.names.kind == kind {
            return Ok(crd);
        }
        if crd.spec.group == group {
            in_group.push(crd.spec.names.kind.clone());
        } else if crd.spec.names.kind.eq_ignore_ascii_case(kind) {
            elsewhere.push(format!(
                "{} in group {}",
                crd.spec.names.kind, crd.spec.group
            ));
        }
    }
    let known = if !elsewhere.is_empty() {
        format!("; there is {}", elsewhere.join(", "))
    } else if !in_group.is_empty() {
        in_group.sort();
        format!("; the kinds of group {group} are {}", in_group.join(", "))
    } else {
        String::new()
    };
    Err(MigrationError::CrdNotFound {
        group: group.to_owned(),
        kind: kind.to_owned(),
        known,
    })
}

fn storage_version(crd: &CustomResourceDefinition) -> Result<String> {
    crd.spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
        .ok_or_else(|| MigrationError::NoStorageVersion {
            crd: crd.name_any(),
        })
}

fn stored_versions(crd: &CustomResourceDefinition) -> Vec<String> {
    crd.status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default()
}

/// What the migration needs, in words (for [`MigrationError::Forbidden`]).
fn needs(method: Method, resource: &str) -> String {
    match method {
        Method::Rewrite => {
            format!("list and update {resource}, and patch customresourcedefinitions/status")
        }
        Method::StorageVersionMigration => {
            "create and get storageversionmigrations, and patch customresourcedefinitions/status"
                .into()
        }
    }
}

/// A 403 as [`MigrationError::Forbidden`], anything else as [`MigrationError::Api`].
fn forbidden_or(
    error: kube::Error,
    verb: &str,
    resource: &str,
    method: Method,
    action: &str,
) -> MigrationError {
    match &error {
        kube::Error::Api(status) if status.code == 403 => MigrationError::Forbidden {
            verb: verb.to_owned(),
            resource: resource.to_owned(),
            needs: needs(method, resource),
            reason: format!(": {}", status.message),
        },
        _ => api_error(action)(error),
    }
}

/// One right: `verb` on `resource` (and `subresource`, object `name`) of API group `group`.
struct Right<'a> {
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    subresource: Option<&'a str>,
    name: Option<&'a str>,
}

impl<'a> Right<'a> {
    fn on(verb: &'a str, group: &'a str, resource: &'a str) -> Self {
        Self {
            verb,
            group,
            resource,
            subresource: None,
            name: None,
        }
    }

    /// How an error names the resource: `things.example.com`, `customresourcedefinitions/status`.
    fn shown(&self) -> String {
        match self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => format!("{}.{}", self.resource, self.group),
        }
    }
}

/// Every right the migration needs, asked of the server before anything is written.
async fn check_access(
    client: &kube::Client,
    method: Method,
    group: &str,
    plural: &str,
    crd: &str,
) -> Result<()> {
    let objects = format!("{plural}.{group}");
    const MIGRATIONS: (&str, &str) = ("storagemigration.k8s.io", "storageversionmigrations");
    let mut wanted = match method {
        Method::Rewrite => vec![
            Right::on("list", group, plural),
            Right::on("update", group, plural),
        ],
        Method::StorageVersionMigration => vec![
            Right::on("create", MIGRATIONS.0, MIGRATIONS.1),
            Right::on("get", MIGRATIONS.0, MIGRATIONS.1),
        ],
    };
    wanted.push(Right {
        subresource: Some("status"),
        name: Some(crd),
        ..Right::on("patch", "apiextensions.k8s.io", "customresourcedefinitions")
    });
    let reviews = Api::<SelfSubjectAccessReview>::all(client.clone());
    for right in wanted {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    verb: Some(right.verb.into()),
                    group: Some(right.group.into()),
                    resource: Some(right.resource.into()),
                    subresource: right.subresource.map(Into::into),
                    name: right.name.map(Into::into),
                    ..ResourceAttributes::default()
                }),
                ..SelfSubjectAccessReviewSpec::default()
            },
            ..SelfSubjectAccessReview::default()
        };
        let answer = reviews
            .create(&PostParams::default(), &review)
            .await
            .map_err(api_error(
                "asking the API server which rights this user has",
            ))?;
        let status = answer.status.unwrap_or_default();
        if !status.allowed {
            return Err(MigrationError::Forbidden {
                verb: right.verb.to_owned(),
                resource: right.shown(),
                needs: needs(method, &objects),
                reason: status
                    .reason
                    .filter(|r| !r.is_empty())
                    .map_or(String::new(), |r| format!(": {r}")),
            });
        }
    }
    Ok(())
}

/// Lists every object page by page and writes each back; an expired continue token restarts
/// the list (objects written already are written again, which the server does not store).
async fn rewrite_all(
    client: &kube::Client,
    resource: &ApiResource,
    namespaced: bool,
    page_size: u32,
    progress: &mut impl FnMut(&Progress),
) -> Result<Counts> {
    let all = Api::<DynamicObject>::all_with(client.clone(), resource);
    let mut counts = Counts::default();
    let mut token: Option<String> = None;
    let mut page = 0;
    loop {
        let mut params = ListParams::default().limit(page_size.max(1));
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let list = match all.list(&params).await {
            Ok(list) => list,
            // 410 Gone: the continue token expired (etcd compacted the revision it reads at).
            Err(e) if token.is_some() && status_code(&e) == Some(410) => {
                counts.restarts += 1;
                token = None;
                progress(&Progress::ListRestarted);
                continue;
            }
            Err(e) => {
                return Err(forbidden_or(
                    e,
                    "list",
                    &format!("{}.{}", resource.plural, resource.group),
                    Method::Rewrite,
                    &format!("listing {}.{}", resource.plural, resource.group),
                ));
            }
        };
        page += 1;
        progress(&Progress::Listed {
            page,
            objects: list.items.len(),
        });
        // A page's writes, REWRITES_IN_FLIGHT at a time (one at a time, each write waited on
        // a round trip: 1.5x a client's writes of the same objects).
        let mut writes = tokio::task::JoinSet::new();
        for object in list.items {
            let api = match (namespaced, object.namespace()) {
                (true, Some(ns)) => {
                    Api::<DynamicObject>::namespaced_with(client.clone(), &ns, resource)
                }
                _ => all.clone(),
            };
            if writes.len() >= REWRITES_IN_FLIGHT {
                add_written(&mut counts, writes.join_next().await)?;
            }
            writes.spawn(async move { rewrite_one(&api, object).await });
        }
        while let Some(written) = writes.join_next().await {
            add_written(&mut counts, Some(written))?;
        }
        progress(&Progress::Written { page, counts });
        token = list.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok(counts);
        }
    }
}

/// How many objects are written at once (each request in flight holds an HTTP/1.1 connection
/// of its own, as the manager's 16 to 32 concurrent reconciles do).
const REWRITES_IN_FLIGHT: usize = 16;

/// Adds the counts of one finished write to `counts`; the write's error, if it failed.
fn add_written(
    counts: &mut Counts,
    written: Option<std::result::Result<Result<Counts>, tokio::task::JoinError>>,
) -> Result<()> {
    let Some(written) = written else {
        return Ok(());
    };
    let one = written.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
    counts.rewritten += one.rewritten;
    counts.gone += one.gone;
    counts.conflicts += one.conflicts;
    Ok(())
}

/// How many times one object's write is retried on conflicts before giving up.
const CONFLICT_RETRIES: usize = 10;

/// Writes `object` back as read; on a conflict reads it again and writes that; skips it when
/// it was deleted.
async fn rewrite_one(api: &Api<DynamicObject>, mut object: DynamicObject) -> Result<Counts> {
    let mut counts = Counts::default();
    let name = object.name_any();
    let shown = match object.namespace() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.clone(),
    };
    let mut attempts = 0;
    loop {
        match api.replace(&name, &PostParams::default(), &object).await {
            Ok(_) => {
                counts.rewritten += 1;
                return Ok(counts);
            }
            Err(e) if status_code(&e) == Some(404) => {
                counts.gone += 1;
                return Ok(counts);
            }
            Err(e) if status_code(&e) == Some(409) && attempts < CONFLICT_RETRIES => {
                attempts += 1;
                counts.conflicts += 1;
                match api.get_opt(&name).await {
                    Ok(Some(fresh)) => object = fresh,
                    Ok(None) => {
                        counts.gone += 1;
                        return Ok(counts);
                    }
                    Err(source) => {
                        return Err(MigrationError::Rewrite {
                            object: shown,
                            source,
                        });
                    }
                }
            }
            Err(source) => {
                return Err(MigrationError::Rewrite {
                    object: shown,
                    source,
                });
            }
        }
    }
}

/// The `status.storedVersions` of the CRD `name` (`memcacheds.cache.example.com`), `None`
/// when the cluster has no such CRD: the versions objects may still be stored in, which
/// kube-apiserver refuses to remove from the CRD.
pub async fn crd_stored_versions(client: &kube::Client, name: &str) -> Result<Option<Vec<String>>> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let crd = crds.get_opt(name).await.map_err(api_error(format!(
        "reading CustomResourceDefinition {name}"
    )))?;
    Ok(crd.as_ref().map(stored_versions))
}

/// The served version of `storagemigration.k8s.io`, if any (the preferred one).
pub async fn migration_api_version(client: &kube::Client) -> Result<Option<String>> {
    let groups = client
        .list_api_groups()
        .await
        .map_err(api_error("discovering the API groups"))?;
    Ok(groups
        .groups
        .into_iter()
        .find(|g| g.name == "storagemigration.k8s.io")
        .and_then(|g| {
            g.preferred_version
                .map(|v| v.version)
                .or_else(|| g.versions.first().map(|v| v.version.clone()))
        }))
}

/// Creates a StorageVersionMigration of `plural.group` and waits until it succeeds or fails.
async fn run_storage_version_migration(
    client: &kube::Client,
    group: &str,
    plural: &str,
    timeout: Duration,
    progress: &mut impl FnMut(&Progress),
) -> Result<()> {
    let version = migration_api_version(client)
        .await?
        .ok_or(MigrationError::MigrationApiNotServed)?;
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(
            "storagemigration.k8s.io",
            &version,
            "StorageVersionMigration",
        ),
        "storageversionmigrations",
    );
    let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
    let mut request = DynamicObject::new("", &resource)
        .data(json!({"spec": {"resource": {"group": group, "resource": plural}}}));
    request.metadata.name = None;
    request.metadata.generate_name = Some(format!("{plural}.{group}-"));
    let created = api
        .create(&PostParams::default(), &request)
        .await
        .map_err(|e| {
            forbidden_or(
                e,
                "create",
                "storageversionmigrations",
                Method::StorageVersionMigration,
                "creating a StorageVersionMigration",
            )
        })?;
    let name = created.name_any();
    progress(&Progress::MigrationCreated { name: name.clone() });
    let deadline = Instant::now() + timeout;
    loop {
        let now = api
            .get(&name)
            .await
            .map_err(api_error(format!("reading StorageVersionMigration {name}")))?;
        let conditions = now.data["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let holds = |kind: &str| {
            conditions
                .iter()
                .find(|c| c["type"] == kind && c["status"] == "True")
        };
        if holds("Succeeded").is_some() {
            return Ok(());
        }
        if let Some(failed) = holds("Failed") {
            return Err(MigrationError::MigrationFailed {
                name,
                message: failed["message"]
                    .as_str()
                    .unwrap_or("no message")
                    .to_owned(),
            });
        }
        if Instant::now() >= deadline {
            return Err(MigrationError::MigrationTimedOut { name, timeout });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Sets `status.storedVersions` to `storage` alone, if `storage` is still the storage version
/// (the patch carries the resourceVersion read, so a change in between is a conflict, read
/// again).
async fn narrow(
    crds: &Api<CustomResourceDefinition>,
    name: &str,
    storage: &str,
    progress: &mut impl FnMut(&Progress),
) -> Result<()> {
    loop {
        let crd = crds.get(name).await.map_err(api_error(format!(
            "reading CustomResourceDefinition {name}"
        )))?;
        let now = storage_version(&crd)?;
        if now != storage {
            return Err(MigrationError::StorageVersionChanged {
                crd: name.to_owned(),
                before: storage.to_owned(),
                after: now,
            });
        }
        let from = stored_versions(&crd);
        let patch = json!({
            "metadata": {"resourceVersion": crd.resource_version()},
            "status": {"storedVersions": [storage]},
        });
        match crds
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                progress(&Progress::Narrowed {
                    crd: name.to_owned(),
                    from,
                    to: storage.to_owned(),
                });
                return Ok(());
            }
            Err(e) if status_code(&e) == Some(409) => continue,
            Err(e) => {
                return Err(forbidden_or(
                    e,
                    "patch",
                    "customresourcedefinitions/status",
                    Method::Rewrite,
                    &format!("narrowing status.storedVersions of {name}"),
                ));
            }
        }
    }
}
