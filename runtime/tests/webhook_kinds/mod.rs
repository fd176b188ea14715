//! The kinds the webhook tests serve: CronJob v1 (a spoke) and v2 (the hub, which splits v1's
//! `schedule`), a defaulter and a validator of v1.
#![allow(dead_code)]

use kube::CustomResource;
use operator_rs_runtime::webhook::{
    ConversionError, Defaulter, FieldError, Rejection, Request, Spoke, Validator, Warnings,
};
use serde::{Deserialize, Serialize};

pub mod v1 {
    use super::*;
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(
        group = "batch.example.com",
        version = "v1",
        kind = "CronJob",
        namespaced,
        schema = "disabled",
        derive = "PartialEq"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct CronJobSpec {
        pub schedule: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub suspend: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub concurrency_policy: Option<String>,
    }
}

pub mod v2 {
    use super::*;
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(
        group = "batch.example.com",
        version = "v2",
        kind = "CronJob",
        namespaced,
        schema = "disabled",
        derive = "PartialEq"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct CronJobSpec {
        /// v2 splits v1's `schedule` ("minute hour ...") into parts.
        pub minute: String,
        pub rest: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub suspend: Option<bool>,
    }
}

/// v2 is the hub; v1 the spoke.
impl Spoke<v2::CronJob> for v1::CronJob {
    fn to_hub(self) -> Result<v2::CronJob, ConversionError> {
        let (minute, rest) = self.spec.schedule.split_once(' ').ok_or_else(|| {
            ConversionError(format!("schedule {:?} has one field", self.spec.schedule))
        })?;
        let mut hub = v2::CronJob::new(
            "",
            v2::CronJobSpec {
                minute: minute.into(),
                rest: rest.into(),
                suspend: self.spec.suspend,
            },
        );
        hub.metadata = self.metadata;
        Ok(hub)
    }

    fn from_hub(hub: v2::CronJob) -> Result<Self, ConversionError> {
        let mut spoke = v1::CronJob::new(
            "",
            v1::CronJobSpec {
                schedule: format!("{} {}", hub.spec.minute, hub.spec.rest),
                suspend: hub.spec.suspend,
                concurrency_policy: None,
            },
        );
        spoke.metadata = hub.metadata;
        Ok(spoke)
    }
}

/// Derives `Default` (and more) as a user's type may: no method of those derives collides with
/// the trait's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CronJobDefaulter;

impl Defaulter<v1::CronJob> for CronJobDefaulter {
    async fn apply_defaults(&self, job: &mut v1::CronJob, _req: &Request) -> Result<(), Rejection> {
        job.spec.suspend.get_or_insert(false);
        job.spec
            .concurrency_policy
            .get_or_insert_with(|| "Allow".into());
        if job.spec.schedule == "never" {
            return Err(Rejection::new("schedule `never` cannot be defaulted"));
        }
        Ok(())
    }
}

/// The concurrency policies the validator accepts.
pub const POLICIES: [&str; 3] = ["Allow", "Forbid", "Replace"];

#[derive(Clone, Debug, Default)]
pub struct CronJobValidator;

impl Validator<v1::CronJob> for CronJobValidator {
    async fn validate_create(
        &self,
        job: &v1::CronJob,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
        // Each field's error named on its own (details.causes)...
        let mut errors = Vec::new();
        if job.spec.schedule.is_empty() {
            errors.push(FieldError::required(
                "spec.schedule",
                "a cron schedule, e.g. `0 3 * * *`",
            ));
        }
        if let Some(policy) = &job.spec.concurrency_policy
            && !POLICIES.contains(&policy.as_str())
        {
            errors.push(FieldError::not_supported(
                "spec.concurrencyPolicy",
                policy,
                POLICIES,
            ));
        }
        if !errors.is_empty() {
            return Err(Rejection::fields(errors));
        }
        // ... or one message.
        if job.spec.schedule.split(' ').count() != 5 {
            return Err(Rejection::invalid(format!(
                "spec.schedule: {:?} must have 5 fields",
                job.spec.schedule
            )));
        }
        Ok(vec!["schedules run in UTC".into()])
    }

    async fn validate_update(
        &self,
        old: &v1::CronJob,
        new: &v1::CronJob,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
        if old.spec.concurrency_policy != new.spec.concurrency_policy {
            return Err(Rejection::new("spec.concurrencyPolicy is immutable")
                .with_warnings(vec!["delete and recreate it".into()]));
        }
        Ok(vec![])
    }

    async fn validate_delete(
        &self,
        job: &v1::CronJob,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
        if job.spec.suspend != Some(true) {
            return Err(Rejection::new("suspend the CronJob before deleting it"));
        }
        Ok(vec![])
    }
}
