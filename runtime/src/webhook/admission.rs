//! Admission webhooks of one kind: its defaulter (a mutating webhook) and its validator (a
//! validating webhook), answered as AdmissionReview v1 with kube's admission types.
//!
//! The operator implements [`Defaulter`] and [`Validator`] on its own types, as in
//! controller-runtime (whose `CustomDefaulter`/`CustomValidator` became these names); this module
//! turns each call into an `AdmissionResponse`. The methods (`apply_defaults`, `validate_*`) are
//! named so that no derive or std trait of the implementing type (`Default`, `Clone`, serde...)
//! has a method of the same name.
//!
//! - The defaulter changes the typed object in place. The response carries a JSON patch of
//!   exactly those changes (json-patch's `diff` of the object before and after), so fields
//!   the Rust type does not know are neither removed nor rewritten.
//! - A validator's (or defaulter's) [`Rejection`] denies the request; its message is what
//!   `kubectl` prints after `admission webhook "<name>" denied the request:`. A rejection made of
//!   [`FieldError`]s is apimachinery's `NewInvalid`: 422 Invalid, the message
//!   `<Kind>.<group> "<name>" is invalid: <field>: <error>, ...`, and one `details.causes` entry
//!   (field, reason, message) per field. Warnings reach `kubectl` as `Warning:` lines, whether
//!   the request is allowed or not.
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
    /// The field errors of [`Rejection::fields`] (`details.causes`); `None` for a refusal made
    /// of one message.
    causes: Option<Vec<FieldError>>,
    warnings: Warnings,
}

impl Rejection {
    /// Refuses the request as controller-runtime's `Denied` does: 403 Forbidden.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: 403,
            reason: "Forbidden",
            message: message.into(),
            causes: None,
            warnings: Vec::new(),
        }
    }

    /// Refuses an object whose fields are invalid: 422 Invalid, like the API server's own
    /// validation, with one message (see [`Rejection::fields`] to name each field).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: 422,
            reason: "Invalid",
            ..Self::new(message)
        }
    }

    /// Refuses an object for each of `errors`, as apimachinery's
    /// `apierrors.NewInvalid(groupKind, name, fieldErrors)` (what controller-runtime's validators
    /// return): 422 Invalid, the message `<Kind>.<group> "<name>" is invalid: <errors>`, and one
    /// `details.causes` entry per error, which `kubectl` and API clients show as
    /// `<field>: <message>`.
    ///
    /// ```
    /// use operator_rs_runtime::webhook::{FieldError, Rejection};
    ///
    /// let rejection = Rejection::fields([
    ///     FieldError::invalid("spec.schedule", "* *", "must have 5 fields"),
    ///     FieldError::required("spec.jobTemplate", ""),
    /// ]);
    /// assert_eq!(rejection.code(), 422);
    /// assert_eq!(
    ///     rejection.message(),
    ///     r#"[spec.schedule: Invalid value: "* *": must have 5 fields, spec.jobTemplate: Required value]"#
    /// );
    /// ```
    pub fn fields(errors: impl IntoIterator<Item = FieldError>) -> Self {
        let errors: Vec<FieldError> = errors.into_iter().collect();
        // apimachinery's aggregate: one error as it is, several as `[a, b]`, repeats once.
        let mut messages: Vec<String> = Vec::new();
        for error in &errors {
            let text = error.to_string();
            if !messages.contains(&text) {
                messages.push(text);
            }
        }
        let message = match messages.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        Self {
            causes: Some(errors),
            ..Self::invalid(message)
        }
    }

    /// Adds warnings to the refusal.
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }

    /// The message the client sees (for [`Rejection::fields`], after
    /// `<Kind>.<group> "<name>" is invalid: `).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP code of the refusal.
    pub fn code(&self) -> u16 {
        self.code
    }

    /// The field errors of a refusal made by [`Rejection::fields`] (empty otherwise).
    pub fn field_errors(&self) -> &[FieldError] {
        self.causes.as_deref().unwrap_or_default()
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

impl From<FieldError> for Rejection {
    fn from(error: FieldError) -> Self {
        Self::fields([error])
    }
}

impl From<Vec<FieldError>> for Rejection {
    fn from(errors: Vec<FieldError>) -> Self {
        Self::fields(errors)
    }
}

/// What is wrong with a field: apimachinery's `field.ErrorType`. Its [`reason`](Self::reason)
/// is the `reason` of the status cause (`FieldValueInvalid`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldErrorType {
    /// `FieldValueNotFound`: a value that refers to something that does not exist.
    NotFound,
    /// `FieldValueRequired`: a value is missing.
    Required,
    /// `FieldValueDuplicate`: a value that must be unique is repeated.
    Duplicate,
    /// `FieldValueInvalid`: the value is wrong (the most common one).
    Invalid,
    /// `FieldValueNotSupported`: the value is not one of a fixed set.
    NotSupported,
    /// `FieldValueForbidden`: the field may not be set (here, or by this user).
    Forbidden,
    /// `FieldValueTooLong`: a value longer than allowed.
    TooLong,
    /// `FieldValueTooMany`: a list with more items than allowed.
    TooMany,
    /// `InternalError`: the check itself failed.
    Internal,
    /// `FieldValueTypeInvalid`: the value has the wrong type.
    TypeInvalid,
}

