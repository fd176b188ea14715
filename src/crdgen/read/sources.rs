//! Where each CEL rule and each schema keyword an attribute set was written, as reading the types
//! finds them: a refusal of `check` names the `#[x_kube(validation = ...)]` of a rule, or the
//! `#[schemars(extend(..))]` / `regex(..)` that set a keyword, rather than the field or the kind.
//! A value carried from the reader (each [`super::type_info::TypeInfo`], each kind's
//! `#[kube(...)]`) to the checks, not state beside them.

use serde_json::Value;

use crate::crdgen::error::Location;

/// The rules and attribute-set keywords read, each with where it was written, in reading order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    /// Each CEL rule evaluated, by its text.
    rules: Vec<(String, Location)>,
    /// Each schema keyword set by an attribute (`extend("x-kubernetes-list-type" = ..)`,
    /// `regex(pattern = ..)`), with its value.
    attrs: Vec<(String, Value, Location)>,
}

impl Sources {
    /// `rule` was written at `loc`.
    pub fn rule_written(&mut self, rule: &str, loc: Location) {
        self.rules.push((rule.to_string(), loc));
    }

    /// The schema keyword `key` was set to `value` by the attribute at `loc`.
    pub fn attr_written(&mut self, key: &str, value: &Value, loc: Location) {
        self.attrs.push((key.to_string(), value.clone(), loc));
    }

    /// Add what `other` read, after what this one did.
    pub fn extend(&mut self, other: &Sources) {
        self.rules.extend(other.rules.iter().cloned());
        self.attrs.extend(other.attrs.iter().cloned());
    }

    /// Where the rule `rule` was first written.
    pub fn rule(&self, rule: &str) -> Option<&Location> {
        (self.rules.iter())
            .find(|(text, _)| text == rule)
            .map(|(_, l)| l)
    }

    /// Where the keyword `key` was first set to `value`.
    pub fn attr(&self, key: &str, value: &Value) -> Option<&Location> {
        (self.attrs.iter())
            .find(|(k, v, _)| k == key && v == value)
            .map(|(_, _, l)| l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize) -> Location {
        Location {
            file: "src/api/v1.rs".into(),
            line,
            column: 5,
        }
    }

    #[test]
    fn the_first_place_of_a_rule_or_keyword_is_where_it_was_written() {
        let mut a = Sources::default();
        a.rule_written("self.x > 0", at(3));
        let mut b = Sources::default();
        b.rule_written("self.x > 0", at(9));
        b.attr_written("pattern", &Value::from("^a"), at(12));
        a.extend(&b);
        assert_eq!(a.rule("self.x > 0"), Some(&at(3)));
        assert_eq!(a.rule("self.y > 0"), None);
        assert_eq!(a.attr("pattern", &Value::from("^a")), Some(&at(12)));
        assert_eq!(a.attr("pattern", &Value::from("^b")), None);
    }
}
