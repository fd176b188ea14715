//! Clients with exactly an operator's RBAC: a ServiceAccount, the project's roles bound to
//! it, and a token for it from the TokenRequest API.
//!
//! The manifests are what `kubectl kustomize config/rbac` renders ([`kustomize`]):
//!
//! - `ClusterRole`s are applied renamed `<serviceaccount>-<name>` (as kustomize's `namePrefix`
//!   names them for `make deploy`; a name that has the prefix already is kept), so that the
//!   cluster-wide roles of two projects on one cluster never overwrite each other; the bindings
//!   that name them follow. [`ServiceAccountAccess::cluster_rbac`] says what was made cluster
//!   wide, to delete it at the end ([`ClusterRbac::delete`]).
//! - `Role`s are applied in the ServiceAccount's namespace (kustomize puts them in the
//!   project's `<name>-system`, which a test has no use for: run the manager under test with
//!   `--leader-election-namespace` set to that namespace); those of another namespace (an RBAC
//!   marker's `namespace=team-a`) stay there, and so do their RoleBindings.
//! - `ClusterRoleBinding`s and `RoleBinding`s are applied with their subjects replaced by the
//!   ServiceAccount, and renamed `<name>-<namespace>-<serviceaccount>` so that bindings of
//!   several ServiceAccounts never overwrite each other; RoleBindings go to the
//!   ServiceAccount's namespace.
//! - `ServiceAccount`s are skipped (the test's own replaces the project's).
//! - Any other kind is an error.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Envtest;
use super::crds::{FIELD_MANAGER, parse_documents};
use super::credentials;
use super::error::{Error, Result};

/// How long new bindings may take to reach the API server's authorizer.
const RBAC_TIMEOUT: Duration = Duration::from_secs(15);
/// Lifetime of a ServiceAccount token: longer than any test.
const TOKEN_SECONDS: i64 = 24 * 3600;

/// A ServiceAccount's credentials on the control plane: clients and a kubeconfig that have
/// exactly the rights its RBAC grants. From [`Envtest::service_account`].
#[derive(Clone, Debug)]
pub struct ServiceAccountAccess {
    namespace: String,
    name: String,
    config: kube::Config,
    kubeconfig: PathBuf,
    token: String,
    cluster: ClusterRbac,
}

/// The cluster-wide objects [`ServiceAccountAccess::create`] applied: what a test deletes when
/// it ends, so that nothing of it stays on a shared cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterRbac {
    /// The names of the ClusterRoles.
    pub cluster_roles: Vec<String>,
    /// The names of the ClusterRoleBindings.
    pub cluster_role_bindings: Vec<String>,
}

impl ClusterRbac {
    /// Deletes them (those already gone are no error), as `client` (an admin's).
    pub async fn delete(&self, client: &Client) -> Result<()> {
        let params = kube::api::DeleteParams::default();
        let bindings = Api::<ClusterRoleBinding>::all(client.clone());
        for name in &self.cluster_role_bindings {
            gone(
                bindings.delete(name, &params).await,
                "ClusterRoleBinding",
                name,
            )?;
        }
        let roles = Api::<ClusterRole>::all(client.clone());
        for name in &self.cluster_roles {
            gone(roles.delete(name, &params).await, "ClusterRole", name)?;
        }
        Ok(())
    }
}

/// A delete's outcome: done, or the object was not there.
fn gone<T>(result: kube::Result<T>, kind: &str, name: &str) -> Result<()> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(Error::api(format!("deleting {kind} {name}"), e)),
    }
}

/// The name a ClusterRole of the manifests gets for the ServiceAccount `account`:
/// `<account>-<name>`, unless it starts so already.
fn cluster_role_name(account: &str, name: &str) -> String {
    let prefix = format!("{account}-");
    if name.starts_with(&prefix) {
        name.to_owned()
    } else {
        format!("{prefix}{name}")
    }
}

impl ServiceAccountAccess {
    /// The cluster-wide objects made for it (ClusterRoles renamed `<serviceaccount>-<name>`,
    /// ClusterRoleBindings), to delete when the test ends.
    pub fn cluster_rbac(&self) -> &ClusterRbac {
        &self.cluster
    }

