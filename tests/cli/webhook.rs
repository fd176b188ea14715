//! `operator-rs create webhook --conversion`: the hub is the storage version as the kind's types
//! declare it (`#[kube(storage = false)]` on every other version), not as PROJECT recorded it,
//! since `edit api` and hand edits move it in the source. A kind whose types name no storage
//! version, or two, is refused with each version's file:line:col and the command that fixes it;
//! a refused run writes nothing.

use crate::common;

use std::path::Path;

use common::*;

const V1: &str = "src/api/v1/cron_job.rs";
const V2: &str = "src/api/v2/cron_job.rs";

/// Edit a file as a user would, by hand.
fn edit(dir: &Path, rel: &str, from: &str, to: &str) {
    let text = read(dir, rel);
    assert!(text.contains(from), "{rel} has no {from:?}:\n{text}");
    std::fs::write(dir.join(rel), text.replacen(from, to, 1)).unwrap();
}

/// The line and column of `needle` in a file, 1-based, as the errors print them.
fn place(dir: &Path, rel: &str, needle: &str) -> String {
    let text = read(dir, rel);
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("no {needle:?} in {rel}"));
    let line = text[..at].lines().count() + usize::from(text[..at].ends_with('\n'));
    let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("{rel}:{line}:{column}")
}

fn refused(dir: &Path, line: &str) -> String {
    let before = snapshot(dir);
    let r = run(dir, &words(line));
    assert_ne!(r.code, 0, "`{line}` should be refused");
    assert!(snapshot(dir) == before, "`{line}` was refused but wrote");
    r.stderr
}

const HUB_V1: &str =
    "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2";
const HUB_V2: &str =
    "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1";

#[test]
fn the_hub_is_the_storage_version_of_the_types() {
    let tmp = two_versions("hub-op");
    let dir = project_dir(&tmp, "hub-op");
    let err = refused(&dir, HUB_V2);
    assert!(
        err.contains("which the types declare is v1")
            && err.contains(&place(&dir, V1, "CronJobSpec {"))
            && err.contains(
                "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2"
            )
            && err.contains("edit api --group batch --version v2 --kind CronJob --storage"),
        "{err}"
    );

    // The storage version moved by hand in the source: PROJECT still says v1, the types v2.
    edit(&dir, V2, "    storage = false,\n", "");
    edit(
        &dir,
        V1,
        "    namespaced,\n",
        "    namespaced,\n    storage = false,\n",
    );
    assert!(read(&dir, "PROJECT").contains("storage: true"));
    let err = refused(&dir, HUB_V1);
    assert!(
        err.contains("which the types declare is v2") && err.contains(V2),
        "{err}"
    );
    ok(&dir, &words(HUB_V2));
    assert!(
        read(&dir, "src/webhooks/v1/cron_job_conversion.rs").contains("v2::CronJob"),
        "the spoke converts to the hub"
    );
}

#[test]
fn types_with_no_storage_version_or_two_are_refused_with_where() {
    let tmp = two_versions("none-op");
    let dir = project_dir(&tmp, "none-op");
    edit(
        &dir,
        V1,
        "    namespaced,\n",
        "    namespaced,\n    storage = false,\n",
    );
    let err = refused(&dir, HUB_V1);
    for e in [
        "has no storage version",
        &place(&dir, V1, "CronJobSpec {"),
        &place(&dir, V2, "CronJobSpec {"),
        "operator-rs edit api --group batch --version v1 --kind CronJob --storage",
    ] {
        assert!(err.contains(e), "no {e:?} in\n{err}");
    }

    let tmp = two_versions("two-op");
    let dir = project_dir(&tmp, "two-op");
    edit(&dir, V2, "    storage = false,\n", "");
    let err = refused(&dir, HUB_V1);
    for e in [
        "do not say which it is",
        &place(&dir, V1, "CronJobSpec {"),
        &place(&dir, V2, "CronJobSpec {"),
        "operator-rs edit api --group batch --version v1 --kind CronJob --storage",
    ] {
        assert!(err.contains(e), "no {e:?} in\n{err}");
    }
    // The printed fix settles it.
    ok(
        &dir,
        &words("edit api --group batch --version v1 --kind CronJob --storage"),
    );
    ok(&dir, &words(HUB_V1));
}

#[test]
fn a_version_missing_from_the_types_is_refused() {
    let tmp = two_versions("gone-op");
    let dir = project_dir(&tmp, "gone-op");
    std::fs::remove_dir_all(dir.join("src/api/v2")).unwrap();
    edit(&dir, "src/api/mod.rs", "pub mod v2;", "");
    let err = refused(&dir, HUB_V1);
    assert!(
        err.contains("v2 is in PROJECT but no `#[derive(CustomResource)]`")
            && err.contains("--version v2 --kind CronJob --controller=false --force"),
        "{err}"
    );
}

