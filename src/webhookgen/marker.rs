//! Reading one `+kubebuilder:webhook:` marker: controller-gen's keys and values ([`parse`]), then
//! every rule kube-apiserver checks on the webhook the marker makes ([`check`], after
//! `pkg/apis/admissionregistration/validation` and `k8s.io/apiserver/pkg/util/webhook`), every
//! fault an error that says the rule and gives a valid example.

use crate::markers::key_values;
use crate::suggest::suggest;

/// The keys controller-gen reads (pkg/webhook/parser.go).
pub const KEYS: [&str; 15] = [
    "admissionReviewVersions",
    "failurePolicy",
    "groups",
    "matchPolicy",
    "mutating",
    "name",
    "path",
    "reinvocationPolicy",
    "resources",
    "sideEffects",
    "timeoutSeconds",
    "url",
    "verbs",
    "versions",
    "webhookVersions",
];

/// An example of a whole marker, for error messages.
pub const EXAMPLE: &str = "// +kubebuilder:webhook:path=/mutate-batch-example-com-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1";

/// One marker, read and checked; values in the API's spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookMarker {
    /// A mutating webhook (`mutating=true`), else a validating one.
    pub mutating: bool,
    /// The webhook's name (`name=`), e.g. `mcronjob-v1.kb.io`.
    pub name: String,
    /// `Fail` or `Ignore`.
    pub failure_policy: String,
    /// `Exact` or `Equivalent`, when given.
    pub match_policy: Option<String>,
    /// `None` or `NoneOnDryRun`.
    pub side_effects: String,
    /// How long kube-apiserver waits for the webhook (`timeoutSeconds=`), when given.
    pub timeout_seconds: Option<i32>,
    /// `Never` or `IfNeeded`, mutating webhooks only.
    pub reinvocation_policy: Option<String>,
    /// `""` for the core group.
    pub groups: Vec<String>,
    /// The API versions of the resources it is called for.
    pub versions: Vec<String>,
    /// The resources (plural names, maybe with `/subresource`) it is called for.
    pub resources: Vec<String>,
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub operations: Vec<String>,
    /// The AdmissionReview versions the webhook accepts (`admissionReviewVersions=`).
    pub admission_review_versions: Vec<String>,
    /// The Service path, or the URL when `url=` is given instead.
    pub path: Option<String>,
    /// The URL of a webhook outside the cluster (`url=`), instead of the Service's path.
    pub url: Option<String>,
}