    /// A new client authenticating as the ServiceAccount (call it inside the tokio runtime
    /// that will use it), with the ServiceAccount's namespace as its default namespace.
    ///
    /// ```no_run
    /// # async fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) -> anyhow::Result<()> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, ListParams};
    ///
    /// let maps: Api<ConfigMap> = Api::default_namespaced(access.client()?);
    /// maps.list(&ListParams::default()).await?; // 403 unless its RBAC allows it
    /// # Ok(()) }
    /// ```
    pub fn client(&self) -> Result<Client> {
        Client::try_from(self.config.clone())
            .map_err(|e| Error::api(format!("building a client for {}", self.username()), e))
    }

    /// Its client configuration.
    ///
    /// ```no_run
    /// # fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) {
    /// assert_eq!(access.config().default_namespace, access.namespace());
    /// # }
    /// ```
    pub fn config(&self) -> &kube::Config {
        &self.config
    }

    /// A kubeconfig file for it, to run a manager binary as the ServiceAccount
    /// (`--kubeconfig` or `KUBECONFIG`).
    ///
    /// ```no_run
    /// # fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) {
    /// let manager = std::process::Command::new("target/debug/manager")
    ///     .env("KUBECONFIG", access.kubeconfig())
    ///     .spawn();
    /// # }
    /// ```
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The ServiceAccount's namespace.
    ///
    /// ```no_run
    /// # fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) {
    /// println!("--leader-election-namespace={}", access.namespace());
    /// # }
    /// ```
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The ServiceAccount's name.
    ///
    /// ```no_run
    /// # fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) {
    /// println!("{}", access.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The user name the API server sees: `system:serviceaccount:<namespace>:<name>`.
    ///
    /// ```no_run
    /// # fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) {
    /// assert!(access.username().starts_with("system:serviceaccount:"));
    /// # }
    /// ```
    pub fn username(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }

    /// Its bearer token (from the TokenRequest API), e.g. to scrape a secure metrics endpoint.
    ///
    /// ```no_run
    /// # fn f(access: operator_rs_runtime::testing::envtest::ServiceAccountAccess) {
    /// let header = format!("Authorization: Bearer {}", access.token());
    /// # }
    /// ```
    pub fn token(&self) -> &str {
        &self.token
    }
}

