//! The local-webhook loop as a user walks it, on a real control plane: a kind of two versions
//! converted by a webhook, `make install`, `make run` (which serves the webhooks on the host
//! and points the cluster at itself), `make install` again while it runs, then the manager
//! stopping (Ctrl-C, SIGKILL); and the local configurations `make run` writes, which carry the
//! deployed ones' selectors, and skip the manager's namespace for a webhook on a built-in kind.
//! The Makefile's own targets run, as the generated README says.

mod common;

use common::readme::*;
use common::*;
use operator_rs_runtime::testing::envtest::Envtest;

/// The conversion of the CRD, as JSON.
const CONVERSION: &str =
    "kubectl get crd cronjobs.batch.example.com -o jsonpath='{.spec.conversion}'";

/// Where `make run` serves the conversion (the Makefile's default `WEBHOOK_LOCAL_URL`).
const LOCAL: &str = "https://127.0.0.1:9443/convert";

/// The scaffold of the frictions: CronJob v1, then v2 without a controller, v2 made the storage
/// version, and v2 the hub of a conversion webhook with v1 its spoke; a validating webhook on
/// CronJob v2 and one on the built-in Deployment, both refusing every object they see.
fn converted_project(name: &str) -> tempfile::TempDir {
    let tmp = two_versions(name);
    let dir = project_dir(&tmp, name);
    for line in [
        "edit api --group batch --version v2 --kind CronJob --storage",
        "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
        "create webhook --group batch --version v2 --kind CronJob --programmatic-validation",
        "create webhook --group apps --version v1 --kind Deployment --programmatic-validation",
    ] {
        ok(&dir, &words(line));
    }
    for file in [
        "src/webhooks/v2/cron_job.rs",
        "src/webhooks/v1/deployment.rs",
    ] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let accept = "        Ok(Vec::new())\n    }\n\n    async fn validate_update";
        assert!(text.contains(accept), "{file}:\n{text}");
        let refuse = "        Err(Rejection::new(\"refused by the test's validator\"))\n    }\n\n    async fn validate_update";
        std::fs::write(&path, text.replacen(accept, refuse, 1)).unwrap();
    }
    tmp
}

/// The user narrows CronJob's validating webhook in config/webhook/kustomization.yaml, as the
/// generated files say: namespaces labelled `webhooks: enabled` only, objects without a
/// `skip-webhooks` label, a timeout and a match condition.
const CRONJOB_PATCH: &str = r#"- patch: |-
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingWebhookConfiguration
    metadata:
      name: validating-webhook-configuration
    webhooks:
    - name: vcronjob-v2.kb.io
      namespaceSelector:
        matchLabels:
          webhooks: enabled
      objectSelector:
        matchExpressions:
        - key: skip-webhooks
          operator: DoesNotExist
      timeoutSeconds: 7
      matchConditions:
      - name: not-a-dry-run-user
        expression: "request.userInfo.username != 'dry-run'"
"#;

#[test]
fn the_local_webhook_loop_as_a_user_walks_it() {
    if common::runs_elsewhere("local_webhooks") {
        return;
    }
    if !Envtest::available() {
        eprintln!(
            "SKIPPED: the local-webhook loop needs KUBEBUILDER_ASSETS (a real control plane)"
        );
        return;
    }
    let tmp = converted_project("conv-operator");
    let dir = project_dir(&tmp, "conv-operator");
    let env = Envtest::shared().expect("the control plane starts");
    let shell = UserShell::new(&dir, &[("KUBECONFIG", env.kubeconfig())]);
    let kustomization = dir.join("config/webhook/kustomization.yaml");
    let text = std::fs::read_to_string(&kustomization).unwrap();
    let marker = "# +operator-rs:scaffold:webhookpatches";
    assert!(text.contains(marker), "{text}");
    std::fs::write(
        &kustomization,
        text.replacen(marker, &format!("{CRONJOB_PATCH}{marker}"), 1),
    )
    .unwrap();

    make_install_beside_make_run_keeps_the_local_conversion(&shell);
    local_configurations_are_the_deployed_ones(&shell);
}

