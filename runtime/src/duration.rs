//! Durations on the command line: `90` (seconds), `90s`, `2m`, `1h`, `1m30s`, `1h 30m`.
//!
//! Parsed by jiff's "friendly" duration format (jiff is already in every operator's tree
//! through k8s-openapi), in whole seconds: Lease durations and the other flags that take one
//! are counted in seconds by the API server and controller-runtime's flags alike.

use std::time::Duration;

/// Parses `90`, `90s`, `2m`, `1h`, `1m30s` or `1h 30m` into whole seconds (a `value_parser`
/// for clap).
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    let trimmed = value.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return trimmed
            .parse()
            .map(Duration::from_secs)
            .map_err(|_| format!("`{value}` is too large a number of seconds"));
    }
    let parsed: jiff::SignedDuration = trimmed
        .parse()
        .map_err(|_| format!("`{value}` is not a duration: e.g. 15s, 2m, 1h or 1m30s"))?;
    let parsed = Duration::try_from(parsed)
        .map_err(|_| format!("`{value}` is negative: e.g. 15s, 2m, 1h or 1m30s"))?;
    if parsed.subsec_nanos() != 0 {
        return Err(format!(
            "`{value}`: give whole seconds, e.g. 15s, 2m, 1h or 1m30s"
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_compounds() {
        let secs = |s| Ok(Duration::from_secs(s));
        for (text, expected) in [
            ("15", secs(15)),
            ("15s", secs(15)),
            ("2m", secs(120)),
            ("1h", secs(3600)),
            ("1m30s", secs(90)),
            ("1h 30m", secs(5400)),
            ("0", secs(0)),
        ] {
            assert_eq!(parse_duration(text), expected, "{text}");
        }
        for bad in ["15ms", "1.5s", "s", "", "-5s", "fifteen", "15 parsecs"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(
                err.contains("e.g.") || err.contains("large"),
                "{bad}: {err}"
            );
        }
    }
}
