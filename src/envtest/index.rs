//! controller-tools' envtest releases index (`envtest-releases.yaml`, the file setup-envtest
//! reads): every release's archive per platform with its sha512, and the version selectors
//! (`1.36.x`, `1.36.2`, `<1.37`, `latest`, a trailing `!`) that pick one of them.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

/// Where setup-envtest reads the index by default.
pub const DEFAULT_INDEX: &str =
    "https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml";

/// A release's version, `1.36.2` (the index's keys are `v1.36.2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// `1` of `1.36.2`.
    pub major: u64,
    /// `36` of `1.36.2`.
    pub minor: u64,
    /// `2` of `1.36.2`.
    pub patch: u64,
}

impl Version {
    /// `1.36.2` or `v1.36.2`; `None` for anything else (a pre-release such as `v1.37.0-rc.0`
    /// included: setup-envtest installs released versions only).
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.strip_prefix('v').unwrap_or(text).split('.');
        let mut number = || -> Option<u64> {
            let part = parts.next()?;
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())?
        };
        let version = Version {
            major: number()?,
            minor: number()?,
            patch: number()?,
        };
        parts.next().is_none().then_some(version)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The OS and architecture an archive is built for, as the index names them (`linux`, `amd64`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    /// The operating system, e.g. `linux`, `darwin`.
    pub os: String,
    /// The architecture, e.g. `amd64`, `arm64`.
    pub arch: String,
}

impl Platform {
    /// This machine, in Go's names (what the archives are named by).
    pub fn current() -> Self {
        let os = match std::env::consts::OS {
            "macos" => "darwin",
            other => other,
        };
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "powerpc64" => "ppc64le",
            other => other,
        };
        Platform {
            os: os.to_string(),
            arch: arch.to_string(),
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.arch)
    }
}

/// Which version to use: what `operator-rs envtest [VERSION]` takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    /// The versions it accepts.
    pub kind: Selection,
    /// A trailing `!`: read the index even when an installed version matches (to get a newer
    /// patch release); without it an installed match is used as it is, offline.
    pub check_index: bool,
}

/// The versions a selector accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// `latest`: any.
    Latest,
    /// `1.36.2`: exactly that one.
    Exact(Version),
    /// `1.36`, `1.36.x`, `1.36.*`: any patch release of 1.36.
    Minor(u64, u64),
    /// `<1.37`, `<1.36.3`: any before it.
    Below(Version),
}

/// The rule a version argument follows, for refusals.
pub const SELECTOR_RULE: &str = "a version is `latest`, `1.36.2` (exactly), `1.36.x` or `1.36` \
     (its newest patch release), or `<1.37` (the newest before it), optionally followed by `!` \
     to read the index even when a matching version is installed";

impl Selector {
    /// Parses a version argument; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let (body, check_index) = match trimmed.strip_suffix('!') {
            Some(body) => (body, true),
            None => (trimmed, false),
        };
        let bad = || format!("`{text}` is not a Kubernetes version: {SELECTOR_RULE}");
        let kind = if body == "latest" {
            Selection::Latest
        } else if let Some(below) = body.strip_prefix('<') {
            let version = Version::parse(below)
                .or_else(|| {
                    minor(below).map(|(major, minor)| Version {
                        major,
                        minor,
                        patch: 0,
                    })
                })
                .ok_or_else(bad)?;
            Selection::Below(version)
        } else if let Some(version) = Version::parse(body) {
            Selection::Exact(version)
        } else {
            let prefix = body
                .strip_suffix(".x")
                .or_else(|| body.strip_suffix(".*"))
                .unwrap_or(body);
            let (major, minor) = minor(prefix).ok_or_else(bad)?;
            Selection::Minor(major, minor)
        };
        Ok(Selector { kind, check_index })
    }

    /// Whether `version` is one this selector accepts.
    pub fn matches(&self, version: Version) -> bool {
        match self.kind {
            Selection::Latest => true,
            Selection::Exact(v) => version == v,
            Selection::Minor(major, minor) => version.major == major && version.minor == minor,
            Selection::Below(v) => version < v,
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Selection::Latest => write!(f, "latest")?,
            Selection::Exact(v) => write!(f, "{v}")?,
            Selection::Minor(major, minor) => write!(f, "{major}.{minor}.x")?,
            Selection::Below(v) if v.patch == 0 => write!(f, "<{}.{}", v.major, v.minor)?,
            Selection::Below(v) => write!(f, "<{v}")?,
        }
        if self.check_index {
            write!(f, "!")?;
        }
        Ok(())
    }
}

