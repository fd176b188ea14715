//! The scaffold engine: renders a command's embedded templates with a context, applies each
//! template's if-exists policy, inserts fragments at the insertion points
//! ([`insertion_points`]: `+operator-rs:scaffold:` marker lines), and leaves the result in an
//! [`Overlay`] — nothing touches the disk until every file is computed and every check passed.
//! Re-running is always safe: existing user files are refused (or kept) and insertions are idempotent.

pub(crate) mod check;
pub(crate) mod context;
pub(crate) mod insertion_points;
pub(crate) mod template;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use crate::workspace::{Overlay, SourceTree};
use context::Family;
use insertion_points::Inserted;
use template::{IfExists, Template, templates_for};

/// What scaffolding did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// The file is new.
    Create,
    /// The file is replaced (its policy is `overwrite`, or `--force`).
    Overwrite,
    /// Fragments were inserted.
    Update,
    /// The file exists and its policy keeps it.
    Keep,
    /// The file goes (`edit --multigroup` moves it, or it is left declaring nothing).
    Remove,
}

impl Action {
    /// The action as the commands print it before each path (`create`, `update`...).
    pub fn verb(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Overwrite => "overwrite",
            Action::Update => "update",
            Action::Keep => "keep",
            Action::Remove => "remove",
        }
    }
}

/// The files a scaffolding run touches, with what it does to each, and the existing files it
/// would have to replace without `--force` (refused by [`crate::ops::finish()`]).
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Each file touched, relative to the project root, with what is done to it.
    pub actions: Vec<(PathBuf, Action)>,
    /// The files that exist and would be replaced (refused without `--force`).
    pub conflicts: Vec<PathBuf>,
}

impl Report {
    /// Record `action` on `path` (an earlier create or overwrite stays what it was).
    pub fn record(&mut self, path: &Path, action: Action) {
        match self.actions.iter_mut().find(|(p, _)| p == path) {
            // A file created or overwritten and then updated by a fragment stays "create"/"overwrite".
            Some((_, a)) if *a == Action::Keep => *a = action,
            Some(_) => {}
            None => self.actions.push((path.to_path_buf(), action)),
        }
    }
}

/// Render every template of `ctx`'s family with it into `overlay`.
/// Files whose policy is `error` and that exist already are not planned unless `force`: they are
/// left in [`Report::conflicts`], which the caller refuses (with any conflicts of its own).
pub fn plan<C: Family>(ctx: &C, force: bool, overlay: &mut Overlay<'_>) -> Result<Report> {
    let ctx = tera::Context::from_serialize(ctx)
        .map_err(|e| anyhow!("{}", error_chain(&e)))
        .context("building the template context (a bug in operator-rs)")?;
    let ctx = &ctx;
    let templates = templates_for(C::TEMPLATES)?;
    let mut active = Vec::new();
    for t in &templates {
        if condition_holds(t, ctx)? {
            active.push(t);
        }
    }
    // Only the templates this run renders are parsed.
    let tera = parse_templates(active.iter().map(|t| (t.name.as_str(), t.body)))?;

    let mut report = Report::default();
    let mut conflicts = BTreeSet::new();

    for t in active.iter().filter(|t| !t.is_fragment()) {
        let path = render_path(&tera, t, ctx)?;
        let body = render(&tera, t, ctx)?;
        match overlay.read(&path)? {
            None => {
                overlay.put(path.clone(), body);
                report.record(&path, Action::Create);
            }
            Some(existing) => match t.front.if_exists {
                IfExists::Skip => report.record(&path, Action::Keep),
                IfExists::Error if !force => {
                    if existing != body {
                        conflicts.insert(path);
                    } else {
                        report.record(&path, Action::Keep);
                    }
                }
                IfExists::Error | IfExists::Overwrite => {
                    if existing != body {
                        overlay.put(path.clone(), body);
                        report.record(&path, Action::Overwrite);
                    } else {
                        report.record(&path, Action::Keep);
                    }
                }
            },
        }
    }
    report.conflicts = conflicts.into_iter().collect();

    for t in active.iter().filter(|t| t.is_fragment()) {
        let marker = t.front.marker.as_deref().unwrap_or_default();
        let path = render_path(&tera, t, ctx)?;
        let fragment = render(&tera, t, ctx)?;
        let owns = render_owns(&tera, t, ctx)?;
        let Some(current) = overlay.read(&path)? else {
            if t.front.optional {
                continue;
            }
            bail!(
                "cannot add to {}: the file is missing. operator-rs inserts this at its `{}{marker}` marker:\n{}\n  \
                 Restore the file (e.g. from version control), or create it with that marker line.",
                path.display(),
                insertion_points::PREFIX,
                indent(&fragment)
            );
        };
        let insertion = insertion_points::Fragment {
            marker,
            text: &fragment,
            owns: &owns,
        };
        match insertion_points::insert(&current, &path, &insertion) {
            Inserted::Added(new) => {
                yaml_stays_valid(&path, &current, &new, marker, &fragment)?;
                overlay.put(path.clone(), new);
                report.record(&path, Action::Update);
            }
            Inserted::AlreadyPresent => {}
            Inserted::Ambiguous(refusal) => bail!("{refusal}"),
            Inserted::NoMarker if t.front.optional => {}
            Inserted::NoMarker => bail!(
                "{} has no `{} {}{marker}` line: operator-rs inserts code before it. Nothing was written.\n  \
                 Put that line back where new entries belong, or add this by hand and re-run:\n{}",
                path.display(),
                insertion_points::comment_token(&path),
                insertion_points::PREFIX,
                indent(&fragment)
            ),
        }
    }

    // A fragment that owns entries says what the kind has: when its condition no longer holds
    // (a re-run without `--image`), what an earlier run inserted goes.
    for t in &templates {
        if !t.is_fragment() || t.front.owns.is_none() || active.iter().any(|a| a.name == t.name) {
            continue;
        }
        let path = render_path(&tera, t, ctx)?;
        let Some(current) = overlay.read(&path)? else {
            continue;
        };
        let marker = t.front.marker.as_deref().unwrap_or_default();
        let owns = render_owns(&tera, t, ctx)?;
        if let Some(new) = insertion_points::remove(&current, &path, marker, &owns) {
            overlay.put(path.clone(), new);
            report.record(&path, Action::Update);
        }
    }
    Ok(report)
}

