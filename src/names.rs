//! Names: validating what users type (domains, groups, versions, kinds, plurals, project names)
//! with kubebuilder's rules plus Rust's own, and deriving the names operator-rs generates from them.
//! Every refusal names the bad value, the rule, and a valid example.

use heck::{ToKebabCase, ToSnakeCase};

/// A refusal: what was wrong, the rule, and an example that works.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {value:?}: {rule}\n  e.g. {example}")]
pub struct NameError {
    /// What the value names: `group`, `kind`, `domain`...
    pub what: &'static str,
    /// The value refused, as given.
    pub value: String,
    /// The rule it breaks.
    pub rule: String,
    /// A value that follows the rule.
    pub example: String,
}

fn refuse(
    what: &'static str,
    value: &str,
    rule: impl Into<String>,
    example: impl Into<String>,
) -> NameError {
    NameError {
        what,
        value: value.to_string(),
        rule: rule.into(),
        example: example.into(),
    }
}

const DNS1123_LABEL_RULE: &str = "must be a DNS-1123 label: at most 63 characters, lowercase letters, digits and '-', starting and ending with a letter or digit";
const DNS1035_LABEL_RULE: &str = "must be a DNS-1035 label: at most 63 characters, lowercase letters, digits and '-', starting with a letter and ending with a letter or digit";

fn label_chars_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns1123_label(s: &str) -> bool {
    label_chars_ok(s)
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns1035_label(s: &str) -> bool {
    label_chars_ok(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// DNS-1123 labels joined by dots, at most 253 characters.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// What is wrong with `s` as a DNS-1123 subdomain, naming the part at fault; `None` when valid.
pub fn subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if s.len() > 253 {
        return Some(format!("it is {} characters long, over 253", s.len()));
    }
    s.split('.').find_map(part_problem)
}

/// What is wrong with one dot-separated part of a DNS-1123 subdomain, naming it; `None` when
/// valid. An empty part is two dots in a row or a dot at an end (an empty label on its own is
/// [`label_problem`]'s "it is empty").
fn part_problem(part: &str) -> Option<String> {
    if part.is_empty() {
        return Some(EMPTY_PART.into());
    }
    label_problem(part, false)
}

const EMPTY_PART: &str = "it has an empty part (two dots in a row, or a dot at an end)";

/// What is wrong with `s` by apimachinery's `IsDNS1123Subdomain`, which the API server applies
/// to webhook names and Service path segments: dot-separated parts of lowercase letters, digits and
/// '-' (starting and ending with a letter or digit), at most 253 characters in all, and no limit
/// of 63 on a part (that is [`subdomain_problem`]'s, for names that are also DNS names).
pub fn apimachinery_subdomain_problem(s: &str) -> Option<String> {
    if s.len() > 253 {
        return Some(format!("it is {} characters long, over 253", s.len()));
    }
    if s.is_empty() {
        return Some("it is empty".into());
    }
    s.split('.').find_map(|part| {
        if part.is_empty() {
            Some(EMPTY_PART.into())
        } else {
            label_shape_problem(part)
        }
    })
}

/// What is wrong with one DNS label (DNS-1035 when `letter_first`), naming it; `None` when valid.
pub fn label_problem(label: &str, letter_first: bool) -> Option<String> {
    if label.is_empty() {
        return Some("it is empty".into());
    }
    if label.len() > 63 {
        return Some(format!(
            "the part {label:?} is {} characters long, over the 63 a DNS label may have",
            label.len()
        ));
    }
    if let Some(problem) = label_shape_problem(label) {
        return Some(problem);
    }
    if letter_first && !label.as_bytes()[0].is_ascii_lowercase() {
        return Some(format!("{label:?} must start with a letter"));
    }
    None
}

/// What is wrong with a non-empty DNS-1123 label but its length: a character other than
/// lowercase letters, digits and '-', a '-' at an end.
fn label_shape_problem(label: &str) -> Option<String> {
    if let Some(c) = label
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!(
            "the part {label:?} has {c:?}; only lowercase letters, digits and '-' are allowed"
        ));
    }
    if label.starts_with('-') || label.ends_with('-') {
        return Some(format!(
            "the part {label:?} starts or ends with '-'; it must start and end with a letter or digit"
        ));
    }
    None
}

