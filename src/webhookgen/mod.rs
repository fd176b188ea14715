//! `operator-rs generate webhooks`: `config/webhook/manifests.yaml`, the
//! Mutating/ValidatingWebhookConfigurations, from the `// +kubebuilder:webhook:...` markers in
//! the project's Rust sources, as controller-gen's `webhook` generator makes them from Go
//! comments.
//!
//! A marker is a whole-line comment in any `.rs` file under `src/` (`create webhook` writes
//! them above each registration in `src/webhooks/mod.rs`):
//!
//! ```text
//! // +kubebuilder:webhook:path=/mutate-batch-example-com-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1
//! ```
//!
//! Output as controller-gen's: one MutatingWebhookConfiguration `mutating-webhook-configuration`
//! and one ValidatingWebhookConfiguration `validating-webhook-configuration` (each only when it
//! has a webhook), webhooks in the order of the markers (files by path, then lines), each
//! calling the Service `webhook-service` in `system` (kustomize renames both) with an empty
//! `caBundle` left to cert-manager, keys in alphabetical order. Unlike controller-gen, a marker
//! it cannot read is an error with its file and line, never skipped; so are two webhooks with
//! one name in one configuration (the API server refuses those).

mod manifests;
pub mod marker;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::project::Project;
use crate::rbac::comment_body;
use crate::suggest::osa_distance;
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};
use marker::{MARKER, WebhookMarker};

/// Where the configurations go.
pub const MANIFESTS_FILE: &str = "config/webhook/manifests.yaml";

/// manifests.yaml of a project whose webhooks are all conversions.
const NO_ADMISSION_WEBHOOKS: &str =
    "# No +kubebuilder:webhook markers: this project has no admission webhooks.\n";

/// A marker and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub file: PathBuf,
    pub line: usize,
    pub marker: WebhookMarker,
}

/// Scans every `.rs` file under `src/` and renders `config/webhook/manifests.yaml`; no file
/// when there is no marker. Every malformed marker is reported, each with file:line.
pub fn generate(tree: &dyn SourceTree, _project: &Project) -> Result<GeneratorOutput> {
    let mut files = tree
        .files_under(Path::new("src"))
        .context("listing the Rust sources under src/")?;
    files.sort();
    let mut markers = Vec::new();
    let mut problems = Vec::new();
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let Some(text) = tree
            .read(path)
            .with_context(|| format!("reading {}", path.display()))?
        else {
            continue;
        };
        scan(path, &text, &mut markers, &mut problems);
    }
    problems.extend(duplicate_names(&markers));
    if !problems.is_empty() {
        bail!(
            "{} webhook marker{} cannot be read; nothing was generated:\n{}",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("\n")
        );
    }
    let contents = if !markers.is_empty() {
        Some(manifests::render(&markers)?)
    } else if crate::commands::create_webhook::has_webhooks(tree) {
        // src/webhooks/mod.rs includes the file: it must exist, with conversions only too.
        Some(NO_ADMISSION_WEBHOOKS.to_string())
    } else {
        None
    };
    let files = contents
        .map(|contents| GeneratedFile {
            path: PathBuf::from(MANIFESTS_FILE),
            contents,
        })
        .into_iter()
        .collect();
    Ok(GeneratorOutput {
        files,
        stale: Vec::new(),
        warnings: Vec::new(),
    })
}

/// Collects the markers of one file, and a message for each malformed one.
pub fn scan(path: &Path, text: &str, markers: &mut Vec<Located>, problems: &mut Vec<String>) {
    for (index, raw) in text.lines().enumerate() {
        let Some(body) = comment_body(raw) else {
            continue;
        };
        let at = |message: String| {
            format!(
                "{}:{}: {message}\n    {}",
                path.display(),
                index + 1,
                raw.trim()
            )
        };
        if let Some(args) = body.strip_prefix(MARKER) {
            match marker::parse(args) {
                Ok(marker) => markers.push(Located {
                    file: path.to_path_buf(),
                    line: index + 1,
                    marker,
                }),
                Err(message) => problems.push(at(message)),
            }
        } else if let Some(message) = misspelt(body) {
            problems.push(at(message));
        }
    }
}

/// A comment that looks like a webhook marker but is not spelled as one.
fn misspelt(body: &str) -> Option<String> {
    let after_plus = body.strip_prefix('+')?;
    let lower = after_plus.to_ascii_lowercase();
    let mut segments = lower.split(':');
    let (domain, name) = (segments.next()?, segments.next().unwrap_or(""));
    let webhook_like = name == "webhook" || osa_distance(name, "webhook") == 1;
    if !webhook_like || osa_distance(domain, "kubebuilder") > 1 && domain != "operator-rs" {
        return None;
    }
    if lower.starts_with("kubebuilder:webhook:") {
        return Some(format!(
            "marker names are case-sensitive: write `{MARKER}` (found `+{}`)",
            &after_plus[..MARKER.len() - 1]
        ));
    }
    if lower == "kubebuilder:webhook" {
        return Some(format!(
            "`+kubebuilder:webhook` must be followed by `:` and key=value pairs, e.g. `{}`",
            marker::EXAMPLE
        ));
    }
    Some(format!(
        "unknown marker `+{domain}:{name}`; did you mean `{MARKER}`?"
    ))
}

