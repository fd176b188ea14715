//! Admission webhooks of one kind: its defaulter (a mutating webhook) and its validator (a
//! validating webhook), answered as AdmissionReview v1 with kube's admission types.
//!
//! The operator implements [`CustomDefaulter`] and [`CustomValidator`] on its own types, as
//! in controller-runtime; this module turns each call into an `AdmissionResponse`:
//!
//! - The defaulter changes the typed object in place. The response carries a JSON patch of
//!   exactly those changes (json-patch's `diff` of the object before and after), so fields
//!   the Rust type does not know are neither removed nor rewritten.
//! - A validator's [`Rejection`] denies the request; its message is what `kubectl` prints
//!   after `admission webhook "<name>" denied the request:`. Warnings reach `kubectl` as
//!   `Warning:` lines, whether the request is allowed or not.
//! - An object the Rust type cannot read is refused with 400 Bad Request and serde's error.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The request a defaulter or validator is called for: who asks, the operation, `dry_run`,
/// the namespace, the raw objects.
pub type Request = AdmissionRequest<DynamicObject>;

/// Warnings returned to the API client (`kubectl` prints each as `Warning: ...`).
pub type Warnings = Vec<String>;

/// A refusal: the request fails with this message (and HTTP code) in the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    code: u16,
    reason: &'static str,
    message: String,
    warnings: Warnings,
}

impl Rejection {
    /// Refuses the request as controller-runtime's `Denied` does: 403 Forbidden.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: 403,
            reason: "Forbidden",
            message: message.into(),
            warnings: Vec::new(),
        }
    }

    /// Refuses an object whose fields are invalid: 422 Invalid, like the API server's own
    /// validation.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: 422,
            reason: "Invalid",
            ..Self::new(message)
        }
    }

    /// Adds warnings to the refusal.
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }

    /// The message the client sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP code of the refusal.
    pub fn code(&self) -> u16 {
        self.code
    }

    fn bad_request(message: String) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            ..Self::new(message)
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Rejection {}

/// Sets defaults on objects of kind `K` as they are created or updated (a mutating webhook).
///
/// ```
/// use operator_rs_runtime::webhook::{CustomDefaulter, Rejection, Request};
/// # #[derive(Clone, serde::Serialize, serde::Deserialize)] struct Widget { size: Option<i32> }
/// struct Defaulter;
///
/// impl CustomDefaulter<Widget> for Defaulter {
///     async fn default(&self, widget: &mut Widget, _req: &Request) -> Result<(), Rejection> {
///         widget.size.get_or_insert(1);
///         Ok(())
///     }
/// }
/// ```
pub trait CustomDefaulter<K>: Send + Sync + 'static {
    /// Changes `obj` in place; an error refuses the request.
    fn default(
        &self,
        obj: &mut K,
        req: &Request,
    ) -> impl Future<Output = Result<(), Rejection>> + Send;
}

