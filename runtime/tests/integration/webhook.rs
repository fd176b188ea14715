//! The webhook server without a cluster: AdmissionReviews and ConversionReviews in, their
//! responses out; the same over HTTPS with a certificate from files that is reloaded when
//! the files change; the metrics of the requests.

use std::sync::Arc;
use std::time::Duration;

use operator_rs_runtime::manager::{Metrics, Shutdown};
use operator_rs_runtime::webhook::certs::CertificateAuthority;
use operator_rs_runtime::webhook::tls::{CertFiles, CertStore, watch_files};
use operator_rs_runtime::webhook::{
    Defaulter, FieldError, Rejection, Request, Webhook, Webhooks, server,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

use crate::webhook_kinds;

use webhook_kinds::{CronJobDefaulter, CronJobValidator, v1, v2};

fn cronjob(spec: Value) -> Value {
    json!({
        "apiVersion": "batch.example.com/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                     "labels": {"team": "a"}, "generation": 1},
        "spec": spec,
    })
}

fn admission_review(operation: &str, object: Option<Value>, old: Option<Value>) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "batch.example.com", "version": "v1", "kind": "CronJob"},
            "resource": {"group": "batch.example.com", "version": "v1", "resource": "cronjobs"},
            "name": "nightly",
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "admin"},
            "object": object,
            "oldObject": old,
            "dryRun": false,
        }
    })
}

/// The patch of a response, decoded and applied to `object`.
fn patched(response: &Value, object: &Value) -> Value {
    assert_eq!(response["response"]["patchType"], "JSONPatch", "{response}");
    let patch = response["response"]["patch"]
        .as_array()
        .expect("patch bytes");
    let bytes: Vec<u8> = patch.iter().map(|b| b.as_u64().unwrap() as u8).collect();
    let patch: json_patch::Patch = serde_json::from_slice(&bytes).expect("a JSON patch");
    let mut object = object.clone();
    json_patch::patch(&mut object, &patch).expect("the patch applies");
    object
}

