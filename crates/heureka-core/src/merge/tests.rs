//! The merge of two servers' copies: part by part, later write wins, in any order.

use proptest::prelude::*;

use super::*;
use crate::hlc::Hlc;
use crate::model::InstanceStatus::{Down, OutOfService, Starting, Unknown, Up};
use crate::test_util::instance;

fn stamp(ms: i64) -> Stamp {
    Stamp {
        ms,
        counter: 0,
        node: 1,
    }
}

fn registered(own: InstanceStatus, at: i64) -> Parts {
    let mut parts = Parts::default();
    parts.register(instance("ORDERS", "o1"), own, stamp(at));
    parts
}

/// Registered with status `own` at 1, put OUT_OF_SERVICE by an operator at 2.
fn overridden(own: InstanceStatus) -> Parts {
    let mut parts = registered(own, 1);
    parts.set_override(OutOfService, stamp(2));
    parts
}

/// The status after the instance, overridden as above, reports `reported` at 3.
fn reported_after_override(reported: InstanceStatus) -> InstanceStatus {
    let mut parts = overridden(Up);
    parts.register(instance("ORDERS", "o1"), reported, stamp(3));
    parts.status()
}

// === what readers see ===

#[test]
fn an_override_decides_an_up_instance_status() {
    assert_eq!(overridden(Up).status(), OutOfService);
}

#[test]
fn an_override_set_after_the_instance_reported_down_is_the_status() {
    assert_eq!(overridden(Down).status(), OutOfService);
}

#[test]
fn the_instance_reporting_down_after_an_override_is_down() {
    assert_eq!(reported_after_override(Down), Down);
}

#[test]
fn the_instance_reporting_up_after_an_override_stays_overridden() {
    assert_eq!(reported_after_override(Up), OutOfService);
}

#[test]
fn removing_an_override_without_a_value_leaves_unknown() {
    let mut parts = overridden(Up);
    parts.remove_override(None, stamp(3));
    assert_eq!(parts.status(), Unknown);
}

#[test]
fn a_cancelled_instance_is_not_live_until_it_registers_again() {
    let mut parts = registered(Up, 1);
    parts.cancel(stamp(2));
    assert!(!parts.is_live());
    parts.register(instance("ORDERS", "o1"), Up, stamp(3));
    assert!(parts.is_live());
}

#[test]
fn a_cancel_drops_the_override() {
    let mut parts = overridden(Up);
    parts.cancel(stamp(3));
    parts.register(instance("ORDERS", "o1"), Up, stamp(4));
    assert_eq!(parts.status(), Up);
}

// === the three sequences of issue 18, as merges ===

#[test]
fn a_removed_override_beats_the_override_a_stale_copy_remembers() {
    let stale = overridden(Up);
    let mut removed = stale.clone();
    removed.remove_override(Some(Up), stamp(3));
    for (mut a, b) in [(stale.clone(), removed.clone()), (removed.clone(), stale)] {
        a.merge(&b);
        assert_eq!((a.status(), a.overridden), (Up, None));
    }
}

#[test]
fn a_set_override_beats_an_older_registration_without_one() {
    let old = registered(Up, 1);
    let mut drained = old.clone();
    drained.set_override(OutOfService, stamp(2));
    for (mut a, b) in [(old.clone(), drained.clone()), (drained.clone(), old)] {
        a.merge(&b);
        assert_eq!(a.status(), OutOfService);
    }
}

#[test]
fn a_cancel_beats_an_older_registration_delivered_late() {
    let old = registered(Up, 1);
    let mut cancelled = old.clone();
    cancelled.cancel(stamp(2));
    for (mut a, b) in [(old.clone(), cancelled.clone()), (cancelled.clone(), old)] {
        a.merge(&b);
        assert!(!a.is_live());
    }
}

#[test]
fn a_registration_after_the_cancel_brings_the_instance_back() {
    let mut cancelled = registered(Up, 1);
    cancelled.cancel(stamp(2));
    let again = registered(Up, 3);
    cancelled.merge(&again);
    assert!(cancelled.is_live());
}

#[test]
fn merging_reports_whether_anything_changed() {
    let mut ours = registered(Up, 1);
    assert!(!ours.merge(&ours.clone()));
    assert!(ours.merge(&registered(Down, 2)));
}

#[test]
fn a_copy_of_unknown_history_loses_to_any_write() {
    let mut synced = Parts::default();
    synced.register(instance("ORDERS", "o1"), OutOfService, Stamp::ZERO);
    let mut written = registered(Up, 1);
    written.merge(&synced);
    assert_eq!(written.status(), Up);
    synced.merge(&registered(Up, 1));
    assert_eq!(synced.status(), Up);
}

// === random histories on several servers ===

/// One write, made at one server at a wall-clock time.
#[derive(Clone, Debug)]
enum Write {
    Register(InstanceStatus, u16),
    Metadata(u16),
    SetOverride(InstanceStatus),
    RemoveOverride(Option<InstanceStatus>),
    Cancel,
    Health(crate::health::Health),
}

