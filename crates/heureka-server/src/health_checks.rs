//! The server's own health checks (`heureka.health-checks.*`, off by default): each instance's
//! `healthCheckUrl` is fetched (or its port connected to) every interval, and an instance
//! whose probes keep failing is marked DOWN through the one write path, replicated like any
//! write, so every node and every client sees it in seconds instead of when its lease lapses.
//!
//! * `targets.rs` — what to probe for an instance (its URL, its port, or nothing), pure.
//! * `probe.rs` — making one probe, only to an address in
//!   `heureka.health-checks.allowed-networks`: an instance outside is not probed, gets no
//!   verdict, and is shown, counted and logged (once) as refused.
//! * `streaks.rs` — from results to verdicts, and the guard against our own network, pure.
//! * `owners.rs` — which node probes which instance (rendezvous hashing over the nodes that
//!   check), and the task that keeps the set of those nodes.
//!
//! How the verdict weighs against the instance's own status and the operator's override is
//! core's rule (`heureka_core::with_health`). Two tasks run: `owners::keep_checkers` (with
//! peers) and [`run`], which owns the streaks and publishes a [`HealthChecksView`] for the
//! dashboard after each round.

mod owners;
mod probe;
mod streaks;
mod targets;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use heureka_core::{Health, HealthSubject, HealthWrite, Millis, Origin};
use heureka_wire::{HealthChecksView, ProbeView};
use parking_lot::Mutex;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

use self::probe::{Networks, ProbeResult, Prober};
use self::streaks::{suspects_itself, Streak, Thresholds};
use self::targets::{target_of, Target};
use crate::config::{CheckMode, HealthChecksConfig};
use crate::events::Events;
use crate::log_budget::LogBudget;
use crate::metrics::Metrics;
use crate::replication::Replication;
use crate::store::Store;

/// What the HTTP side sees of the health checks: whether this node checks, its tag (which
/// peers use to share the checks), and the view the checking task last published.
#[derive(Debug)]
pub(crate) struct HealthChecks {
    config: HealthChecksConfig,
    node: u32,
    view: Mutex<HealthChecksView>,
}

impl HealthChecks {
    pub(crate) fn new(config: &HealthChecksConfig, node: u32) -> HealthChecks {
        HealthChecks {
            view: Mutex::new(HealthChecksView {
                enabled: config.enabled,
                ..HealthChecksView::default()
            }),
            config: config.clone(),
            node,
        }
    }

    /// This node's tag, as `owners.rs` names nodes.
    pub(crate) fn node(&self) -> u32 {
        self.node
    }

    pub(crate) fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// The latest round's view, for the dashboard.
    pub(crate) fn view(&self) -> HealthChecksView {
        self.view.lock().clone()
    }
}

/// Everything the checking task uses.
#[derive(Clone, Debug)]
pub(crate) struct Checker {
    pub(crate) checks: Arc<HealthChecks>,
    pub(crate) store: Arc<Store>,
    pub(crate) replication: Arc<Replication>,
    pub(crate) events: Arc<Events>,
    pub(crate) metrics: Arc<Metrics>,
    /// Whom `https://` health URLs are verified against.
    pub(crate) tls: heureka_tls::rustls::ClientConfig,
}

/// Starts the checks when enabled: the task that shares them with the peers (when there are
/// any) and the one that probes. A node with checks off but with peers watches whether any
/// node still checks, and clears the verdicts nobody will lift any more ([`clear_orphans`]).
pub(crate) fn spawn_all(checker: Checker, tasks: &mut JoinSet<()>) {
    let enabled = checker.checks.enabled();
    let has_peers = !checker.replication.peers().is_empty();
    let own = checker.checks.node();
    let (checkers, watched) = watch::channel(if enabled { vec![own] } else { Vec::new() });
    if has_peers {
        let replication = checker.replication.clone();
        tasks.spawn(owners::keep_checkers(replication, own, enabled, checkers));
    }
    if enabled {
        tasks.spawn(run(checker, watched));
    } else if has_peers {
        tasks.spawn(clear_orphans(checker, watched));
    }
}

/// How often a node without checks looks for verdicts nobody lifts.
const ORPHANS_EVERY: Duration = Duration::from_secs(10);

