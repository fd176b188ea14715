//! Buckets: how objects a controller creates follow their owner's shard on the server.
//!
//! The API server cannot select on an owner's uid, so a sharded controller labels each object
//! it creates with its owner's bucket ([`BUCKET_LABEL`]: the first three hex digits of the
//! owner's 64-bit hash, one of 4,096), and each replica watches its owned kinds with a label
//! selector of the buckets its ranges touch (`shard.operator-rs.io/bucket in (…)`),
//! re-established at each handover; the client still filters by the owner's exact hash, since a
//! bucket at a range's edge is shared with a neighbour. A bucket is a function of the owner's
//! uid alone, never of the ring: a handover writes no label.

use super::ring::{Ranges, SPACE_END};

/// The label of an object a sharded controller created: its owner's bucket.
pub const BUCKET_LABEL: &str = "shard.operator-rs.io/bucket";

/// Bits of the hash that make a bucket: 2^12 = 4,096 buckets, so a replica's ranges (64 per
/// replica by default) share about one bucket in 32 with a neighbour, and its selector stays a
/// few kilobytes.
const BUCKET_BITS: u32 = 12;

/// The bucket of `hash`, as [`BUCKET_LABEL`]'s value: its first three hex digits.
///
/// ```
/// use operator_rs_runtime::shard::bucket;
/// assert_eq!(bucket(0x3c3b_aa34_e8b6_ebd3), "3c3");
/// ```
pub fn bucket(hash: u64) -> String {
    format!("{:03x}", hash >> (64 - BUCKET_BITS))
}

impl Ranges {
    /// The buckets ([`bucket`]) holding a hash of these ranges, in order.
    pub fn buckets(&self) -> Vec<String> {
        let mut buckets: Vec<u64> = Vec::new();
        for &(start, end) in self.pairs() {
            let first = start >> (64 - BUCKET_BITS);
            let last = ((end.min(SPACE_END) - 1) as u64) >> (64 - BUCKET_BITS);
            for b in first..=last {
                if buckets.last() != Some(&b) {
                    buckets.push(b);
                }
            }
        }
        (buckets.into_iter()).map(|b| format!("{b:03x}")).collect()
    }

    /// The label selector of the objects whose owner's bucket these ranges touch: every
    /// labelled object for the whole space; `None` for no range (watch nothing).
    pub fn bucket_selector(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        if self.is_all() {
            return Some(BUCKET_LABEL.to_owned());
        }
        Some(format!("{BUCKET_LABEL} in ({})", self.buckets().join(",")))
    }
}

/// `selector` (a watch's own label selector, if any) and `extra`, both required.
pub(crate) fn and(selector: Option<&str>, extra: &str) -> String {
    match selector {
        Some(selector) if !selector.trim().is_empty() => format!("{selector},{extra}"),
        _ => extra.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::ring::{DEFAULT_VNODES, Ring};

    #[test]
    fn a_hash_is_in_one_of_the_buckets_of_every_range_that_holds_it() {
        let ring = Ring::new(&["a", "b", "c"], DEFAULT_VNODES);
        let mut total = 0;
        for member in ring.members() {
            let owned = ring.owned(member);
            let buckets = owned.buckets();
            total += buckets.len();
            for probe in (0..20_000u64).map(|i| crate::shard::mixed(&i.to_string())) {
                if owned.contains(probe) {
                    assert!(buckets.contains(&bucket(probe)), "{probe:#x} of {member}");
                }
            }
            // About a third of the buckets, and a few shared at the ranges' edges.
            assert!(buckets.len() < 4096 * 4 / 10, "{member}: {}", buckets.len());
        }
        // Every bucket is someone's; those at an edge are two replicas'.
        assert!((4096..4096 + 3 * 2 * DEFAULT_VNODES as usize).contains(&total));
        assert_eq!(Ranges::all().buckets().len(), 4096);
        assert_eq!(
            Ranges::from_pairs(vec![(0, 1), (u64::MAX, SPACE_END)]).buckets(),
            ["000", "fff"]
        );
    }

    #[test]
    fn selectors_name_the_buckets_or_every_labelled_object() {
        assert_eq!(Ranges::none().bucket_selector(), None);
        assert_eq!(
            Ranges::all().bucket_selector().unwrap(),
            "shard.operator-rs.io/bucket"
        );
        let two = Ranges::from_pairs(vec![(0, 1 << 52), (1 << 63, (1 << 63) + 1)]);
        assert_eq!(
            two.bucket_selector().unwrap(),
            "shard.operator-rs.io/bucket in (000,800)"
        );
        assert_eq!(and(Some("app=x"), "b"), "app=x,b");
        assert_eq!(and(None, "b"), "b");
    }
}
