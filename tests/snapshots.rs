//! Snapshot tests of rendered files: the reference project's wiring, types, CRD list, samples and
//! role, as `init` plus the reference `create api` runs render them. A template change shows up
//! here as a reviewable diff (`cargo insta review`, or INSTA_UPDATE=always).

mod common;

use common::*;

#[test]
fn reference_project_files() {
    let tmp = reference_project("memcached-operator");
    let dir = project_dir(&tmp, "memcached-operator");
    for rel in [
        "PROJECT",
        "src/main.rs",
        "src/api/mod.rs",
        "src/api/v1/mod.rs",
        "src/api/v1/guestbook.rs",
        "src/api/v1alpha1/memcached.rs",
        "src/controllers/mod.rs",
        "tests/crds.rs",
        "config/crd/kustomization.yaml",
        "config/samples/kustomization.yaml",
        "config/samples/cache_v1alpha1_memcached.yaml",
        "config/rbac/kustomization.yaml",
        "config/rbac/role.yaml",
        "config/manager/manager.yaml",
    ] {
        let name = rel.replace(['/', '.'], "_");
        insta::assert_snapshot!(name, read(&dir, rel));
    }
}
