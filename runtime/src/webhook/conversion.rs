//! Conversion webhooks: hub and spoke, as in controller-runtime.
//!
//! A kind's storage version is its hub; every other version is a [`Spoke`] that converts
//! itself to the hub and back. The API server sends a ConversionReview to `/convert` with
//! objects in any version and the version it wants; each object goes to the hub (unless it
//! is there already) and from the hub to the wanted version, so n versions need n - 1 pairs
//! of conversions instead of n².
//!
//! The API server refuses a conversion that changes an object's metadata other than its
//! labels and annotations, so the converted object keeps the original's metadata, with the
//! labels and annotations the conversion left (a lossy conversion may keep what the other
//! version cannot hold in an annotation). `apiVersion` and `kind` are set here too.

use std::collections::BTreeMap;

use kube::Resource;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a conversion failed; the API server returns it to the client as an internal error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError(pub String);

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConversionError {}

impl From<String> for ConversionError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ConversionError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// A version of a kind other than its hub (the storage version): it converts to and from the
/// hub. Both directions must lose nothing the other version can hold: an object converted to
/// the hub and back must come out as it went in.
pub trait Spoke<Hub>: Sized {
    /// This object in the hub version.
    fn to_hub(self) -> Result<Hub, ConversionError>;
    /// The hub object in this version.
    fn from_hub(hub: Hub) -> Result<Self, ConversionError>;
}

type Convert = fn(Value) -> Result<Value, ConversionError>;

/// One spoke of one kind, type-erased.
#[derive(Clone)]
pub(crate) struct SpokeEntry {
    pub(crate) group: String,
    pub(crate) kind: String,
    pub(crate) hub_version: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    to_hub: Convert,
    from_hub: Convert,
}

impl std::fmt::Debug for SpokeEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} {}: {} <-> hub {}",
            self.group, self.version, self.kind, self.version, self.hub_version
        )
    }
}

impl SpokeEntry {
    pub(crate) fn new<H, S>() -> Self
    where
        H: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
        S: Spoke<H> + Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        Self {
            group: H::group(&()).into_owned(),
            kind: H::kind(&()).into_owned(),
            hub_version: H::version(&()).into_owned(),
            version: S::version(&()).into_owned(),
            plural: H::plural(&()).into_owned(),
            to_hub: to_hub::<H, S>,
            from_hub: from_hub::<H, S>,
        }
    }

    /// The CRD's name: `<plural>.<group>`.
    pub(crate) fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }
}

fn to_hub<H, S>(object: Value) -> Result<Value, ConversionError>
where
    H: Serialize,
    S: Spoke<H> + DeserializeOwned,
{
    let spoke: S = serde_json::from_value(object)
        .map_err(|e| ConversionError(format!("reading the object: {e}")))?;
    let hub = spoke.to_hub()?;
    serde_json::to_value(hub).map_err(|e| ConversionError(e.to_string()))
}

fn from_hub<H, S>(object: Value) -> Result<Value, ConversionError>
where
    H: DeserializeOwned,
    S: Spoke<H> + Serialize,
{
    let hub: H = serde_json::from_value(object)
        .map_err(|e| ConversionError(format!("reading the object: {e}")))?;
    let spoke = S::from_hub(hub)?;
    serde_json::to_value(spoke).map_err(|e| ConversionError(e.to_string()))
}

/// Every conversion the operator serves at `/convert`, by group and kind.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conversions {
    kinds: BTreeMap<(String, String), KindConversions>,
}

#[derive(Clone, Debug)]
struct KindConversions {
    hub_version: String,
    spokes: BTreeMap<String, SpokeEntry>,
}