/// Every file (not fragment) `ctx`'s family renders, as it renders it, without reading or
/// writing any: what a command compares a project's files with (`edit --namespaced`).
pub fn render_files<C: Family>(ctx: &C) -> Result<std::collections::BTreeMap<PathBuf, String>> {
    let ctx = tera::Context::from_serialize(ctx)
        .map_err(|e| anyhow!("{}", error_chain(&e)))
        .context("building the template context (a bug in operator-rs)")?;
    let mut active = Vec::new();
    for t in templates_for(C::TEMPLATES)? {
        if !t.is_fragment() && condition_holds(&t, &ctx)? {
            active.push(t);
        }
    }
    let tera = parse_templates(active.iter().map(|t| (t.name.as_str(), t.body)))?;
    let mut out = std::collections::BTreeMap::new();
    for t in &active {
        out.insert(render_path(&tera, t, &ctx)?, render(&tera, t, &ctx)?);
    }
    Ok(out)
}

/// Every fragment `ctx`'s family renders, as (file, marker, text), without reading or writing
/// any file: what a command compares two variants of a project's insertions with (`edit
/// --multigroup`).
pub fn render_fragments<C: Family>(ctx: &C) -> Result<Vec<(PathBuf, String, String)>> {
    let ctx = tera::Context::from_serialize(ctx)
        .map_err(|e| anyhow!("{}", error_chain(&e)))
        .context("building the template context (a bug in operator-rs)")?;
    let mut active = Vec::new();
    for t in templates_for(C::TEMPLATES)? {
        if t.is_fragment() && condition_holds(&t, &ctx)? {
            active.push(t);
        }
    }
    let tera = parse_templates(active.iter().map(|t| (t.name.as_str(), t.body)))?;
    let mut out = Vec::new();
    for t in &active {
        let marker = t.front.marker.clone().unwrap_or_default();
        out.push((
            render_path(&tera, t, &ctx)?,
            marker,
            render(&tera, t, &ctx)?,
        ));
    }
    Ok(out)
}

