//! The e2e harness's session (`E2e::on`) on the real control plane, for what it leaves on a
//! cluster and what it installs: two projects' sessions on one cluster keep their cluster-wide
//! RBAC apart (each ClusterRole named with its project's prefix, as kustomize's `namePrefix`
//! does) and delete it when they end; a project whose kinds are all external (no
//! `config/crd/bases`) gets the CRDs it names (`config/crd/external`, PROJECT's `fromCrd`
//! files), and one with no `config/crd` at all starts too.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::e2e::{self, E2e, E2eProject, MANAGER_NAMESPACE, Project};
use operator_rs_runtime::testing::envtest::{Envtest, ServiceAccountAccess};

struct Alpha;
impl E2eProject for Alpha {
    const PROJECT: Project = Project {
        name: "e2e-alpha",
        dir: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e_projects/alpha"),
        manager: "/nonexistent/manager",
        scratch: env!("CARGO_TARGET_TMPDIR"),
        ready: e2e::reconciled,
    };
}

struct Beta;
impl E2eProject for Beta {
    const PROJECT: Project = Project {
        name: "e2e-beta",
        dir: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e_projects/beta"),
        manager: "/nonexistent/manager",
        scratch: env!("CARGO_TARGET_TMPDIR"),
        ready: e2e::reconciled,
    };
}

/// Whether the ServiceAccount `name` of the e2e namespace may list `resource` cluster wide.
async fn may_list(client: &Client, name: &str, resource: &str) -> anyhow::Result<bool> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{MANAGER_NAMESPACE}:{name}")),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{MANAGER_NAMESPACE}"),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                verb: Some("list".into()),
                resource: Some(resource.into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let answer = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

async fn exists<K>(client: &Client, name: &str) -> anyhow::Result<bool>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    Ok(Api::<K>::all(client.clone()).get_opt(name).await?.is_some())
}

#[tokio::test]
async fn two_projects_keep_their_cluster_rbac_apart_and_delete_it() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let admin = env.client()?;

    let alpha = E2e::<Alpha>::on(env).await;
    // The CRDs an all-external project names, without config/crd/bases.
    for crd in [
        "gadgets.external.example.com",
        "gizmos.upstream.example.com",
    ] {
        assert!(
            exists::<CustomResourceDefinition>(&admin, crd).await?,
            "{crd} is not installed"
        );
    }
    assert!(exists::<ClusterRole>(&admin, "e2e-alpha-manager-role").await?);
    assert!(!exists::<ClusterRole>(&admin, "manager-role").await?);
    assert!(may_list(&admin, "e2e-alpha", "configmaps").await?);

    // The other project's session binds its own `manager-role` meanwhile (as its harness
    // does): neither overwrites the other's.
    let beta_kubeconfig = env.dir().join("e2e-beta.kubeconfig");
    let beta = ServiceAccountAccess::from_kustomize(
        env.config(),
        MANAGER_NAMESPACE,
        "e2e-beta",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/e2e_projects/beta/config/rbac"
        )
        .as_ref(),
        &beta_kubeconfig,
    )
    .await?;
    assert_eq!(beta.cluster_rbac().cluster_roles, ["e2e-beta-manager-role"]);
    assert!(may_list(&admin, "e2e-alpha", "configmaps").await?);
    assert!(!may_list(&admin, "e2e-alpha", "secrets").await?);
    assert!(may_list(&admin, "e2e-beta", "secrets").await?);
    assert!(!may_list(&admin, "e2e-beta", "configmaps").await?);

    // The session ends: its cluster-wide RBAC goes (the metrics reader's too), the other's stays.
    drop(alpha);
    for role in [
        "e2e-alpha-manager-role",
        "e2e-alpha-metrics-reader-operator-rs-test-metrics-reader",
    ] {
        assert!(!exists::<ClusterRole>(&admin, role).await?, "{role} stayed");
    }
    let bindings = Api::<ClusterRoleBinding>::all(admin.clone())
        .list(&Default::default())
        .await?;
    let left: Vec<String> = (bindings.items.iter())
        .filter_map(|b| b.metadata.name.clone())
        .filter(|n| n.contains("e2e-alpha"))
        .collect();
    assert!(left.is_empty(), "{left:?} stayed");
    assert!(exists::<ClusterRole>(&admin, "e2e-beta-manager-role").await?);
    beta.cluster_rbac().delete(&admin).await?;
    assert!(!exists::<ClusterRole>(&admin, "e2e-beta-manager-role").await?);

    // A project with no config/crd at all starts its session too.
    let beta = E2e::<Beta>::on(env).await;
    assert!(exists::<ClusterRole>(&admin, "e2e-beta-manager-role").await?);
    drop(beta);
    assert!(!exists::<ClusterRole>(&admin, "e2e-beta-manager-role").await?);
    Ok(())
}