#[tokio::test]
async fn defaulting_patches_only_what_the_defaulter_changed() {
    let webhook = Webhook::defaulting::<v1::CronJob>(CronJobDefaulter);
    assert_eq!(webhook.path(), "/mutate-batch-example-com-v1-cronjob");

    // `extra` is a field the Rust type does not know: the patch must leave it alone.
    let object = cronjob(json!({"schedule": "*/5 * * * *", "extra": {"kept": true}}));
    let response = webhook
        .review(admission_review("CREATE", Some(object.clone()), None))
        .await;
    assert_eq!(response["kind"], "AdmissionReview");
    assert_eq!(response["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(
        response["response"]["uid"],
        "705ab4f5-6393-11e8-b7cc-42010a800002"
    );
    assert_eq!(response["response"]["allowed"], true);
    let mut expected = object.clone();
    expected["spec"]["suspend"] = json!(false);
    expected["spec"]["concurrencyPolicy"] = json!("Allow");
    assert_eq!(patched(&response, &object), expected);

    // Already defaulted: no patch at all.
    let response = webhook
        .review(admission_review(
            "UPDATE",
            Some(expected.clone()),
            Some(expected),
        ))
        .await;
    assert_eq!(response["response"]["allowed"], true);
    assert!(response["response"].get("patch").is_none(), "{response}");

    // A deletion has no object to default.
    let response = webhook
        .review(admission_review("DELETE", None, Some(object)))
        .await;
    assert_eq!(response["response"]["allowed"], true);
}

#[tokio::test]
async fn a_defaulter_can_refuse_and_a_bad_object_is_a_bad_request() {
    let webhook = Webhook::defaulting::<v1::CronJob>(CronJobDefaulter);
    let response = webhook
        .review(admission_review(
            "CREATE",
            Some(cronjob(json!({"schedule": "never"}))),
            None,
        ))
        .await;
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(
        response["response"]["status"]["message"],
        "schedule `never` cannot be defaulted"
    );
    assert_eq!(response["response"]["status"]["code"], 403);

    let response = webhook
        .review(admission_review(
            "CREATE",
            Some(cronjob(json!({"schedule": 5}))),
            None,
        ))
        .await;
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(response["response"]["status"]["code"], 400);
    let message = response["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("does not match its type") && message.contains("invalid type"),
        "{message}"
    );

    let response = webhook.review(json!({"kind": "Nonsense"})).await;
    assert_eq!(response["response"]["allowed"], false, "{response}");
}

#[tokio::test]
async fn validation_answers_create_update_and_delete() {
    let webhook = Webhook::validating::<v1::CronJob>(CronJobValidator);
    assert_eq!(webhook.path(), "/validate-batch-example-com-v1-cronjob");

    let good = cronjob(json!({"schedule": "0 3 * * *", "concurrencyPolicy": "Allow"}));
    let response = webhook
        .review(admission_review("CREATE", Some(good.clone()), None))
        .await;
    assert_eq!(response["response"]["allowed"], true);
    assert_eq!(
        response["response"]["warnings"],
        json!(["schedules run in UTC"])
    );
    assert!(response["response"].get("patch").is_none());

    let bad = cronjob(json!({"schedule": "0 3"}));
    let response = webhook
        .review(admission_review("CREATE", Some(bad), None))
        .await;
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(
        response["response"]["status"]["message"],
        "spec.schedule: \"0 3\" must have 5 fields"
    );
    assert_eq!(response["response"]["status"]["code"], 422);
    assert_eq!(response["response"]["status"]["reason"], "Invalid");

    let mut changed = good.clone();
    changed["spec"]["concurrencyPolicy"] = json!("Forbid");
    let response = webhook
        .review(admission_review(
            "UPDATE",
            Some(changed),
            Some(good.clone()),
        ))
        .await;
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(
        response["response"]["status"]["message"],
        "spec.concurrencyPolicy is immutable"
    );
    assert_eq!(
        response["response"]["warnings"],
        json!(["delete and recreate it"])
    );

    let response = webhook
        .review(admission_review("DELETE", None, Some(good)))
        .await;
    assert_eq!(
        response["response"]["status"]["message"],
        "suspend the CronJob before deleting it"
    );
    let suspended = cronjob(json!({"schedule": "0 3 * * *", "suspend": true}));
    let response = webhook
        .review(admission_review("DELETE", None, Some(suspended)))
        .await;
    assert_eq!(response["response"]["allowed"], true);

    // An update without its old object is malformed.
    let response = webhook
        .review(admission_review(
            "UPDATE",
            Some(cronjob(json!({"schedule": "0 3 * * *"}))),
            None,
        ))
        .await;
    assert_eq!(response["response"]["status"]["code"], 400);
}

#[tokio::test]
async fn validation_names_each_invalid_field() {
    let webhook = Webhook::validating::<v1::CronJob>(CronJobValidator);
    let bad = cronjob(json!({"schedule": "", "concurrencyPolicy": "Sometimes"}));
    let response = webhook
        .review(admission_review("CREATE", Some(bad), None))
        .await;
    let status = &response["response"]["status"];
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(
        (&status["code"], &status["reason"]),
        (&json!(422), &json!("Invalid"))
    );
    assert_eq!(
        status["message"],
        "CronJob.batch.example.com \"nightly\" is invalid: [spec.schedule: Required value: \
         a cron schedule, e.g. `0 3 * * *`, spec.concurrencyPolicy: Unsupported value: \
         \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"]"
    );
    assert_eq!(
        status["details"],
        json!({
            "name": "nightly",
            "group": "batch.example.com",
            "kind": "CronJob",
            "causes": [
                {"field": "spec.schedule", "reason": "FieldValueRequired",
                 "message": "Required value: a cron schedule, e.g. `0 3 * * *`"},
                {"field": "spec.concurrencyPolicy", "reason": "FieldValueNotSupported",
                 "message": "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\""},
            ],
        })
    );

    // One field: its error alone, without brackets.
    let bad = cronjob(json!({"schedule": "0 3 * * *", "concurrencyPolicy": "Never"}));
    let response = webhook
        .review(admission_review("CREATE", Some(bad), None))
        .await;
    assert_eq!(
        response["response"]["status"]["message"],
        "CronJob.batch.example.com \"nightly\" is invalid: spec.concurrencyPolicy: \
         Unsupported value: \"Never\": supported values: \"Allow\", \"Forbid\", \"Replace\""
    );
}