/// `1.36` or `v1.36` as (1, 36).
fn minor(text: &str) -> Option<(u64, u64)> {
    let (major, minor) = text.strip_prefix('v').unwrap_or(text).split_once('.')?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    Some((number(major)?, number(minor)?))
}

/// One archive of the index: `envtest-v1.36.2-linux-amd64.tar.gz`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Archive {
    /// The Kubernetes version of the binaries in it.
    pub version: Version,
    /// The archive's file name.
    pub name: String,
    /// Its SHA-512, lowercase hex.
    pub sha512: String,
    /// Where to get it (the index's `selfLink`): a URL, or a path relative to the index.
    pub link: String,
}

/// The releases of an index.
#[derive(Clone, Debug, Default)]
pub struct Index {
    archives: Vec<Archive>,
}

#[derive(Deserialize)]
struct RawIndex {
    releases: BTreeMap<String, Option<BTreeMap<String, RawArchive>>>,
}

#[derive(Deserialize)]
struct RawArchive {
    hash: String,
    #[serde(rename = "selfLink")]
    self_link: String,
}

impl Index {
    /// Reads an index's text; the error says what is wrong, and where.
    pub fn parse(text: &str) -> Result<Self, String> {
        let raw: RawIndex = serde_saphyr::from_str(text).map_err(|e| {
            format!(
                "it is not an envtest releases index (controller-tools' envtest-releases.yaml: \
                 `releases: {{v1.36.2: {{envtest-v1.36.2-linux-amd64.tar.gz: {{hash: <sha512>, \
                 selfLink: <url>}}}}}}`): {e}"
            )
        })?;
        let mut archives = Vec::new();
        for (key, files) in raw.releases {
            // Pre-releases and keys of a later format are not for this reader.
            let Some(version) = Version::parse(&key) else {
                continue;
            };
            for (name, file) in files.unwrap_or_default() {
                let hash = file.hash.trim().to_ascii_lowercase();
                if hash.len() != 128 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!(
                        "releases.{key}.{name}.hash is not a SHA-512 (128 hex digits): `{}`",
                        file.hash
                    ));
                }
                archives.push(Archive {
                    version,
                    name,
                    sha512: hash,
                    link: file.self_link,
                });
            }
        }
        Ok(Index { archives })
    }

    /// The archives built for `platform` (`envtest-v<version>-<os>-<arch>.tar.gz`), newest first.
    pub fn for_platform(&self, platform: &Platform) -> Vec<&Archive> {
        let mut found: Vec<&Archive> = (self.archives.iter())
            .filter(|a| a.name == archive_name(a.version, platform))
            .collect();
        found.sort_by_key(|a| std::cmp::Reverse(a.version));
        found
    }

    /// The newest archive for `platform` that `selector` accepts.
    pub fn select(&self, selector: &Selector, platform: &Platform) -> Option<&Archive> {
        (self.for_platform(platform).into_iter()).find(|a| selector.matches(a.version))
    }
}