/// `init --owner`, the copyright holder the README's license section names: one line of text
/// (no control character: a line break or an escape sequence would break the line it is on).
pub fn validate_owner(owner: &str) -> Result<(), NameError> {
    match owner.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(refuse(
            "owner",
            owner,
            format!(
                "must be one line of text, the copyright holder's name, without control characters; it has {c:?}"
            ),
            "--owner \"Acme Corp.\"",
        )),
    }
}

/// The domain of `init --domain`: a DNS-1123 subdomain.
pub fn validate_domain(domain: &str) -> Result<(), NameError> {
    match subdomain_problem(domain) {
        None if yaml_reads_as_string(domain) => Ok(()),
        Some(p) => Err(refuse(
            "domain",
            domain,
            format!(
                "must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', each dot-separated part at most 63 characters, starting and ending with a letter or digit, at most 253 in all), but {p}"
            ),
            "--domain example.com",
        )),
        None => Err(not_yaml_string("domain", domain, "--domain example.com")),
    }
}

/// `--project-name`: a DNS-1123 label (it prefixes every object kustomize renders), and a name
/// cargo accepts for a package.
pub fn validate_project_name(name: &str) -> Result<(), NameError> {
    if let Some(p) = label_problem(name, false) {
        return Err(refuse(
            "project name",
            name,
            format!("{DNS1123_LABEL_RULE}; {p}"),
            "--project-name memcached-operator",
        ));
    }
    if !yaml_reads_as_string(name) {
        return Err(not_yaml_string(
            "project name",
            name,
            format!("--project-name {name}-operator"),
        ));
    }
    if !name.as_bytes()[0].is_ascii_lowercase() {
        return Err(refuse(
            "project name",
            name,
            "must start with a letter: it is also the Rust crate name",
            "--project-name memcached-operator",
        ));
    }
    let krate = crate_name(name);
    if is_rust_keyword(&krate) || BUILTIN_CRATES.contains(&krate.as_str()) {
        return Err(refuse(
            "project name",
            name,
            format!("its crate name `{krate}` is a Rust keyword or a crate of Rust itself"),
            format!("--project-name {name}-operator"),
        ));
    }
    if let Some(dep) = dependency_crates().find(|d| crate_name(d) == krate) {
        return Err(refuse(
            "project name",
            name,
            format!(
                "the crate `{dep}` is in the dependency tree of the generated project (`-` and `_` are one to cargo), and a package named like one of its dependencies does not build"
            ),
            format!("--project-name {name}-operator"),
        ));
    }
    for d in PREFIXED {
        let derived = format!("{name}{}", d.suffix);
        let (ok, rule) = match d.rule {
            Derived::Dns1123Label => (is_dns1123_label(&derived), DNS1123_LABEL_RULE),
            Derived::Dns1035Label => (is_dns1035_label(&derived), DNS1035_LABEL_RULE),
            Derived::Subdomain => (
                is_dns1123_subdomain(&derived),
                "must be a DNS-1123 subdomain of at most 253 characters",
            ),
        };
        if !ok {
            let longest = PREFIXED
                .iter()
                .map(|d| d.rule.max_len() - d.suffix.len())
                .min()
                .unwrap_or(63);
            let example: String = name.chars().take(longest).collect();
            return Err(refuse(
                "project name",
                name,
                format!(
                    "{} `{derived}` is named from it ({} characters), and its name {rule}; a project name has at most {longest} characters, so that every name made from it is valid",
                    d.what,
                    derived.len()
                ),
                format!("--project-name {}", example.trim_end_matches('-')),
            ));
        }
    }
    Ok(())
}

/// Crates of Rust itself: a package named like one shadows it.
const BUILTIN_CRATES: &[&str] = &["std", "core", "alloc", "test", "proc_macro"];