impl FieldErrorType {
    /// The `reason` of the status cause, as the API server writes it.
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotFound => "FieldValueNotFound",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Internal => "InternalError",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The words the message starts with (`Invalid value`...), apimachinery's.
    pub fn words(self) -> &'static str {
        match self {
            Self::NotFound => "Not found",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Internal => "Internal error",
        }
    }
}

/// One invalid field of a refused object (apimachinery's `field.Error`): its path
/// (`spec.schedule`, `spec.containers[0].image`, `metadata.labels[app]`), what is wrong, the bad
/// value when it helps, and a detail for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// What is wrong.
    pub error_type: FieldErrorType,
    /// The field's path, as the API server writes it (`spec.schedule`).
    pub field: String,
    /// The value refused, shown in the message (not for `Required`, `Forbidden`, `Internal`).
    pub value: Option<Value>,
    /// What the user should know: the rule, a valid example.
    pub detail: String,
}

impl FieldError {
    /// An error of `error_type` at `field`, with no value shown.
    pub fn new(
        error_type: FieldErrorType,
        field: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            error_type,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// Shows `value` in the message (`Invalid value: "x"`).
    pub fn with_value(mut self, value: impl Serialize) -> Self {
        self.value = serde_json::to_value(value).ok();
        self
    }

    /// `field.Invalid`: `value` is wrong, `detail` says why.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Serialize,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(FieldErrorType::Invalid, field, detail).with_value(value)
    }

    /// `field.Required`: the field is missing.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Required, field, detail)
    }

    /// `field.Forbidden`: the field may not be set or changed.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Forbidden, field, detail)
    }

    /// `field.NotSupported`: `value` is not one of `supported`.
    pub fn not_supported<S: AsRef<str>>(
        field: impl Into<String>,
        value: impl Serialize,
        supported: impl IntoIterator<Item = S>,
    ) -> Self {
        let supported: Vec<String> = (supported.into_iter())
            .map(|s| Value::from(s.as_ref()).to_string())
            .collect();
        let detail = if supported.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", supported.join(", "))
        };
        Self::new(FieldErrorType::NotSupported, field, detail).with_value(value)
    }

    /// `field.Duplicate`: `value` is repeated where it must be unique.
    pub fn duplicate(field: impl Into<String>, value: impl Serialize) -> Self {
        Self::new(FieldErrorType::Duplicate, field, "").with_value(value)
    }

    /// `field.NotFound`: `value` refers to something that does not exist.
    pub fn not_found(field: impl Into<String>, value: impl Serialize) -> Self {
        Self::new(FieldErrorType::NotFound, field, "").with_value(value)
    }

    /// `field.TooLong`: longer than `max` (bytes or items).
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        Self::new(
            FieldErrorType::TooLong,
            field,
            format!("may not be more than {max} bytes"),
        )
    }

    /// `field.TooMany`: `actual` items where at most `max` are allowed.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        Self::new(
            FieldErrorType::TooMany,
            field,
            format!("must have at most {max} items"),
        )
        .with_value(actual)
    }

    /// `field.InternalError`: the check itself failed.
    pub fn internal(field: impl Into<String>, error: impl std::fmt::Display) -> Self {
        Self::new(FieldErrorType::Internal, field, error.to_string())
    }

    /// apimachinery's `ErrorBody`: the message of the status cause (without the field).
    pub fn body(&self) -> String {
        let words = self.error_type.words();
        let shows_value = !matches!(
            self.error_type,
            FieldErrorType::Required
                | FieldErrorType::Forbidden
                | FieldErrorType::TooLong
                | FieldErrorType::Internal
        );
        let mut body = match &self.value {
            Some(value) if shows_value => format!("{words}: {value}"),
            _ => words.to_owned(),
        };
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }

    fn cause(&self) -> kube::core::response::StatusCause {
        kube::core::response::StatusCause {
            reason: self.error_type.reason().to_owned(),
            message: self.body(),
            field: self.field.clone(),
        }
    }
}

/// `<field>: <body>`, as apimachinery's `field.Error` prints.
impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Sets defaults on objects of kind `K` as they are created or updated (a mutating webhook);
/// controller-runtime's `Defaulter` (formerly `CustomDefaulter`).
///
/// The type implementing it may derive or implement anything (`Default`, `Clone`, `Debug`,
/// serde): no method name is shared.
///
/// ```
/// use operator_rs_runtime::webhook::{Defaulter, Rejection, Request};
/// # #[derive(Clone, serde::Serialize, serde::Deserialize)] struct Widget { size: Option<i32> }
/// #[derive(Clone, Debug, Default)]
/// struct WidgetDefaulter {
///     size: i32,
/// }
///
/// impl Defaulter<Widget> for WidgetDefaulter {
///     async fn apply_defaults(&self, widget: &mut Widget, _req: &Request) -> Result<(), Rejection> {
///         widget.size.get_or_insert(self.size);
///         Ok(())
///     }
/// }
/// ```
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Changes `obj` in place; an error refuses the request.
    fn apply_defaults(
        &self,
        obj: &mut K,
        req: &Request,
    ) -> impl Future<Output = Result<(), Rejection>> + Send;
}