#[test]
fn field_errors_print_as_apimachinery_does() {
    let cases = [
        (
            FieldError::invalid("spec.replicas", -1, "must be at least 0"),
            "FieldValueInvalid",
            "spec.replicas: Invalid value: -1: must be at least 0",
        ),
        (
            FieldError::required("spec.image", ""),
            "FieldValueRequired",
            "spec.image: Required value",
        ),
        (
            FieldError::forbidden("spec.nodeName", "may not be set").with_value("n1"),
            "FieldValueForbidden",
            "spec.nodeName: Forbidden: may not be set",
        ),
        (
            FieldError::duplicate("spec.ports[1].name", "http"),
            "FieldValueDuplicate",
            "spec.ports[1].name: Duplicate value: \"http\"",
        ),
        (
            FieldError::not_found("spec.secretRef.name", "creds"),
            "FieldValueNotFound",
            "spec.secretRef.name: Not found: \"creds\"",
        ),
        (
            FieldError::too_long("metadata.annotations[note]", 10),
            "FieldValueTooLong",
            "metadata.annotations[note]: Too long: may not be more than 10 bytes",
        ),
        (
            FieldError::too_many("spec.items", 5, 3),
            "FieldValueTooMany",
            "spec.items: Too many: 5: must have at most 3 items",
        ),
        (
            FieldError::internal("spec", "lookup failed"),
            "InternalError",
            "spec: Internal error: lookup failed",
        ),
    ];
    for (error, reason, text) in cases {
        assert_eq!(error.error_type.reason(), reason, "{error}");
        assert_eq!(error.to_string(), text);
    }
    // The same error twice is reported once, as apimachinery's aggregate does.
    let twice = FieldError::required("spec.image", "");
    let rejection = Rejection::fields([twice.clone(), twice]);
    assert_eq!(rejection.message(), "spec.image: Required value");
    assert_eq!(rejection.field_errors().len(), 2);
}

/// A defaulter as users write them: with derives (`Default` among them, whose `default` once
/// collided with the trait's method: E0034), settings of its own, and refusals by field.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct PolicyDefaulter {
    policy: String,
}

impl Defaulter<v1::CronJob> for PolicyDefaulter {
    async fn apply_defaults(&self, job: &mut v1::CronJob, _req: &Request) -> Result<(), Rejection> {
        if job.spec.schedule.starts_with('@') {
            return Err(FieldError::invalid(
                "spec.schedule",
                &job.spec.schedule,
                "macros are not supported",
            )
            .into());
        }
        let policy = if self.policy.is_empty() {
            "Forbid"
        } else {
            &self.policy
        };
        job.spec
            .concurrency_policy
            .get_or_insert_with(|| policy.into());
        Ok(())
    }
}

#[tokio::test]
async fn a_defaulter_deriving_default_clone_and_debug_serves() {
    // `PolicyDefaulter::default()` is `Default::default`, unambiguously.
    let defaulter = PolicyDefaulter::default();
    assert_eq!(format!("{defaulter:?}"), "PolicyDefaulter { policy: \"\" }");
    let webhook = Webhook::defaulting::<v1::CronJob>(defaulter.clone());
    let object = cronjob(json!({"schedule": "0 3 * * *"}));
    let response = webhook
        .review(admission_review("CREATE", Some(object.clone()), None))
        .await;
    assert_eq!(
        patched(&response, &object)["spec"]["concurrencyPolicy"],
        "Forbid"
    );
    let response = Webhook::defaulting::<v1::CronJob>(PolicyDefaulter {
        policy: "Replace".into(),
    })
    .review(admission_review("CREATE", Some(object.clone()), None))
    .await;
    assert_eq!(
        patched(&response, &object)["spec"]["concurrencyPolicy"],
        "Replace"
    );

    // A defaulter refuses by field as a validator does.
    let response = webhook
        .review(admission_review(
            "CREATE",
            Some(cronjob(json!({"schedule": "@daily"}))),
            None,
        ))
        .await;
    let status = &response["response"]["status"];
    assert_eq!(status["code"], 422, "{response}");
    assert_eq!(
        status["message"],
        "CronJob.batch.example.com \"nightly\" is invalid: spec.schedule: Invalid value: \
         \"@daily\": macros are not supported"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"field": "spec.schedule", "reason": "FieldValueInvalid",
                "message": "Invalid value: \"@daily\": macros are not supported"}])
    );
}