/// Every crate of the dependency tree of a generated project, as named in Cargo.lock: the
/// runtime it vendors, kube, k8s-openapi and their dependencies are those this workspace builds
/// (its Cargo.lock holds them all, and a few crates of operator-rs's own besides).
fn dependency_crates() -> impl Iterator<Item = &'static str> {
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|l| l.strip_suffix('"'))
}

/// The rule Kubernetes applies to a name made from the project name.
#[derive(Debug, Clone, Copy)]
enum Derived {
    Dns1123Label,
    Dns1035Label,
    Subdomain,
}

impl Derived {
    fn max_len(self) -> usize {
        match self {
            Derived::Dns1123Label | Derived::Dns1035Label => 63,
            Derived::Subdomain => 253,
        }
    }
}

/// A name made from the project name by appending `suffix`.
struct Prefixed {
    what: &'static str,
    suffix: &'static str,
    rule: Derived,
}

/// Every object name the scaffold makes from the project name: kustomize's `namespace:
/// <project>-system` and `namePrefix: <project>-` over the objects of config/ (templates/), and
/// the runtime's defaults (its Lease, its webhook Secret and Service).
const PREFIXED: &[Prefixed] = &[
    Prefixed {
        what: "the Namespace",
        suffix: "-system",
        rule: Derived::Dns1123Label,
    },
    Prefixed {
        what: "the metrics Service",
        suffix: "-controller-manager-metrics-service",
        rule: Derived::Dns1035Label,
    },
    Prefixed {
        what: "the webhook Service",
        suffix: "-webhook-service",
        rule: Derived::Dns1035Label,
    },
    Prefixed {
        what: "the label value `app.kubernetes.io/name`",
        suffix: "",
        rule: Derived::Dns1123Label,
    },
    Prefixed {
        what: "the Deployment and ServiceAccount",
        suffix: "-controller-manager",
        rule: Derived::Subdomain,
    },
    Prefixed {
        what: "the ServiceMonitor",
        suffix: "-controller-manager-metrics-monitor",
        rule: Derived::Subdomain,
    },
    Prefixed {
        what: "the leader election Lease",
        suffix: "-leader",
        rule: Derived::Subdomain,
    },
    Prefixed {
        what: "the webhook certificate's Secret",
        suffix: "-webhook-server-cert",
        rule: Derived::Subdomain,
    },
];

/// The default project name: the folder's name, made a DNS-1123 label if it simply can be.
pub fn default_project_name(dir_name: &str) -> String {
    dir_name.to_kebab_case()
}

/// `stem` and its extension `ext` (e.g. `.yaml`) as one file name that fits file systems
/// ([`NAME_MAX`](crate::workspace::transaction::NAME_MAX) bytes): as it is when it fits, else cut
/// at a character boundary and ended with `-` and 16 hex digits of a hash of the whole stem
/// (64-bit FNV-1a), so a name is the same on every run and two stems that differ stay apart.
pub fn fit_file_name(stem: &str, ext: &str) -> String {
    let max = crate::workspace::transaction::NAME_MAX;
    if stem.len() + ext.len() <= max {
        return format!("{stem}{ext}");
    }
    let hash = stem.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut cut = max - ext.len() - 17;
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash:016x}{ext}", &stem[..cut])
}

/// The Rust crate name of a project: `memcached-operator` → `memcached_operator`.
pub fn crate_name(project_name: &str) -> String {
    project_name.replace('-', "_")
}

/// `--group`: with the domain it must form a DNS-1123 subdomain.
pub fn validate_group(group: &str, domain: &str) -> Result<(), NameError> {
    if group.is_empty() && domain.is_empty() {
        return Err(refuse(
            "group",
            group,
            "cannot be empty when the domain is empty",
            "--group cache",
        ));
    }
    let full = qualified_group(group, domain);
    let problem = if group.is_empty() {
        None
    } else {
        group.split('.').find_map(part_problem)
    }
    .or_else(|| subdomain_problem(&full));
    if let Some(p) = problem {
        return Err(refuse(
            "group",
            group,
            format!(
                "with the domain it must form a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', parts of at most 63 characters, at most 253 in all), and {full:?} does not: {p}"
            ),
            "--group cache (giving cache.example.com)",
        ));
    }
    if !yaml_reads_as_string(&full) {
        return Err(not_yaml_string(
            "group",
            group,
            "--group cache (giving cache.example.com)",
        ));
    }
    Ok(())
}