/// On a node with checks off: when no node of the cluster checks any more (all were turned
/// off, one by one), a failing verdict copied from a node that used to check would hold its
/// instance DOWN for good. Each such node lifts them; the writes are the same, so they
/// converge whoever makes them.
async fn clear_orphans(checker: Checker, mut checkers: watch::Receiver<Vec<u32>>) {
    let mut timer = crate::clock::every(ORPHANS_EVERY);
    // The first tick is at once: give the peers' first answers time to arrive.
    timer.tick().await;
    loop {
        // Every interval (a verdict may arrive from a peer's sync), and at once when the last
        // node that checked stops answering.
        tokio::select! {
            _ = timer.tick() => {}
            changed = checkers.changed() => if changed.is_err() { return },
        }
        if !checkers.borrow().is_empty() {
            continue;
        }
        let orphans = checker.store.read().failing_instances();
        for (app, id) in &orphans {
            let lift = |registry: &mut heureka_core::Registry, now| {
                registry.set_health(app, id, Health::Passing, Origin::Client, now)
            };
            checker.store.write(lift);
        }
        if !orphans.is_empty() {
            tracing::info!(
                instances = orphans.len(),
                "lifted health-check verdicts: no node of the cluster checks instances any more"
            );
        }
    }
}

/// One instance probed in a round, and what it found.
struct Probed {
    subject: HealthSubject,
    target: Target,
    result: ProbeResult,
}

/// The probing task: a round every interval over the instances this node owns, each probed
/// after its own offset within the jitter, at most `concurrency` at once.
async fn run(checker: Checker, checkers: watch::Receiver<Vec<u32>>) {
    let config = checker.checks.config.clone();
    let thresholds = Thresholds {
        failures_before_down: config.failures_before_down,
        successes_before_up: config.successes_before_up,
        self_suspicion_percent: config.self_suspicion_percent,
    };
    let prober = Prober::new(
        config.timeout,
        checker.tls.clone(),
        checker.checks.node(),
        Networks::new(&config.allowed_networks),
    );
    let permits = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let mut round = Round::default();
    let mut timer = crate::clock::every(config.interval);
    loop {
        timer.tick().await;
        let nodes = checkers.borrow().clone();
        let own = checker.checks.node();
        let now = checker.store.now();
        let subjects =
            checker
                .store
                .read()
                .health_subjects(now, &targets::METADATA_KEYS, |app, id| {
                    owners::owner(&nodes, app, id) == Some(own)
                });
        round.forget_all_but(&subjects);
        let mut probing = JoinSet::new();
        for subject in subjects {
            let Some(target) = target_of(&subject, app_mode(&config, &subject.app)) else {
                if subject.health == Health::Failing {
                    // No longer checked (its mode is `off` now): the verdict goes with it.
                    write_verdict(&checker, &subject, Health::Passing);
                }
                continue;
            };
            let delay = offset(&config, own, &subject);
            let (prober, permits) = (prober.clone(), permits.clone());
            probing.spawn(async move {
                tokio::time::sleep(delay).await;
                let _permit = permits.acquire_owned().await;
                let result = prober.probe(&target).await;
                Probed {
                    subject,
                    target,
                    result,
                }
            });
        }
        while let Some(joined) = probing.join_next().await {
            let Ok(probed) = joined else { continue };
            round.book(&checker, probed, &thresholds, &config);
        }
        round.publish(&checker, &thresholds, nodes.len());
    }
}

/// An instance's offset within the jitter: the same every round (so its probes stay an
/// interval apart), different between instances (so those registered together are spread).
fn offset(config: &HealthChecksConfig, own: u32, subject: &HealthSubject) -> Duration {
    let jitter_ms = config.jitter.as_millis() as u64;
    if jitter_ms == 0 {
        return Duration::ZERO;
    }
    let score = owners::score(own, &subject.app, &subject.id);
    Duration::from_millis(score % jitter_ms)
}

/// `heureka.health-checks.apps.<app>` for `app`.
fn app_mode(config: &HealthChecksConfig, app: &str) -> Option<CheckMode> {
    config
        .apps
        .iter()
        .find(|(name, _)| name == app)
        .map(|(_, mode)| *mode)
}

