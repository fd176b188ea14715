//! The kinds the webhook tests serve: CronJob v1 (a spoke) and v2 (the hub, which splits v1's
//! `schedule`), a defaulter and a validator of v1.
#![allow(dead_code)]

use kube::CustomResource;
use operator_rs_runtime::webhook::{
    ConversionError, CustomDefaulter, CustomValidator, Rejection, Request, Spoke, Warnings,
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

pub struct Defaulter;

impl CustomDefaulter<v1::CronJob> for Defaulter {
    async fn default(&self, job: &mut v1::CronJob, _req: &Request) -> Result<(), Rejection> {
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

pub struct Validator;

impl CustomValidator<v1::CronJob> for Validator {
    async fn validate_create(
        &self,
        job: &v1::CronJob,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
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