/// The name of the CRD of `plural` in `group` (the qualified group), `<plural>.<group>`: the
/// API server takes it as a DNS-1123 subdomain, so the two together have at most 253
/// characters, though each may be valid alone (a plural up to 63, a group up to 253).
/// `example` is a valid way to give them.
pub fn validate_crd_name(plural: &str, group: &str, example: &str) -> Result<(), NameError> {
    let name = format!("{plural}.{group}");
    if name.len() <= 253 {
        return Ok(());
    }
    Err(refuse(
        "CRD name",
        &name,
        format!(
            "a CRD is named <plural>.<group>, and kube-apiserver takes that name as a DNS-1123 subdomain of at most 253 characters; this one has {} (the plural {} and the group {}): shorten the group or the plural",
            name.len(),
            plural.len(),
            group.len()
        ),
        example,
    ))
}

/// `cache` + `example.com` → `cache.example.com`.
pub fn qualified_group(group: &str, domain: &str) -> String {
    match (group.is_empty(), domain.is_empty()) {
        (_, true) => group.to_string(),
        (true, false) => domain.to_string(),
        (false, false) => format!("{group}.{domain}"),
    }
}

/// `--version`: a DNS-1123 label in Kubernetes' version style (v1, v1alpha1, v2beta3), which is also
/// a valid Rust module name.
pub fn validate_version(version: &str) -> Result<(), NameError> {
    let rule = "must be a Kubernetes API version: 'v' and a number, optionally followed by 'alpha' or 'beta' and a number (a DNS-1123 label)";
    if !is_dns1123_label(version) || !is_kube_version(version) {
        return Err(refuse(
            "version",
            version,
            rule,
            "--version v1alpha1 (or v1, v2beta3)",
        ));
    }
    Ok(())
}

fn is_kube_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let tail = &rest[digits..];
    if tail.is_empty() {
        return true;
    }
    let Some(n) = tail
        .strip_prefix("alpha")
        .or_else(|| tail.strip_prefix("beta"))
    else {
        return false;
    };
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0')
}

/// Crates a generated module that declares one module per kind imports by name, and that
/// module: a kind whose module (`kind_snake`) is named so would shadow the crate there.
const RESERVED_MODULES: &[(&str, &str)] = &[("operator_rs_runtime", "src/controllers/mod.rs")];

/// Names the generated Rust code declares or imports next to a kind: a kind with one of these
/// names would clash with them.
const RESERVED_KINDS: &[&str] = &[
    // std prelude and common std types
    "Self",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Vec",
    "String",
    "Box",
    "Default",
    "Clone",
    "Copy",
    "Debug",
    "Send",
    "Sync",
    "Sized",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Iterator",
    "IntoIterator",
    "Extend",
    "ToString",
    "ToOwned",
    "From",
    "Into",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
    "Arc",
    "Duration",
    "BTreeMap",
    "HashMap",
    // what the generated type and controller files derive or import
    "Spec",
    "Status",
    "CustomResource",
    "CustomResourceExt",
    "JsonSchema",
    "Serialize",
    "Deserialize",
    "Condition",
    "Time",
    "ObjectMeta",
    "Resource",
    "ResourceExt",
    "Api",
    "Client",
    "Controller",
    "Action",
    "Event",
    "Recorder",
    "Reporter",
    "Patch",
    "PatchParams",
    "Error",
    "Context",
    "ControllerContext",
    "Registration",
    "Manager",
];