fn conversion_review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects},
    })
}

#[tokio::test]
async fn conversion_goes_through_the_hub_and_keeps_metadata() {
    let webhook = Webhook::conversion::<v2::CronJob, v1::CronJob>();
    assert_eq!(webhook.path(), "/convert");
    let v1_object = cronjob(json!({"schedule": "0 3 * * *", "suspend": true}));
    let response = webhook
        .review(conversion_review(
            "batch.example.com/v2",
            vec![v1_object.clone()],
        ))
        .await;
    assert_eq!(response["kind"], "ConversionReview");
    assert_eq!(response["response"]["uid"], "c-1");
    assert_eq!(
        response["response"]["result"]["status"], "Success",
        "{response}"
    );
    let v2_object = &response["response"]["convertedObjects"][0];
    assert_eq!(v2_object["apiVersion"], "batch.example.com/v2");
    assert_eq!(v2_object["kind"], "CronJob");
    assert_eq!(v2_object["metadata"], v1_object["metadata"]);
    assert_eq!(
        v2_object["spec"],
        json!({"minute": "0", "rest": "3 * * *", "suspend": true})
    );

    // And back: the object comes out as it went in.
    let response = webhook
        .review(conversion_review(
            "batch.example.com/v1",
            vec![v2_object.clone()],
        ))
        .await;
    assert_eq!(response["response"]["convertedObjects"][0], v1_object);

    // Already in the desired version: unchanged.
    let response = webhook
        .review(conversion_review(
            "batch.example.com/v1",
            vec![v1_object.clone()],
        ))
        .await;
    assert_eq!(response["response"]["convertedObjects"][0], v1_object);

    // A failed conversion fails the whole review, with the spoke's message.
    let response = webhook
        .review(conversion_review(
            "batch.example.com/v2",
            vec![v1_object, cronjob(json!({"schedule": "hourly"}))],
        ))
        .await;
    assert_eq!(response["response"]["result"]["status"], "Failure");
    assert_eq!(
        response["response"]["result"]["message"],
        "schedule \"hourly\" has one field"
    );
    assert_eq!(response["response"]["convertedObjects"], json!([]));

    let mut v3 = cronjob(json!({}));
    v3["apiVersion"] = json!("batch.example.com/v3");
    let response = webhook
        .review(conversion_review("batch.example.com/v2", vec![v3]))
        .await;
    let message = response["response"]["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("v3 CronJob is neither the hub (v2) nor a registered spoke"),
        "{message}"
    );
}

#[test]
fn a_spoke_round_trips_through_its_hub() {
    let job = v1::CronJob::new(
        "nightly",
        v1::CronJobSpec {
            schedule: "0 3 * * *".into(),
            suspend: Some(true),
            concurrency_policy: None,
        },
    );
    let back = operator_rs_runtime::webhook::round_trip::<v2::CronJob, _>(job.clone()).unwrap();
    assert_eq!(back, job);
}

#[test]
fn two_webhooks_on_one_path_are_refused() {
    let webhooks = Webhooks::new("").with([
        Webhook::defaulting::<v1::CronJob>(CronJobDefaulter),
        Webhook::validating::<v1::CronJob>(CronJobValidator)
            .at_path("/mutate-batch-example-com-v1-cronjob"),
    ]);
    let err = server::router(&webhooks, &Metrics::new().webhooks()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "two webhooks are served at /mutate-batch-example-com-v1-cronjob: give one another path (Webhook::at_path)"
    );
}

/// POSTs `body` to `path` over TLS, trusting only `ca_pem`; returns the status and the body.
async fn https_post(
    addr: std::net::SocketAddr,
    ca_pem: &str,
    path: &str,
    body: &str,
) -> Result<(u16, String), String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw).await;
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").ok_or("no header")?;
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Ok((status, body.to_owned()))
}