fn status() -> impl Strategy<Value = InstanceStatus> {
    prop_oneof![Just(Up), Just(Down), Just(Starting), Just(OutOfService)]
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        (status(), any::<u16>()).prop_map(|(s, tag)| Write::Register(s, tag)),
        any::<u16>().prop_map(Write::Metadata),
        status().prop_map(Write::SetOverride),
        proptest::option::of(status()).prop_map(Write::RemoveOverride),
        Just(Write::Cancel),
        prop_oneof![
            Just(crate::health::Health::Passing),
            Just(crate::health::Health::Failing)
        ]
        .prop_map(Write::Health),
    ]
}

/// A registration document told apart by its metadata.
fn document(tag: u16) -> Instance {
    let mut doc = instance("ORDERS", "o1");
    doc.metadata.insert("tag".to_owned(), tag.to_string());
    doc
}

fn apply(parts: &mut Parts, write: &Write, at: Stamp) {
    match write {
        Write::Register(own, tag) => parts.register(document(*tag), *own, at),
        Write::Metadata(tag) => parts.update_registration(document(*tag), at),
        Write::SetOverride(status) => parts.set_override(*status, at),
        Write::RemoveOverride(value) => parts.remove_override(*value, at),
        Write::Cancel => parts.cancel(at),
        Write::Health(health) => parts.set_health(*health, at),
    }
}

/// One step of a history: a write at a server (with its wall clock, which may run behind),
/// or the delivery of a copy a server made earlier to another server.
#[derive(Clone, Debug)]
enum Step {
    Write {
        node: usize,
        wall: i64,
        write: Write,
    },
    Deliver {
        copy: usize,
        to: usize,
    },
}

const NODES: usize = 3;

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..NODES, 0..1_000i64, write()).prop_map(|(node, wall, write)| Step::Write {
            node,
            wall,
            write
        }),
        (any::<usize>(), 0..NODES).prop_map(|(copy, to)| Step::Deliver { copy, to }),
    ]
}

/// The state the latest write to each part leaves, computed from the writes alone.
fn model(writes: &[(Stamp, Write)]) -> Parts {
    let mut sorted = writes.to_vec();
    sorted.sort_by_key(|(at, _)| *at);
    let mut parts = Parts::default();
    for (at, write) in &sorted {
        apply(&mut parts, write, *at);
    }
    parts
}

/// Runs a history; returns each server's state and every copy a server sent.
fn run(steps: &[Step]) -> (Vec<Parts>, Vec<Parts>, Vec<(Stamp, Write)>) {
    let mut clocks: Vec<Hlc> = (0..NODES).map(|n| Hlc::new(n as u32 + 1)).collect();
    let mut nodes = vec![Parts::default(); NODES];
    let mut sent: Vec<Parts> = Vec::new();
    let mut writes = Vec::new();
    for step in steps {
        match step {
            Step::Write { node, wall, write } => {
                let at = clocks[*node].tick(*wall);
                apply(&mut nodes[*node], write, at);
                writes.push((at, write.clone()));
                sent.push(nodes[*node].clone());
            }
            Step::Deliver { copy, to } if !sent.is_empty() => {
                let copy = sent[copy % sent.len()].clone();
                clocks[*to].observe(copy.stamps.latest(), 2_000).unwrap();
                nodes[*to].merge(&copy);
            }
            Step::Deliver { .. } => {}
        }
    }
    (nodes, sent, writes)
}

/// The parts a reader can tell apart (a document's stamp with no document is not visible).
fn visible(
    parts: &Parts,
) -> (
    bool,
    InstanceStatus,
    Option<InstanceStatus>,
    Option<&Instance>,
) {
    let registration = parts
        .is_live()
        .then_some(())
        .and(parts.registration.as_ref());
    (
        parts.is_live(),
        parts.status(),
        parts.overridden,
        registration,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever was delivered, lost or repeated on the way, a final exchange of every
    /// server's copy with every other (anti-entropy) leaves all servers equal to the model.
    #[test]
    fn every_history_converges_to_the_latest_writes(steps in prop::collection::vec(step(), 1..40)) {
        let (mut nodes, _, writes) = run(&steps);
        for _round in 0..2 {
            for from in 0..NODES {
                for to in 0..NODES {
                    let copy = nodes[from].clone();
                    nodes[to].merge(&copy);
                }
            }
        }
        let expected = model(&writes);
        for node in &nodes {
            prop_assert_eq!(visible(node), visible(&expected));
            prop_assert_eq!(node.stamps, expected.stamps);
        }
    }

    /// Every copy ever sent, merged in any order, any number of times, gives the same state.
    #[test]
    fn merging_is_order_and_repetition_free(
        steps in prop::collection::vec(step(), 1..40),
        order in prop::collection::vec(any::<usize>(), 0..80),
    ) {
        let (_, sent, _) = run(&steps);
        prop_assume!(!sent.is_empty());
        let mut in_order = Parts::default();
        for copy in &sent {
            in_order.merge(copy);
        }
        // A random sequence (repetitions allowed), then every copy once, so none is missing.
        let mut shuffled = Parts::default();
        for pick in &order {
            shuffled.merge(&sent[pick % sent.len()]);
        }
        for copy in sent.iter().rev() {
            shuffled.merge(copy);
        }
        prop_assert_eq!(visible(&in_order), visible(&shuffled));
        prop_assert_eq!(in_order.stamps, shuffled.stamps);
    }
}
