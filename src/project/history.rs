//! The scaffolding commands of a project, as `update` replays them: the command lines PROJECT
//! records (`commands:`, kept by every scaffolding command since `init`), or, for a PROJECT made
//! before they were recorded, the commands its resources imply (`init`, then each `create api`
//! with its flags, `edit api --storage` where the storage version moved, and each
//! `create webhook`).

use super::{Project, Resource};

/// What a reconstruction of `init` cannot read from PROJECT: the license header's owner and the
/// license (found in the project's README and Cargo.toml by the caller).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InitExtras {
    /// The copyright owner (`--owner`); empty for none.
    pub owner: String,
    /// Whether the project was made with `--license none`.
    pub no_license: bool,
}

/// Whether PROJECT's `commands:` is the whole history (it starts at `init`): only then is it
/// replayed as it is.
pub fn is_complete(project: &Project) -> bool {
    project
        .commands
        .first()
        .and_then(|c| split(c))
        .is_some_and(|words| words.first().map(String::as_str) == Some("init"))
}

/// Record one scaffolding command (its words, without `operator-rs`) in PROJECT: `init` starts
/// the record; any other command is added when the record is complete (a project made before
/// commands were recorded gets its history from [`replay`] at its next `update`).
pub fn record(project: &mut Project, words: &[String]) {
    let Some(line) = join(words) else { return };
    if words.first().map(String::as_str) == Some("init") {
        project.commands = vec![line];
    } else if is_complete(project) && !project.commands.contains(&line) {
        // A re-run with --force is recorded with it: a replay re-scaffolds as it did.
        project.commands.push(line);
    }
}

/// Record `edit --namespaced=<on>` (or `edit --sharded=<on>`: `flag` is `init`'s flag of that
/// setting) as the `init` that makes that setting (`edit --namespaced` makes what `init
/// --namespaced` makes, kinds included: tests/cli_namespaced.rs), so a replay scaffolds the
/// project's settings from the start, and PROJECT reads as if it had been made so.
pub fn record_init_flag(project: &mut Project, flag: &str, on: bool) {
    if !is_complete(project) {
        return;
    }
    let Some(mut init) = split(&project.commands[0]) else {
        return;
    };
    let with_value = format!("{flag}=");
    init.retain(|w| w != flag && !w.starts_with(&with_value));
    if on {
        init.push(flag.into());
    }
    if let Some(line) = join(&init) {
        project.commands[0] = line;
    }
}

/// Record `create api` for `resource` as PROJECT holds it after the command (a re-run merges
/// into the kind version: a forced re-run in another variant, a controller added later), in the
/// words of one command that makes it so; that line replaces the kind version's earlier one,
/// as if it had been that way from the start.
pub fn record_create_api(project: &mut Project, resource: &Resource) {
    let words = create_api(resource);
    let Some(line) = join(&words) else { return };
    let earlier = (project.commands.iter())
        .position(|c| split(c).is_some_and(|w| same_command(&w, &["create", "api"], resource)));
    match earlier {
        Some(at) => project.commands[at] = line,
        None if is_complete(project) => project.commands.push(line),
        None => {}
    }
}

/// Whether `words` are `command` for `r`'s group, version and kind.
fn same_command(words: &[String], command: &[&str], r: &Resource) -> bool {
    let value = |flag: &str| {
        let at = words.iter().position(|w| w == flag)?;
        words.get(at + 1).map(String::as_str)
    };
    words.len() >= command.len()
        && words[..command.len()]
            .iter()
            .zip(command)
            .all(|(w, c)| w == c)
        && value("--group").unwrap_or("") == r.group
        && value("--version") == Some(r.version.as_str())
        && value("--kind") == Some(r.kind.as_str())
}

/// The commands that rebuild the project's scaffold, each as its words: the recorded ones when
/// complete, else those [`reconstruct`] reads from PROJECT's resources.
pub fn replay(project: &Project, extras: &InitExtras) -> Vec<Vec<String>> {
    if is_complete(project) {
        let recorded: Option<Vec<_>> = project.commands.iter().map(|c| split(c)).collect();
        if let Some(recorded) = recorded {
            return recorded;
        }
    }
    reconstruct(project, extras)
}