const FAILURE_POLICIES: [&str; 2] = ["Fail", "Ignore"];
const MATCH_POLICIES: [&str; 2] = ["Exact", "Equivalent"];
/// What `admissionregistration.k8s.io/v1` accepts on create (`Some` and `Unknown` were v1beta1's).
const SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const REINVOCATION_POLICIES: [&str; 2] = ["Never", "IfNeeded"];
const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];
/// The AdmissionReview versions the API server sends; a webhook must accept one of them.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// Reads the text after `+kubebuilder:webhook:` as controller-gen does: the keys, the values'
/// syntax, the spellings it folds (`fail` is `Fail`, `core` is the group `""`, verbs are
/// operations). What the API server then accepts is [`check`]'s.
pub fn parse(args: &str) -> Result<WebhookMarker, String> {
    if args.trim().is_empty() {
        return Err(format!("the marker is empty; e.g. `{EXAMPLE}`"));
    }
    let mut values = key_values(args, &KEYS)?;
    let mut take = |key: &str| values.remove(key);
    let required = |key: &'static str, values: Option<Vec<String>>| {
        values.ok_or_else(|| format!("`{key}` is missing; e.g. `{EXAMPLE}`"))
    };
    let single = |key: &str, values: Vec<String>| -> Result<String, String> {
        match <[String; 1]>::try_from(values) {
            Ok([value]) => Ok(value),
            Err(_) => Err(format!("`{key}` takes one value")),
        }
    };

    let mutating = single("mutating", required("mutating", take("mutating"))?)?;
    let mutating = match mutating.as_str() {
        "true" => true,
        "false" => false,
        other => {
            return Err(format!(
                "mutating={other}: write `mutating=true` or `mutating=false`"
            ));
        }
    };
    let name = single("name", required("name", take("name"))?)?;
    let failure_policy = single(
        "failurePolicy",
        required("failurePolicy", take("failurePolicy"))?,
    )?;
    let failure_policy = spelled(&failure_policy, &FAILURE_POLICIES);
    let match_policy = take("matchPolicy")
        .map(|v| single("matchPolicy", v))
        .transpose()?
        .map(|v| spelled(&v, &MATCH_POLICIES));
    let side_effects = single("sideEffects", required("sideEffects", take("sideEffects"))?)?;
    let side_effects = spelled(&side_effects, &["None", "NoneOnDryRun", "Some", "Unknown"]);
    let timeout_seconds = take("timeoutSeconds")
        .map(|v| single("timeoutSeconds", v))
        .transpose()?
        .map(|v| {
            v.parse::<i32>().map_err(|_| {
                format!("timeoutSeconds={v}: must be a whole number of seconds from 1 to 30, e.g. timeoutSeconds=10")
            })
        })
        .transpose()?;
    let reinvocation_policy = take("reinvocationPolicy")
        .map(|v| single("reinvocationPolicy", v))
        .transpose()?
        .map(|v| spelled(&v, &REINVOCATION_POLICIES));
    if reinvocation_policy.is_some() && !mutating {
        return Err(
            "reinvocationPolicy applies to mutating webhooks only; remove it or set mutating=true"
                .into(),
        );
    }
    let groups: Vec<String> = required("groups", take("groups"))?
        .into_iter()
        .map(crate::project::api_group_named)
        .collect();
    let versions = required("versions", take("versions"))?;
    let resources = required("resources", take("resources"))?;
    let operations = required("verbs", take("verbs"))?
        .iter()
        .map(|verb| spelled(verb, &OPERATIONS))
        .collect();
    let admission_review_versions =
        required("admissionReviewVersions", take("admissionReviewVersions"))?;
    if let Some(versions) = take("webhookVersions")
        && versions.iter().any(|v| v != "v1")
    {
        return Err(format!(
            "webhookVersions={}: only v1 exists since Kubernetes 1.22; remove the key",
            versions.join(";")
        ));
    }
    let path = take("path").map(|v| single("path", v)).transpose()?;
    let url = take("url").map(|v| single("url", v)).transpose()?;
    match (&path, &url) {
        (None, None) => return Err(format!("`path` is missing; e.g. `{EXAMPLE}`")),
        (Some(_), Some(_)) => {
            return Err("give `path` (the webhook Service's) or `url`, not both".into());
        }
        _ => {}
    }
    Ok(WebhookMarker {
        mutating,
        name,
        failure_policy,
        match_policy,
        side_effects,
        timeout_seconds,
        reinvocation_policy,
        groups,
        versions,
        resources,
        operations,
        admission_review_versions,
        path,
        url,
    })
}