/// `--kind`: UpperCamelCase, a DNS-1035 label when lowercased, and a name Rust code can declare
/// (with its `<Kind>Spec`, `<Kind>Status` and module `<kind_snake>`) without clashing.
pub fn validate_kind(kind: &str) -> Result<(), NameError> {
    validate_kind_but_type_name(kind)?;
    if is_reserved_kind(kind) {
        return Err(refuse(
            "kind",
            kind,
            "it clashes with a name the generated Rust code declares or imports beside the kind",
            format!("--kind {kind}Resource"),
        ));
    }
    Ok(())
}

/// [`validate_kind`] but for the Rust type's name: for `--from-crd`, whose Rust type is renamed
/// when the kind clashes ([`is_reserved_kind`]).
pub fn validate_kind_but_type_name(kind: &str) -> Result<(), NameError> {
    validate_kind_name(kind, "--kind Memcached (or CronJob, HTTPRoute)")?;
    if !yaml_reads_as_string(kind) {
        return Err(not_yaml_string(
            "kind",
            kind,
            format!("--kind {kind}Resource"),
        ));
    }
    let snake = kind_snake(kind);
    if is_rust_keyword(&snake) || is_rust_keyword(kind) {
        return Err(refuse(
            "kind",
            kind,
            format!("its Rust module name `{snake}` is a Rust keyword"),
            format!("--kind {kind}Resource"),
        ));
    }
    if let Some(file) = RESERVED_MODULES
        .iter()
        .find_map(|(module, file)| (*module == snake).then_some(file))
    {
        return Err(refuse(
            "kind",
            kind,
            format!(
                "its Rust module name `{snake}` is the crate {file} imports beside the kinds' modules: the module would shadow the crate there"
            ),
            format!("--kind {kind}Resource"),
        ));
    }
    Ok(())
}

/// Whether a Rust type named `kind` would clash with a name the generated code declares or
/// imports beside it (`Option`, `Time`): `create api` refuses such a kind; `--from-crd`, whose
/// kind is the CRD's, names its Rust type `<Kind>Resource` instead.
pub fn is_reserved_kind(kind: &str) -> bool {
    RESERVED_KINDS.contains(&kind)
}

/// A kind as Kubernetes takes it: UpperCamelCase ASCII letters and digits, a DNS-1035 label when
/// lowercased.
pub fn validate_kind_name(kind: &str, example: &str) -> Result<(), NameError> {
    let Some(first) = kind.chars().next() else {
        return Err(refuse("kind", kind, "cannot be empty", example));
    };
    if !first.is_ascii_uppercase() {
        return Err(refuse(
            "kind",
            kind,
            "must be UpperCamelCase: start with an uppercase ASCII letter",
            example,
        ));
    }
    if !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(refuse(
            "kind",
            kind,
            "must be UpperCamelCase: ASCII letters and digits only",
            example,
        ));
    }
    if let Some(p) = label_problem(&kind.to_ascii_lowercase(), true) {
        return Err(refuse(
            "kind",
            kind,
            format!("lowercased it {DNS1035_LABEL_RULE}; {p}"),
            example,
        ));
    }
    // The CRD's listKind is `<kind>List`, which kube-apiserver takes by the same rule (lowercased,
    // a DNS-1035 label of at most 63 characters): a kind has at most 59.
    let list_kind = format!("{kind}List");
    if list_kind.len() > 63 {
        return Err(refuse(
            "kind",
            kind,
            format!(
                "the CRD's listKind `{list_kind}` is named from it ({} characters), and lowercased a listKind {DNS1035_LABEL_RULE}; a kind has at most {MAX_KIND_LEN} characters",
                list_kind.len()
            ),
            example,
        ));
    }
    Ok(())
}

/// The longest kind whose derived listKind (`<kind>List`) is a valid CRD name.
pub const MAX_KIND_LEN: usize = 63 - "List".len();

/// `--plural`: a DNS-1035 label (it is the resource's URL segment), that YAML reads as a string.
pub fn validate_plural(plural: &str) -> Result<(), NameError> {
    validate_resource_name("plural", plural, "--plural memcacheds")?;
    if !yaml_reads_as_string(plural) {
        return Err(not_yaml_string("plural", plural, "--plural memcacheds"));
    }
    Ok(())
}

