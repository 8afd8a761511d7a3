//! Choosing one instance of an application: filters (status, metadata, any predicate), then
//! region preference (`regions.rs`), then zone preference, then a strategy (round robin,
//! random, weighted), over any list of [`Instance`]s. [`InstanceSource`] is where the list
//! comes from: the [`EurekaClient`]'s local registry copy, or a fixed list for services without
//! Eureka and for tests.
//!
//! The metadata conventions are Spring Cloud's, so that instances registered by Spring services
//! are chosen the same way here: the zone is metadata `zone` (`eureka.instance.metadata-map.zone`,
//! compared ignoring case, as `ZonePreferenceServiceInstanceListSupplier` does) and the weight is
//! metadata `weight` (as `WeightedServiceInstanceListSupplier` reads it).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use heureka_core::{Instance, InstanceStatus};

use crate::client::EurekaClient;
use crate::regions::{InstanceRegionChecker, ZONE_KEY};

#[cfg(test)]
mod tests;

/// The metadata key holding an instance's weight: a positive integer, 1 when missing, not a
/// number or zero (Spring Cloud LoadBalancer's defaults).
pub const WEIGHT_KEY: &str = "weight";

/// How one instance is picked among the candidates left after filtering and zone preference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Each application's candidates in turn, ordered by instance id, starting at a random one
    /// (as Spring's `RoundRobinLoadBalancer` does, so that clients started together do not all
    /// call the same instance first).
    RoundRobin,
    /// Any candidate, uniformly.
    Random,
    /// A candidate drawn with probability proportional to its [`weight`].
    Weighted,
}

/// Chooses an instance: `Selector::new(Strategy::RoundRobin).prefer_zone("us-east-1a")
/// .require_metadata("version", "canary")`, then [`Selector::choose`].
///
/// A selector is shared by all the calls of a service (`&self` everywhere, `Send + Sync`); the
/// round-robin position is kept per application, so one selector serves several applications.
///
/// ```
/// use heureka_client::{Instance, Selector, Strategy};
///
/// let mut stable = Instance::new("ORDERS", "orders-1", "10.0.0.1", "10.0.0.1", 0);
/// stable.metadata.insert("version".into(), "stable".into());
/// let mut canary = Instance::new("ORDERS", "orders-2", "10.0.0.2", "10.0.0.2", 0);
/// canary.metadata.insert("version".into(), "canary".into());
///
/// let canary_route = Selector::new(Strategy::RoundRobin).require_metadata("version", "canary");
/// assert_eq!(canary_route.choose(&[stable, canary]).unwrap().id(), "orders-2");
/// ```
pub struct Selector {
    strategy: Strategy,
    /// Only instances with this status are candidates; `None` accepts any status.
    status: Option<InstanceStatus>,
    /// `(key, value)` pairs every candidate's metadata must hold.
    required_metadata: Vec<(String, String)>,
    predicates: Vec<Predicate>,
    zone: Option<String>,
    regions: Option<InstanceRegionChecker>,
    /// The next position of each application (upper-cased name). The map is written once per
    /// application; the position itself is an atomic, so concurrent picks never wait on a lock
    /// for long and never take the same turn twice.
    positions: RwLock<HashMap<String, Arc<AtomicUsize>>>,
    random: RandomStream,
}

type Predicate = Arc<dyn Fn(&Instance) -> bool + Send + Sync>;

/// Whether a pick moves the round-robin position: a call's first pick does, its retries do not.
#[derive(Clone, Copy)]
enum Turn {
    Take,
    Keep,
}

impl Selector {
    /// A selector with `strategy`, accepting `UP` instances only.
    pub fn new(strategy: Strategy) -> Selector {
        Selector {
            strategy,
            status: Some(InstanceStatus::Up),
            required_metadata: Vec::new(),
            predicates: Vec::new(),
            zone: None,
            regions: None,
            positions: RwLock::new(HashMap::new()),
            random: RandomStream::new(fastrand::u64(..)),
        }
    }

    /// Prefers instances in `zone` (metadata [`ZONE_KEY`], ignoring case); when no candidate is
    /// in it, every candidate is eligible, so a lost zone costs latency, not availability.
    pub fn prefer_zone(mut self, zone: &str) -> Selector {
        self.zone = Some(zone.to_owned());
        self
    }

    /// Prefers the candidates of the local region, then those of each remote region in the
    /// order `regions` lists them (`eureka.client.fetch-remote-regions-registry`): a remote
    /// instance is picked only when no candidate of the local region is left (with the
    /// default status filter: no `UP` one), or of the remote regions before it. Applied before
    /// [`Selector::prefer_zone`], whose zone is meant to be one of the local region's. The
    /// [`EurekaClient`] already offers one region's instances at a time
    /// ([`EurekaClient::instances`]); this is for lists that mix regions, such as
    /// [`EurekaClient::all_instances`].
    pub fn prefer_regions(mut self, regions: InstanceRegionChecker) -> Selector {
        self.regions = Some(regions);
        self
    }

