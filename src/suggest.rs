//! "Did you mean": the closest of a set of valid words to a misspelt one.

/// The candidate closest to `word` (case-insensitive equal, or at most 2 edits away).
pub(crate) fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    if let Some(c) = candidates.iter().find(|c| c.to_ascii_lowercase() == lower) {
        return Some(c);
    }
    candidates
        .iter()
        .map(|c| (osa_distance(&lower, &c.to_ascii_lowercase()), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal string alignment distance: edits, counting a swap of neighbours as one (strsim's,
/// already built for clap's own suggestions).
pub(crate) use strsim::osa_distance;