/// A YAML file (a kustomization) a fragment goes into at `marker`: one that does not parse is
/// refused (operator-rs would add to what it cannot read, and kustomize refuse the result later),
/// and so is an insertion that would break one that parses (a marker moved out of its list).
fn yaml_stays_valid(
    path: &Path,
    before: &str,
    after: &str,
    marker: &str,
    fragment: &str,
) -> Result<()> {
    if !path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
        return Ok(());
    }
    let problem = |text: &str| {
        serde_saphyr::from_multiple::<serde_json::Value>(text)
            .err()
            .map(|e| e.to_string().lines().next().unwrap_or_default().to_string())
    };
    if let Some(e) = problem(before) {
        bail!(
            "{}: not valid YAML ({e}), so operator-rs will not add to it. Nothing was written.\n  \
             Fix the file (or restore it from version control, e.g. `git checkout -- {}`), then re-run.",
            path.display(),
            path.display()
        );
    }
    if let Some(e) = problem(after) {
        bail!(
            "{}: adding at its `# {}{marker}` line would make it invalid YAML ({e}): the line is not where the entries it is for belong. Nothing was written.\n  \
             Put the marker line back at the end of its list, or add this there by hand and re-run:\n{}",
            path.display(),
            insertion_points::PREFIX,
            indent(fragment)
        );
    }
    Ok(())
}

/// The refusal to replace existing files: every one listed, and the ways out.
pub fn refusal(conflicts: &[PathBuf]) -> String {
    let list: Vec<String> = conflicts
        .iter()
        .map(|p| format!("  {}", p.display()))
        .collect();
    format!(
        "refusing to overwrite {} existing file{} that operator-rs would write:\n{}\n  \
         Nothing was written. Pass --force to overwrite them (your changes to them are lost), or move them aside.",
        conflicts.len(),
        if conflicts.len() == 1 { "" } else { "s" },
        list.join("\n")
    )
}

/// `value` as one YAML scalar, quoted as YAML needs it: what a template puts after `key: ` when the
/// value came from the user (the `*_yaml` context keys).
pub fn yaml_scalar(value: &str) -> String {
    // A YAML serializer may fold a long string over several lines, which a template cannot
    // indent; a JSON string is a valid YAML double-quoted scalar on one line.
    serde_saphyr::to_string(&value)
        .map(|s| s.trim_end_matches('\n').to_string())
        .ok()
        .filter(|s| !s.contains('\n'))
        .unwrap_or_else(|| serde_json::to_string(value).expect("a string serializes"))
}

/// Evaluate a template's front matter `when:` (`key` or `not key`) against the context; a key
/// the context lacks is refused (a bug in operator-rs), not taken as false.
fn condition_holds(t: &Template, ctx: &tera::Context) -> Result<bool> {
    let Some(when) = t.front.when.as_deref().map(str::trim) else {
        return Ok(true);
    };
    let (negate, key) = match when.strip_prefix("not ") {
        Some(k) => (true, k.trim()),
        None => (false, when),
    };
    let Some(value) = ctx.get(key) else {
        bail!(
            "template {}: `when: {when}` names `{key}`, which is not in its context (a bug in operator-rs)",
            t.name
        );
    };
    Ok(value.is_truthy() != negate)
}

fn render_path(tera: &tera::Tera, t: &Template, ctx: &tera::Context) -> Result<PathBuf> {
    // A path without tera syntax renders to itself.
    let rendered = if template::is_static(&t.front.path) {
        t.front.path.clone()
    } else {
        tera.render_str(&t.front.path, ctx, false).map_err(|e| {
            anyhow!(
                "rendering the output path of template {}: {}",
                t.name,
                error_chain(&e)
            )
        })?
    };
    let path = PathBuf::from(rendered.trim());
    if path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        bail!(
            "template {} renders to {}, outside the project (a bug in operator-rs)",
            t.name,
            path.display()
        );
    }
    Ok(path)
}

/// The names in a fragment's `owns:` (none without one).
fn render_owns(tera: &tera::Tera, t: &Template, ctx: &tera::Context) -> Result<Vec<String>> {
    let Some(owns) = &t.front.owns else {
        return Ok(Vec::new());
    };
    let rendered = tera.render_str(owns, ctx, false).map_err(|e| {
        anyhow!(
            "rendering the `owns:` of template {}: {}",
            t.name,
            error_chain(&e)
        )
    })?;
    Ok(rendered.split_whitespace().map(str::to_string).collect())
}

fn render(tera: &tera::Tera, t: &Template, ctx: &tera::Context) -> Result<String> {
    tera.render(&t.name, ctx)
        .map_err(|e| anyhow!("rendering template {}: {}", t.name, error_chain(&e)))
}

