//! Handover without two replicas on one object: which ranges a replica may work on, given the
//! ring it should use and the ring each other live replica last published in its Lease.
//!
//! Each replica keeps one invariant: it works only on ranges it owns in the ring its Lease
//! publishes. Moving to a new ring it therefore (1) stops working on what it loses and waits
//! for the reconciles in flight, (2) publishes the new ring, (3) starts on what it gains only
//! where no other live replica's published ring still gives the range to that replica
//! ([`active`]). A replica whose Lease expired is no member and claims nothing (it stopped
//! working before its Lease could expire: a renewal that fails stops it).
//!
//! Step 3 reads the others' Leases after step 2 wrote its own, from the API server (a quorum
//! read): of two replicas moving at once, the later reader sees the other's claim, so both
//! never take one range.

use super::ring::{Ranges, Ring, segments};

/// What another live replica's Lease says: who it is and the ring it last published (`None`:
/// none yet, it works on nothing).
#[derive(Clone, Debug)]
pub struct Peer {
    /// Its identity.
    pub identity: String,
    /// The ring it published.
    pub published: Option<Ring>,
}

/// The ranges `me` may work on now: those it owns in `target` that no peer (`peers`, the other
/// live replicas) still owns in the ring it published.
pub fn active(me: &str, target: &Ring, peers: &[Peer]) -> Ranges {
    let laggards: Vec<(&str, &Ring)> = (peers.iter())
        .filter(|p| p.identity != me)
        .filter_map(|p| Some((p.identity.as_str(), p.published.as_ref()?)))
        .filter(|(_, ring)| ring.generation() != target.generation())
        .collect();
    let mut rings: Vec<&Ring> = laggards.iter().map(|(_, r)| *r).collect();
    rings.push(target);
    segments(&rings, |hash| {
        target.owner(hash) == Some(me)
            && (laggards.iter()).all(|(peer, ring)| ring.owner(hash) != Some(*peer))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::hash::mixed;

    const VNODES: u16 = 16;

    /// One simulated replica: its published ring and what it works on.
    #[derive(Clone, Debug)]
    struct Replica {
        name: String,
        alive: bool,
        published: Option<Ring>,
        working: Ranges,
    }

    struct World {
        replicas: Vec<Replica>,
        probes: Vec<u64>,
    }

    impl World {
        fn new(names: &[&str]) -> Self {
            let mut world = Self {
                replicas: Vec::new(),
                probes: (0..2_000).map(|i| mixed(&format!("uid-{i}"))).collect(),
            };
            for name in names {
                world.join(name);
            }
            world
        }

        fn join(&mut self, name: &str) {
            self.replicas.push(Replica {
                name: name.into(),
                alive: true,
                published: None,
                working: Ranges::none(),
            });
        }

        fn live(&self) -> Vec<String> {
            (self.replicas.iter().filter(|r| r.alive))
                .map(|r| r.name.clone())
                .collect()
        }

        /// One turn of replica `i`'s loop: shrink to the target, publish, grow.
        fn step(&mut self, i: usize) {
            if !self.replicas[i].alive {
                return;
            }
            let target = Ring::new(&self.live(), VNODES);
            let me = self.replicas[i].name.clone();
            let owned = target.owned(&me);
            self.replicas[i].working = self.replicas[i].working.intersect(&owned);
            self.check();
            self.replicas[i].published = Some(target.clone());
            self.check();
            let peers: Vec<Peer> = (self.replicas.iter().filter(|r| r.alive))
                .map(|r| Peer {
                    identity: r.name.clone(),
                    published: r.published.clone(),
                })
                .collect();
            self.replicas[i].working = active(&me, &target, &peers);
            self.check();
        }

        /// No hash is worked on by two replicas, and each works only inside its published ring.
        fn check(&self) {
            for &probe in &self.probes {
                let workers: Vec<_> = (self.replicas.iter())
                    .filter(|r| r.alive && r.working.contains(probe))
                    .map(|r| r.name.as_str())
                    .collect();
                assert!(workers.len() <= 1, "{probe:#x} worked on by {workers:?}");
            }
            for r in self.replicas.iter().filter(|r| r.alive) {
                let owned = (r.published.as_ref()).map_or(Ranges::none(), |p| p.owned(&r.name));
                for &probe in &self.probes {
                    assert!(
                        !r.working.contains(probe) || owned.contains(probe),
                        "{}",
                        r.name
                    );
                }
            }
        }

        /// Whether every hash is worked on by its owner in the live members' ring.
        fn settled(&self) -> bool {
            let ring = Ring::new(&self.live(), VNODES);
            (self.probes.iter()).all(|&probe| {
                (self.replicas.iter()).any(|r| {
                    r.alive
                        && r.working.contains(probe)
                        && ring.owner(probe) == Some(r.name.as_str())
                })
            })
        }

        /// Steps the replicas in the order `order` gives until settled; the number of turns.
        fn settle(&mut self, order: &mut impl FnMut(usize) -> usize) -> usize {
            for turn in 0..200 {
                if self.settled() {
                    return turn;
                }
                let i = order(self.replicas.len());
                self.step(i);
            }
            panic!("never settled: {:?}", self.live());
        }
    }

    /// A deterministic "random" order of turns.
    fn shuffled(seed: u64) -> impl FnMut(usize) -> usize {
        let mut state = seed;
        move |n| {
            state = mixed(&state.to_string());
            (state % n as u64) as usize
        }
    }

    #[test]
    fn scaling_up_and_down_never_puts_two_replicas_on_one_range() {
        for seed in 0..20 {
            let mut order = shuffled(seed);
            let mut world = World::new(&["a", "b"]);
            world.settle(&mut order);
            world.join("c"); // 2 -> 3
            world.settle(&mut order);
            // Graceful stop of b: it stops working, then its Lease is deleted.
            let b = world.replicas.iter().position(|r| r.name == "b").unwrap();
            world.replicas[b].working = Ranges::none();
            world.replicas[b].alive = false;
            world.settle(&mut order); // 3 -> 2
            world.join("d");
            world.join("e");
            world.settle(&mut order);
        }
    }

    #[test]
    fn a_killed_replica_is_replaced_once_its_lease_expires() {
        let mut order = shuffled(7);
        let mut world = World::new(&["a", "b", "c"]);
        world.settle(&mut order);
        // kill -9: it still "works" in the model until its Lease expires, when it is no
        // longer live; a replica whose renewals fail stops before that.
        let c = world.replicas.iter().position(|r| r.name == "c").unwrap();
        for i in 0..3 {
            world.step(i);
        }
        world.replicas[c].working = Ranges::none();
        world.replicas[c].alive = false;
        world.settle(&mut order);
        let ring = Ring::new(&["a", "b"], VNODES);
        assert!(world.replicas[0].working == ring.owned("a"));
    }

    #[test]
    fn a_replica_waits_for_the_one_losing_a_range_to_publish() {
        let old = Ring::new(&["a", "b"], VNODES);
        let new = Ring::new(&["a", "b", "c"], VNODES);
        let peers = |b_ring: &Ring| {
            vec![
                Peer {
                    identity: "a".into(),
                    published: Some(new.clone()),
                },
                Peer {
                    identity: "b".into(),
                    published: Some(b_ring.clone()),
                },
            ]
        };
        // b has not published the new ring: c gets only what it takes from a.
        let waiting = active("c", &new, &peers(&old));
        let from_a = segments(&[&old, &new], |h| {
            new.owner(h) == Some("c") && old.owner(h) == Some("a")
        });
        assert_eq!(waiting, from_a);
        assert!(!waiting.is_empty());
        // Once b published it (or its Lease expired: it is no peer), c gets all it owns.
        assert_eq!(active("c", &new, &peers(&new)), new.owned("c"));
        assert_eq!(active("c", &new, &peers(&new)[..1]), new.owned("c"));
        // A peer with no ring yet claims nothing.
        let fresh = [Peer {
            identity: "a".into(),
            published: None,
        }];
        assert_eq!(active("b", &new, &fresh), new.owned("b"));
    }
}
