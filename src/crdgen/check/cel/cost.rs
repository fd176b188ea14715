//! kube-apiserver's cost budgets for the CEL expressions of a CRD
//! (`apiextensions-apiserver/pkg/apis/apiextensions/validation`): each rule (its cost times the
//! most times it can run) and each message expression within `StaticEstimatedCostLimit`, all of
//! them together within `StaticEstimatedCRDCostLimit`, and the factor by which a cost exceeds
//! one, worded as the API server words it.

/// `StaticEstimatedCostLimit`: the most one rule (times its runs) or message expression may cost.
pub(in crate::crdgen) const EXPRESSION_COST_LIMIT: u64 = 10_000_000;
/// `StaticEstimatedCRDCostLimit`: the most all the expressions of a schema may cost together.
pub(in crate::crdgen) const CRD_COST_LIMIT: u64 = 100_000_000;

/// `multiplyWithOverflowGuard`.
pub(in crate::crdgen) fn times(cost: u64, runs: u64) -> u64 {
    cost.saturating_mul(runs)
}

/// How far `cost` exceeds `limit`, as `getCostErrorMessage` words it.
pub(in crate::crdgen) fn factor(cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    if f > 100.0 {
        "more than 100x".into()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    }
}

/// The running total of a schema's expression costs, and the rule that costs most.
#[derive(Default)]
pub(in crate::crdgen) struct Total {
    pub total: u64,
    /// The most expensive rule so far: its cost and its text.
    pub most: Option<(u64, String)>,
}

impl Total {
    /// `TotalCost.ObserveExpressionCost`.
    pub fn observe(&mut self, cost: u64, rule: &str) {
        self.total = self.total.saturating_add(cost);
        if self.most.as_ref().is_none_or(|(c, _)| cost > *c) {
            self.most = Some((cost, rule.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::factor;

    #[test]
    fn factors_are_worded_as_the_api_server_words_them() {
        assert_eq!(factor(10_485_750, 10_000_000), "1.048575x");
        assert_eq!(factor(25_000_000, 10_000_000), "2.5x");
        assert_eq!(factor(u64::MAX, 10_000_000), "more than 100x");
    }
}