/// The webhooks' Service paths are made of --group, --version and --kind: a path segment the API
/// server refuses (over 253 characters) is refused by `create webhook`, naming what the user
/// typed and not a marker of src/webhooks/mod.rs they never wrote; nothing is written. One
/// character less (a segment of exactly 253) is accepted and generated.
#[test]
fn a_webhook_path_too_long_is_blamed_on_the_group_and_kind() {
    for (name, last, accepted) in [("long-op", 41, false), ("edge-op", 40, true)] {
        let tmp = init_project(name);
        let dir = project_dir(&tmp, name);
        let group = format!(
            "{}.{}.{}.{}",
            "a".repeat(60),
            "b".repeat(60),
            "c".repeat(60),
            "d".repeat(last)
        );
        ok(
            &dir,
            &words(&format!(
                "create api --group {group} --version v1 --kind CronJob --controller=false"
            )),
        );
        let line =
            format!("create webhook --group {group} --version v1 --kind CronJob --defaulting");
        if accepted {
            ok(&dir, &words(&line));
            let manifests = read(&dir, "config/webhook/manifests.yaml");
            let segment = format!("mutate-{}-example-com-v1-cronjob", group.replace('.', "-"));
            assert_eq!(segment.len(), 253);
            let doc: serde_json::Value =
                serde_saphyr::from_str(manifests.trim_start_matches("---\n")).unwrap();
            assert_eq!(
                doc["webhooks"][0]["clientConfig"]["service"]["path"],
                format!("/{segment}")
            );
            continue;
        }
        let err = refused(&dir, &line);
        assert!(
            err.contains("the defaulting webhook of")
                && err.contains("Service path is made of --group, --version and --kind")
                && err.contains("254 characters long, over 253")
                && err.contains("e.g. operator-rs create webhook")
                && !err.contains("src/webhooks/mod.rs"),
            "{err}"
        );
    }
}

/// Every command line an error offers (`operator-rs create ...`), run in order on a copy of the
/// project: each must be taken. Returns how many there were.
fn examples_are_taken(dir: &Path, stderr: &str) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join(dir.file_name().unwrap());
    copy_dir(dir, &copy);
    let mut n = 0;
    for line in stderr.lines() {
        let Some(at) = line.find("operator-rs create ") else {
            continue;
        };
        let command = &line[at + "operator-rs ".len()..];
        let r = run(&copy, &words(command));
        assert_eq!(
            r.code, 0,
            "the example `{command}` (from:\n{stderr}) is refused:\n{}",
            r.stderr
        );
        n += 1;
    }
    n
}

/// The examples in `create webhook`'s errors are command lines this project takes: never a
/// spoke that is the hub (`--spoke v1` when v1 is the hub), a version the kind does not have,
/// or a kind the project does not have.
#[test]
fn error_examples_are_accepted_where_they_are_given() {
    let tmp = two_versions("examples-op");
    let dir = project_dir(&tmp, "examples-op");
    // v1 is the hub (the storage version), v2 the other version.
    for (line, wanted) in [
        (
            "create webhook --group batch --version v1 --kind CronJob --conversion",
            "--spoke v2",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v1",
            "--spoke v2",
        ),
        (
            "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
            "--version v1 --kind CronJob --conversion --spoke v2",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob",
            "--defaulting",
        ),
        (
            "create webhook --group batch --version v9 --kind CronJob --defaulting",
            "--kind CronJob",
        ),
    ] {
        let stderr = refused(&dir, line);
        assert!(stderr.contains(wanted), "{line}: {wanted} in\n{stderr}");
        assert_eq!(examples_are_taken(&dir, &stderr), 1, "{line}:\n{stderr}");
    }
    // A spoke that is no version: named as --spoke, with a --spoke example (not --version's).
    let stderr = refused(
        &dir,
        "create webhook --group batch --version v1 --kind CronJob --conversion --spoke V2",
    );
    assert!(
        stderr.contains("invalid --spoke version \"V2\": must be a Kubernetes API version")
            && stderr.contains("e.g. --spoke v2")
            && !stderr.contains("e.g. --version"),
        "{stderr}"
    );

    // A kind with one version, v1: the example adds another version first, then converts.
    for hub in ["v1", "v2"] {
        let name = format!("single-{hub}");
        let tmp = init_project(&name);
        let dir = project_dir(&tmp, &name);
        ok(
            &dir,
            &words(&format!(
                "create api --group batch --version {hub} --kind CronJob --namespaced=false"
            )),
        );
        let stderr = refused(
            &dir,
            &format!("create webhook --group batch --version {hub} --kind CronJob --conversion"),
        );
        assert!(stderr.contains("has no other version"), "{stderr}");
        assert!(!stderr.contains(&format!("--spoke {hub}")), "{stderr}");
        assert_eq!(examples_are_taken(&dir, &stderr), 2, "{stderr}");
    }
}