/// A name of a resource's API (plural, singular, short name, category): a DNS-1035 label.
pub fn validate_resource_name(
    what: &'static str,
    value: &str,
    example: &str,
) -> Result<(), NameError> {
    match label_problem(value, true) {
        None => Ok(()),
        Some(p) => Err(refuse(
            what,
            value,
            format!("{DNS1035_LABEL_RULE}; {p}"),
            example,
        )),
    }
}

/// A CRD's group as written in the source or given to `migrate-storage`: a DNS-1123 subdomain
/// as apimachinery checks it (no limit of 63 on a part, as kube-apiserver takes CRD groups) with
/// at least one dot (the API server refuses a CRD group without one).
pub fn validate_crd_group(group: &str, example: &str) -> Result<(), NameError> {
    let rule = "must be a DNS-1123 subdomain with at least one dot (lowercase letters, digits, '-' and '.', parts starting and ending with a letter or digit, at most 253 in all)";
    match apimachinery_subdomain_problem(group) {
        Some(p) => Err(refuse(
            "group",
            group,
            format!("{rule}, and it {p}"),
            example,
        )),
        None if !group.contains('.') => Err(refuse(
            "group",
            group,
            format!("{rule}, and it has no dot"),
            example,
        )),
        None => Ok(()),
    }
}

/// A CRD's kind as the API server takes it (`ValidateCustomResourceDefinitionNames`): lowercased,
/// a DNS-1035 label. Looser than [`validate_kind_name`] (`memcached` is a CRD's kind too), for
/// kinds of CRDs operator-rs did not make.
pub fn validate_crd_kind(kind: &str, example: &str) -> Result<(), NameError> {
    match label_problem(&kind.to_ascii_lowercase(), true) {
        None => Ok(()),
        Some(p) => Err(refuse(
            "kind",
            kind,
            format!("lowercased it {DNS1035_LABEL_RULE}; {p}"),
            example,
        )),
    }
}

/// A CRD version as written in the source: a DNS-1035 label (the CLI also asks for Kubernetes'
/// `v1alpha1` style, see [`validate_version`], because it names a Rust module after it).
pub fn validate_crd_version(version: &str, example: &str) -> Result<(), NameError> {
    validate_resource_name("version", version, example)
}

/// Whether YAML (1.1 as kubectl reads it, or 1.2 as kustomize does) reads `s` written plain as
/// the string `s`, not as a boolean, null or number. For names made of letters, digits and
/// `-._:/@`, which cannot open a map, a list, a quote or a comment; it errs on the side of "no"
/// (anything starting with a digit and made of number characters counts as a number).
pub fn yaml_reads_as_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
    ];
    if s.is_empty() || WORDS.contains(&s.to_ascii_lowercase().as_str()) {
        return false;
    }
    let body = s.trim_start_matches(['+', '-', '.']);
    let number_like = body.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoO_.:+-".contains(c));
    !number_like
}

/// The refusal of a value YAML would not read as a string.
fn not_yaml_string(what: &'static str, value: &str, example: impl Into<String>) -> NameError {
    refuse(
        what,
        value,
        "it lands in YAML manifests, where it would read as a boolean, null or number, not as a name",
        example,
    )
}

/// `--image`: a container image reference by the distribution reference grammar
/// (`[host[:port]/]path[:tag][@digest]`), which YAML reads as a string.
pub fn validate_image(image: &str) -> Result<(), NameError> {
    let example =
        "--image memcached:1.6 (or quay.io/acme/app:v2, ghcr.io/acme/app@sha256:<64 hex>)";
    let problem = image_problem(image);
    if let Some(p) = problem {
        return Err(refuse(
            "image",
            image,
            format!(
                "must be a container image reference, [registry[:port]/]path[:tag][@digest]; {p}"
            ),
            example,
        ));
    }
    if !yaml_reads_as_string(image) {
        return Err(not_yaml_string("image", image, example));
    }
    Ok(())
}