/// The command lines of `commands`, as PROJECT records them.
pub fn lines(commands: &[Vec<String>]) -> Vec<String> {
    commands.iter().filter_map(|c| join(c)).collect()
}

/// The words as one shell line, quoted only where a shell needs it (`--namespaced=false` stays
/// as typed).
fn join(words: &[String]) -> Option<String> {
    let plain = |w: &str| {
        !w.is_empty() && (w.chars()).all(|c| c.is_ascii_alphanumeric() || "-_.,:/=@+%".contains(c))
    };
    let quoted: Option<Vec<String>> = (words.iter())
        .map(|w| match plain(w) {
            true => Some(w.clone()),
            false => shlex::try_quote(w).ok().map(|q| q.into_owned()),
        })
        .collect();
    quoted.map(|q| q.join(" "))
}

fn split(line: &str) -> Option<Vec<String>> {
    shlex::split(line)
}

/// The commands PROJECT's record implies, for a project made before commands were recorded.
pub fn reconstruct(project: &Project, extras: &InitExtras) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut init = words(&["init", "--domain", &project.domain]);
    if !project.repo.is_empty() {
        init.extend(words(&["--repo", &project.repo]));
    }
    init.extend(words(&["--project-name", &project.project_name]));
    if !extras.owner.is_empty() {
        init.extend(words(&["--owner", &extras.owner]));
    }
    if extras.no_license {
        init.extend(words(&["--license", "none"]));
    }
    // Made namespace-scoped by `init --namespaced` or `edit --namespaced`: the same scaffold.
    if project.namespaced {
        init.push("--namespaced".into());
    }
    if project.multigroup {
        init.push("--multigroup".into());
    }
    // Made sharded by `init --sharded` or `edit --sharded`: the same scaffold.
    if project.sharded {
        init.push("--sharded".into());
    }
    out.push(init);
    for r in &project.resources {
        out.push(create_api(r));
    }
    // `create api` makes a kind's first version its storage version; a later move is `edit api`.
    for r in &project.resources {
        let stored = r.api.as_ref().is_some_and(|a| a.storage);
        let first = project.versions_of(r).find(|v| v.has_api());
        if stored && first.is_some_and(|f| f.version != r.version) {
            out.push(kind_words(&["edit", "api"], r, &["--storage"]));
        }
    }
    for r in &project.resources {
        let Some(w) = &r.webhooks else { continue };
        let mut flags = Vec::new();
        if w.defaulting {
            flags.push("--defaulting");
        }
        if w.validation {
            flags.push("--programmatic-validation");
        }
        let spoke = w.spoke.join(",");
        if w.conversion {
            flags.push("--conversion");
            if !spoke.is_empty() {
                flags.extend(["--spoke", &spoke]);
            }
        }
        if !flags.is_empty() {
            out.push(kind_words(&["create", "webhook"], r, &flags));
        }
    }
    out
}

fn create_api(r: &Resource) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(from) = &r.from_crd {
        flags.extend(words(&["--from-crd", &from.file]));
        if !r.controller {
            flags.push("--controller=false".to_string());
        }
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        return kind_words(&["create", "api"], r, &flags);
    }
    let Some(api) = &r.api else {
        if r.external && r.from_crd.is_none() {
            return external_api(r);
        }
        // A built-in kind: a controller only.
        return kind_words(&["create", "api"], r, &["--resource=false", "--controller"]);
    };
    flags.extend(words(&["--plural", &r.plural]));
    if !api.namespaced {
        flags.push("--namespaced=false".to_string());
    }
    if !r.controller {
        flags.push("--controller=false".to_string());
    }
    if let Some(d) = &r.deploy_image {
        flags.extend(words(&["--image", &d.image]));
        if let Some(port) = d.container_port {
            flags.extend(words(&["--image-container-port", &port.to_string()]));
        }
        if !d.container_command.is_empty() {
            let command = d.container_command.join(",");
            flags.extend(words(&["--image-container-command", &command]));
        }
        if let Some(uid) = d.run_as_user {
            flags.extend(words(&["--run-as-user", &uid.to_string()]));
        }
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    kind_words(&["create", "api"], r, &flags)
}