/// Tera hides the useful part of an error in its sources.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        parts.push(s.to_string());
        src = s.source();
    }
    parts.join(": ")
}

/// Tera over the templates `named` (name, body): only those a run renders are parsed.
fn parse_templates<'t>(named: impl IntoIterator<Item = (&'t str, &'t str)>) -> Result<tera::Tera> {
    let mut tera = tera::Tera::default();
    tera.autoescape_on(Vec::<&str>::new());
    tera.add_raw_templates(named)
        .map_err(|e| anyhow!("{}", error_chain(&e)))
        .context("parsing the embedded templates (a bug in operator-rs)")?;
    Ok(tera)
}

/// `text` indented by four spaces, for a block inside a message.
pub(crate) fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(when: &str) -> Template {
        let body = format!("{{#- operator-rs\npath: a\nwhen: {when}\n-#}}\nx");
        Template {
            name: "t.tera".into(),
            front: template::parse_front_matter("t.tera", &body).unwrap(),
            body: "x",
        }
    }

    #[test]
    fn when_reads_a_context_key_and_refuses_an_unknown_one() {
        let mut ctx = tera::Context::new();
        ctx.insert("on", &true);
        ctx.insert("empty", "");
        assert!(condition_holds(&template("on"), &ctx).unwrap());
        assert!(!condition_holds(&template("not on"), &ctx).unwrap());
        assert!(!condition_holds(&template("empty"), &ctx).unwrap());
        let err = condition_holds(&template("mispelled"), &ctx).unwrap_err();
        assert!(err.to_string().contains("`mispelled`"), "{err}");
    }
}

/// The fragments `create api` renders differently for one kind, held to what re-running needs.
#[cfg(test)]
mod variant_tests {
    use super::*;
    use crate::project::{DeployImage, Project, Resource};
    use context::{ApiContext, ApiParts, WebhookContext, WebhookTypes};

    const PROJECT: &str = "version: \"3\"\ndomain: example.com\nprojectName: p\ncrateName: p\nlayout:\n- rust.operator-rs.io/v1\ncliVersion: 0.1.0\nk8sOpenapiFeature: v1_37\nresources:\n- group: cache\n  domain: example.com\n  version: v1\n  kind: Memcached\n  plural: memcacheds\n  api:\n    crdVersion: v1\n    namespaced: true\n    storage: true\n  controller: true\n  path: crate::api::v1::Memcached\n- group: apps\n  version: v1\n  kind: Deployment\n  plural: deployments\n  controller: true\n  core: true\n  path: k8s_openapi::api::apps::v1::Deployment\n- group: cache\n  domain: example.com\n  version: v2\n  kind: Memcached\n  plural: memcacheds\n  api:\n    crdVersion: v1\n    namespaced: true\n  path: crate::api::v2::Memcached\n";

    /// Every variant of one kind `create api` can scaffold (and a built-in kind's).
    fn variants() -> Vec<(String, Project, Resource)> {
        let project = Project::parse(PROJECT).unwrap();
        let plain = project.resources[0].clone();
        let image = |port: Option<u16>, user| DeployImage {
            image: format!("memcached:1.{}", port.map_or(6, |_| 7)),
            container_port: port,
            container_command: vec!["memcached".into()],
            run_as_user: user,
        };
        let mut out = Vec::new();
        for namespaced in [true, false] {
            for controller in [true, false] {
                for deploy_image in [
                    None,
                    Some(image(None, None)),
                    Some(image(Some(11211), Some(1001))),
                ] {
                    if deploy_image.is_some() && !controller {
                        continue;
                    }
                    let mut r = plain.clone();
                    r.api.as_mut().unwrap().namespaced = namespaced;
                    r.controller = controller;
                    let name = format!(
                        "Memcached v1|namespaced={namespaced} controller={controller} image={:?}",
                        deploy_image.as_ref().map(|d| d.container_port)
                    );
                    r.deploy_image = deploy_image;
                    out.push((name, project.clone(), r));
                }
            }
        }
        out.push((
            "Deployment|built-in".into(),
            project.clone(),
            project.resources[1].clone(),
        ));
        out
    }

