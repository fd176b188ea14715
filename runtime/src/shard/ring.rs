//! The consistent-hash ring: every replica computes the same one from the members' identities,
//! with virtual nodes, over the 64-bit hash space of `super::hash`; a replica's shard is the
//! set of hash ranges ([`Ranges`]) whose tokens it holds, written for the API server as a
//! `shardSelector` (KEP-5866).

use std::fmt;

use super::hash::{fnv1a64, mixed};

/// The end of the hash space, exclusive: 2^64.
pub const SPACE_END: u128 = 1 << 64;

/// Virtual nodes per member by default: each member's share of the space is within about ±15 %
/// of a fair one (the ring's unit tests), and a member's selector stays a few kilobytes.
pub const DEFAULT_VNODES: u16 = 64;

/// The hash ranges `[start, end)` of one shard: sorted, disjoint, adjacent ones merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranges(Vec<(u64, u128)>);

impl Ranges {
    /// No hash at all.
    pub fn none() -> Self {
        Self(Vec::new())
    }

    /// The whole space.
    pub fn all() -> Self {
        Self(vec![(0, SPACE_END)])
    }

    /// Ranges from `[start, end)` pairs in any order (empty pairs dropped, overlaps merged).
    pub fn from_pairs(mut pairs: Vec<(u64, u128)>) -> Self {
        pairs.retain(|(start, end)| u128::from(*start) < *end);
        pairs.sort_unstable();
        let mut merged: Vec<(u64, u128)> = Vec::with_capacity(pairs.len());
        for (start, end) in pairs {
            match merged.last_mut() {
                Some(last) if u128::from(start) <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Self(merged)
    }

    /// Whether `hash` is in one of the ranges.
    pub fn contains(&self, hash: u64) -> bool {
        let i = self.0.partition_point(|(start, _)| *start <= hash);
        i > 0 && u128::from(hash) < self.0[i - 1].1
    }

    /// Whether no hash is in them.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether every hash is in them.
    pub fn is_all(&self) -> bool {
        self.0 == [(0, SPACE_END)]
    }

    /// The part of these ranges inside `other`.
    pub fn intersect(&self, other: &Ranges) -> Ranges {
        let mut pairs = Vec::new();
        for &(s1, e1) in &self.0 {
            for &(s2, e2) in &other.0 {
                let (start, end) = (s1.max(s2), e1.min(e2));
                if u128::from(start) < end {
                    pairs.push((start, end));
                }
            }
        }
        Ranges::from_pairs(pairs)
    }

    /// The `[start, end)` pairs.
    pub fn pairs(&self) -> &[(u64, u128)] {
        &self.0
    }

    /// The fraction of the hash space they cover.
    pub fn share(&self) -> f64 {
        let width: u128 = self.0.iter().map(|(s, e)| e - u128::from(*s)).sum();
        width as f64 / SPACE_END as f64
    }

    /// The API server's `shardSelector` for these ranges of `field` (`object.metadata.uid`):
    /// `shardRange(object.metadata.uid, '0x…', '0x…') || …`, bounds as 16 hex digits (2^64 as
    /// `0x10000000000000000`). `None` for no range (select nothing: do not watch) or the whole
    /// space (no selector needed).
    pub fn selector(&self, field: &str) -> Option<String> {
        if self.is_empty() || self.is_all() {
            return None;
        }
        let terms: Vec<String> = (self.0.iter())
            .map(|(start, end)| {
                let end = if *end == SPACE_END {
                    "0x10000000000000000".to_owned()
                } else {
                    format!("0x{:016x}", *end as u64)
                };
                format!("shardRange({field}, '0x{start:016x}', '{end}')")
            })
            .collect();
        Some(terms.join(" || "))
    }
}

impl fmt::Display for Ranges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ranges, {:.1} % of the space",
            self.0.len(),
            self.share() * 100.0
        )
    }
}

/// Every replica's same ring: the members (sorted), each with `vnodes` tokens at
/// `hash::mixed("<identity>#<i>")`; a token owns the hashes from the previous token
/// (exclusive) to itself (inclusive), the first token also those after the last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ring {
    members: Vec<String>,
    /// `(token, member index)`, sorted by token.
    tokens: Vec<(u64, usize)>,
}

impl Ring {
    /// The ring of `members` (any order, duplicates ignored) with `vnodes` tokens each.
    pub fn new<S: AsRef<str>>(members: &[S], vnodes: u16) -> Self {
        let mut members: Vec<String> = members.iter().map(|m| m.as_ref().to_owned()).collect();
        members.sort_unstable();
        members.dedup();
        let mut tokens: Vec<(u64, usize)> = (members.iter().enumerate())
            .flat_map(|(i, m)| (0..vnodes.max(1)).map(move |v| (mixed(&format!("{m}#{v}")), i)))
            .collect();
        tokens.sort_unstable();
        tokens.dedup_by_key(|(token, _)| *token);
        Self { members, tokens }
    }

    /// The members, sorted.
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// The ring's generation: a hash of its members (every replica derives the same one).
    pub fn generation(&self) -> u64 {
        fnv1a64(&self.members.join(","))
    }