/// `create api --external-api-path ...` of an external kind whose type is in a crate, with
/// what PROJECT records of it (domain, crate, scope, controller).
fn external_api(r: &Resource) -> Vec<String> {
    let mut flags = words(&["--external-api-path", &r.path]);
    if !r.domain.is_empty() {
        flags.extend(words(&["--external-api-domain", &r.domain]));
    }
    if let Some(krate) = &r.external_crate {
        flags.extend(words(&["--external-api-crate", krate]));
    }
    if !r.namespaced() {
        flags.push("--namespaced=false".to_string());
    }
    if !r.controller {
        flags.push("--controller=false".to_string());
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    kind_words(&["create", "api"], r, &flags)
}

fn kind_words(command: &[&str], r: &Resource, flags: &[&str]) -> Vec<String> {
    let mut out = words(command);
    out.extend(words(&[
        "--group",
        &r.group,
        "--version",
        &r.version,
        "--kind",
        &r.kind,
    ]));
    out.extend(words(flags));
    out
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(yaml_resources: &str) -> Project {
        Project::parse(&format!(
            "version: '3'\ndomain: example.com\nrepo: github.com/acme/op\nprojectName: op\ncrateName: op\n\
             layout: [rust.operator-rs.io/v1]\ncliVersion: 0.1.0\nk8sOpenapiFeature: v1_37\n{yaml_resources}"
        ))
        .unwrap()
    }

    fn lines_of(p: &Project, extras: &InitExtras) -> Vec<String> {
        lines(&replay(p, extras))
    }

    #[test]
    fn an_old_project_is_reconstructed_from_its_resources() {
        let p = project(
            "resources:\n\
             - {group: batch, domain: example.com, version: v1, kind: CronJob, plural: cronjobs, api: {crdVersion: v1, namespaced: true, storage: false}, controller: true, path: x, webhooks: {defaulting: true, validation: true, webhookVersion: v1}}\n\
             - {group: batch, domain: example.com, version: v2, kind: CronJob, plural: cronjobs, api: {crdVersion: v1, namespaced: true, storage: true}, controller: false, path: x, webhooks: {conversion: true, spoke: [v1], webhookVersion: v1}}\n\
             - {group: cache, domain: example.com, version: v1alpha1, kind: Memcached, plural: memcacheds, api: {crdVersion: v1, namespaced: false, storage: true}, controller: true, path: x, deployImage: {image: 'memcached:1.6', containerPort: 11211, containerCommand: [memcached, '--memory-limit=64'], runAsUser: 1001}}\n\
             - {group: apps, version: v1, kind: Deployment, plural: deployments, controller: true, core: true, path: x}\n\
             - {group: cert-manager, domain: io, version: v1, kind: Certificate, plural: certificates, controller: false, external: true, externalCrate: kcr_cert_manager_io@0.2, namespaced: false, path: kcr_cert_manager_io::v1::certificates::Certificate}\n\
             - {group: widgets.acme.io, version: v1, kind: Widget, plural: widgets, controller: true, external: true, path: crate::external::Widget}\n\
             - {group: gateway.networking.k8s.io, version: v1, kind: HTTPRoute, plural: httproutes, controller: false, external: true, fromCrd: {file: config/external/routes.yaml, sha256: ab, crdVersion: v1, namespaced: true}, path: crate::api::external::x::HTTPRoute}\n",
        );
        let extras = InitExtras {
            owner: "Acme Inc".into(),
            no_license: true,
        };
        assert_eq!(
            lines_of(&p, &extras),
            [
                "init --domain example.com --repo github.com/acme/op --project-name op --owner 'Acme Inc' --license none",
                "create api --group batch --version v1 --kind CronJob --plural cronjobs",
                "create api --group batch --version v2 --kind CronJob --plural cronjobs --controller=false",
                "create api --group cache --version v1alpha1 --kind Memcached --plural memcacheds --namespaced=false --image memcached:1.6 --image-container-port 11211 --image-container-command memcached,--memory-limit=64 --run-as-user 1001",
                "create api --group apps --version v1 --kind Deployment --resource=false --controller",
                "create api --group cert-manager --version v1 --kind Certificate --external-api-path kcr_cert_manager_io::v1::certificates::Certificate --external-api-domain io --external-api-crate kcr_cert_manager_io@0.2 --namespaced=false --controller=false",
                "create api --group widgets.acme.io --version v1 --kind Widget --external-api-path crate::external::Widget",
                "create api --group gateway.networking.k8s.io --version v1 --kind HTTPRoute --from-crd config/external/routes.yaml --controller=false",
                "edit api --group batch --version v2 --kind CronJob --storage",
                "create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation",
                "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
            ]
        );
    }

    #[test]
    fn the_managers_settings_are_recorded_in_the_init_that_makes_them() {
        let mut p = project("");
        record(&mut p, &words(&["init", "--domain", "example.com"]));
        record(&mut p, &words(&["create", "webhook", "--group", "g"]));
        record_init_flag(&mut p, "--namespaced", true);
        assert_eq!(p.commands[0], "init --domain example.com --namespaced");
        record_init_flag(&mut p, "--namespaced", true);
        assert_eq!(p.commands[0], "init --domain example.com --namespaced");
        record_init_flag(&mut p, "--sharded", true);
        assert_eq!(
            p.commands[0],
            "init --domain example.com --namespaced --sharded"
        );
        record_init_flag(&mut p, "--namespaced", false);
        assert_eq!(p.commands[0], "init --domain example.com --sharded");
        record_init_flag(&mut p, "--sharded", false);
        assert_eq!(p.commands[0], "init --domain example.com");
        // `--sharded=true` typed in a record is one with `--sharded`.
        p.commands[0] = "init --domain example.com --sharded=true".into();
        record_init_flag(&mut p, "--sharded", false);
        assert_eq!(p.commands[0], "init --domain example.com");
        assert_eq!(p.commands.len(), 2);
        // A project made before commands were recorded: its PROJECT's settings.
        let mut old = project("");
        old.namespaced = true;
        let lines = lines_of(&old, &InitExtras::default());
        assert!(lines[0].ends_with(" --namespaced"), "{lines:?}");
        old.sharded = true;
        let lines = lines_of(&old, &InitExtras::default());
        assert!(lines[0].ends_with(" --namespaced --sharded"), "{lines:?}");
    }

    #[test]
    fn a_complete_record_is_replayed_as_written_and_extended() {
        let mut p = project(
            "resources:\n- {group: g, domain: example.com, version: v1, kind: K, plural: ks, api: {crdVersion: v1, namespaced: true, storage: true}, controller: false, path: x}\n",
        );
        let mut r = p.resources[0].clone();
        let init: Vec<String> = words(&["init", "--domain", "example.com", "--owner", "A B"]);
        record(&mut p, &init);
        record_create_api(&mut p, &r);
        // A later run adds the controller: the kind's one line says so.
        r.controller = true;
        record_create_api(&mut p, &r);
        let edit = words(&[
            "edit",
            "api",
            "--group",
            "g",
            "--version",
            "v1",
            "--kind",
            "K",
            "--served=false",
        ]);
        record(&mut p, &edit);
        record(&mut p, &edit);
        assert_eq!(
            p.commands,
            [
                "init --domain example.com --owner 'A B'",
                "create api --group g --version v1 --kind K --plural ks",
                "edit api --group g --version v1 --kind K --served=false",
            ]
        );
        assert_eq!(replay(&p, &InitExtras::default())[0], init);
        // Round trip through the file.
        let again = Project::parse(&p.render().unwrap()).unwrap();
        assert_eq!(again.commands, p.commands);
    }

    #[test]
    fn a_record_that_does_not_start_at_init_is_not_extended_nor_trusted() {
        let mut p = project("");
        record(&mut p, &words(&["create", "api", "--kind", "K"]));
        assert!(p.commands.is_empty());
        p.commands = vec!["create api --kind K".into()];
        assert!(!is_complete(&p));
        assert_eq!(
            replay(&p, &InitExtras::default()).len(),
            1,
            "init only, from PROJECT"
        );
    }
}