/// Two webhooks of one configuration with one name.
fn duplicate_names(markers: &[Located]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, later) in markers.iter().enumerate() {
        if let Some(first) = markers[..i].iter().find(|m| {
            m.marker.mutating == later.marker.mutating && m.marker.name == later.marker.name
        }) {
            problems.push(format!(
                "{}:{}: webhook name {} is already used at {}:{}; the API server refuses two webhooks with one name in one configuration",
                later.file.display(),
                later.line,
                later.marker.name,
                first.file.display(),
                first.line
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubebuilder's testdata/project-v4-multigroup/config/webhook/manifests.yaml, as
    /// controller-gen wrote it from the markers below (same markers, same order).
    const CONTROLLER_GEN: &str = include_str!("testdata/project-v4-multigroup-manifests.yaml");

    const SOURCES: [(&str, &str); 6] = [
        (
            "src/webhooks/a_apps.rs",
            "// +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=mdeployment-v1.kb.io,admissionReviewVersions=v1\n\
             fn x() {}\n\
             /// +kubebuilder:webhook:path=/validate-apps-v1-deployment,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=vdeployment-v1.kb.io,admissionReviewVersions=v1\n",
        ),
        (
            "src/webhooks/b_certmanager.rs",
            "//+kubebuilder:webhook:path=/mutate-cert-manager-io-v1-issuer,mutating=true,failurePolicy=fail,sideEffects=None,groups=cert-manager.io,resources=issuers,verbs=create;update,versions=v1,name=missuer-v1.kb.io,admissionReviewVersions=v1\n",
        ),
        (
            "src/webhooks/c_core.rs",
            "    // +kubebuilder:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups=\"\",resources=pods,verbs=create;update,versions=v1,name=vpod-v1.kb.io,admissionReviewVersions=v1\n",
        ),
        (
            "src/webhooks/d_crew.rs",
            "// +kubebuilder:webhook:path=/mutate-crew-testproject-org-v1-captain,mutating=true,failurePolicy=fail,sideEffects=None,groups=crew.testproject.org,resources=captains,verbs=create;update,versions=v1,name=mcaptain-v1.kb.io,admissionReviewVersions=v1\n\
             // +kubebuilder:webhook:path=/validate-crew-testproject-org-v1-captain,mutating=false,failurePolicy=fail,sideEffects=None,groups=crew.testproject.org,resources=captains,verbs=create;update,versions=v1,name=vcaptain-v1.kb.io,admissionReviewVersions=v1\n",
        ),
        (
            "src/webhooks/e_example.rs",
            "// +kubebuilder:webhook:path=/validate-example-com-testproject-org-v1alpha1-memcached,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com.testproject.org,resources=memcacheds,verbs=create;update,versions=v1alpha1,name=vmemcached-v1alpha1.kb.io,admissionReviewVersions=v1\n",
        ),
        (
            "src/webhooks/f_ship.rs",
            "// +kubebuilder:webhook:path=/mutate-ship-testproject-org-v1-destroyer,mutating=true,failurePolicy=fail,sideEffects=None,groups=ship.testproject.org,resources=destroyers,verbs=create;update,versions=v1,name=mdestroyer-v1.kb.io,admissionReviewVersions=v1\n\
             // +kubebuilder:webhook:path=/validate-ship-testproject-org-v2alpha1-cruiser,mutating=false,failurePolicy=fail,sideEffects=None,groups=ship.testproject.org,resources=cruisers,verbs=create;update,versions=v2alpha1,name=vcruiser-v2alpha1.kb.io,admissionReviewVersions=v1\n",
        ),
    ];

    fn scan_all(sources: &[(&str, &str)]) -> (Vec<Located>, Vec<String>) {
        let (mut markers, mut problems) = (Vec::new(), Vec::new());
        for (path, text) in sources {
            scan(Path::new(path), text, &mut markers, &mut problems);
        }
        problems.extend(duplicate_names(&markers));
        (markers, problems)
    }

    #[test]
    fn manifests_match_controller_gen_for_the_same_markers() {
        let (markers, problems) = scan_all(&SOURCES);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(markers.len(), 9);
        assert_eq!(manifests::render(&markers).unwrap(), CONTROLLER_GEN);
    }

    /// The same YAML as controller-gen's but for one spelling: go-yaml quotes `*` as `'*'`.
    #[test]
    fn optional_keys_are_written_like_controller_gen() {
        let (markers, problems) = scan_all(&[(
            "src/a.rs",
            "// +kubebuilder:webhook:url=https://hooks.example.com/m,mutating=true,failurePolicy=Ignore,matchPolicy=equivalent,reinvocationPolicy=IfNeeded,timeoutSeconds=5,sideEffects=NoneOnDryRun,groups=core;apps,resources={pods,deployments},verbs=CREATE;delete;*,versions=v1,name=m.example.com,admissionReviewVersions=v1;v1beta1\n",
        )]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            manifests::render(&markers).unwrap(),
            "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: mutating-webhook-configuration\nwebhooks:\n\
             - admissionReviewVersions:\n  - v1\n  - v1beta1\n  clientConfig:\n    url: https://hooks.example.com/m\n  failurePolicy: Ignore\n  matchPolicy: Equivalent\n  name: m.example.com\n  reinvocationPolicy: IfNeeded\n  rules:\n  - apiGroups:\n    - \"\"\n    - apps\n    apiVersions:\n    - v1\n    operations:\n    - CREATE\n    - DELETE\n    - \"*\"\n    resources:\n    - pods\n    - deployments\n  sideEffects: NoneOnDryRun\n  timeoutSeconds: 5\n"
        );
    }

    #[test]
    fn malformed_markers_are_errors_with_file_line_and_a_fix() {
        let good = "path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=g,resources=r,verbs=create,versions=v1,name=m.kb.io,admissionReviewVersions=v1";
        let cases: Vec<(String, &str)> = vec![
            (
                good.replace("failurePolicy", "failurPolicy"),
                "unknown key `failurPolicy`; did you mean `failurePolicy`?",
            ),
            (
                good.replace("sideEffects=None,", ""),
                "`sideEffects` is missing; e.g. `// +kubebuilder:webhook:path=",
            ),
            (
                good.replace("sideEffects=None", "sideEffects=Some"),
                "accepts only `None` or `NoneOnDryRun`",
            ),
            (
                good.replace("failurePolicy=fail", "failurePolicy=fial"),
                "failurePolicy=fial: did you mean `Fail`?",
            ),
            (
                good.replace("verbs=create", "verbs=craete"),
                "did you mean `create`?",
            ),
            (
                good.replace("name=m.kb.io", "name=mcronjob"),
                "at least three labels",
            ),
            (good.replace("path=/m", "path=m"), "must start with `/`"),
            (
                good.replace("mutating=true", "mutating=yes"),
                "write `mutating=true` or `mutating=false`",
            ),
            (format!("{good},timeoutSeconds=31"), "from 1 to 30"),
            (format!("{good},webhookVersions=v1beta1"), "only v1 exists"),
            (format!("{good},url=https://x"), "not both"),
            (
                good.replace("mutating=true", "mutating=false") + ",reinvocationPolicy=Never",
                "mutating webhooks only",
            ),
            (String::new(), "the marker is empty"),
        ];
        for (args, expected) in cases {
            let source = format!("fn a() {{}}\n// +kubebuilder:webhook:{args}\n");
            let (_, problems) = scan_all(&[("src/webhooks/mod.rs", &source)]);
            assert_eq!(problems.len(), 1, "{args}: {problems:?}");
            assert!(
                problems[0].starts_with("src/webhooks/mod.rs:2: "),
                "{}",
                problems[0]
            );
            assert!(
                problems[0].contains(expected),
                "{args}: expected {expected:?} in {}",
                problems[0]
            );
        }
    }

    #[test]
    fn misspelt_markers_and_duplicate_names_are_errors() {
        let (_, problems) = scan_all(&[(
            "src/w.rs",
            "// +kubebuilder:webhok:path=/m\n// +Kubebuilder:Webhook:path=/m\n// +kubebuilder:webhook\n// +kubebuilder:rbac:groups=a,resources=b,verbs=get\n// just a comment +kubebuilder:webhook:\n",
        )]);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("src/w.rs:1: unknown marker `+kubebuilder:webhok`; did you mean `+kubebuilder:webhook:`?"), "{}", problems[0]);
        assert!(
            problems[1].contains("src/w.rs:2: marker names are case-sensitive"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].contains("src/w.rs:3: `+kubebuilder:webhook` must be followed by `:`"),
            "{}",
            problems[2]
        );

        let marker = "// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=g,resources=r,verbs=create,versions=v1,name=m.kb.io,admissionReviewVersions=v1\n";
        let (_, problems) = scan_all(&[("src/a.rs", marker), ("src/b.rs", marker)]);
        assert_eq!(
            problems,
            [
                "src/b.rs:1: webhook name m.kb.io is already used at src/a.rs:1; the API server refuses two webhooks with one name in one configuration"
            ]
        );
    }
}