impl Conversions {
    /// Adds a spoke; a second hub for the same kind is a programming error.
    pub(crate) fn add(&mut self, spoke: SpokeEntry) -> Result<(), String> {
        let key = (spoke.group.clone(), spoke.kind.clone());
        let entry = self.kinds.entry(key).or_insert_with(|| KindConversions {
            hub_version: spoke.hub_version.clone(),
            spokes: BTreeMap::new(),
        });
        if entry.hub_version != spoke.hub_version {
            return Err(format!(
                "{} {} has two hubs, {} and {}: a kind has one hub, its storage version",
                spoke.group, spoke.kind, entry.hub_version, spoke.hub_version
            ));
        }
        if spoke.version == spoke.hub_version {
            return Err(format!(
                "{}/{} {} is its own hub: a spoke must be another version",
                spoke.group, spoke.version, spoke.kind
            ));
        }
        entry.spokes.insert(spoke.version.clone(), spoke);
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Answers a ConversionReview.
    pub(crate) fn review(&self, review: ConversionReview) -> ConversionReview {
        let request = match ConversionRequest::from_review(review) {
            Ok(request) => request,
            Err(err) => {
                return ConversionResponse::invalid(Status::failure(
                    &err.to_string(),
                    "BadRequest",
                ))
                .into_review();
            }
        };
        let desired = request.desired_api_version.clone();
        let converted: Result<Vec<Value>, ConversionError> = (request.objects.iter())
            .map(|object| self.convert(object.clone(), &desired))
            .collect();
        let response = ConversionResponse::for_request(request);
        match converted {
            Ok(objects) => response.success(objects),
            Err(err) => response.failure(Status::failure(&err.0, "ConversionFailed")),
        }
        .into_review()
    }

    /// One object to `desired` (`group/version`).
    pub(crate) fn convert(&self, object: Value, desired: &str) -> Result<Value, ConversionError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let (group, from) = split_api_version(&api_version);
        let (desired_group, to) = split_api_version(desired);
        if group != desired_group {
            return Err(ConversionError(format!(
                "cannot convert {api_version} {kind} to another group ({desired})"
            )));
        }
        if from == to {
            return Ok(object);
        }
        let conversions = self
            .kinds
            .get(&(group.to_owned(), kind.clone()))
            .ok_or_else(|| {
                ConversionError(format!("no conversion is registered for {group} {kind}"))
            })?;
        let spoke = |version: &str| {
            conversions.spokes.get(version).ok_or_else(|| {
                ConversionError(format!(
                    "{group}/{version} {kind} is neither the hub ({}) nor a registered spoke",
                    conversions.hub_version
                ))
            })
        };
        let hub = if from == conversions.hub_version {
            object.clone()
        } else {
            (spoke(from)?.to_hub)(object.clone())?
        };
        let converted = if to == conversions.hub_version {
            hub
        } else {
            (spoke(to)?.from_hub)(hub)?
        };
        Ok(with_original_metadata(&object, converted, desired, &kind))
    }
}

/// `converted` with `original`'s metadata (but the converted labels and annotations), and
/// the wanted `apiVersion` and `kind`.
fn with_original_metadata(
    original: &Value,
    mut converted: Value,
    api_version: &str,
    kind: &str,
) -> Value {
    let mut metadata = original["metadata"].clone();
    if let Value::Object(meta) = &mut metadata {
        for field in ["labels", "annotations"] {
            match converted["metadata"].get(field) {
                Some(value) if !value.is_null() => {
                    meta.insert(field.to_owned(), value.clone());
                }
                _ => {
                    meta.remove(field);
                }
            }
        }
    }
    if let Value::Object(object) = &mut converted {
        object.insert("apiVersion".into(), Value::String(api_version.to_owned()));
        object.insert("kind".into(), Value::String(kind.to_owned()));
        object.insert("metadata".into(), metadata);
    }
    converted
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Converts `spoke` to the hub and back, and returns what came back: a round-trip test
/// asserts it equals what went in.
pub fn round_trip<H, S>(spoke: S) -> Result<S, ConversionError>
where
    S: Spoke<H>,
{
    S::from_hub(spoke.to_hub()?)
}

/// Converts `from` by reading its JSON as `To` (with `To`'s `apiVersion` and `kind`): the
/// conversion of two versions whose fields are still the same. A scaffolded spoke starts with
/// it; replace it field by field as the versions part.
pub fn via_json<From, To>(from: From) -> Result<To, ConversionError>
where
    From: Serialize,
    To: Resource<DynamicType = ()> + DeserializeOwned,
{
    let mut value = serde_json::to_value(from).map_err(|e| ConversionError(e.to_string()))?;
    if let Value::Object(object) = &mut value {
        object.insert(
            "apiVersion".into(),
            Value::String(To::api_version(&()).into_owned()),
        );
        object.insert("kind".into(), Value::String(To::kind(&()).into_owned()));
    }
    serde_json::from_value(value).map_err(|e| {
        ConversionError(format!(
            "{} does not read as {}: {e}; convert its fields by hand",
            To::kind(&()),
            To::api_version(&())
        ))
    })
}
