//! Status conditions with `observedGeneration`, and a `lastTransitionTime` that changes only
//! when a condition's status does (apimachinery's `meta.SetStatusCondition`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// Builds the conditions of a new status from the current ones.
///
/// A condition whose status does not change keeps its `lastTransitionTime`, so an unchanged
/// status compares equal to the current one and is not written again.
///
/// ```
/// use operator_rs_runtime::controller::Conditions;
///
/// let first = Conditions::new(None, Some(1)).set("Ready", true, "Reconciled", "done");
/// assert_eq!(first.status, "True");
/// assert_eq!(first.observed_generation, Some(1));
///
/// let current = [first.clone()];
/// let again = Conditions::new(Some(&current), Some(2)).set("Ready", true, "Reconciled", "done");
/// assert_eq!(again.last_transition_time, first.last_transition_time);
/// assert_eq!(again.observed_generation, Some(2));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Conditions<'a> {
    current: &'a [Condition],
    generation: Option<i64>,
}

impl<'a> Conditions<'a> {
    /// Conditions over the `current` ones, for the object's `generation`.
    pub fn new(current: Option<&'a [Condition]>, generation: Option<i64>) -> Self {
        Self {
            current: current.unwrap_or_default(),
            generation,
        }
    }

    /// The condition `type_` with `status`, `reason` (CamelCase) and `message`.
    pub fn set(&self, type_: &str, status: bool, reason: &str, message: &str) -> Condition {
        let status = if status { "True" } else { "False" };
        let last_transition_time = (self.current.iter())
            .find(|c| c.type_ == type_ && c.status == status)
            .map(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| Time(Timestamp::now()));
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            observed_generation: self.generation,
            last_transition_time,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_change_moves_the_transition_time() {
        let mut ready = Conditions::new(None, Some(1)).set("Ready", true, "Reconciled", "done");
        ready.last_transition_time = Time("2020-01-01T00:00:00Z".parse().unwrap());
        let current = [ready.clone()];
        let conditions = Conditions::new(Some(&current), Some(1));
        let failed = conditions.set("Ready", false, "Failed", "broken");
        assert_ne!(failed.last_transition_time, ready.last_transition_time);
        let other = conditions.set("Degraded", true, "Failed", "broken");
        assert_ne!(other.last_transition_time, ready.last_transition_time);
        let same = conditions.set("Ready", true, "Reconciled", "done");
        assert_eq!(same, ready);
    }
}