/// Accepts or refuses objects of kind `K` (a validating webhook); controller-runtime's
/// `Validator` (formerly `CustomValidator`).
pub trait Validator<K>: Send + Sync + 'static {
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

/// The name of [`Defaulter`] before 0.2.0, kept for code written against 0.1.0: a type that
/// implements it implements [`Defaulter`] (its `default` is [`Defaulter::apply_defaults`]).
#[deprecated(
    since = "0.2.0",
    note = "use webhook::Defaulter, whose method `default` is now `apply_defaults`"
)]
pub trait CustomDefaulter<K>: Send + Sync + 'static {
    /// Changes `obj` in place; an error refuses the request.
    fn default(
        &self,
        obj: &mut K,
        req: &Request,
    ) -> impl Future<Output = Result<(), Rejection>> + Send;
}

#[allow(deprecated)]
impl<K, T: CustomDefaulter<K>> Defaulter<K> for T {
    fn apply_defaults(
        &self,
        obj: &mut K,
        req: &Request,
    ) -> impl Future<Output = Result<(), Rejection>> + Send {
        CustomDefaulter::default(self, obj, req)
    }
}

/// The name of [`Validator`] before 0.2.0, kept for code written against 0.1.0: a type that
/// implements it implements [`Validator`].
#[deprecated(since = "0.2.0", note = "use webhook::Validator")]
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

#[allow(deprecated)]
impl<K, T: CustomValidator<K>> Validator<K> for T {
    fn validate_create(
        &self,
        obj: &K,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, Rejection>> + Send {
        CustomValidator::validate_create(self, obj, req)
    }

    fn validate_update(
        &self,
        old: &K,
        new: &K,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, Rejection>> + Send {
        CustomValidator::validate_update(self, old, new, req)
    }

    fn validate_delete(
        &self,
        obj: &K,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, Rejection>> + Send {
        CustomValidator::validate_delete(self, obj, req)
    }
}

/// A type-erased admission handler.
pub(crate) type Handler =
    Arc<dyn Fn(Request) -> BoxFuture<'static, AdmissionResponse> + Send + Sync>;

/// The handler of a defaulter.
pub(crate) fn defaulting_handler<K, D>(defaulter: D) -> Handler
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    D: Defaulter<K>,
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
    V: Validator<K>,
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
    D: Defaulter<K>,
{
    let response = AdmissionResponse::from(req);
    // Nothing to default on a deletion (or a connect).
    let Some(object) = &req.object else {
        return response;
    };
    let raw = match serde_json::to_value(object) {
        Ok(raw) => raw,
        Err(err) => return deny(req, response, Rejection::bad_request(err.to_string())),
    };
    let mut typed: K = match typed_object(&raw) {
        Ok(typed) => typed,
        Err(rejection) => return deny(req, response, rejection),
    };
    let before = serde_json::to_value(&typed);
    if let Err(rejection) = defaulter.apply_defaults(&mut typed, req).await {
        return deny(req, response, rejection);
    }
    let (Ok(before), Ok(after)) = (before, serde_json::to_value(&typed)) else {
        return deny(
            req,
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
        Err(err) => deny(req, response, Rejection::bad_request(err.to_string())),
    }
}

async fn run_validator<K, V>(validator: &V, req: &Request) -> AdmissionResponse
where
    K: DeserializeOwned,
    V: Validator<K>,
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
        Err(rejection) => deny(req, response, rejection),
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

/// The response refusing `req` with `rejection`: a status of its code and reason; for field
/// errors, apimachinery's `NewInvalid` message and details (the kind and name come from `req`).
fn deny(req: &Request, response: AdmissionResponse, rejection: Rejection) -> AdmissionResponse {
    let Rejection {
        code,
        reason,
        message,
        causes,
        warnings,
    } = rejection;
    let message = match &causes {
        None => message,
        Some(errors) => {
            let kind = match req.kind.group.as_str() {
                "" => req.kind.kind.clone(),
                group => format!("{}.{group}", req.kind.kind),
            };
            let name = Value::from(req.name.as_str());
            match errors.is_empty() {
                true => format!("{kind} {name} is invalid"),
                false => format!("{kind} {name} is invalid: {message}"),
            }
        }
    };
    let mut response = with_warnings(response.deny(&message), warnings);
    response.result.code = code;
    response.result.reason = reason.to_owned();
    response.result.status = Some(kube::core::response::StatusSummary::Failure);
    if let Some(errors) = causes {
        response.result.details = Some(kube::core::response::StatusDetails {
            name: req.name.clone(),
            group: req.kind.group.clone(),
            kind: req.kind.kind.clone(),
            uid: String::new(),
            causes: errors.iter().map(FieldError::cause).collect(),
            retry_after_seconds: 0,
        });
    }
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