impl ServiceAccountAccess {
    /// On the cluster of the admin configuration `admin` (any cluster: envtest's, or the
    /// current kubeconfig's), creates the ServiceAccount `namespace/name` (and the namespace, if need be), applies
    /// the RBAC manifests `rbac` (multi-document YAML, as `kubectl kustomize config/rbac`
    /// renders it) bound to it, waits until the API server authorizes by them, and returns
    /// its credentials (a token from the TokenRequest API, valid for a day), with a kubeconfig
    /// written to `kubeconfig` (its CA beside it, with the extension `ca.crt`).
    ///
    /// How each kind of document is applied:
    ///
    /// - `ClusterRole`: as it is.
    /// - `Role`: in the ServiceAccount's namespace (kustomize puts it in the project's
    ///   `<name>-system`, which a test has no use for: run the manager under test with
    ///   `--leader-election-namespace` set to the ServiceAccount's namespace); one of another
    ///   namespace than none or `system` (an RBAC marker's `namespace=team-a`) stays there,
    ///   the namespace created if need be, and so does its RoleBinding.
    /// - `ClusterRoleBinding`, `RoleBinding`: subjects replaced by the ServiceAccount,
    ///   renamed `<name>-<namespace>-<serviceaccount>` (so bindings of several
    ///   ServiceAccounts never overwrite each other); a RoleBinding goes to the
    ///   ServiceAccount's namespace.
    /// - `ServiceAccount`: skipped (the test's own replaces the project's).
    /// - Anything else: [`Error::Manifest`] naming the document.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::ServiceAccountAccess;
    ///
    /// let admin = kube::Config::infer().await?;
    /// let rbac = "
    /// apiVersion: rbac.authorization.k8s.io/v1
    /// kind: Role
    /// metadata: {name: config-reader}
    /// rules:
    /// - {apiGroups: [''], resources: [configmaps], verbs: [get, list]}
    /// ---
    /// apiVersion: rbac.authorization.k8s.io/v1
    /// kind: RoleBinding
    /// metadata: {name: config-reader}
    /// roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: config-reader}
    /// subjects: []
    /// ";
    /// let kubeconfig = std::env::temp_dir().join("reader.kubeconfig");
    /// let reader = ServiceAccountAccess::create(&admin, "apps", "reader", rbac, &kubeconfig).await?;
    /// let client = reader.client()?;
    /// # Ok(()) }
    /// ```
    pub async fn create(
        admin: &kube::Config,
        namespace: &str,
        name: &str,
        rbac: &str,
        kubeconfig: &Path,
    ) -> Result<Self> {
        let client = Client::try_from(admin.clone())
            .map_err(|e| Error::api("building an admin client", e))?;
        let origin = PathBuf::from("(RBAC manifests)");
        let objects = parse_documents(&origin, rbac)?
            .into_iter()
            .enumerate()
            .map(|(index, document)| RbacObject::read(&origin, index, document))
            .collect::<Result<Vec<_>>>()?;

        apply(
            &Api::<Namespace>::all(client.clone()),
            named(name_meta(namespace, None)),
        )
        .await?;
        let accounts = Api::<ServiceAccount>::namespaced(client.clone(), namespace);
        apply(&accounts, named(name_meta(name, Some(namespace)))).await?;

        let subject = Subject {
            kind: "ServiceAccount".into(),
            name: name.into(),
            namespace: Some(namespace.into()),
            api_group: None,
        };
        let mut checks = Vec::new();
        let mut cluster = ClusterRbac::default();
        for object in &objects {
            let (check, made) = object.apply(&client, namespace, &subject, &objects).await?;
            checks.extend(check);
            match made {
                Some(Made::ClusterRole(name)) => cluster.cluster_roles.push(name),
                Some(Made::ClusterRoleBinding(name)) => cluster.cluster_role_bindings.push(name),
                None => {}
            }
        }
        let username = format!("system:serviceaccount:{namespace}:{name}");
        for check in checks {
            wait_until_allowed(&client, &username, namespace, check).await?;
        }

        // Through JSON: the optionality of TokenRequest's fields differs between the
        // Kubernetes versions an operator may pick.
        let request: TokenRequest = serde_json::from_value(
            serde_json::json!({"spec": {"expirationSeconds": TOKEN_SECONDS}}),
        )
        .expect("a TokenRequest");
        let answer = (accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await)
            .map_err(|e| Error::api(format!("requesting a token for {username}"), e))?;
        let answer = serde_json::to_value(answer).unwrap_or_default();
        let token = answer
            .pointer("/status/token")
            .and_then(Value::as_str)
            .unwrap_or_default();

        let mut config = credentials::with_token(admin, token);
        config.default_namespace = namespace.into();
        credentials::write_kubeconfig_like(kubeconfig, admin, &username, token, namespace)?;
        Ok(ServiceAccountAccess {
            namespace: namespace.into(),
            name: name.into(),
            config,
            kubeconfig: kubeconfig.to_owned(),
            token: token.to_owned(),
            cluster,
        })
    }

    /// [`ServiceAccountAccess::create`] with the RBAC of a kustomize folder (a project's
    /// `config/rbac`), rendered with `kubectl kustomize`.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::ServiceAccountAccess;
    ///
    /// let admin = kube::Config::infer().await?;
    /// let kubeconfig = std::env::temp_dir().join("manager.kubeconfig");
    /// let manager =
    ///     ServiceAccountAccess::from_kustomize(&admin, "e2e", "manager", "config/rbac".as_ref(), &kubeconfig)
    ///         .await?;
    /// # Ok(()) }
    /// ```
    pub async fn from_kustomize(
        admin: &kube::Config,
        namespace: &str,
        name: &str,
        dir: &Path,
        kubeconfig: &Path,
    ) -> Result<Self> {
        let rbac = kustomize(dir)?;
        Self::create(admin, namespace, name, &rbac, kubeconfig).await
    }
}

impl Envtest {
    /// [`ServiceAccountAccess::create`] on this control plane, the kubeconfig in its folder.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::shared()?;
    /// let rbac = "
    /// apiVersion: rbac.authorization.k8s.io/v1
    /// kind: Role
    /// metadata: {name: config-reader}
    /// rules:
    /// - {apiGroups: [''], resources: [configmaps], verbs: [get, list]}
    /// ";
    /// let reader = env.service_account("apps", "reader", rbac).await?;
    /// let client = reader.client()?;
    /// # Ok(()) }
    /// ```
    pub async fn service_account(
        &self,
        namespace: &str,
        name: &str,
        rbac: &str,
    ) -> Result<ServiceAccountAccess> {
        let kubeconfig = self.dir().join(format!("{namespace}-{name}.kubeconfig"));
        ServiceAccountAccess::create(self.config(), namespace, name, rbac, &kubeconfig).await
    }

