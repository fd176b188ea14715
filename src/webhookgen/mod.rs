//! `operator-rs generate webhooks`: `config/webhook/manifests.yaml`, the
//! Mutating/ValidatingWebhookConfigurations, from the `// +kubebuilder:webhook:...` markers in
//! the project's Rust sources, as controller-gen's `webhook` generator makes them from Go
//! comments.
//!
//! A marker is a `//` comment on a line of its own in any `.rs` file under `src/`, never text in
//! a literal or a block comment ([`crate::markers`] finds them); `create webhook` writes them above
//! each registration in `src/webhooks/mod.rs`:
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
//! it cannot read, or whose webhook the API server would refuse ([`marker::check`]), is an error
//! with its file:line:column, the rule and an example, never skipped; so are two webhooks with one
//! name in one configuration.

pub mod manifests;
pub mod marker;

use std::path::PathBuf;

use anyhow::Result;

use crate::markers::{self, Found, MarkerName, Problem, Site};
use crate::project::Project;
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};
use marker::WebhookMarker;

/// Where the configurations go.
pub const MANIFESTS_FILE: &str = "config/webhook/manifests.yaml";

/// manifests.yaml of a project whose webhooks are all conversions.
const NO_ADMISSION_WEBHOOKS: &str =
    "# No +kubebuilder:webhook markers: this project has no admission webhooks.\n";

/// The marker this module reads.
const WEBHOOK: MarkerName = MarkerName {
    name: "webhook",
    what: "webhook",
    example: marker::EXAMPLE,
};

/// A marker and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Where the marker is.
    pub site: Site,
    /// The marker, read and checked.
    pub marker: WebhookMarker,
}

/// Scans every `.rs` file under `src/` and renders `config/webhook/manifests.yaml`; no file
/// when there is no marker. Every malformed marker is reported, each with file:line:column.
pub fn generate(tree: &dyn SourceTree, _project: &Project) -> Result<GeneratorOutput> {
    let (found, mut problems) = markers::collect(tree, &WEBHOOK)?;
    let markers = read(&found, &mut problems);
    markers::refuse_unreadable("webhook", &problems)?;
    let contents = if !markers.is_empty() {
        Some(manifests::render(&markers)?)
    } else if has_webhooks(tree) {
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

/// The markers `found` read and checked against what the API server accepts, in order; a
/// problem for each it would refuse, and for each name given twice in one configuration.
pub fn read(found: &[Found], problems: &mut Vec<Problem>) -> Vec<Located> {
    let mut markers: Vec<Located> = Vec::new();
    for f in found {
        match marker::parse(&f.args).and_then(|m| marker::check(&m).map(|()| m)) {
            Ok(marker) => {
                if let Some(first) = markers
                    .iter()
                    .find(|m| m.marker.mutating == marker.mutating && m.marker.name == marker.name)
                {
                    let (head, tail) = marker.name.split_once('.').unwrap_or((&marker.name, ""));
                    problems.push(f.problem(format!(
                        "webhook name {} is already used at {}; the API server refuses two webhooks with one name in one configuration: give each its own, e.g. name={head}-2.{tail}",
                        marker.name, first.site
                    )));
                    continue;
                }
                markers.push(Located {
                    site: f.site.clone(),
                    marker,
                });
            }
            Err(message) => problems.push(f.problem(message)),
        }
    }
    markers
}

/// Whether the tree holds the webhook module (for generators).
pub fn has_webhooks(tree: &dyn SourceTree) -> bool {
    tree.read(std::path::Path::new("src/webhooks/mod.rs"))
        .ok()
        .flatten()
        .is_some()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

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
        let (mut found, mut problems) = (Vec::new(), Vec::new());
        for (path, text) in sources {
            markers::scan(Path::new(path), text, &WEBHOOK, &mut found, &mut problems);
        }
        let located = read(&found, &mut problems);
        (located, problems.iter().map(ToString::to_string).collect())
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
            "// +kubebuilder:webhook:url=https://hooks.example.com/m,mutating=true,failurePolicy=Ignore,matchPolicy=equivalent,reinvocationPolicy=IfNeeded,timeoutSeconds=5,sideEffects=NoneOnDryRun,groups=core;apps,resources={pods,deployments},verbs=CREATE;delete,versions=v1,name=m.example.com,admissionReviewVersions=v1;v1beta1\n",
        )]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            manifests::render(&markers).unwrap(),
            "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: mutating-webhook-configuration\nwebhooks:\n\
             - admissionReviewVersions:\n  - v1\n  - v1beta1\n  clientConfig:\n    url: https://hooks.example.com/m\n  failurePolicy: Ignore\n  matchPolicy: Equivalent\n  name: m.example.com\n  reinvocationPolicy: IfNeeded\n  rules:\n  - apiGroups:\n    - \"\"\n    - apps\n    apiVersions:\n    - v1\n    operations:\n    - CREATE\n    - DELETE\n    resources:\n    - pods\n    - deployments\n  sideEffects: NoneOnDryRun\n  timeoutSeconds: 5\n"
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
                "at least three segments",
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
                problems[0].starts_with("src/webhooks/mod.rs:2:4: "),
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

    /// A marker in a raw string or a block comment makes no webhook (it made a cluster-wide
    /// Deployment webhook with failurePolicy=Fail); the real one after them still does.
    #[test]
    fn markers_in_literals_and_block_comments_make_no_webhook() {
        let hidden = "// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create,versions=v1,name=m.apps.io,admissionReviewVersions=v1";
        let real = SOURCES[1].1;
        let source = format!(
            "const DOC: &str = r##\"\n{hidden}\n\"##;\nconst S: &str = \"{hidden}\";\n/* /* nested */\n{hidden}\n*/\n{real}"
        );
        let (markers, problems) = scan_all(&[("src/webhooks/mod.rs", &source)]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(markers.len(), 1);
        assert_eq!(markers[0].marker.name, "missuer-v1.kb.io");
        assert_eq!(markers[0].site.line, 8);
    }

    #[test]
    fn misspelt_markers_and_duplicate_names_are_errors() {
        let (_, problems) = scan_all(&[(
            "src/w.rs",
            "// +kubebuilder:webhok:path=/m\n// +Kubebuilder:Webhook:path=/m\n// +kubebuilder:webhook\n// +kubebuilder:rbac:groups=a,resources=b,verbs=get\n// just a comment +kubebuilder:webhook:\n",
        )]);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("src/w.rs:1:4: unknown marker `+kubebuilder:webhok`; did you mean `+kubebuilder:webhook:`?"), "{}", problems[0]);
        assert!(
            problems[1].contains("src/w.rs:2:4: marker names are case-sensitive"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].contains("src/w.rs:3:4: `+kubebuilder:webhook` must be followed by `:`"),
            "{}",
            problems[2]
        );

        let marker = "// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=g,resources=r,verbs=create,versions=v1,name=m.kb.io,admissionReviewVersions=v1\n";
        let (_, problems) = scan_all(&[("src/a.rs", marker), ("src/b.rs", marker)]);
        assert_eq!(
            problems,
            [format!(
                "src/b.rs:1:4: webhook name m.kb.io is already used at src/a.rs:1:4; the API server refuses two webhooks with one name in one configuration: give each its own, e.g. name=m-2.kb.io\n    {}",
                marker.trim()
            )]
        );
    }
}