/// Accepts or refuses objects of kind `K` (a validating webhook).
pub trait CustomValidator<K>: Send + Sync + 'static {
    /// Checks an object being created.
    fn validate_create(
        &self,
        obj: &K,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, Rejection>> + Send;

    /// Checks an update from `old` to `new`.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, Rejection>> + Send;

    /// Checks a deletion (only called when the webhook's `verbs` include `delete`).
    fn validate_delete(
        &self,
        obj: &K,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, Rejection>> + Send;
}

/// A type-erased admission handler.
pub(crate) type Handler =
    Arc<dyn Fn(Request) -> BoxFuture<'static, AdmissionResponse> + Send + Sync>;

/// The handler of a defaulter.
pub(crate) fn defaulting_handler<K, D>(defaulter: D) -> Handler
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    D: CustomDefaulter<K>,
{
    let defaulter = Arc::new(defaulter);
    Arc::new(move |req| {
        let defaulter = defaulter.clone();
        Box::pin(async move { run_defaulter::<K, D>(&*defaulter, &req).await })
    })
}

/// The handler of a validator.
pub(crate) fn validating_handler<K, V>(validator: V) -> Handler
where
    K: DeserializeOwned + Send + Sync + 'static,
    V: CustomValidator<K>,
{
    let validator = Arc::new(validator);
    Arc::new(move |req| {
        let validator = validator.clone();
        Box::pin(async move { run_validator::<K, V>(&*validator, &req).await })
    })
}

async fn run_defaulter<K, D>(defaulter: &D, req: &Request) -> AdmissionResponse
where
    K: Serialize + DeserializeOwned,
    D: CustomDefaulter<K>,
{
    let response = AdmissionResponse::from(req);
    // Nothing to default on a deletion (or a connect).
    let Some(object) = &req.object else {
        return response;
    };
    let raw = match serde_json::to_value(object) {
        Ok(raw) => raw,
        Err(err) => return deny(response, Rejection::bad_request(err.to_string())),
    };
    let mut typed: K = match typed_object(&raw) {
        Ok(typed) => typed,
        Err(rejection) => return deny(response, rejection),
    };
    let before = serde_json::to_value(&typed);
    if let Err(rejection) = defaulter.default(&mut typed, req).await {
        return deny(response, rejection);
    }
    let (Ok(before), Ok(after)) = (before, serde_json::to_value(&typed)) else {
        return deny(
            response,
            Rejection::bad_request("the object does not serialize".into()),
        );
    };
    let patch = json_patch::diff(&raw, &with_changes(&raw, &before, &after));
    if patch.0.is_empty() {
        return response;
    }
    match response.clone().with_patch(patch) {
        Ok(patched) => patched,
        Err(err) => deny(response, Rejection::bad_request(err.to_string())),
    }
}

async fn run_validator<K, V>(validator: &V, req: &Request) -> AdmissionResponse
where
    K: DeserializeOwned,
    V: CustomValidator<K>,
{
    let response = AdmissionResponse::from(req);
    let read = |object: &Option<DynamicObject>, which: &str| -> Result<K, Rejection> {
        let object = object
            .as_ref()
            .ok_or_else(|| Rejection::bad_request(format!("the request has no {which} object")))?;
        let raw =
            serde_json::to_value(object).map_err(|e| Rejection::bad_request(e.to_string()))?;
        typed_object(&raw)
    };
    let verdict = match req.operation {
        Operation::Create => match read(&req.object, "new") {
            Ok(obj) => validator.validate_create(&obj, req).await,
            Err(rejection) => Err(rejection),
        },
        Operation::Update => match (read(&req.old_object, "old"), read(&req.object, "new")) {
            (Ok(old), Ok(new)) => validator.validate_update(&old, &new, req).await,
            (Err(rejection), _) | (_, Err(rejection)) => Err(rejection),
        },
        Operation::Delete => match read(&req.old_object, "old") {
            Ok(obj) => validator.validate_delete(&obj, req).await,
            Err(rejection) => Err(rejection),
        },
        Operation::Connect => Ok(Vec::new()),
    };
    match verdict {
        Ok(warnings) => with_warnings(response, warnings),
        Err(rejection) => deny(response, rejection),
    }
}

/// Reads the raw object as `K`; the error names the field serde stopped at.
fn typed_object<K: DeserializeOwned>(raw: &Value) -> Result<K, Rejection> {
    serde_json::from_value(raw.clone())
        .map_err(|err| Rejection::bad_request(format!("the object does not match its type: {err}")))
}

fn with_warnings(mut response: AdmissionResponse, warnings: Warnings) -> AdmissionResponse {
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

fn deny(response: AdmissionResponse, rejection: Rejection) -> AdmissionResponse {
    let Rejection {
        code,
        reason,
        message,
        warnings,
    } = rejection;
    let mut response = with_warnings(response.deny(&message), warnings);
    response.result.code = code;
    response.result.reason = reason.to_owned();
    response.result.status = Some(kube::core::response::StatusSummary::Failure);
    response
}

/// `raw` with what changed between `before` (the typed object as read) and `after` (as the
/// defaulter left it): members the type does not know stay as they are in `raw`.
fn with_changes(raw: &Value, before: &Value, after: &Value) -> Value {
    match (raw, before, after) {
        (Value::Object(raw), Value::Object(before), Value::Object(after)) => {
            let mut out = serde_json::Map::new();
            for (key, value) in raw {
                match (before.get(key), after.get(key)) {
                    // Unknown to the type: kept as it came.
                    (None, None) => {
                        out.insert(key.clone(), value.clone());
                    }
                    (Some(b), Some(a)) => {
                        out.insert(key.clone(), with_changes(value, b, a));
                    }
                    (None, Some(a)) => {
                        out.insert(key.clone(), a.clone());
                    }
                    // Removed by the defaulter.
                    (Some(_), None) => {}
                }
            }
            for (key, value) in after {
                if !raw.contains_key(key) && before.get(key) != Some(value) {
                    out.insert(key.clone(), value.clone());
                }
            }
            Value::Object(out)
        }
        // Unchanged by the defaulter: the raw value stands, however the type reads it.
        _ if before == after => raw.clone(),
        _ => after.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_keep_unknown_fields_and_raw_spellings() {
        let raw = json!({"spec": {"size": 1, "unknown": "x", "list": [1, 2]}, "extra": true});
        let before = json!({"spec": {"size": 1, "list": [1, 2], "mode": null}});
        let after = json!({"spec": {"size": 3, "list": [1, 2], "mode": null, "added": "y"}});
        assert_eq!(
            with_changes(&raw, &before, &after),
            json!({"spec": {"size": 3, "unknown": "x", "list": [1, 2], "added": "y"}, "extra": true})
        );
        // A field the type fills in (a serde default) is not written unless it changed.
        let before = json!({"spec": {"size": 1, "list": [1, 2], "replicas": 0}});
        assert_eq!(with_changes(&raw, &before, &before), raw);
        // Removed by the defaulter.
        let after = json!({"spec": {"list": [1, 2]}});
        assert_eq!(
            with_changes(&raw, &before, &after),
            json!({"spec": {"unknown": "x", "list": [1, 2]}, "extra": true})
        );
    }
}