    /// [`Envtest::service_account`] with the RBAC of a kustomize folder (a project's
    /// `config/rbac`), rendered with `kubectl kustomize`.
    ///
    /// ```no_run
    /// # async fn f() -> anyhow::Result<()> {
    /// use operator_rs_runtime::testing::envtest::Envtest;
    ///
    /// let env = Envtest::shared()?;
    /// let namespace = env.create_namespace("manager").await?;
    /// let manager = env.service_account_from_kustomize(&namespace, "manager", "config/rbac").await?;
    /// # Ok(()) }
    /// ```
    pub async fn service_account_from_kustomize(
        &self,
        namespace: &str,
        name: &str,
        dir: impl AsRef<Path>,
    ) -> Result<ServiceAccountAccess> {
        let rbac = kustomize(dir.as_ref())?;
        self.service_account(namespace, name, &rbac).await
    }
}

/// Renders the kustomize folder `dir` with `kubectl kustomize` (multi-document YAML).
///
/// ```no_run
/// let rbac = operator_rs_runtime::testing::envtest::kustomize("config/rbac".as_ref())?;
/// assert!(rbac.contains("kind: ClusterRole"));
/// # Ok::<(), operator_rs_runtime::testing::envtest::Error>(())
/// ```
pub fn kustomize(dir: &Path) -> Result<String> {
    crate::webhook::local::kustomize(dir).map_err(|message| Error::Command {
        command: format!("kubectl kustomize {}", dir.display()),
        message,
    })
}

/// One document of the RBAC manifests.
enum RbacObject {
    ClusterRole(ClusterRole),
    Role(Role),
    ClusterRoleBinding(ClusterRoleBinding),
    RoleBinding(RoleBinding),
    ServiceAccount,
}

/// A cluster-wide object [`RbacObject::apply`] made, by its name on the cluster.
enum Made {
    ClusterRole(String),
    ClusterRoleBinding(String),
}

/// A request the ServiceAccount must be allowed once its bindings took effect.
struct Check {
    rule: PolicyRule,
    /// `None` for a cluster-wide permission.
    namespace: Option<String>,
}

impl RbacObject {
    fn read(origin: &Path, index: usize, document: Value) -> Result<Self> {
        let kind = document
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("(no kind)")
            .to_owned();
        let invalid = |e: serde_json::Error| Error::Manifest {
            path: origin.to_owned(),
            message: format!("document {} is not a valid {kind}: {e}", index + 1),
        };
        Ok(match kind.as_str() {
            "ClusterRole" => Self::ClusterRole(serde_json::from_value(document).map_err(invalid)?),
            "Role" => Self::Role(serde_json::from_value(document).map_err(invalid)?),
            "ClusterRoleBinding" => {
                Self::ClusterRoleBinding(serde_json::from_value(document).map_err(invalid)?)
            }
            "RoleBinding" => Self::RoleBinding(serde_json::from_value(document).map_err(invalid)?),
            "ServiceAccount" => Self::ServiceAccount,
            other => {
                return Err(Error::Manifest {
                    path: origin.to_owned(),
                    message: format!(
                        "document {} is a {other}: RBAC manifests hold ClusterRoles, Roles, \
                         ClusterRoleBindings, RoleBindings and ServiceAccounts (render only \
                         config/rbac, not config/default)",
                        index + 1
                    ),
                });
            }
        })
    }

