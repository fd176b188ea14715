//! `generate crds` refuses what kube-apiserver would refuse, at the attribute that wrote it
//! (`file:line:col`), with the API server's reason and the fix; and accepts what it accepts.
//! The same cases go to the real API server in `tests/apiserver/crds.rs`.

use crate::crdgen_cases;

use crdgen_cases::{cases, crate_of, pos, project};
use operator_rs::crdgen::{self, CrdgenError};
use operator_rs::workspace::DiskTree;

#[test]
fn every_case_has_our_verdict_message_and_line() {
    let mut wrong = Vec::new();
    for case in cases() {
        let dir = crate_of(&case.body);
        let result = crdgen::generate(&DiskTree::new(dir.path()), &project());
        match (case.refusal, result) {
            (None, Ok(_)) => {}
            (None, Err(e)) => wrong.push(format!("{}: refused, expected accepted: {e}", case.name)),
            (Some(_), Ok(_)) => wrong.push(format!("{}: accepted, expected refused", case.name)),
            (Some((marker, says)), Err(e)) => {
                let msg = e.to_string();
                let (line, col) = pos(&case.body, marker);
                let at = format!("src/lib.rs:{line}:{col}: ");
                let ok = matches!(e, CrdgenError::Refused { .. })
                    && msg.starts_with(&at)
                    && msg.contains("kube-apiserver would refuse the CRD")
                    && says.iter().all(|s| msg.contains(s))
                    && msg.contains(" — ");
                if !ok {
                    wrong.push(format!(
                        "{}: expected {at} and {says:?}, got: {msg}",
                        case.name
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The fixtures and the real-world corpus hold many valid rules and list-maps: none is refused.
#[test]
fn unchecked_and_checked_agree_on_valid_crds() {
    let dir = crate_of(
        &cases()
            .into_iter()
            .find(|c| c.name == "ok_rules")
            .unwrap()
            .body,
    );
    let tree = DiskTree::new(dir.path());
    let checked = crdgen::crds(&tree, &project()).unwrap();
    let unchecked = crdgen::crds_unchecked(&tree, &project()).unwrap();
    assert_eq!(
        crdgen::to_yaml(&checked[0].crd),
        crdgen::to_yaml(&unchecked[0].crd)
    );
}

/// Every refusal class of the API server's CRD validation, as a schema: our reason, or our
/// acceptance of its borderline neighbour. `tests/apiserver/crds.rs` holds the same verdicts
/// to the real API server's.
#[test]
fn every_schema_refusal_class_has_our_reason() {
    let mut wrong = Vec::new();
    for case in crdgen_cases::schemas::schema_cases() {
        let schema =
            serde_json::from_value(crdgen_cases::schemas::root(case.spec.clone())).unwrap();
        match (case.refusal, crdgen::apiserver_verdict(&schema)) {
            (None, Ok(())) => {}
            (Some(says), Err(why)) if why.contains(says) => {}
            (expected, got) => {
                wrong.push(format!("{}: expected {expected:?}, got {got:?}", case.name))
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every version schema of the published CRDs of `fixtures/crdgen-validate/` (Gateway API,
/// CloudNativePG, prometheus-operator: some 450 CEL rules, every cluster accepts them) passes
/// every check: no false refusal on rules written by others.
#[test]
fn published_crds_pass_every_check() {
    let mut refused = Vec::new();
    let mut rules = 0;
    for (name, schema) in crdgen_cases::schemas::published_schemas() {
        rules += serde_json::to_string(&schema)
            .unwrap()
            .matches("\"rule\"")
            .count();
        if let Err(why) = crdgen::apiserver_verdict(&schema) {
            refused.push(format!("{name}: {why}"));
        }
    }
    assert!(rules > 400, "the corpus holds {rules} rules");
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// Every type case: our type checker accepts or refuses it as kube-apiserver's does (held to the
/// real one in `tests/apiserver/crds.rs`).
#[test]
fn every_type_case_is_checked_as_expected() {
    let mut wrong = Vec::new();
    for (rule, ok) in crdgen_cases::schemas::type_rules() {
        let root = crdgen_cases::schemas::type_case(rule);
        let ours = crdgen::apiserver_verdict(&serde_json::from_value(root).unwrap());
        if ours.is_ok() != ok {
            wrong.push(format!(
                "`{rule}`: expected {}, got {ours:?}",
                if ok { "accepted" } else { "refused" }
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What the compiler decides (a helper attribute without its derive, `KubeSchema` where
/// kube-derive refuses it, a `#[cfg]`/`#[cfg_attr]` that depends on the build) is refused at the
/// attribute, by `generate crds` and by `edit api` alike (which reads the kinds the same way),
/// with the rule and the fix; nothing is written.
#[test]
fn what_the_compiler_decides_is_refused_where_it_is_written() {
    let mut wrong = Vec::new();
    for case in crdgen_cases::compiled::refused() {
        let dir = crate_of(&case.body);
        let tree = DiskTree::new(dir.path());
        let (line, col) = pos(&case.body, case.marker);
        let at = format!("src/lib.rs:{line}:{col}: ");
        for (what, result) in [
            (
                "generate crds",
                crdgen::generate(&tree, &project()).map(|_| ()),
            ),
            ("edit api", crdgen::kind_versions(&tree).map(|_| ())),
        ] {
            match result {
                Ok(()) => wrong.push(format!("{} ({what}): accepted", case.name)),
                Err(e) => {
                    let msg = e.to_string();
                    if !(msg.starts_with(&at) && case.says.iter().all(|s| msg.contains(s))) {
                        wrong.push(format!(
                            "{} ({what}): expected {at} and {:?}, got: {msg}",
                            case.name, case.says
                        ));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