    /// Keeps only instances whose metadata maps `key` to exactly `value`; several requirements
    /// must all hold. `require_metadata("version", "canary")` is a gray release's canary route.
    pub fn require_metadata(mut self, key: &str, value: &str) -> Selector {
        self.required_metadata
            .push((key.to_owned(), value.to_owned()));
        self
    }

    /// Keeps only instances for which `predicate` holds, for rules metadata equality cannot
    /// express.
    pub fn filter(mut self, predicate: impl Fn(&Instance) -> bool + Send + Sync + 'static) -> Self {
        self.predicates.push(Arc::new(predicate));
        self
    }

    /// Accepts instances whatever their status, for a list that was not filtered to `UP` by its
    /// source (the [`EurekaClient`] offers `UP` instances only, unless its
    /// `filter_only_up_instances` is off).
    pub fn any_status(mut self) -> Selector {
        self.status = None;
        self
    }

    /// Fixes the seed of the random draws (random and weighted picks, the round-robin starting
    /// points), so that a sequence of picks can be reproduced.
    pub fn seed(mut self, seed: u64) -> Selector {
        self.random = RandomStream::new(seed);
        self
    }

    /// One instance of `instances` that passes the filters, preferring the zone, picked by the
    /// strategy; `None` when no instance passes.
    pub fn choose<'a>(&self, instances: &'a [Instance]) -> Option<&'a Instance> {
        self.choose_excluding(instances, &[])
    }

    /// Like [`Selector::choose`], never returning an instance whose id is in `excluded`.
    pub fn choose_excluding<'a>(
        &self,
        instances: &'a [Instance],
        excluded: &[&str],
    ) -> Option<&'a Instance> {
        self.pick(instances, excluded, Turn::Take)
    }

    /// The instance for another attempt of a call that failed on the `tried` instances: one
    /// not tried yet, like [`Selector::choose_excluding`], except that round robin does not take
    /// another turn. The call already took its turn; were the retry to take one too, every call
    /// after a failure would start at the same position again, so one dead instance among two
    /// would be tried first on every call instead of on every other one.
    pub fn choose_retry<'a>(
        &self,
        instances: &'a [Instance],
        tried: &[&str],
    ) -> Option<&'a Instance> {
        self.pick(instances, tried, Turn::Keep)
    }

    fn pick<'a>(
        &self,
        instances: &'a [Instance],
        excluded: &[&str],
        turn: Turn,
    ) -> Option<&'a Instance> {
        let candidates: Vec<&Instance> = self
            .candidates(instances)
            .into_iter()
            .filter(|instance| !excluded.contains(&instance.id()))
            .collect();
        let candidates = match &self.regions {
            Some(regions) => regions.prefer(candidates, |_| true),
            None => candidates,
        };
        let candidates = self.zone_preference(candidates);
        match self.strategy {
            Strategy::RoundRobin => self.round_robin(&candidates, turn),
            Strategy::Random => candidates
                .get(self.random.below(candidates.len())?)
                .copied(),
            Strategy::Weighted => self.weighted(&candidates),
        }
    }

    /// The instances that pass the filters (status, metadata, predicates), ordered by id, before
    /// zone preference and strategy.
    pub fn candidates<'a>(&self, instances: &'a [Instance]) -> Vec<&'a Instance> {
        let mut candidates: Vec<&Instance> = instances
            .iter()
            .filter(|instance| self.status.is_none_or(|status| instance.status == status))
            .filter(|instance| {
                self.required_metadata
                    .iter()
                    .all(|(key, value)| instance.metadata.get(key) == Some(value))
            })
            .filter(|instance| self.predicates.iter().all(|predicate| predicate(instance)))
            .collect();
        // Sources may shuffle (the Eureka client does, per fetch); a fixed order keeps round
        // robin fair across refreshes and seeded picks reproducible.
        candidates.sort_by(|a, b| a.id().cmp(b.id()));
        candidates
    }

    fn zone_preference<'a>(&self, candidates: Vec<&'a Instance>) -> Vec<&'a Instance> {
        let Some(zone) = &self.zone else {
            return candidates;
        };
        let in_zone: Vec<&Instance> = candidates
            .iter()
            .copied()
            .filter(|instance| zone_of(instance).is_some_and(|z| z.eq_ignore_ascii_case(zone)))
            .collect();
        if in_zone.is_empty() {
            candidates
        } else {
            in_zone
        }
    }

    fn round_robin<'a>(&self, candidates: &[&'a Instance], turn: Turn) -> Option<&'a Instance> {
        let app = candidates.first()?.app.to_uppercase();
        let position = self.position(&app);
        let turn = match turn {
            Turn::Take => position.fetch_add(1, Ordering::Relaxed),
            Turn::Keep => position.load(Ordering::Relaxed),
        };
        candidates.get(turn % candidates.len()).copied()
    }

    /// The position counter of `app`, created at a random start on the first pick.
    fn position(&self, app: &str) -> Arc<AtomicUsize> {
        if let Some(position) = self.positions.read().expect("positions lock").get(app) {
            return position.clone();
        }
        let start = self.random.below(usize::MAX).unwrap_or(0);
        self.positions
            .write()
            .expect("positions lock")
            .entry(app.to_owned())
            .or_insert_with(|| Arc::new(AtomicUsize::new(start)))
            .clone()
    }

    fn weighted<'a>(&self, candidates: &[&'a Instance]) -> Option<&'a Instance> {
        let total: u64 = candidates
            .iter()
            .map(|instance| u64::from(weight(instance)))
            .sum();
        let mut draw = self.random.below_u64(total)?;
        candidates.iter().copied().find(|instance| {
            let weight = u64::from(weight(instance));
            if draw < weight {
                return true;
            }
            draw -= weight;
            false
        })
    }
}