/// Instances refused (outside the allowed networks) logged per minute at most: a client can
/// register many; the rest are counted into the next line.
const REFUSALS_LOGGED_PER_MINUTE: u32 = 10;

/// What the probing task keeps between rounds: each owned instance's streak and latest probe,
/// and whether it suspects its own network.
struct Round {
    streaks: HashMap<(String, String), Streak>,
    latest: HashMap<(String, String), ProbeView>,
    /// Of the latest probes of instances passing by verdict: how many failed, of how many.
    tally: (usize, usize),
    suspected: bool,
    /// Instances whose probes are refused and whose refusal was logged: logged once, until
    /// they are probed again or leave.
    refused: std::collections::HashSet<(String, String)>,
    refusals_logged: LogBudget,
}

impl Default for Round {
    fn default() -> Round {
        Round {
            streaks: HashMap::new(),
            latest: HashMap::new(),
            tally: (0, 0),
            suspected: false,
            refused: std::collections::HashSet::new(),
            refusals_logged: LogBudget::new(REFUSALS_LOGGED_PER_MINUTE),
        }
    }
}

/// What one latest probe adds to [`Round::tally`]. A refused probe says nothing of our
/// network, so it is left out.
fn tally_of(probe: &ProbeView) -> (usize, usize) {
    if probe.health == Health::Passing && !probe.refused {
        (usize::from(!probe.passed), 1)
    } else {
        (0, 0)
    }
}

impl Round {
    /// Drops what is kept of instances no longer listed (gone, or now another node's).
    fn forget_all_but(&mut self, subjects: &[HealthSubject]) {
        let listed: std::collections::HashSet<(&str, &str)> = subjects
            .iter()
            .map(|subject| (subject.app.as_str(), subject.id.as_str()))
            .collect();
        let keep = |key: &(String, String)| listed.contains(&(key.0.as_str(), key.1.as_str()));
        self.streaks.retain(|key, _| keep(key));
        self.latest.retain(|key, _| keep(key));
        self.refused.retain(|key| keep(key));
        self.tally = self
            .latest
            .values()
            .map(tally_of)
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    }

    /// Replaces an instance's latest probe, keeping the tally.
    fn remember(&mut self, key: (String, String), probe: ProbeView) {
        let added = tally_of(&probe);
        let removed = self
            .latest
            .insert(key, probe)
            .as_ref()
            .map_or((0, 0), tally_of);
        self.tally = (
            self.tally.0 + added.0 - removed.0,
            self.tally.1 + added.1 - removed.1,
        );
    }

    /// Whether this node suspects its own network now, told when that changes. Judged after
    /// every probe, so that the first instances to fail their streak in a failing round are
    /// not marked before the others have shown the pattern.
    fn judge_suspicion(&mut self, checker: &Checker, thresholds: &Thresholds) {
        let (failed, probed) = self.tally;
        let suspected = suspects_itself(failed, probed, thresholds.self_suspicion_percent);
        if suspected == self.suspected {
            return;
        }
        self.suspected = suspected;
        let now = checker.store.now();
        let round = (failed as u64, probed as u64);
        let reason = self.reason();
        if suspected {
            tracing::warn!(failed, probed, "health checks suspended: {reason}");
        } else {
            tracing::info!(
                failed,
                probed,
                "health checks resumed: most probes pass again"
            );
        }
        checker.events.health_checks(suspected, round, &reason, now);
    }

    fn reason(&self) -> String {
        if !self.suspected {
            return String::new();
        }
        let (failed, probed) = self.tally;
        format!(
            "{failed} of {probed} passing instances failed at once: suspecting this server's own network, marking none DOWN"
        )
    }