    /// Applies it for the ServiceAccount `subject` in `namespace`; for a binding, returns a
    /// permission its role grants, to wait for; and what it made cluster wide.
    async fn apply(
        &self,
        client: &Client,
        namespace: &str,
        subject: &Subject,
        all: &[RbacObject],
    ) -> Result<(Option<Check>, Option<Made>)> {
        match self {
            Self::ClusterRole(role) => {
                let mut role = role.clone();
                clean(&mut role.metadata, None);
                let name = role.metadata.name.as_deref().unwrap_or_default();
                let name = cluster_role_name(&subject.name, name);
                role.metadata.name = Some(name.clone());
                apply(&Api::<ClusterRole>::all(client.clone()), role).await?;
                Ok((None, Some(Made::ClusterRole(name))))
            }
            Self::Role(role) => {
                let mut role = role.clone();
                let namespace = placed(client, &role.metadata, namespace).await?;
                clean(&mut role.metadata, Some(&namespace));
                apply(&Api::<Role>::namespaced(client.clone(), &namespace), role).await?;
                Ok((None, None))
            }
            Self::ClusterRoleBinding(binding) => {
                let mut binding = binding.clone();
                let (meta, role) = (&mut binding.metadata, &binding.role_ref);
                let check = rebind(meta, &mut binding.subjects, role, None, subject, all);
                follow_cluster_role(&mut binding.role_ref, subject, all);
                let name = binding.metadata.name.clone().unwrap_or_default();
                apply(&Api::<ClusterRoleBinding>::all(client.clone()), binding).await?;
                Ok((check, Some(Made::ClusterRoleBinding(name))))
            }
            Self::RoleBinding(binding) => {
                let mut binding = binding.clone();
                let namespace = placed(client, &binding.metadata, namespace).await?;
                let (meta, role) = (&mut binding.metadata, &binding.role_ref);
                let check = rebind(
                    meta,
                    &mut binding.subjects,
                    role,
                    Some(&namespace),
                    subject,
                    all,
                );
                follow_cluster_role(&mut binding.role_ref, subject, all);
                let api = Api::<RoleBinding>::namespaced(client.clone(), &namespace);
                apply(&api, binding).await?;
                Ok((check, None))
            }
            Self::ServiceAccount => Ok((None, None)),
        }
    }
}

/// A binding's reference to a ClusterRole of the manifests names it as it was applied (see
/// [`cluster_role_name`]); one to a ClusterRole that is not theirs (`view`) stays.
fn follow_cluster_role(role: &mut RoleRef, subject: &Subject, all: &[RbacObject]) {
    let ours = all.iter().any(|o| {
        matches!(o, RbacObject::ClusterRole(r) if r.metadata.name.as_deref() == Some(role.name.as_str()))
    });
    if role.kind == "ClusterRole" && ours {
        role.name = cluster_role_name(&subject.name, &role.name);
    }
}

/// The namespace a Role or RoleBinding goes to: the ServiceAccount's `namespace` when the
/// manifests put it in the manager's (none, or config/'s placeholder `system`); else its own (a
/// `namespace=team-a` RBAC marker's).
fn home<'a>(meta: &'a ObjectMeta, namespace: &'a str) -> &'a str {
    match meta.namespace.as_deref() {
        None | Some("" | "system") => namespace,
        Some(other) => other,
    }
}

/// [`home`], created if it is another namespace than the ServiceAccount's.
async fn placed(client: &Client, meta: &ObjectMeta, namespace: &str) -> Result<String> {
    let home = home(meta, namespace);
    if home != namespace {
        let namespaces = Api::<Namespace>::all(client.clone());
        apply(&namespaces, named(name_meta(home, None))).await?;
    }
    Ok(home.to_owned())
}

/// Points a binding at the ServiceAccount `subject` alone, in `namespace` (`None`: cluster
/// wide), renamed `<name>-<namespace>-<serviceaccount>`; returns a permission its role
/// grants, to wait for.
fn rebind(
    meta: &mut ObjectMeta,
    subjects: &mut Option<Vec<Subject>>,
    role: &RoleRef,
    namespace: Option<&str>,
    subject: &Subject,
    all: &[RbacObject],
) -> Option<Check> {
    clean(meta, namespace);
    let account_namespace = subject.namespace.as_deref().unwrap_or_default();
    let name = meta.name.as_deref().unwrap_or_default();
    meta.name = Some(format!("{name}-{account_namespace}-{}", subject.name));
    *subjects = Some(vec![subject.clone()]);
    let at = (namespace.unwrap_or(account_namespace), account_namespace);
    first_rule(all, &role.kind, &role.name, at).map(|rule| Check {
        rule,
        namespace: namespace.map(Into::into),
    })
}

