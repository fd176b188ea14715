//! Status conditions with `observedGeneration`, and a `lastTransitionTime` that changes only
//! when a condition's status does (apimachinery's `meta.SetStatusCondition`). A condition's
//! status is metav1's tri-state: `True`, `False` or `Unknown` ([`ConditionStatus`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// The status of a condition: metav1's `ConditionStatus`. `bool`s convert to `True`/`False`;
/// `Unknown` says the controller cannot tell (yet), as Kubernetes' own controllers do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`.
    Unknown,
}

impl ConditionStatus {
    /// The value of `status` in the condition: `True`, `False` or `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }

    /// The status of `condition` (`None` when it holds none of the three values).
    pub fn of(condition: &Condition) -> Option<Self> {
        [Self::True, Self::False, Self::Unknown]
            .into_iter()
            .find(|s| s.as_str() == condition.status)
    }
}

impl From<bool> for ConditionStatus {
    fn from(status: bool) -> Self {
        if status { Self::True } else { Self::False }
    }
}

impl std::fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Builds the conditions of a new status from the current ones.
///
/// A condition whose status does not change keeps its `lastTransitionTime`, so an unchanged
/// status compares equal to the current one and is not written again.
///
/// ```
/// use operator_rs_runtime::controller::{ConditionStatus, Conditions};
///
/// let first = Conditions::new(None, Some(1)).set("Ready", true, "Reconciled", "done");
/// assert_eq!(first.status, "True");
/// assert_eq!(first.observed_generation, Some(1));
///
/// let current = [first.clone()];
/// let again = Conditions::new(Some(&current), Some(2)).set("Ready", true, "Reconciled", "done");
/// assert_eq!(again.last_transition_time, first.last_transition_time);
/// assert_eq!(again.observed_generation, Some(2));
///
/// let unsure = Conditions::new(Some(&current), Some(2))
///     .set("Ready", ConditionStatus::Unknown, "Checking", "waiting for the first probe");
/// assert_eq!(unsure.status, "Unknown");
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

    /// The condition `type_` with `status` (`true`, `false` or a [`ConditionStatus`], `Unknown`
    /// among them), `reason` (CamelCase) and `message`.
    pub fn set(
        &self,
        type_: &str,
        status: impl Into<ConditionStatus>,
        reason: &str,
        message: &str,
    ) -> Condition {
        let status = status.into().as_str();
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

    fn at(time: &str) -> Time {
        Time(time.parse().unwrap())
    }

    #[test]
    fn a_status_change_moves_the_transition_time() {
        let mut ready = Conditions::new(None, Some(1)).set("Ready", true, "Reconciled", "done");
        ready.last_transition_time = at("2020-01-01T00:00:00Z");
        let current = [ready.clone()];
        let conditions = Conditions::new(Some(&current), Some(1));
        let failed = conditions.set("Ready", false, "Failed", "broken");
        assert_ne!(failed.last_transition_time, ready.last_transition_time);
        let other = conditions.set("Degraded", true, "Failed", "broken");
        assert_ne!(other.last_transition_time, ready.last_transition_time);
        let same = conditions.set("Ready", true, "Reconciled", "done");
        assert_eq!(same, ready);
    }

    #[test]
    fn unknown_is_a_status_of_its_own() {
        let old = at("2020-01-01T00:00:00Z");
        for (from, to) in [
            (ConditionStatus::True, ConditionStatus::Unknown),
            (ConditionStatus::False, ConditionStatus::Unknown),
            (ConditionStatus::Unknown, ConditionStatus::True),
            (ConditionStatus::Unknown, ConditionStatus::False),
        ] {
            let mut before = Conditions::new(None, Some(1)).set("Ready", from, "R", "m");
            before.last_transition_time = old.clone();
            let current = [before];
            let after = Conditions::new(Some(&current), Some(2)).set("Ready", to, "R", "m");
            assert_eq!(after.status, to.as_str());
            assert_eq!(ConditionStatus::of(&after), Some(to));
            assert_ne!(after.last_transition_time, old, "{from} -> {to}");
            assert_eq!(after.observed_generation, Some(2));
        }
        // Unknown to Unknown: the transition time stays, whatever the reason and message say.
        let mut unknown = Conditions::new(None, Some(1)).set(
            "Ready",
            ConditionStatus::Unknown,
            "Checking",
            "first probe",
        );
        unknown.last_transition_time = old.clone();
        let current = [unknown];
        let still = Conditions::new(Some(&current), Some(3)).set(
            "Ready",
            ConditionStatus::Unknown,
            "StillChecking",
            "second probe",
        );
        assert_eq!(still.status, "Unknown");
        assert_eq!(still.last_transition_time, old);
        assert_eq!(
            (still.reason.as_str(), still.observed_generation),
            ("StillChecking", Some(3))
        );
    }

    #[test]
    fn statuses_read_back() {
        assert_eq!(ConditionStatus::from(true), ConditionStatus::True);
        assert_eq!(ConditionStatus::from(false).to_string(), "False");
        let mut odd = Conditions::new(None, None).set("Ready", true, "R", "m");
        odd.status = "true".into();
        assert_eq!(ConditionStatus::of(&odd), None);
    }
}
