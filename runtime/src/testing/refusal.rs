//! RBAC refusals in a manager's log: the request the API server refused a ServiceAccount
//! (`... is forbidden: User "system:serviceaccount:<ns>:<name>" cannot <verb> resource
//! "<resource>[/<subresource>]" in API group "<group>" [in the namespace "<ns>" | at the
//! cluster scope]`), and whether its RBAC really lacks a rule for it.
//!
//! A kube-apiserver that has just restarted serves before its RBAC authorizer has loaded the
//! roles, and refuses requests its roles grant for a moment: [`Refusal::persists`] tells such a
//! refusal from a missing rule by asking the API server again (a SubjectAccessReview).

use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{ResourceAttributes, SubjectAccessReview};
use kube::Client;
use kube::api::{Api, PostParams};

use super::envtest::{Error, Result, rbac_review};

/// A request the API server refused a ServiceAccount by RBAC.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// `system:serviceaccount:<namespace>:<name>`.
    pub user: String,
    /// The request.
    pub attributes: ResourceAttributes,
}

impl Refusal {
    /// The refusal a log line tells of, if it tells of one (quotes may be escaped, as in a
    /// `Debug`-printed error).
    ///
    /// ```
    /// use operator_rs_runtime::testing::refusal::Refusal;
    ///
    /// let line = r#"WARN ... memcacheds.cache.example.com "m" is forbidden: User "system:serviceaccount:e2e:op" cannot patch resource "memcacheds/status" in API group "cache.example.com" in the namespace "apps""#;
    /// let refusal = Refusal::parse(line).unwrap();
    /// assert_eq!(refusal.user, "system:serviceaccount:e2e:op");
    /// assert_eq!(refusal.attributes.verb.as_deref(), Some("patch"));
    /// assert_eq!(refusal.attributes.resource.as_deref(), Some("memcacheds"));
    /// assert_eq!(refusal.attributes.subresource.as_deref(), Some("status"));
    /// assert_eq!(refusal.attributes.namespace.as_deref(), Some("apps"));
    /// assert!(Refusal::parse("guestbooks: forbidden: unable to create new content in namespace x because it is being terminated").is_none());
    /// ```
    pub fn parse(line: &str) -> Option<Self> {
        let line = line.replace("\\\"", "\"");
        let rest = line.split_once("forbidden: User \"")?.1;
        let (user, rest) = rest.split_once('"')?;
        let rest = rest.strip_prefix(" cannot ")?;
        let (verb, rest) = rest.split_once(' ')?;
        let quoted = |rest: &str, prefix: &str| -> Option<String> {
            let rest = rest.split_once(prefix)?.1;
            Some(rest.split_once('"')?.0.to_owned())
        };
        // "cannot list resource ...", or a non-resource URL ("cannot get path ..."): only
        // resource requests are reviewed.
        let resource = quoted(rest, "resource \"")?;
        let (resource, subresource) = match resource.split_once('/') {
            Some((resource, sub)) => (resource.to_owned(), Some(sub.to_owned())),
            None => (resource, None),
        };
        Some(Self {
            user: user.to_owned(),
            attributes: ResourceAttributes {
                verb: Some(verb.to_owned()),
                group: Some(quoted(rest, "in API group \"").unwrap_or_default()),
                resource: Some(resource),
                subresource,
                namespace: quoted(rest, "in the namespace \""),
                ..ResourceAttributes::default()
            },
        })
    }

    /// Whether the API server (asked as `admin`) refuses the request still, throughout
    /// `settle` (false as soon as it allows it: the refusal was one of an API server warming
    /// up). The user is reviewed with the groups of a ServiceAccount.
    pub async fn persists(&self, admin: &Client, settle: Duration) -> Result<bool> {
        let namespace = (self.user.strip_prefix("system:serviceaccount:"))
            .and_then(|rest| rest.split_once(':'))
            .map_or("", |(namespace, _)| namespace);
        let review = rbac_review(namespace, &self.user, self.attributes.clone());
        let reviews = Api::<SubjectAccessReview>::all(admin.clone());
        let deadline = Instant::now() + settle;
        loop {
            let answer = (reviews.create(&PostParams::default(), &review).await)
                .map_err(|e| Error::api(format!("reviewing a refusal of {}", self.user), e))?;
            if answer.status.is_some_and(|s| s.allowed) {
                return Ok(false);
            }
            if Instant::now() >= deadline {
                return Ok(true);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}