/// `value` in the API's spelling when it is one of `allowed` but for case (controller-gen folds
/// case), else as written (for [`check`] to refuse).
fn spelled(value: &str, allowed: &[&'static str]) -> String {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value))
        .map_or_else(|| value.to_owned(), |a| (*a).to_owned())
}

/// Refuses what kube-apiserver refuses in the webhook `m` makes (all but a name used twice in one
/// configuration, which takes every marker: `webhookgen::read`). The first fault, with its rule
/// and a valid example.
pub fn check(m: &WebhookMarker) -> Result<(), String> {
    check_name(&m.name)?;
    one_of("failurePolicy", &m.failure_policy, &FAILURE_POLICIES)?;
    if let Some(policy) = &m.match_policy {
        one_of("matchPolicy", policy, &MATCH_POLICIES)?;
    }
    if m.side_effects == "Some" || m.side_effects == "Unknown" {
        return Err(format!(
            "sideEffects={}: admissionregistration.k8s.io/v1 accepts only `None` or `NoneOnDryRun`; e.g. sideEffects=None, or sideEffects=NoneOnDryRun for a webhook with side effects (it is then not called on dry runs)",
            m.side_effects
        ));
    }
    one_of("sideEffects", &m.side_effects, &SIDE_EFFECTS)?;
    if let Some(timeout) = m.timeout_seconds
        && !(1..=30).contains(&timeout)
    {
        return Err(format!(
            "timeoutSeconds={timeout}: must be a whole number of seconds from 1 to 30, e.g. timeoutSeconds=10"
        ));
    }
    if let Some(policy) = &m.reinvocation_policy {
        one_of("reinvocationPolicy", policy, &REINVOCATION_POLICIES)?;
    }
    for operation in &m.operations {
        if !OPERATIONS.contains(&operation.as_str()) {
            let lower: Vec<String> = OPERATIONS.iter().map(|o| o.to_ascii_lowercase()).collect();
            let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
            let hint = suggest(&operation.to_ascii_lowercase(), &lower)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            return Err(format!(
                "verbs: `{operation}` is not an operation a webhook can intercept; {hint}(create, update, delete, connect or *), e.g. verbs=create;update"
            ));
        }
    }
    alone_wildcard("verbs", &m.operations, "verbs=create;update")?;
    alone_wildcard("groups", &m.groups, "groups=apps;batch")?;
    alone_wildcard("versions", &m.versions, "versions=v1;v1beta1")?;
    if m.versions.iter().any(String::is_empty) {
        return Err(
            "versions: an empty version matches nothing and the API server refuses it; e.g. versions=v1"
                .into(),
        );
    }
    check_resources(&m.resources)?;
    check_review_versions(&m.admission_review_versions)?;
    match (&m.path, &m.url) {
        (_, Some(url)) => check_url(url),
        (Some(path), None) => check_path(path),
        (None, None) => Ok(()),
    }
}

fn one_of(key: &str, value: &str, allowed: &[&'static str]) -> Result<(), String> {
    if allowed.contains(&value) {
        return Ok(());
    }
    let hint = suggest(value, allowed)
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    Err(format!(
        "{key}={value}: {hint}(one of: {}; any case), e.g. {key}={}",
        allowed.join(", "),
        allowed[0]
    ))
}

/// `*` is every value: the API server refuses it beside others.
fn alone_wildcard(key: &str, values: &[String], example: &str) -> Result<(), String> {
    if values.len() > 1 && values.iter().any(|v| v == "*") {
        return Err(format!(
            "{key}={}: `*` already means all, and the API server refuses it beside others; write {key}=* alone, or list them, e.g. {example}",
            values.join(";")
        ));
    }
    Ok(())
}

/// The API server's `validateResources`: `resource`, `resource/subresource`, `*`, `*/*`,
/// `resource/*`, `*/subresource`, none empty, no wildcard overlapping another entry.
fn check_resources(resources: &[String]) -> Result<(), String> {
    const EXAMPLE: &str = "resources=cronjobs;cronjobs/status";
    let all = resources.join(";");
    let mut whole_resources = Vec::new();
    let mut sub_wildcards: Vec<&str> = Vec::new();
    let mut resource_wildcards: Vec<&str> = Vec::new();
    for entry in resources {
        if entry.is_empty() {
            return Err(format!(
                "resources={all}: an empty resource matches nothing and the API server refuses it; e.g. {EXAMPLE}"
            ));
        }
        let Some((resource, sub)) = entry.split_once('/') else {
            whole_resources.push(entry.as_str());
            continue;
        };
        if sub_wildcards.contains(&resource) {
            return Err(format!(
                "resources={all}: `{resource}/*` already matches `{entry}`, and the API server refuses both; keep one, e.g. resources={resource}/*"
            ));
        }
        if resource_wildcards.contains(&sub) {
            return Err(format!(
                "resources={all}: `*/{sub}` already matches `{entry}`, and the API server refuses both; keep one, e.g. resources=*/{sub}"
            ));
        }
        if sub == "*" {
            sub_wildcards.push(resource);
        }
        if resource == "*" {
            resource_wildcards.push(sub);
        }
    }
    if resources.len() > 1 && resources.iter().any(|r| r == "*/*") {
        return Err(format!(
            "resources={all}: `*/*` already matches every resource and subresource, and the API server refuses it beside others; write resources=*/* alone, or list them, e.g. {EXAMPLE}"
        ));
    }
    if whole_resources.contains(&"*") && whole_resources.iter().any(|r| *r != "*") {
        return Err(format!(
            "resources={all}: `*` already matches every resource, and the API server refuses it beside other resources (subresources such as `*/status` may stay); e.g. resources=*;*/status or {EXAMPLE}"
        ));
    }
    Ok(())
}

/// At least one version the API server sends, each a DNS-1035 label, none twice.
fn check_review_versions(versions: &[String]) -> Result<(), String> {
    let all = versions.join(";");
    for (i, version) in versions.iter().enumerate() {
        if versions[..i].contains(version) {
            return Err(format!(
                "admissionReviewVersions={all}: `{version}` is given twice; list each once, e.g. admissionReviewVersions=v1"
            ));
        }
        if !crate::names::is_dns1035_label(version) {
            return Err(format!(
                "admissionReviewVersions={all}: `{version}` is not a version (a DNS-1035 label: lowercase letters, digits and '-', starting with a letter); e.g. admissionReviewVersions=v1"
            ));
        }
    }
    if !versions
        .iter()
        .any(|v| REVIEW_VERSIONS.contains(&v.as_str()))
    {
        return Err(format!(
            "admissionReviewVersions={all}: must include a version the API server sends ({}), e.g. admissionReviewVersions=v1",
            REVIEW_VERSIONS.join(" or ")
        ));
    }
    Ok(())
}

/// The API server wants a fully qualified name: a DNS-1123 subdomain of at least three
/// dot-separated segments (`IsFullyQualifiedName`).
fn check_name(name: &str) -> Result<(), String> {
    const RULE: &str = "a webhook name is a lowercase DNS name of at least three segments (letters, digits, '-' and '.', each segment starting and ending with a letter or digit, at most 253 characters), e.g. name=mcronjob-v1.kb.io";
    if let Some(problem) = crate::names::apimachinery_subdomain_problem(name) {
        return Err(format!("name={name}: {problem}; {RULE}"));
    }
    if name.split('.').count() < 3 {
        return Err(format!(
            "name={name}: it has {} segment{}; {RULE}",
            name.split('.').count(),
            if name.contains('.') { "s" } else { "" }
        ));
    }
    Ok(())
}

/// A Service path as the API server checks it (`ValidateWebhookService`): `/`, or `/`-separated
/// segments that are each a DNS-1123 subdomain, one trailing `/` allowed.
pub fn check_path(path: &str) -> Result<(), String> {
    const RULE: &str = "a webhook Service path is `/` and segments separated by `/`, each lowercase letters, digits, '-' and '.' (starting and ending with a letter or digit), e.g. path=/mutate-batch-example-com-v1-cronjob";
    if path.is_empty() || path == "/" {
        return Ok(());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!("path={path}: it must start with `/`; {RULE}"));
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    for (i, segment) in rest.split('/').enumerate() {
        if segment.is_empty() {
            return Err(format!(
                "path={path}: segment {} is empty (`//`, or `/` at an end more than once); {RULE}",
                i + 1
            ));
        }
        if let Some(problem) = crate::names::apimachinery_subdomain_problem(segment) {
            return Err(format!(
                "path={path}: segment {} ({segment:?}): {problem}; {RULE}",
                i + 1
            ));
        }
    }
    Ok(())
}

/// A URL as the API server checks it (`ValidateWebhookURL`, on Go's `url.Parse`): https, a
/// host, no user information, query or fragment.
fn check_url(url: &str) -> Result<(), String> {
    const FORM: &str = "a webhook URL is https://host[:port][/path], e.g. url=https://webhooks.example.com:8443/mutate";
    go_url_problem(url).map_or(Ok(()), |problem| {
        Err(format!("url={url}: {problem}; {FORM}"))
    })
}

/// What Go's `url.Parse` refuses in `url`, or what `ValidateWebhookURL` refuses in its parts.
fn go_url_problem(url: &str) -> Option<String> {
    if url.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Some("it has a control character".into());
    }
    let (url, fragment) = url.split_once('#').unwrap_or((url, ""));
    // Go reads the scheme up to the first `:` when what comes before is a scheme.
    let scheme_end = url.find(':').filter(|&i| {
        let s = url.as_bytes();
        i > 0
            && s[0].is_ascii_alphabetic()
            && s[1..i]
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    if url.starts_with(':') {
        return Some("it has no scheme (it starts with `:`)".into());
    }
    let (scheme, rest) = match scheme_end {
        Some(i) => (&url[..i], &url[i + 1..]),
        None => ("", url),
    };
    let (rest, query) = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        (&rest[..rest.len() - 1], "")
    } else {
        rest.split_once('?').unwrap_or((rest, ""))
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) if !scheme.is_empty() || !rest.starts_with("///") => {
            after.split_at(after.find('/').unwrap_or(after.len()))
        }
        _ => ("", rest),
    };
    let (user, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    if let Some(problem) = go_host_problem(host) {
        return Some(problem);
    }
    if user.is_some() {
        return Some("user information (`user@`) is not permitted in a webhook URL".into());
    }
    for (part, text) in [("path", path), ("fragment", fragment)] {
        if let Some(bad) = bad_escape(text) {
            return Some(format!("the {part} has an invalid escape `{bad}`"));
        }
    }
    if !scheme.eq_ignore_ascii_case("https") {
        return Some(if scheme.is_empty() {
            "it has no scheme; the API server calls webhooks over https only".into()
        } else {
            format!("the scheme is `{scheme}`; the API server calls webhooks over https only")
        });
    }
    if host.is_empty() {
        return Some("it has no host".into());
    }
    if !fragment.is_empty() {
        return Some(format!(
            "fragments (`#{fragment}`) are not permitted in a webhook URL"
        ));
    }
    if !query.is_empty() {
        return Some(format!(
            "query parameters (`?{query}`) are not permitted in a webhook URL"
        ));
    }
    None
}

/// What Go's `parseHost` refuses: a port that is not digits, an unclosed `[`, a character a host
/// may not have, a `%` escape of an ASCII byte.
fn go_host_problem(host: &str) -> Option<String> {
    let port_ok = |colon_port: &str| {
        colon_port.is_empty()
            || colon_port
                .strip_prefix(':')
                .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
    };
    let name = if let Some(bracketed) = host.strip_prefix('[') {
        let Some(close) = bracketed.rfind(']') else {
            return Some("the host has `[` without `]`".into());
        };
        if !port_ok(&bracketed[close + 1..]) {
            return Some(format!(
                "the port `{}` is not a number",
                &bracketed[close + 1..]
            ));
        }
        // IPv6 zones (`%25eth0`) are left to the API server's own parse.
        return None;
    } else if let Some(colon) = host.rfind(':') {
        if !port_ok(&host[colon..]) {
            return Some(format!("the port `{}` is not a number", &host[colon + 1..]));
        }
        host
    } else {
        host
    };
    if let Some(bad) = bad_escape(name) {
        return Some(format!("the host has an invalid escape `{bad}`"));
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            // Go allows `%XX` in a host only for a non-ASCII byte, or `%25`.
            if &name[i..i + 3] != "%25" && bytes[i + 1] < b'8' {
                return Some(format!(
                    "the host has `{}`: only non-ASCII bytes may be escaped in a host",
                    &name[i..i + 3]
                ));
            }
            i += 3;
            continue;
        }
        let allowed =
            b.is_ascii_alphanumeric() || b >= 0x80 || b"-_.~!$&'()*+,;=:[]<>\"".contains(&b);
        if !allowed {
            return Some(format!(
                "the host has `{}`, which a host may not have",
                b as char
            ));
        }
        i += 1;
    }
    None
}

/// The first `%` not followed by two hex digits, as Go's `unescape` refuses it.
fn bad_escape(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let at = bytes.iter().enumerate().position(|(i, &b)| {
        b == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    })?;
    Some(&text[at..(at + 3).min(text.len())])
}
