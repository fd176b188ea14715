//! The local-webhook loop as a user walks it, on a real control plane: a kind of two versions
//! converted by a webhook, `make install`, `make run` (which serves the webhooks on the host
//! and points the cluster at itself), `make install` again while it runs, then the manager
//! stopping (Ctrl-C, SIGKILL). The Makefile's own targets run, as the generated README says.

mod common;

use common::readme::*;
use common::*;
use operator_rs_runtime::testing::envtest::Envtest;

/// The conversion of the CRD, as JSON.
const CONVERSION: &str =
    "kubectl get crd cronjobs.batch.example.com -o jsonpath='{.spec.conversion}'";

/// Where `make run` serves the conversion (the Makefile's default `WEBHOOK_LOCAL_URL`).
const LOCAL: &str = "https://127.0.0.1:9443/convert";

/// The scaffold of the friction: CronJob v1, then v2 without a controller, v2 made the storage
/// version, and v2 the hub of a conversion webhook with v1 its spoke.
fn converted_project(name: &str) -> tempfile::TempDir {
    let tmp = two_versions(name);
    let dir = project_dir(&tmp, name);
    for line in [
        "edit api --group batch --version v2 --kind CronJob --storage",
        "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
    ] {
        ok(&dir, &words(line));
    }
    tmp
}

/// Friction 5 of issue 31: `make install` while `make run` serves the conversion webhook failed
/// (`exactly one of url or service is required`), and stopping the manager left the CRD with
/// `strategy: None`. Now `make install` succeeds, the manager points the CRD at itself again,
/// and stopping it (cleanly or killed) gives the CRD back what `make install` writes.
#[test]
fn make_install_beside_make_run_keeps_the_local_conversion_and_stopping_restores_the_installed_one()
{
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

    shell.run("make install");
    let installed = shell.run(CONVERSION);
    assert!(
        installed.contains(r#""strategy":"Webhook""#) && installed.contains("webhook-service"),
        "make install does not turn on config/crd's conversion:\n{installed}"
    );

    let mut manager = shell.start("make run");
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
    signal_job(&mut manager, "INT");
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
    let mut manager = shell.start("make run");
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
    signal_job(&mut manager, "KILL");
    shell.wait_for(
        "the guard gives back make install's conversion",
        60,
        CONVERSION,
        |o| o == installed,
    );
}
