//! Reading one `+kubebuilder:webhook:` marker: controller-gen's keys and values, checked
//! against what the API server accepts, every fault an error that says how to fix it.

use crate::rbac::key_values;
use crate::suggest::suggest;

/// The marker's prefix.
pub const MARKER: &str = "+kubebuilder:webhook:";

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
    pub mutating: bool,
    pub name: String,
    /// `Fail` or `Ignore`.
    pub failure_policy: String,
    /// `Exact` or `Equivalent`, when given.
    pub match_policy: Option<String>,
    /// `None` or `NoneOnDryRun`.
    pub side_effects: String,
    pub timeout_seconds: Option<i32>,
    /// `Never` or `IfNeeded`, mutating webhooks only.
    pub reinvocation_policy: Option<String>,
    /// `""` for the core group.
    pub groups: Vec<String>,
    pub versions: Vec<String>,
    pub resources: Vec<String>,
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub operations: Vec<String>,
    pub admission_review_versions: Vec<String>,
    /// The Service path, or the URL when `url=` is given instead.
    pub path: Option<String>,
    pub url: Option<String>,
}

/// Parses the text after `+kubebuilder:webhook:`.
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
    check_name(&name)?;
    let failure_policy = single(
        "failurePolicy",
        required("failurePolicy", take("failurePolicy"))?,
    )?;
    let failure_policy = one_of("failurePolicy", &failure_policy, &["Fail", "Ignore"])?;
    let match_policy = take("matchPolicy")
        .map(|v| single("matchPolicy", v))
        .transpose()?
        .map(|v| one_of("matchPolicy", &v, &["Exact", "Equivalent"]))
        .transpose()?;
    let side_effects = single("sideEffects", required("sideEffects", take("sideEffects"))?)?;
    let side_effects = one_of(
        "sideEffects",
        &side_effects,
        &["None", "NoneOnDryRun", "Some", "Unknown"],
    )?;
    if side_effects == "Some" || side_effects == "Unknown" {
        return Err(format!(
            "sideEffects={side_effects}: admissionregistration.k8s.io/v1 accepts only `None` or `NoneOnDryRun`"
        ));
    }
    let timeout_seconds = take("timeoutSeconds")
        .map(|v| single("timeoutSeconds", v))
        .transpose()?
        .map(|v| match v.parse::<i32>() {
            Ok(n) if (1..=30).contains(&n) => Ok(n),
            _ => Err(format!(
                "timeoutSeconds={v}: must be a whole number of seconds from 1 to 30"
            )),
        })
        .transpose()?;
    let reinvocation_policy = take("reinvocationPolicy")
        .map(|v| single("reinvocationPolicy", v))
        .transpose()?
        .map(|v| one_of("reinvocationPolicy", &v, &["Never", "IfNeeded"]))
        .transpose()?;
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
        .map(|verb| operation(verb))
        .collect::<Result<Vec<_>, _>>()?;
    let admission_review_versions =
        required("admissionReviewVersions", take("admissionReviewVersions"))?;
    for version in &admission_review_versions {
        if version != "v1" && version != "v1beta1" {
            return Err(format!(
                "admissionReviewVersions={version}: the API server sends v1 (or v1beta1)"
            ));
        }
    }
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
        (Some(path), None) if !path.starts_with('/') => {
            return Err(format!(
                "path={path}: must start with `/`, e.g. path=/mutate-batch-example-com-v1-cronjob"
            ));
        }
        (None, Some(url)) if !url.starts_with("https://") => {
            return Err(format!(
                "url={url}: the API server calls webhooks over https only"
            ));
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

/// The API's spelling of `value` among `allowed`, compared case-insensitively as
/// controller-gen does.
fn one_of(key: &str, value: &str, allowed: &[&'static str]) -> Result<String, String> {
    if let Some(found) = allowed.iter().find(|a| a.eq_ignore_ascii_case(value)) {
        return Ok((*found).to_owned());
    }
    let hint = suggest(value, allowed)
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    Err(format!(
        "{key}={value}: {hint}(one of: {})",
        allowed.join(", ")
    ))
}

fn operation(verb: &str) -> Result<String, String> {
    const VERBS: [&str; 5] = ["create", "update", "delete", "connect", "*"];
    let lower = verb.to_ascii_lowercase();
    if VERBS.contains(&lower.as_str()) {
        return Ok(verb.to_ascii_uppercase());
    }
    let hint = suggest(&lower, &VERBS)
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    Err(format!(
        "verbs: `{verb}` is not an operation a webhook can intercept; {hint}(create, update, delete, connect or *)"
    ))
}

/// The API server wants a fully qualified name: a DNS subdomain of at least three labels.
fn check_name(name: &str) -> Result<(), String> {
    let labels: Vec<&str> = name.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if labels.len() < 3 || !labels.iter().all(label_ok) || name.len() > 253 {
        return Err(format!(
            "name={name}: must be a lowercase DNS name of at least three labels, e.g. name=mcronjob-v1.kb.io"
        ));
    }
    Ok(())
}