impl fmt::Debug for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Selector")
            .field("strategy", &self.strategy)
            .field("status", &self.status)
            .field("required_metadata", &self.required_metadata)
            .field("predicates", &self.predicates.len())
            .field("zone", &self.zone)
            .field("regions", &self.regions)
            .finish_non_exhaustive()
    }
}

/// The instance's zone: its metadata [`ZONE_KEY`], as Spring Cloud reads it.
pub fn zone_of(instance: &Instance) -> Option<&str> {
    instance.metadata.get(ZONE_KEY).map(String::as_str)
}

/// The instance's weight: metadata [`WEIGHT_KEY`] as a positive integer, else 1.
pub fn weight(instance: &Instance) -> u32 {
    instance
        .metadata
        .get(WEIGHT_KEY)
        .and_then(|weight| weight.trim().parse::<u32>().ok())
        .filter(|&weight| weight > 0)
        .unwrap_or(1)
}

/// Random numbers for `&self`: draw `n` is the mix of `seed + n × γ` (SplitMix64's stream with
/// fastrand's output function), so concurrent draws need one atomic increment and no lock, and a
/// seed reproduces the sequence.
struct RandomStream {
    seed: u64,
    draws: AtomicU64,
}

impl RandomStream {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    fn new(seed: u64) -> RandomStream {
        RandomStream {
            seed,
            draws: AtomicU64::new(0),
        }
    }

    fn rng(&self) -> fastrand::Rng {
        let draw = self.draws.fetch_add(1, Ordering::Relaxed);
        fastrand::Rng::with_seed(self.seed.wrapping_add(draw.wrapping_mul(Self::GAMMA)))
    }

    /// A uniform number below `bound`; `None` when `bound` is 0.
    fn below(&self, bound: usize) -> Option<usize> {
        (bound > 0).then(|| self.rng().usize(..bound))
    }

    fn below_u64(&self, bound: u64) -> Option<u64> {
        (bound > 0).then(|| self.rng().u64(..bound))
    }
}

/// Where a service finds the instances of an application.
pub trait InstanceSource: Send + Sync {
    /// The known instances of `app` (any case); an unknown application has none.
    fn instances(&self, app: &str) -> Vec<Instance>;
}

/// The client's local registry copy: [`EurekaClient::instances`], the `UP` instances as of the
/// last fetch (every status with `filter_only_up_instances` off).
impl InstanceSource for EurekaClient {
    fn instances(&self, app: &str) -> Vec<Instance> {
        EurekaClient::instances(self, app)
    }
}

/// A fixed list, for services without Eureka and for tests: the instances whose `app` is `app`,
/// ignoring case.
impl InstanceSource for Vec<Instance> {
    fn instances(&self, app: &str) -> Vec<Instance> {
        self.iter()
            .filter(|instance| instance.app.eq_ignore_ascii_case(app))
            .cloned()
            .collect()
    }
}

impl<S: InstanceSource + ?Sized> InstanceSource for &S {
    fn instances(&self, app: &str) -> Vec<Instance> {
        (**self).instances(app)
    }
}

impl<S: InstanceSource + ?Sized> InstanceSource for Arc<S> {
    fn instances(&self, app: &str) -> Vec<Instance> {
        (**self).instances(app)
    }
}