/// A project made before the metrics certificate and the webhook network policy (no
/// config/certmanager, a network-policy kustomization without its marker) still takes
/// `create webhook`: the webhook certificate's kustomization is written whole, and the policy
/// file is written while the user's kustomization is left as it is.
#[test]
fn create_webhook_still_works_in_a_project_made_before_the_metrics_certificate() {
    let tmp = init_project("old-op");
    let dir = project_dir(&tmp, "old-op");
    std::fs::remove_dir_all(dir.join("config/certmanager")).unwrap();
    let policies = "config/network-policy/kustomization.yaml";
    edit(
        &dir,
        policies,
        "# +operator-rs:scaffold:networkpolicyresources\n",
        "",
    );
    let before = read(&dir, policies);
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob"),
    );
    ok(
        &dir,
        &words("create webhook --group batch --version v1 --kind CronJob --defaulting"),
    );
    let certmanager = read(&dir, "config/certmanager/kustomization.yaml");
    assert!(
        certmanager.contains("- issuer.yaml\n- certificate-webhook.yaml\n")
            && !certmanager.contains("certificate-metrics"),
        "{certmanager}"
    );
    assert_eq!(read(&dir, policies), before);
    assert!(
        dir.join("config/network-policy/allow-webhook-traffic.yaml")
            .exists()
    );
    // A new project gets both, each listed once, also after a second webhook.
    let tmp = init_project("new-op");
    let dir = project_dir(&tmp, "new-op");
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob"),
    );
    ok(
        &dir,
        &words("create webhook --group batch --version v1 --kind CronJob --defaulting"),
    );
    ok(
        &dir,
        &words(
            "create webhook --group batch --version v1 --kind CronJob --programmatic-validation",
        ),
    );
    let certmanager = read(&dir, "config/certmanager/kustomization.yaml");
    assert_eq!(
        certmanager.matches("- certificate-webhook.yaml\n").count(),
        1,
        "{certmanager}"
    );
    assert_eq!(
        certmanager.matches("- certificate-metrics.yaml\n").count(),
        1,
        "{certmanager}"
    );
    let policies = read(&dir, policies);
    assert_eq!(
        policies.matches("- allow-webhook-traffic.yaml\n").count(),
        1,
        "{policies}"
    );
}

/// Issue 31, friction 9: a webhook on a namespaced kind the project does not own (here a
/// built-in one, Deployment, and Pods of the core group) skips the manager's namespace as
/// deployed, by a patch of config/webhook/kustomization.yaml per webhook, written once; a
/// project whose kustomization lacks the marker is refused, nothing written.
#[test]
fn webhooks_on_built_in_kinds_skip_the_managers_namespace() {
    let tmp = init_project("skip-operator");
    let dir = project_dir(&tmp, "skip-operator");
    let line = "create webhook --group apps --version v1 --kind Deployment --defaulting --programmatic-validation";
    ok(&dir, &words(line));
    ok(
        &dir,
        &words("create webhook --group core --version v1 --kind Pod --programmatic-validation"),
    );
    ok(&dir, &words(line));
    let docs = kustomize(&dir, "config/default");
    let mut names = Vec::new();
    for configuration in of_kind(&docs, "MutatingWebhookConfiguration")
        .into_iter()
        .chain(of_kind(&docs, "ValidatingWebhookConfiguration"))
    {
        for webhook in configuration["webhooks"].as_array().unwrap() {
            let expression = &webhook["namespaceSelector"]["matchExpressions"][0];
            assert_eq!(
                expression,
                &serde_json::json!({
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["skip-operator-system"],
                }),
                "{webhook:#}"
            );
            names.push(webhook["name"].as_str().unwrap().to_owned());
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "mdeployment-v1.kb.io",
            "vdeployment-v1.kb.io",
            "vpod-v1.kb.io"
        ]
    );
    // The manager's Deployment is in that namespace.
    let deployments = of_kind(&docs, "Deployment");
    assert_eq!(
        deployments[0]["metadata"]["namespace"],
        "skip-operator-system"
    );
    // Written once: the re-run added nothing.
    let patches = read(&dir, "config/webhook/kustomization.yaml");
    assert_eq!(patches.matches("- name: vdeployment-v1.kb.io").count(), 1);

    // A kustomization without the marker (a project made before): refused, nothing written.
    let marker = "# +operator-rs:scaffold:webhookpatches\n";
    std::fs::write(
        dir.join("config/webhook/kustomization.yaml"),
        patches.replace(marker, ""),
    )
    .unwrap();
    let err = refused(
        &dir,
        "create webhook --group core --version v1 --kind ConfigMap --programmatic-validation",
    );
    assert!(
        err.contains("+operator-rs:scaffold:webhookpatches")
            && err.contains("- name: vconfigmap-v1.kb.io"),
        "{err}"
    );
}