/// What is wrong with `image` by the distribution reference grammar; `None` when valid.
fn image_problem(image: &str) -> Option<String> {
    if image.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(c) = image.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Some(format!("it holds {c:?}; no spaces or control characters"));
    }
    let (rest, digest) = match image.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (image, None),
    };
    if let Some(d) = digest {
        let Some((alg, hex)) = d.split_once(':') else {
            return Some(format!(
                "the digest {d:?} must be <algorithm>:<hex>, e.g. sha256:<64 hex digits>"
            ));
        };
        let alg_ok = !alg.is_empty()
            && alg.split(['+', '.', '_', '-']).all(|c| {
                c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                    && c.chars().all(|ch| ch.is_ascii_alphanumeric())
            });
        if !alg_ok || hex.len() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Some(format!(
                "the digest {d:?} must be <algorithm>:<at least 32 hex digits>, e.g. sha256:<64 hex digits>"
            ));
        }
    }
    // A tag is after the last ':' that follows the last '/'.
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let ok = !t.is_empty()
            && t.len() <= 128
            && t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ok {
            return Some(format!(
                "the tag {t:?} must be 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'"
            ));
        }
    }
    if name.len() > 255 {
        return Some(format!(
            "the name is {} characters long, over 255",
            name.len()
        ));
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let first = parts[0];
    if parts.len() > 1
        && (first.contains(['.', ':'])
            || first == "localhost"
            || first.chars().any(|c| c.is_ascii_uppercase()))
    {
        let (host, port) = match first.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (first, None),
        };
        let host_ok = !host.is_empty()
            && host.split('.').all(|c| {
                !c.is_empty()
                    && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
                    && !c.starts_with('-')
                    && !c.ends_with('-')
            });
        if !host_ok || port.is_some_and(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
        {
            return Some(format!(
                "the registry {first:?} must be a host name with an optional :port"
            ));
        }
        parts.remove(0);
    }
    for part in parts {
        if !path_component_ok(part) {
            return Some(format!(
                "the path part {part:?} must be lowercase letters and digits, separated by one '.', one or two '_', or '-'s"
            ));
        }
    }
    None
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`
fn path_component_ok(part: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes: Vec<char> = part.chars().collect();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let sep: String = bytes[start..i].iter().collect();
        if !(sep == "." || sep == "_" || sep == "__" || sep.chars().all(|c| c == '-')) {
            return false;
        }
    }
    true
}

/// The plural kube-derive computes for a kind when none is given (kube-derive 5's `to_plural` on
/// the lowercased kind), so the PROJECT file, the CRD and the Rust type agree.
pub fn default_plural(kind: &str) -> String {
    to_plural(&kind.to_ascii_lowercase())
}

/// kube-derive 5's `to_plural` of a word (the kind's singular): `-es` after s, x, z, ch and sh;
/// `-ies` for a `y` after a consonant; else `-s`.
pub fn to_plural(word: &str) -> String {
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| word.ends_with(end))
    {
        return format!("{word}es");
    }
    let bytes = word.as_bytes();
    if word.len() >= 2
        && word.ends_with('y')
        && !matches!(bytes[bytes.len() - 2], b'a' | b'e' | b'i' | b'o' | b'u')
    {
        return format!("{}ies", &word[..word.len() - 1]);
    }
    format!("{word}s")
}

/// The module and file name of a kind: `CronJob` → `cron_job`, `HTTPRoute` → `http_route`.
pub fn kind_snake(kind: &str) -> String {
    kind.to_snake_case()
}

/// A Rust module name for a DNS name or version: lowercase, `_` for every other character, a
/// leading `_`-free letter (`g` before a digit), never a keyword.
pub fn module_name(name: &str) -> String {
    let mut m: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !m.starts_with(|c: char| c.is_ascii_lowercase()) {
        m.insert(0, 'g');
    }
    if is_rust_keyword(&m) {
        m.push('_');
    }
    m
}

/// Strict and reserved keywords of Rust 2024 (an identifier that cannot name a module).
pub fn is_rust_keyword(s: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
        "return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe",
        "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do",
        "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
        "gen",
    ];
    KEYWORDS.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_rules() {
        assert!(is_dns1123_label("a"));
        assert!(is_dns1123_label("0abc-9"));
        assert!(!is_dns1123_label("-a"));
        assert!(!is_dns1123_label("a-"));
        assert!(!is_dns1123_label("A"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_dns1123_label(&"a".repeat(63)));
        assert!(!is_dns1035_label("0abc"));
        assert!(is_dns1035_label("abc0"));
        assert!(is_dns1123_subdomain("cache.example.com"));
        assert!(!is_dns1123_subdomain("cache..example.com"));
        assert!(!is_dns1123_subdomain("Example.com"));
        assert!(!is_dns1123_subdomain(""));
    }

    #[test]
    fn versions() {
        for ok in ["v1", "v1alpha1", "v2beta3", "v10", "v1beta10"] {
            assert!(validate_version(ok).is_ok(), "{ok}");
        }
        for bad in [
            "1",
            "v",
            "v0",
            "V1",
            "v1alpha",
            "v1gamma1",
            "v01",
            "v1alpha01",
            "v1-alpha1",
            "",
        ] {
            let err = validate_version(bad).unwrap_err();
            assert_eq!(err.value, bad);
            assert!(err.to_string().contains("v1alpha1"), "{err}");
        }
    }

    #[test]
    fn kinds() {
        for ok in ["Memcached", "CronJob", "HTTPRoute", "A", "Db2Cluster"] {
            assert!(validate_kind(ok).is_ok(), "{ok}");
        }
        let cases = [
            ("memcached", "uppercase"),
            ("Mem-cached", "ASCII letters and digits"),
            ("Mem_cached", "ASCII letters and digits"),
            ("", "empty"),
            ("Type", "keyword"),
            ("Self", "keyword"),
            ("Spec", "clashes"),
            ("Condition", "clashes"),
            ("OperatorRsRuntime", "would shadow the crate there"),
            (&"A".repeat(64), "DNS-1035"),
        ];
        for (bad, why) in cases {
            let err = validate_kind(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("e.g. --kind"), "{bad}: {err}");
        }
    }

    #[test]
    fn plurals_match_kube_derive() {
        assert_eq!(default_plural("Memcached"), "memcacheds");
        assert_eq!(default_plural("Ingress"), "ingresses");
        assert_eq!(default_plural("Box"), "boxes");
        assert_eq!(default_plural("Match"), "matches");
        assert_eq!(default_plural("Mesh"), "meshes");
        assert_eq!(default_plural("Policy"), "policies");
        assert_eq!(default_plural("Gateway"), "gateways");
        assert_eq!(default_plural("Y"), "ys");
        assert!(validate_plural("memcacheds").is_ok());
        assert!(validate_plural("Memcacheds").is_err());
        assert!(validate_plural("9lives").is_err());
    }

    #[test]
    fn groups_and_domains() {
        assert!(validate_group("cache", "example.com").is_ok());
        assert!(validate_group("", "example.com").is_ok());
        assert!(validate_group("", "").is_err());
        let err = validate_group("Cache", "example.com")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"Cache\"") && err.contains("DNS-1123"),
            "{err}"
        );
        assert!(validate_group("ca_che", "example.com").is_err());
        assert!(validate_domain("example.com").is_ok());
        assert!(validate_domain("example_com").is_err());
        assert_eq!(qualified_group("cache", "example.com"), "cache.example.com");
    }

    #[test]
    fn project_names() {
        assert!(validate_project_name("memcached-operator").is_ok());
        assert!(validate_project_name("Memcached").is_err());
        assert!(validate_project_name("1abc").is_err());
        assert!(validate_project_name("kube").is_err());
        assert!(validate_project_name("self").is_err());
        assert_eq!(default_project_name("My_Operator"), "my-operator");
        assert_eq!(crate_name("memcached-operator"), "memcached_operator");
    }

    #[test]
    fn kind_modules() {
        assert_eq!(kind_snake("CronJob"), "cron_job");
        assert_eq!(kind_snake("HTTPRoute"), "http_route");
        assert_eq!(kind_snake("Memcached"), "memcached");
    }
}
