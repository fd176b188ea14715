//! The template contexts: what each family of templates is rendered with.

use serde::Serialize;

/// A container image reference split as the generated Makefile's `set-image` splits `IMG`, and
/// as `kustomize edit set image` writes it: `name@digest`, `name:tag` (a colon after the last
/// slash; a registry's port is not a tag), or a bare `name` (tag `latest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageRef {
    pub name: String,
    /// Empty when the reference has a digest.
    pub tag: String,
    /// Empty unless the reference has one (`sha256:...`).
    pub digest: String,
}

impl ImageRef {
    pub fn parse(image: &str) -> ImageRef {
        if let Some((name, digest)) = image.split_once('@') {
            return ImageRef {
                name: name.to_string(),
                tag: String::new(),
                digest: digest.to_string(),
            };
        }
        let tail_start = image.rfind('/').map_or(0, |i| i + 1);
        match image[tail_start..].rfind(':') {
            Some(colon) => ImageRef {
                name: image[..tail_start + colon].to_string(),
                tag: image[tail_start + colon + 1..].to_string(),
                digest: String::new(),
            },
            None => ImageRef {
                name: image.to_string(),
                tag: "latest".to_string(),
                digest: String::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(image: &str) -> (String, String, String) {
        let r = ImageRef::parse(image);
        (r.name, r.tag, r.digest)
    }

    #[test]
    fn image_references_split_as_set_image_does() {
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(split("controller:latest"), s("controller", "latest", ""));
        assert_eq!(split("controller"), s("controller", "latest", ""));
        assert_eq!(
            split("localhost:5000/acme/op"),
            s("localhost:5000/acme/op", "latest", "")
        );
        assert_eq!(
            split("localhost:5000/acme/op:v2"),
            s("localhost:5000/acme/op", "v2", "")
        );
        assert_eq!(
            split("ghcr.io/acme/op@sha256:abc"),
            s("ghcr.io/acme/op", "", "sha256:abc")
        );
    }
}