/// Friction 5 of issue 31: `make install` while `make run` serves the conversion webhook failed
/// (`exactly one of url or service is required`), and stopping the manager left the CRD with
/// `strategy: None`. Now `make install` succeeds, the manager points the CRD at itself again,
/// and stopping it (cleanly or killed) gives the CRD back what `make install` writes.
fn make_install_beside_make_run_keeps_the_local_conversion(shell: &UserShell) {
    shell.run("make install");
    let installed = shell.run(CONVERSION);
    assert!(
        installed.contains(r#""strategy":"Webhook""#) && installed.contains("webhook-service"),
        "make install does not turn on config/crd's conversion:\n{installed}"
    );

    let mut manager = Job(shell.start("make run"));
    // `make run` first builds the manager (minutes on a loaded machine).
    shell.wait_for(
        "make run points the conversion at itself",
        1200,
        CONVERSION,
        |o| o.contains(LOCAL),
    );
    // The spoke's sample goes through the conversion webhook (v2 is stored).
    shell.run("kubectl apply -k config/samples/");
    shell.run("kubectl get cronjobs.v1.batch.example.com -A -o name | grep -q .");

    // `make install` again (as `edit api --storage` says next, or after a type change) while
    // the manager serves: it succeeds, and the manager points the CRD at itself again.
    let out = shell.run("make install");
    assert!(
        out.contains("installing config/crd's conversion instead"),
        "make install did not say it replaced the local conversion:\n{out}"
    );
    shell.wait_for(
        "the manager points the conversion at itself again",
        60,
        CONVERSION,
        |o| o.contains(LOCAL) && !o.contains("webhook-service"),
    );
    assert!(
        shell.manager_log().contains("points at this manager again"),
        "{}",
        shell.manager_log()
    );
    // The local conversion works: a spoke object is converted for storage and read back.
    shell.run(
        "printf 'apiVersion: batch.example.com/v1\\nkind: CronJob\\nmetadata:\\n  name: second\\n  namespace: default\\nspec: {}\\n' | kubectl apply -f -",
    );
    shell.run("kubectl get cronjobs.v2.batch.example.com second -n default -o name");
    shell.run("kubectl delete -k config/samples/");
    shell.run("kubectl delete cronjobs.v2.batch.example.com second -n default");

    // Ctrl-C: the CRD converts as `make install` has it, not `strategy: None`, no local URL.
    signal_job(&mut manager.0, "INT");
    let restored = shell.run(CONVERSION);
    assert_eq!(
        restored,
        installed,
        "Ctrl-C did not give back make install's conversion\nmanager log:\n{}",
        shell.manager_log()
    );
    shell.run("make install");
    assert_eq!(shell.run(CONVERSION), installed);

    // Killed (SIGKILL to make, cargo and the manager) after a `make install` meanwhile: its
    // guard gives back the conversion `make install` wrote last.
    let mut manager = Job(shell.start("make run"));
    shell.wait_for(
        "make run points the conversion at itself",
        600,
        CONVERSION,
        |o| o.contains(LOCAL),
    );
    shell.run("make install");
    shell.wait_for(
        "the manager points the conversion at itself again",
        60,
        CONVERSION,
        |o| o.contains(LOCAL),
    );
    signal_job(&mut manager.0, "KILL");
    shell.wait_for(
        "the guard gives back make install's conversion",
        60,
        CONVERSION,
        |o| o == installed,
    );
}

/// The webhook configurations `make run` points at itself, named `<project>-local-<name>`.
const LOCAL_VALIDATING: &str = "kubectl get validatingwebhookconfiguration conv-operator-local-validating-webhook-configuration -o json";

/// Friction 9 of issue 31: the local configurations of `make run` copied manifests.yaml without
/// the kustomization's patches, and a webhook on a built-in kind intercepted the manager's own
/// namespace. Now they carry exactly what `kubectl kustomize config/webhook` (what `make deploy`
/// applies) gives each webhook, and the built-in kind's webhook skips the manager's namespace.
fn local_configurations_are_the_deployed_ones(shell: &UserShell) {
    for line in [
        "kubectl create namespace conv-operator-system",
        "kubectl create namespace others",
        "kubectl create namespace watched",
        "kubectl label namespace watched webhooks=enabled",
    ] {
        shell.run(line);
    }
    let mut manager = Job(shell.start("make run"));
    shell.wait_for(
        "make run writes its configurations",
        600,
        LOCAL_VALIDATING,
        |o| o.contains("vdeployment-v1.kb.io"),
    );

    // Every field of every webhook of the deployed configuration (but where it calls) is the
    // local one's.
    let deployed = kustomize(&shell.dir, "config/webhook");
    let deployed = of_kind(&deployed, "ValidatingWebhookConfiguration");
    assert_eq!(deployed.len(), 1, "{deployed:?}");
    let local: serde_json::Value = serde_json::from_str(&shell.run(LOCAL_VALIDATING)).unwrap();
    let deployed = deployed[0]["webhooks"].as_array().unwrap();
    assert_eq!(deployed.len(), 2, "{deployed:?}");
    for webhook in deployed {
        let name = &webhook["name"];
        let copy = (local["webhooks"].as_array().unwrap().iter())
            .find(|w| w["name"] == *name)
            .unwrap_or_else(|| panic!("no local copy of {name}:\n{local:#}"));
        for (field, value) in webhook.as_object().unwrap() {
            if field != "clientConfig" {
                assert!(
                    carries(&copy[field], value),
                    "{name}: {field} is {value} as deployed\nlocal: {copy:#}"
                );
            }
        }
    }

    // The built-in kind: the manager's namespace is skipped, another is refused.
    shell.run(
        "kubectl -n conv-operator-system create deployment kept --image=registry.k8s.io/pause:3.10",
    );
    let (created, out) = shell
        .try_run("kubectl -n others create deployment refused --image=registry.k8s.io/pause:3.10");
    assert!(
        !created && out.contains("refused by the test's validator"),
        "a Deployment outside the manager's namespace was not refused:\n{out}"
    );
    // The user's namespaceSelector: namespaces without the label are not refused, the labelled
    // one is, and the objectSelector exempts a labelled object there.
    let cronjob = |ns: &str, name: &str, labels: &str| {
        format!(
            "printf 'apiVersion: batch.example.com/v2\\nkind: CronJob\\nmetadata:\\n  name: {name}\\n  namespace: {ns}\\n  labels: {{{labels}}}\\nspec: {{}}\\n' | kubectl apply -f -"
        )
    };
    shell.run(&cronjob("others", "outside", ""));
    let (created, out) = shell.try_run(&cronjob("watched", "inside", ""));
    assert!(
        !created && out.contains("refused by the test's validator"),
        "a CronJob in the selected namespace was not refused:\n{out}"
    );
    shell.run(&cronjob("watched", "exempt", "skip-webhooks: \"yes\""));

    signal_job(&mut manager.0, "INT");
    let (_, left) = shell.try_run(LOCAL_VALIDATING);
    assert!(left.contains("NotFound"), "left after Ctrl-C:\n{left}");
}

/// Whether `held` (as the API server returns it, with its defaults: a rule's `scope`...) has
/// every value of `given`.
fn carries(held: &serde_json::Value, given: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (held, given) {
        (Value::Object(held), Value::Object(given)) => {
            (given.iter()).all(|(k, v)| held.get(k).is_some_and(|h| carries(h, v)))
        }
        (Value::Array(held), Value::Array(given)) => {
            held.len() == given.len() && held.iter().zip(given).all(|(h, g)| carries(h, g))
        }
        _ => held == given,
    }
}

/// A `make run` started by the test: killed with its process group if the test fails first,
/// so that no manager of a failed run keeps the port (and the cluster's webhooks).
struct Job(std::process::Child);

impl Drop for Job {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let group = format!("-{}", self.0.id());
            let _ = std::process::Command::new("kill")
                .args(["-s", "KILL", "--", &group])
                .status();
            let _ = self.0.wait();
        }
    }
}
