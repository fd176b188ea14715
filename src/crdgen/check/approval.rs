//! The API approval of a CRD in a protected group: kube-apiserver refuses a CRD whose group is
//! `k8s.io`, `kubernetes.io` or a subdomain of either without an `api-approved.kubernetes.io`
//! annotation holding a URL (the approved API change) or a reason starting with `unapproved`
//! (`validateAPIApproval`, `GetAPIApprovalState`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The annotation protected groups need.
pub(crate) const API_APPROVED: &str = "api-approved.kubernetes.io";

/// `IsProtectedCommunityGroup`.
pub(crate) fn is_protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|p| group == *p || group.ends_with(&format!(".{p}")))
}

/// Why kube-apiserver refuses `crd`'s API approval; None when it is accepted.
pub fn problem(crd: &CustomResourceDefinition) -> Option<String> {
    if !is_protected_group(&crd.spec.group) {
        return None;
    }
    let value = crd
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(API_APPROVED))
        .map_or("", String::as_str);
    if value.is_empty() {
        Some(format!(
            "the group {} is protected (`*.k8s.io`, `*.kubernetes.io`: the Kubernetes project's own APIs), and its CRDs must have the annotation `{API_APPROVED}`",
            crd.spec.group
        ))
    } else if value.starts_with("unapproved") || is_request_uri_with_host(value) {
        None
    } else {
        Some(format!(
            "the annotation `{API_APPROVED}: {value:?}` of a protected group must be the URL of the approved API change or a reason starting with \"unapproved\""
        ))
    }
}

/// What Go's `url.ParseRequestURI` accepts with a scheme and a host: `scheme://host[...]`, with no
/// control character, space in the host, or bad `%` escape.
fn is_request_uri_with_host(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    let escapes_ok = s
        .split('%')
        .skip(1)
        .all(|after| after.len() >= 2 && after.as_bytes()[..2].iter().all(u8::is_ascii_hexdigit));
    scheme_ok
        && !host.is_empty()
        && !authority.contains(' ')
        && !s.chars().any(|c| c.is_ascii_control())
        && escapes_ok
}