#[tokio::test]
async fn https_server_answers_counts_and_reloads_its_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let names = vec!["localhost".to_string()];
    let write_cert = |ca: &CertificateAuthority| {
        let serving = ca.issue(&names, Duration::from_secs(3600)).unwrap();
        // Write the key first, then the certificate, as a mounted Secret's swap would appear.
        std::fs::write(dir.path().join("tls.key"), &serving.key_pem).unwrap();
        std::fs::write(dir.path().join("tls.crt"), &serving.cert_pem).unwrap();
    };
    let first_ca = CertificateAuthority::generate("first", Duration::from_secs(3600)).unwrap();
    write_cert(&first_ca);

    let metrics = Metrics::new();
    let webhooks = Webhooks::new("").with([
        Webhook::defaulting::<v1::CronJob>(CronJobDefaulter),
        Webhook::validating::<v1::CronJob>(CronJobValidator),
        Webhook::conversion::<v2::CronJob, v1::CronJob>(),
    ]);
    let router = server::router(&webhooks, &metrics.webhooks()).unwrap();
    let store = CertStore::new();
    let shutdown = Shutdown::new();
    let files = CertFiles::new(dir.path(), "tls.crt", "tls.key");
    tokio::spawn(watch_files(
        store.clone(),
        files,
        Duration::from_millis(50),
        shutdown.clone(),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve_tls(
        listener,
        router,
        store.server_config(),
        shutdown.clone(),
    ));
    for _ in 0..100 {
        if store.is_loaded() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(store.is_loaded());

    let review =
        admission_review("CREATE", Some(cronjob(json!({"schedule": "0 3"}))), None).to_string();
    let (status, body) = https_post(
        addr,
        &first_ca.cert_pem,
        "/validate-batch-example-com-v1-cronjob",
        &review,
    )
    .await
    .unwrap();
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["response"]["allowed"], false);

    let review = conversion_review(
        "batch.example.com/v2",
        vec![cronjob(json!({"schedule": "0 3 * * *"}))],
    );
    let (status, body) = https_post(addr, &first_ca.cert_pem, "/convert", &review.to_string())
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("\"minute\":\"0\""), "{body}");

    let (status, _) = https_post(addr, &first_ca.cert_pem, "/convert", "not json")
        .await
        .unwrap();
    assert_eq!(status, 400);
    let (status, _) = https_post(addr, &first_ca.cert_pem, "/nowhere", "{}")
        .await
        .unwrap();
    assert_eq!(status, 404);

    let counted = metrics.webhooks();
    assert_eq!(
        counted.requests("/validate-batch-example-com-v1-cronjob", 200),
        1
    );
    assert_eq!(counted.requests("/convert", 200), 1);
    assert_eq!(counted.requests("/convert", 400), 1);
    assert_eq!(counted.in_flight("/convert"), 0);
    let text = metrics.encode();
    for series in [
        "controller_runtime_webhook_requests_total{webhook=\"/convert\",code=\"400\"} 1",
        "controller_runtime_webhook_latency_seconds_count{webhook=\"/convert\"} 2",
        "controller_runtime_webhook_requests_in_flight{webhook=\"/convert\"} 0",
    ] {
        assert!(text.contains(series), "missing {series} in\n{text}");
    }

    // A new certificate from another CA: served once the watcher sees the files change.
    let second_ca = CertificateAuthority::generate("second", Duration::from_secs(3600)).unwrap();
    write_cert(&second_ca);
    let mut reloaded = false;
    for _ in 0..100 {
        if https_post(addr, &second_ca.cert_pem, "/convert", &review.to_string())
            .await
            .is_ok()
        {
            reloaded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reloaded, "the new certificate was not served");
    let err = https_post(addr, &first_ca.cert_pem, "/convert", "{}")
        .await
        .unwrap_err();
    assert!(err.contains("certificate"), "{err}");

    // A broken pair keeps the previous one.
    std::fs::write(dir.path().join("tls.crt"), "garbage").unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        https_post(addr, &second_ca.cert_pem, "/convert", &review.to_string())
            .await
            .is_ok()
    );
    shutdown.trigger();
}