/// The name of the archive of `version` for `platform`.
pub fn archive_name(version: Version, platform: &Platform) -> String {
    format!(
        "envtest-v{version}-{}-{}.tar.gz",
        platform.os, platform.arch
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn versions_parse_as_the_index_writes_them() {
        assert_eq!(v("v1.36.2"), v("1.36.2"));
        assert_eq!(v("1.36.2").to_string(), "1.36.2");
        for bad in [
            "1.36",
            "v1.37.0-rc.0",
            "1.36.2.1",
            "1..2",
            "x.y.z",
            "",
            "1.36.+2",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn selectors_accept_what_setup_envtest_takes() {
        let s = |text: &str| Selector::parse(text).unwrap();
        assert_eq!(s("latest").kind, Selection::Latest);
        assert_eq!(s("1.36.2").kind, Selection::Exact(v("1.36.2")));
        assert_eq!(s("v1.36.2").kind, Selection::Exact(v("1.36.2")));
        for minor in ["1.36", "1.36.x", "1.36.*", "v1.36.x"] {
            assert_eq!(s(minor).kind, Selection::Minor(1, 36), "{minor}");
            assert!(s(minor).matches(v("1.36.9")) && !s(minor).matches(v("1.37.0")));
        }
        assert!(s("<1.37").matches(v("1.36.9")) && !s("<1.37").matches(v("1.37.0")));
        assert!(s("<1.36.3").matches(v("1.36.2")) && !s("<1.36.3").matches(v("1.36.3")));
        assert!(s("1.36.x!").check_index && !s("1.36.x").check_index);
        assert_eq!(s("1.36!").to_string(), "1.36.x!");
        assert_eq!(s("<1.37").to_string(), "<1.37");
        for bad in ["1", "one.two", "1.36.x.x", ">1.36", "1.36.2-rc.0", "", "!"] {
            let err = Selector::parse(bad).unwrap_err();
            assert!(
                err.contains("is not a Kubernetes version") && err.contains("1.36.x"),
                "{err}"
            );
        }
    }

    const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\
                        0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn the_index_picks_the_newest_matching_release_of_the_platform() {
        let text = format!(
            "releases:\n  v1.35.1:\n    envtest-v1.35.1-linux-amd64.tar.gz:\n      hash: {HASH}\n      selfLink: a\n\
             \x20 v1.36.2:\n    envtest-v1.36.2-linux-amd64.tar.gz:\n      hash: {HASH}\n      selfLink: b\n\
             \x20   envtest-v1.36.2-darwin-arm64.tar.gz:\n      hash: {HASH}\n      selfLink: c\n\
             \x20 v1.36.10:\n    envtest-v1.36.10-darwin-arm64.tar.gz:\n      hash: {HASH}\n      selfLink: d\n\
             \x20 v1.37.0-rc.0:\n    envtest-v1.37.0-rc.0-linux-amd64.tar.gz:\n      hash: {HASH}\n      selfLink: e\n"
        );
        let index = Index::parse(&text).unwrap();
        let linux = Platform {
            os: "linux".into(),
            arch: "amd64".into(),
        };
        let pick = |s: &str| {
            index
                .select(&Selector::parse(s).unwrap(), &linux)
                .map(|a| a.link.clone())
        };
        assert_eq!(pick("latest").as_deref(), Some("b"));
        assert_eq!(pick("1.36.x").as_deref(), Some("b"));
        assert_eq!(pick("<1.36").as_deref(), Some("a"));
        assert_eq!(
            pick("1.36.10"),
            None,
            "1.36.10 exists for darwin/arm64 only"
        );
        assert_eq!(pick("1.37.x"), None, "pre-releases are not installed");
    }

    #[test]
    fn a_file_that_is_no_index_is_refused_saying_why() {
        let err = Index::parse("hello: world\n").unwrap_err();
        assert!(err.contains("not an envtest releases index"), "{err}");
        let err = Index::parse(
            "releases:\n  v1.36.2:\n    envtest-v1.36.2-linux-amd64.tar.gz:\n      hash: abc\n      selfLink: x\n",
        )
        .unwrap_err();
        assert!(
            err.contains("releases.v1.36.2.envtest-v1.36.2-linux-amd64.tar.gz.hash")
                && err.contains("128 hex"),
            "{err}"
        );
    }
}