    /// The member owning `hash`, if the ring has any.
    pub fn owner(&self, hash: u64) -> Option<&str> {
        if self.tokens.is_empty() {
            return None;
        }
        let i = self.tokens.partition_point(|(token, _)| *token < hash);
        let (_, member) = self.tokens[if i == self.tokens.len() { 0 } else { i }];
        Some(&self.members[member])
    }

    /// Where ownership may change: each token + 1 (the start of the next token's range).
    pub(crate) fn boundaries(&self) -> impl Iterator<Item = u128> + '_ {
        self.tokens.iter().map(|(token, _)| u128::from(*token) + 1)
    }

    /// The ranges `member` owns (none if it is no member).
    pub fn owned(&self, member: &str) -> Ranges {
        segments(&[self], |start| self.owner(start) == Some(member))
    }
}

/// The ranges of the elementary segments of `rings` (between consecutive boundaries of any of
/// them, where no ring's owner changes) whose start satisfies `keep`.
pub(crate) fn segments(rings: &[&Ring], mut keep: impl FnMut(u64) -> bool) -> Ranges {
    let mut points: Vec<u128> = rings.iter().flat_map(|r| r.boundaries()).collect();
    points.push(0);
    points.push(SPACE_END);
    points.sort_unstable();
    points.dedup();
    let pairs = (points.windows(2))
        .filter(|w| w[0] < SPACE_END && keep(w[0] as u64))
        .map(|w| (w[0] as u64, w[1]))
        .collect();
    Ranges::from_pairs(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("operator-7f9c{i}-x{i}")).collect()
    }

    #[test]
    fn every_hash_has_exactly_one_owner_and_owned_ranges_partition_the_space() {
        for n in 1..=5 {
            let ring = Ring::new(&names(n), DEFAULT_VNODES);
            let owned: Vec<Ranges> = ring.members().iter().map(|m| ring.owned(m)).collect();
            let total: f64 = owned.iter().map(Ranges::share).sum();
            assert!((total - 1.0).abs() < 1e-9, "{n} members cover {total}");
            for probe in (0..10_000u64)
                .map(|i| mixed(&i.to_string()))
                .chain([0, u64::MAX])
            {
                let holders: Vec<_> = (ring.members().iter().zip(&owned))
                    .filter(|(_, r)| r.contains(probe))
                    .map(|(m, _)| m.as_str())
                    .collect();
                assert_eq!(holders, [ring.owner(probe).unwrap()], "hash {probe:#x}");
            }
        }
        assert!(Ring::new::<&str>(&[], 8).owned("a").is_empty());
        assert!(Ring::new(&["a"], 8).owned("a").is_all());
    }

    #[test]
    fn the_ring_is_the_same_whatever_order_members_are_listed_in() {
        let a = Ring::new(&["b", "a", "c", "a"], 16);
        let b = Ring::new(&["c", "b", "a"], 16);
        assert_eq!(a, b);
        assert_eq!(a.generation(), b.generation());
        assert_ne!(a.generation(), Ring::new(&["a", "b"], 16).generation());
    }

    #[test]
    fn shares_are_balanced_and_a_new_member_moves_about_one_nth() {
        for n in 2..=6 {
            let ring = Ring::new(&names(n), DEFAULT_VNODES);
            for m in ring.members() {
                let share = ring.owned(m).share() * n as f64;
                assert!(
                    (0.85..=1.15).contains(&share),
                    "{n} members: {m} has {share}"
                );
            }
            // Scaling n -> n+1: only the new member gains; about 1/(n+1) of the space moves.
            let bigger = Ring::new(&names(n + 1), DEFAULT_VNODES);
            let moved = segments(&[&ring, &bigger], |h| ring.owner(h) != bigger.owner(h));
            let fair = 1.0 / (n + 1) as f64;
            assert!(
                (moved.share() - fair).abs() < 0.15 * fair,
                "{n}->{}: {moved}",
                n + 1
            );
            let new = &names(n + 1)[n];
            let gained = bigger.owned(new);
            assert_eq!(moved, gained, "only the new member gains");
        }
    }

    #[test]
    fn ranges_answer_membership_and_write_the_api_servers_selector() {
        let ranges = Ranges::from_pairs(vec![(10, 20), (0, 5), (5, 8), (1 << 63, SPACE_END)]);
        assert_eq!(ranges.pairs(), [(0, 8), (10, 20), (1 << 63, SPACE_END)]);
        assert!(ranges.contains(0) && ranges.contains(7) && !ranges.contains(8));
        assert!(ranges.contains(19) && !ranges.contains(20) && ranges.contains(u64::MAX));
        assert_eq!(
            ranges.selector("object.metadata.uid").unwrap(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000008') || \
             shardRange(object.metadata.uid, '0x000000000000000a', '0x0000000000000014') || \
             shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
        );
        assert_eq!(Ranges::all().selector("object.metadata.uid"), None);
        let other = Ranges::from_pairs(vec![(5, 15)]);
        assert_eq!(ranges.intersect(&other).pairs(), [(5, 8), (10, 15)]);
        assert!(ranges.intersect(&Ranges::none()).is_empty());
        assert_eq!(Ranges::none().selector("object.metadata.uid"), None);
    }
}