    /// Books one probe: its streak, its metrics, and the verdict it earned, if any.
    fn book(
        &mut self,
        checker: &Checker,
        probed: Probed,
        thresholds: &Thresholds,
        config: &HealthChecksConfig,
    ) {
        let Probed {
            subject,
            target,
            result,
        } = probed;
        let now = checker.store.now();
        if result.refused {
            self.refuse(checker, subject, target, result, now);
            return;
        }
        checker
            .metrics
            .health_check(result.passed, result.latency.as_secs_f64());
        let key = (subject.app.clone(), subject.id.clone());
        self.refused.remove(&key);
        let streak = self.streaks.entry(key.clone()).or_default();
        streak.record(result.passed, now);
        let streak = streak.clone();
        let mut view = ProbeView {
            app: subject.app.clone(),
            id: subject.id.clone(),
            target: target.to_string(),
            health: subject.health,
            passed: result.passed,
            refused: false,
            detail: result.detail,
            latency_ms: result.latency.as_millis() as u64,
            at: now,
            failing_since: streak.failing_since,
        };
        self.remember(key.clone(), view.clone());
        self.judge_suspicion(checker, thresholds);
        if let Some(flip) = streak.flip(subject.health, thresholds, self.suspected) {
            if let HealthWrite::Written { .. } = write_verdict(checker, &subject, flip) {
                view.health = flip;
                self.remember(key, view.clone());
            }
        }
        if view.health == Health::Failing {
            evict_if_failing_too_long(checker, &subject, &streak, config.evict_after, now);
        }
    }

    /// Books a probe refused because the instance's address is outside the allowed networks:
    /// no verdict (a failing one it had is lifted, as when its checks are turned off), no
    /// streak, counted, shown with the reason, logged once.
    fn refuse(
        &mut self,
        checker: &Checker,
        subject: HealthSubject,
        target: Target,
        result: ProbeResult,
        now: Millis,
    ) {
        checker.metrics.health_check_refused();
        let key = (subject.app.clone(), subject.id.clone());
        self.streaks.remove(&key);
        let mut health = subject.health;
        if health == Health::Failing {
            if let HealthWrite::Written { .. } = write_verdict(checker, &subject, Health::Passing) {
                health = Health::Passing;
            }
        }
        if self.refused.insert(key.clone()) {
            if let Some(left_out) = self.refusals_logged.take(checker.store.instant()) {
                tracing::warn!(
                    app = %subject.app,
                    id = %subject.id,
                    target = %target,
                    left_out,
                    "health check refused: {}",
                    result.detail
                );
            }
        }
        let view = ProbeView {
            app: subject.app,
            id: subject.id,
            target: target.to_string(),
            health,
            passed: false,
            refused: true,
            detail: result.detail,
            latency_ms: 0,
            at: now,
            failing_since: None,
        };
        self.remember(key, view);
    }

    /// After a round: the view published for the dashboard, and the gauges.
    fn publish(&mut self, checker: &Checker, thresholds: &Thresholds, checkers: usize) {
        // Instances that left change the tally too.
        self.judge_suspicion(checker, thresholds);
        let suspected = self.suspected;
        let reason = self.reason();
        let mut probes: Vec<ProbeView> = self.latest.values().cloned().collect();
        probes.sort_by(|a, b| (&a.app, &a.id).cmp(&(&b.app, &b.id)));
        let failing = probes
            .iter()
            .filter(|probe| probe.health == Health::Failing)
            .count();
        checker.metrics.health_checks_state(suspected, failing);
        *checker.checks.view.lock() = HealthChecksView {
            enabled: true,
            suspended: suspected,
            reason,
            checkers,
            probes,
        };
    }
}

/// Writes a verdict through the one write path (a client-side write: it replicates).
fn write_verdict(checker: &Checker, subject: &HealthSubject, health: Health) -> HealthWrite {
    let (app, id) = (&subject.app, &subject.id);
    checker
        .store
        .write(|registry, now| registry.set_health(app, id, health, Origin::Client, now))
}

/// `heureka.health-checks.evict-after`: an instance failing that long is cancelled, as its
/// client would, unless self-preservation holds (which would keep its lease too).
fn evict_if_failing_too_long(
    checker: &Checker,
    subject: &HealthSubject,
    streak: &Streak,
    evict_after: Option<Duration>,
    now: Millis,
) {
    let (Some(evict_after), Some(since)) = (evict_after, streak.failing_since) else {
        return;
    };
    if now - since < evict_after.as_millis() as Millis {
        return;
    }
    let (app, id) = (&subject.app, &subject.id);
    let removed = checker.store.write(|registry, now| {
        registry.self_preservation().lease_expiration_enabled
            && registry.cancel(app, id, Origin::Client, now)
    });
    if removed {
        tracing::warn!(%app, %id, failing_ms = now - since, "removed an instance whose health checks kept failing");
    }
}