    /// Each fragment of `templates/api` and `templates/webhook` rendered in each variant of
    /// one kind (where its condition holds): (template, variant, owns, text). A variant reads
    /// `subject|detail`: the renders of one subject are variants of one another.
    fn renders() -> Vec<(String, String, Vec<String>, String)> {
        let mut out = Vec::new();
        let mut add = |family: &str, variant: String, ctx: tera::Context| {
            let mut tera = tera::Tera::default();
            tera.autoescape_on(Vec::<&str>::new());
            for t in templates_for(family)
                .unwrap()
                .iter()
                .filter(|t| t.is_fragment())
            {
                if !condition_holds(t, &ctx).unwrap() {
                    continue;
                }
                tera.add_raw_template(&t.name, t.body).unwrap();
                let text = render(&tera, t, &ctx).unwrap();
                let owns = render_owns(&tera, t, &ctx).unwrap();
                out.push((t.name.clone(), variant.clone(), owns, text));
            }
        };
        for (variant, project, r) in variants() {
            let all = ApiParts {
                types: true,
                controller: true,
            };
            let ctx = tera::Context::from_serialize(&ApiContext::new(&project, &r, all)).unwrap();
            add("api", variant, ctx);
        }
        let project = Project::parse(PROJECT).unwrap();
        let (hub, spoke) = (&project.resources[0], &project.resources[2]);
        for (d, v, c) in [
            (true, false, false),
            (false, true, false),
            (true, true, true),
        ] {
            for file in [true, false] {
                let types = WebhookTypes {
                    defaulting: d,
                    validation: v,
                    conversion: c,
                };
                let ctx = WebhookContext::admission(&project, hub, types, file);
                let ctx = tera::Context::from_serialize(&ctx).unwrap();
                add("webhook", format!("admission|{d}{v}{c}{file}"), ctx);
                let ctx = WebhookContext::conversion(&project, hub, spoke, file);
                let ctx = tera::Context::from_serialize(&ctx).unwrap();
                add("webhook", format!("conversion of v2|{file}"), ctx);
            }
        }
        out
    }

    /// A fragment that renders differently for one kind declares `owns:`, owns every entry it
    /// inserts (so a re-run replaces all of an earlier variant), and frames every variant with
    /// the same blank lines (so a replacement in place is a first insertion, byte for byte).
    #[test]
    fn fragments_that_vary_own_their_entries_and_frame_alike() {
        let renders = renders();
        let subject = |v: &str| v.split('|').next().unwrap_or_default().to_string();
        let groups: BTreeSet<(&String, String)> =
            renders.iter().map(|(n, v, ..)| (n, subject(v))).collect();
        let mut varying = 0;
        for (name, of_subject) in groups {
            let of: Vec<_> = renders
                .iter()
                .filter(|(n, v, ..)| n == name && subject(v) == of_subject)
                .collect();
            let texts: BTreeSet<&String> = of.iter().map(|(.., text)| text).collect();
            if texts.len() <= 1 {
                continue;
            }
            varying += 1;
            let frame = |t: &str| {
                let lines: Vec<&str> = t.lines().collect();
                let lead = lines.iter().take_while(|l| l.trim().is_empty()).count();
                let trail = lines
                    .iter()
                    .rev()
                    .take_while(|l| l.trim().is_empty())
                    .count();
                (lead, trail, t.ends_with('\n'))
            };
            let frames: BTreeSet<_> = texts.iter().map(|t| frame(t)).collect();
            assert_eq!(
                frames.len(),
                1,
                "{name}: variants framed differently: {frames:?}"
            );
            for (_, variant, owns, text) in &of {
                assert!(
                    !owns.is_empty(),
                    "{name} varies by variant but declares no `owns:`"
                );
                let path = if name.ends_with(".rs.tera") {
                    "f.rs"
                } else {
                    "f.yaml"
                };
                let token = insertion_points::comment_token(Path::new(path));
                let file = format!("{text}{token} {}m\n", insertion_points::PREFIX);
                let marker = file.lines().count() - 1;
                let owned =
                    insertion_points::entries::owned(&file, Path::new(path), &[marker], owns);
                let covered: BTreeSet<usize> = owned[0].iter().flat_map(|r| r.clone()).collect();
                for (i, line) in text.lines().enumerate() {
                    assert!(
                        line.trim().is_empty() || covered.contains(&i),
                        "{name} ({variant}): line {} is in no entry it owns ({owns:?}):\n{line}",
                        i + 1
                    );
                }
            }
        }
        assert!(
            varying >= 3,
            "e2e, integration and the image's variable vary"
        );
    }
}