/// The first rule of the role `kind`/`name` among `all` naming resources or non-resource
/// URLs, if it is there; a Role's, of the one a binding in `at.0` names (the ServiceAccount's
/// namespace being `at.1`).
fn first_rule(all: &[RbacObject], kind: &str, name: &str, at: (&str, &str)) -> Option<PolicyRule> {
    let rules = all.iter().find_map(|object| match (object, kind) {
        (RbacObject::ClusterRole(role), "ClusterRole")
            if role.metadata.name.as_deref() == Some(name) =>
        {
            role.rules.as_ref()
        }
        // Roles of several namespaces may share a name: the one of the binding's namespace.
        (RbacObject::Role(role), "Role")
            if role.metadata.name.as_deref() == Some(name)
                && home(&role.metadata, at.1) == at.0 =>
        {
            role.rules.as_ref()
        }
        _ => None,
    })?;
    let named = |names: &Option<Vec<String>>| names.as_ref().is_some_and(|n| !n.is_empty());
    rules
        .iter()
        .find(|rule| named(&rule.resources) || named(&rule.non_resource_urls))
        .cloned()
}

/// A review of whether the ServiceAccount `username` (`system:serviceaccount:<namespace>:..`)
/// may make the request `attributes`, with the groups the API server gives it.
pub(crate) fn service_account_review(
    namespace: &str,
    username: &str,
    attributes: ResourceAttributes,
) -> SubjectAccessReview {
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(username.into()),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(attributes),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    }
}

/// Waits until `username` may do what `check` says.
async fn wait_until_allowed(
    client: &Client,
    username: &str,
    namespace: &str,
    check: Check,
) -> Result<()> {
    let first = |values: &Option<Vec<String>>| values.as_ref().and_then(|v| v.first().cloned());
    let mut review = service_account_review(namespace, username, ResourceAttributes::default());
    match first(&check.rule.resources) {
        Some(resource) => {
            review.spec.resource_attributes = Some(ResourceAttributes {
                namespace: check.namespace.clone(),
                verb: check.rule.verbs.first().cloned(),
                group: first(&check.rule.api_groups),
                resource: Some(resource),
                ..ResourceAttributes::default()
            });
        }
        // A non-resource URL (`/metrics`); a wildcard one (`/debug/*`) is checked at its prefix.
        None => {
            review.spec.resource_attributes = None;
            review.spec.non_resource_attributes = Some(NonResourceAttributes {
                verb: check.rule.verbs.first().cloned(),
                path: first(&check.rule.non_resource_urls)
                    .map(|url| url.trim_end_matches('*').to_owned()),
            });
        }
    }
    let reviews = Api::<SubjectAccessReview>::all(client.clone());
    let deadline = Instant::now() + RBAC_TIMEOUT;
    loop {
        let answer = (reviews.create(&PostParams::default(), &review).await)
            .map_err(|e| Error::api(format!("checking the RBAC of {username}"), e))?;
        if answer.status.is_some_and(|s| s.allowed) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let rule = &check.rule;
            return Err(Error::RbacNotEffective {
                user: username.into(),
                request: format!(
                    "{:?} {:?} in group {:?}{}",
                    rule.verbs.first(),
                    first(&rule.resources).or_else(|| first(&rule.non_resource_urls)),
                    first(&rule.api_groups),
                    check
                        .namespace
                        .as_deref()
                        .map(|ns| format!(" in namespace {ns}"))
                        .unwrap_or_default()
                ),
                timeout: RBAC_TIMEOUT,
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Drops what a stored object carries but an apply must not (from `kubectl get -o yaml`),
/// and sets the namespace.
fn clean(meta: &mut ObjectMeta, namespace: Option<&str>) {
    meta.namespace = namespace.map(Into::into);
    meta.resource_version = None;
    meta.uid = None;
    meta.creation_timestamp = None;
    meta.managed_fields = None;
}

fn name_meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: namespace.map(Into::into),
        ..ObjectMeta::default()
    }
}

fn named<K: Default + Resource>(meta: ObjectMeta) -> K {
    let mut object = K::default();
    *object.meta_mut() = meta;
    object
}

/// Server-side applies `object` as envtest.
async fn apply<K>(api: &Api<K>, object: K) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(&name, &params, &Patch::Apply(&object))
        .await
        .map_err(|e| Error::api(format!("applying {} {name}", K::kind(&())), e))?;
    Ok(())
}
