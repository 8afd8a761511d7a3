"""Unit tests of the fault runs' checker (interop/fault/checker.py) on synthetic histories.

No processes: each test writes a small history by hand, as the clients and pollers would record
it, and asserts what the checker makes of it, so the checker is known not to be vacuous (it
finds a resurrected cancel, a lost override removal, a divergence) and not to over-report
(indeterminate and crash-risk writes are not held against the system; a node without an instance
because it evicted it, or never learnt the registration a cancel removed, has not applied that
cancel). With run.py --self-test (a revival forged through a peer batch, caught end to end), they
are the proof that property (2) is checked and does not over-report. Property (2b), a restarted
node serving a cancel its reachable peers held, is proven the same way here (flagged, and not
flagged when the node was cut off, a peer still showed the instance live, or a late registration
explains it); run.py --persistence against a server without the restored node's merge shows it
end to end.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault import checker  # noqa: E402
from fault.checker import OOS, UNKNOWN, Outage  # noqa: E402
from fault.clients import View  # noqa: E402
from fault.history import (CANCEL, FAILED, HEARTBEAT, INDETERMINATE, OK, REGISTER, REMOVE_OVERRIDE,  # noqa: E402
                           SET_OVERRIDE, DigestEntry, DigestRead, History, Observation, load_all)

KEY = ("APP", "127.0.0.1:app:1")
NODES = ["a", "b", "c"]
WALL0 = 1_800_000_000.0        # the fake wall clock: WALL0 + the run time
ZERO = (0, 0, 0)


def ms(t):
    """The stamp milliseconds of a write made at run time ``t``."""
    return int((WALL0 + t) * 1000)


class H:
    """A hand-written history with a fake clock."""

    def __init__(self):
        self.h = History(t0=0.0)
        self.t = 0.0
        self.h.now = lambda: self.t
        self.h.wall = lambda: WALL0 + self.t

    def op(self, kind, outcome, node="a", actor="client", own=None, status=None, at=None, took=0.01, key=KEY):
        if at is not None:
            self.t = at
        o = self.h.begin(actor, kind, key, node, own=own)
        self.t += took
        self.h.finish(o, outcome, status)
        return o

    def read(self, node, at, present=None, inc=1):
        """A poll of ``node`` at ``at`` seeing the instance as (status, override), or absent."""
        inst = {KEY: present} if present else {}
        self.h.observe(Observation(node, inc, at, at + 0.005, "h", inst, WALL0 + at, WALL0 + at + 0.005))

    def digest(self, node, at, *, removed, reg, cancel=ZERO, inc=1, listed=True):
        """A digest read of ``node`` at ``at``: KEY as a tombstone (``removed``) or a lease, with
        the registration and cancel stamps ``(ms, counter, tag)`` (or a run time: ms(t), 0, 1)."""
        st = lambda x: x if isinstance(x, tuple) else (ms(x), 0, 1)   # noqa: E731
        entries = {KEY: DigestEntry(removed, st(reg), st(cancel))} if listed else {}
        self.h.observe_digest(DigestRead(node, inc, at, at + 0.005, WALL0 + at, WALL0 + at + 0.005, entries))

    @property
    def ops(self):
        return self.h.snapshot()[0]

    @property
    def obs(self):
        return self.h.snapshot()[1]

    def check(self, live=frozenset(), final=None, **kw):
        return checker.check(self.ops, self.obs, set(live), final or views(None),
                             digests=self.h.digest_reads(), **kw)


def views(entry, hashcode="h", **per_node):
    """Final views: every node holds ``entry`` for KEY (None = absent) unless given per node."""
    out = {}
    for n in NODES:
        e = per_node.get(n, entry)
        out[n] = View(hashcode, {KEY: e} if e else {})
    return out


def props(rep):
    return sorted(v.prop for v in rep.violations)


# -- the model's transitions ---------------------------------------------------------------------
def test_own_down_wins_over_an_override_and_up_falls_back_to_it():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    h.op(REGISTER, OK, own="DOWN", at=3)
    assert checker.model_of(h.ops).states == {(True, "DOWN", True, "DOWN")}
    h.op(REGISTER, OK, own="UP", at=4)
    assert checker.model_of(h.ops).states == {(True, "UP", True, OOS)}


def test_an_override_set_over_an_own_down_shows_until_the_client_registers_again():
    h = H()
    h.op(REGISTER, OK, own="DOWN", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    assert checker.model_of(h.ops).states == {(True, "DOWN", True, OOS)}


def test_removing_the_override_without_a_value_leaves_unknown_until_the_client_registers():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    h.op(REMOVE_OVERRIDE, OK, actor="operator", at=3)
    assert checker.model_of(h.ops).states == {(True, "UP", False, UNKNOWN)}
    h.op(HEARTBEAT, FAILED, status=404, at=4)
    h.op(REGISTER, OK, own="UP", at=4.1)
    assert checker.model_of(h.ops).states == {(True, "UP", False, "UP")}


def test_a_cancel_drops_the_override():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    h.op(CANCEL, OK, at=3)
    h.op(REGISTER, OK, own="UP", at=4)
    assert checker.model_of(h.ops).states == {(True, "UP", False, "UP")}


def test_failed_writes_have_no_effect_and_indeterminate_ones_may_apply_late_or_never():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, FAILED, actor="operator", status=404, at=2)
    assert checker.model_of(h.ops).states == {(True, "UP", False, "UP")}
    h.op(SET_OVERRIDE, INDETERMINATE, actor="operator", at=3)
    h.op(REGISTER, OK, own="DOWN", at=4)
    m = checker.model_of(h.ops)
    assert m.uncertain
    # never applied / applied before the DOWN / applied after it (a paused node woke up)
    assert m.states == {(True, "DOWN", False, "DOWN"), (True, "DOWN", True, "DOWN"), (True, "DOWN", True, OOS)}


# -- property (1) and (3): final state -------------------------------------------------------------
def test_a_calm_history_passes():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    h.read("a", 2.5, ("UP", UNKNOWN))
    h.read("a", 3.0, (OOS, OOS))
    rep = checker.check(h.ops, h.obs, {KEY}, views((OOS, OOS)))
    assert rep.violations == []


def test_a_lost_override_removal_is_reported_with_its_history():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", node="b", at=2)
    h.op(REMOVE_OVERRIDE, OK, actor="operator", node="c", at=3)
    h.op(HEARTBEAT, FAILED, node="c", status=404, at=4)
    h.op(REGISTER, OK, node="c", own="UP", at=4.01)
    rep = checker.check(h.ops, h.obs, {KEY}, views((OOS, OOS)))
    assert props(rep) == ["final-state"]
    text = rep.violations[0].render()
    assert "expected UP (override UNKNOWN)" in text and "remove-override" in text, text


def test_an_indeterminate_removal_may_end_either_way():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    h.op(REMOVE_OVERRIDE, INDETERMINATE, actor="operator", at=3, took=1.5)
    assert checker.check(h.ops, h.obs, {KEY}, views((OOS, OOS))).violations == []
    assert checker.check(h.ops, h.obs, {KEY}, views((UNKNOWN, UNKNOWN))).violations == []


def test_a_cancelled_instance_must_be_gone_and_a_live_one_present():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, at=2)
    assert props(checker.check(h.ops, h.obs, set(), views(("UP", UNKNOWN)))) == ["final-state"]
    assert checker.check(h.ops, h.obs, set(), views(None)).violations == []
    h2 = H()
    h2.op(REGISTER, OK, own="UP", at=1)
    assert props(checker.check(h2.ops, h2.obs, {KEY}, views(None))) == ["final-state"]


def test_nodes_that_disagree_are_reported():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    v = views(("UP", UNKNOWN))
    v["c"] = View("other", v["c"].instances)
    assert props(checker.check(h.ops, h.obs, {KEY}, v)) == ["divergence"]
    v["c"] = None
    assert props(checker.check(h.ops, h.obs, {KEY}, v)) == ["node-unreachable"]


def test_a_write_lost_with_a_node_killed_before_it_could_replicate_is_allowed():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", node="a", at=10)
    # a was cut off from b and c, then killed: the override never left it
    outages = [Outage("link", 9, 20, link=("a", "b")), Outage("link", 9, 20, link=("a", "c")),
               Outage("kill", 15, 18, node="a")]
    risk = checker.crash_risk(h.ops, outages, NODES, durable_after=6)
    assert len(risk) == 1
    assert checker.check(h.ops, h.obs, {KEY}, views(("UP", UNKNOWN)), at_risk=risk).violations == []
    # with the links healthy for long enough before the kill, the override had to survive
    outages = [Outage("kill", 30, 33, node="a")]
    risk = checker.crash_risk(h.ops, outages, NODES, durable_after=6)
    assert risk == frozenset()
    assert props(checker.check(h.ops, h.obs, {KEY}, views(("UP", UNKNOWN)), at_risk=risk)) == ["final-state"]


def test_an_override_may_be_gone_after_the_client_saw_its_lease_gone():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", at=2)
    h.op(HEARTBEAT, FAILED, node="b", status=404, at=20)
    h.op(REGISTER, OK, node="b", own="UP", at=20.01)
    rep = checker.check(h.ops, h.obs, {KEY}, views(("UP", UNKNOWN)))
    assert rep.violations == [] and rep.override_unsure == 1


# -- property (2): no cancel undone ------------------------------------------------------------------
def test_a_cancel_undone_on_a_node_that_applied_it_is_reported():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.read("b", 1.5, ("UP", UNKNOWN))
    h.op(CANCEL, OK, node="a", at=2)
    h.digest("b", 2.5, removed=True, reg=1, cancel=2)    # b holds the cancel's tombstone...
    h.read("b", 3.0, ("UP", UNKNOWN))                     # ...and shows the instance again
    h.digest("b", 3.1, removed=False, reg=1, cancel=2)
    h.read("b", 3.5, None)
    rep = h.check()
    assert props(rep) == ["cancel-undone"]
    v = rep.violations[0]
    assert "showed the instance again at 3.000" in v.message, v.message
    assert any(line.startswith("digest b#1") and "tombstone" in line for line in v.observations), v.observations
    assert rep.cancels_checked == 1 and rep.cancels_applied_seen == 1


def test_a_revival_by_a_registration_stamped_later_that_no_op_explains_is_reported():
    """What run.py --self-test forges: a peer batch registering the instance anew on a node that
    applied the cancel (its digest then shows a registration later than the cancel)."""
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=2)
    h.digest("a", 2.5, removed=True, reg=1, cancel=2)
    h.read("a", 3.0, ("UP", UNKNOWN))
    h.digest("a", 3.1, removed=False, reg=2.9, cancel=2)
    assert props(h.check()) == ["cancel-undone"]


def test_an_evicting_node_has_not_applied_the_cancel():
    """Seed 19: a never restarted, evicted the instance (its copies of the heartbeats delayed), a
    peer's live copy brought it back, and the cancel reached a later."""
    h = H()
    h.op(REGISTER, OK, own="UP", node="c", at=1)
    h.op(CANCEL, OK, node="c", at=37.5)
    h.read("a", 39.2, None)                                         # evicted: absent...
    h.digest("a", 39.3, removed=True, reg=1, cancel=ZERO)           # ...an eviction stamps nothing
    h.read("a", 43.2, ("UP", UNKNOWN))                              # b's live copy
    h.digest("a", 43.3, removed=False, reg=1, cancel=ZERO)
    h.digest("a", 45.0, removed=True, reg=1, cancel=37.5)           # the cancel arrives
    h.read("a", 45.5, None)
    rep = h.check()
    assert rep.violations == [], [v.render() for v in rep.violations]
    assert rep.cancels_applied_seen == 1
    # the old inference from reads alone reported it
    inferred = checker.check(h.ops, h.obs, set(), views(None), infer_cancels=True)
    assert props(inferred) == ["cancel-undone-inferred"]


def test_a_node_knowing_only_an_earlier_cancel_has_not_applied_this_one():
    """Seed 6: the registration was made on an isolated node c and cancelled there; b knew only
    the earlier cancel, then got the registration from a, before the second cancel reached it."""
    h = H()
    h.op(REGISTER, OK, own="UP", node="a", at=90)
    h.op(CANCEL, OK, node="a", at=100)
    h.op(REGISTER, OK, own="UP", node="c", at=109.5)
    h.op(CANCEL, OK, node="c", at=120.5)
    h.read("b", 121.0, None)
    h.digest("b", 121.1, removed=True, reg=90, cancel=100)          # the earlier cancel's tombstone
    h.read("b", 122.0, ("UP", UNKNOWN))                             # the 109.5 registration, from a
    h.digest("b", 122.1, removed=False, reg=109.5, cancel=100)
    h.digest("b", 124.0, removed=True, reg=109.5, cancel=120.5)
    h.read("b", 124.5, None)
    assert h.check().violations == []


def test_a_node_that_never_had_the_instance_and_learns_it_late_is_not_reported():
    h = H()
    h.op(REGISTER, OK, own="UP", node="c", at=1)
    h.op(CANCEL, OK, node="c", at=2)
    h.read("b", 2.5, None)
    h.digest("b", 2.6, removed=False, reg=0, listed=False)          # b restarted empty
    h.read("b", 3.0, ("UP", UNKNOWN))
    assert h.check().violations == []


def test_lag_before_a_cancel_arrives_is_not_a_resurrection():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=2)
    h.digest("b", 1.9, removed=True, reg=1, cancel=2)       # started before the ack: does not count
    h.read("b", 2.5, ("UP", UNKNOWN))
    h.digest("b", 2.6, removed=False, reg=1)                # not there yet
    h.read("b", 3.0, None)
    assert h.check().violations == []


def test_a_read_overlapping_the_digest_read_does_not_count():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=2)
    h.digest("b", 2.5, removed=True, reg=1, cancel=2)
    h.read("b", 2.502, ("UP", UNKNOWN))     # started before the digest read ended
    assert h.check().violations == []


def test_a_new_registration_after_the_cancel_ends_the_window():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, at=2)
    h.digest("b", 2.5, removed=True, reg=1, cancel=2)
    h.op(REGISTER, OK, own="UP", at=5)
    h.read("b", 5.5, ("UP", UNKNOWN))
    assert h.check(live={KEY}, final=views(("UP", UNKNOWN))).violations == []


def test_a_restarted_node_may_learn_a_cancelled_instance_again_from_a_lagging_peer():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, at=2)
    h.digest("b", 2.5, removed=True, reg=1, cancel=2, inc=1)
    h.read("b", 4.0, ("UP", UNKNOWN), inc=2)    # b was killed and restarted in between
    h.read("b", 6.0, None, inc=2)
    assert h.check().violations == []
    # but once the new incarnation has the tombstone too, it is held to it
    h.digest("b", 6.5, removed=True, reg=1, cancel=2, inc=2)
    h.read("b", 7.0, ("UP", UNKNOWN), inc=2)
    assert props(h.check()) == ["cancel-undone"]


def test_an_indeterminate_registration_before_the_cancel_may_revive_it_stamped_later():
    h = H()
    h.op(REGISTER, INDETERMINATE, own="UP", node="c", at=1, took=1.5)   # c was paused
    h.op(REGISTER, OK, own="UP", node="a", at=3)
    h.op(CANCEL, OK, node="a", at=4)
    h.digest("b", 4.5, removed=True, reg=3, cancel=4)
    h.read("b", 5.0, ("UP", UNKNOWN))
    h.digest("b", 5.1, removed=False, reg=4.8, cancel=4)        # c applied it at 4.8
    h.read("b", 9.0, None)
    rep = h.check()
    assert rep.violations == [] and rep.cancels_excused == 1
    # without a registration stamped after the cancel in b's digest, nothing explains it
    h2 = H()
    h2.op(REGISTER, INDETERMINATE, own="UP", node="c", at=1, took=1.5)
    h2.op(REGISTER, OK, own="UP", node="a", at=3)
    h2.op(CANCEL, OK, node="a", at=4)
    h2.digest("b", 4.5, removed=True, reg=3, cancel=4)
    h2.read("b", 5.0, ("UP", UNKNOWN))
    assert props(h2.check()) == ["cancel-undone"]


def test_a_crash_risk_cancel_is_checked_where_a_digest_shows_it_applied():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=10)
    outages = [Outage("link", 9, 20, link=("a", "b")), Outage("link", 9, 20, link=("a", "c")),
               Outage("kill", 15, 18, node="a")]
    risk = checker.crash_risk(h.ops, outages, NODES, durable_after=6)
    assert len(risk) == 1
    h.digest("b", 21, removed=False, reg=1)     # b never got it: nothing to hold b to
    h.read("b", 22, ("UP", UNKNOWN))
    assert h.check(at_risk=risk).violations == []
    h.digest("b", 23, removed=True, reg=1, cancel=10)
    h.read("b", 24, ("UP", UNKNOWN))
    assert props(h.check(at_risk=risk)) == ["cancel-undone"]


def test_the_cancel_stamp_is_compared_with_the_wall_clock_at_the_request_start():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=2, took=0.2)
    # stamped a millisecond before the client's reading of the clock (truncation): still this cancel
    h.digest("b", 2.5, removed=True, reg=1, cancel=(ms(2) - 1, 0, 7))
    h.read("b", 3.0, ("UP", UNKNOWN))
    assert props(h.check()) == ["cancel-undone"]
    # a tombstone stamped a second earlier is an earlier cancel's
    h2 = H()
    h2.op(REGISTER, OK, own="UP", at=1)
    h2.op(CANCEL, OK, node="a", at=2)
    h2.digest("b", 2.5, removed=True, reg=0.5, cancel=1.0)
    h2.read("b", 3.0, ("UP", UNKNOWN))
    assert h2.check().violations == []


def test_a_history_without_digest_reads_leaves_property_2_unchecked(tmp_path):
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.read("b", 1.5, ("UP", UNKNOWN))
    h.op(CANCEL, OK, node="a", at=2)
    h.read("b", 2.5, None)
    h.read("b", 3.0, ("UP", UNKNOWN))
    rep = checker.check(h.ops, h.obs, set(), views(None))
    assert rep.violations == [] and rep.cancels_checked == 0
    assert any("no digest reads" in why for _, why in rep.unchecked), rep.unchecked
    # a dump without digests (as before they were recorded) loads with none
    h.h.dump(tmp_path / "history.jsonl")
    ops, obs, digests = load_all(tmp_path / "history.jsonl")
    assert len(ops) == 2 and len(obs) == 3 and digests == []


def test_digest_reads_survive_a_dump_and_load(tmp_path):
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=2)
    h.digest("b", 2.5, removed=True, reg=1, cancel=2)
    h.read("b", 3.0, ("UP", UNKNOWN))
    h.h.dump(tmp_path / "history.jsonl")
    ops, obs, digests = load_all(tmp_path / "history.jsonl")
    assert digests == h.h.digest_reads() and ops[1].wall_start == WALL0 + 2
    rep = checker.check(ops, obs, set(), views(None), digests=digests)
    assert props(rep) == ["cancel-undone"]


def test_after_a_removal_the_cluster_may_settle_on_the_own_status_without_a_404():
    h = H()
    h.op(REGISTER, OK, own="UP", node="a", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", node="c", at=2)      # c was cut off
    h.op(REMOVE_OVERRIDE, OK, actor="operator", node="a", at=3)   # a never had the override
    assert checker.check(h.ops, h.obs, {KEY}, views(("UP", UNKNOWN))).violations == []
    assert checker.check(h.ops, h.obs, {KEY}, views((UNKNOWN, UNKNOWN))).violations == []
    assert props(checker.check(h.ops, h.obs, {KEY}, views((OOS, OOS)))) == ["final-state"]


def test_an_override_over_an_own_down_may_settle_as_down():
    h = H()
    h.op(REGISTER, OK, own="DOWN", node="a", at=1)
    h.op(SET_OVERRIDE, OK, actor="operator", node="c", at=2)
    assert checker.check(h.ops, h.obs, {KEY}, views((OOS, OOS))).violations == []
    assert checker.check(h.ops, h.obs, {KEY}, views(("DOWN", OOS))).violations == []
    assert props(checker.check(h.ops, h.obs, {KEY}, views(("DOWN", UNKNOWN)))) == ["final-state"]
    assert props(checker.check(h.ops, h.obs, {KEY}, views((OOS, UNKNOWN)))) == ["final-state"]


# -- property (2b): a restarted node serving a cancel its reachable peers had applied ----------------
def restored_history(*, cancel_at=11.0, b_shows=("UP", UNKNOWN), c_applies=True):
    """b is killed at 10 and started again from 14 (its store kept the instance); a acknowledges
    the cancel at ``cancel_at`` and its digest shows the tombstone from then; c applies it too
    (unless not ``c_applies``: c's link from a is cut, it still shows the instance live).
    b's first read, at 14.3, shows the instance ``b_shows`` (None: absent)."""
    h = H()
    h.op(REGISTER, OK, own="UP", node="a", at=1)
    h.read("b", 5.0, ("UP", UNKNOWN))
    h.digest("b", 5.1, removed=False, reg=1)
    h.op(CANCEL, OK, node="a", at=cancel_at)
    for t in (cancel_at + 0.5, cancel_at + 1.5):
        h.read("a", t, None)
        h.digest("a", t + 0.1, removed=True, reg=1, cancel=cancel_at)
        h.read("c", t + 0.2, None if c_applies else ("UP", UNKNOWN))
        h.digest("c", t + 0.3, removed=c_applies, reg=1, cancel=cancel_at if c_applies else ZERO)
    h.read("b", 14.3, b_shows, inc=2)
    h.digest("b", 14.4, removed=False, reg=1, inc=2)
    h.read("b", 14.8, b_shows, inc=2)
    return h


KILL_B = Outage("kill", 10.0, 15.0, node="b", restart=14.0)


def test_a_restored_node_showing_an_instance_its_reachable_peers_cancelled_is_reported():
    """The issue: b was down while a acknowledged the cancel; b came back from its store, every
    peer reachable and holding the tombstone, and served the instance UP before hearing from them."""
    h = restored_history()
    rep = h.check(outages=[KILL_B])
    assert props(rep) == ["cancel-undone-after-restart"]
    v = rep.violations[0]
    assert "b restarted (incarnation 2, from 14.000)" in v.message and "showed the instance at 14.300" in v.message
    assert any(line.startswith("digest a#1") and "tombstone" in line for line in v.observations), v.observations
    assert rep.restored_checked == 1 and rep.restored_unconfirmed == []
    # property (2) alone (no outages given, or per incarnation) says nothing of it
    assert h.check().violations == []


def test_a_restored_node_that_dropped_the_instance_before_its_first_read_passes():
    h = restored_history(b_shows=None)
    rep = h.check(outages=[KILL_B])
    assert rep.violations == [] and rep.restored_checked == 1


def test_a_cancel_the_node_applied_just_before_its_kill_is_held_against_its_restored_view():
    """Inside the flush window: b applied a's cancel 0.5 s before it was killed, restored without it."""
    h = H()
    h.op(REGISTER, OK, own="UP", node="a", at=1)
    h.op(CANCEL, OK, node="a", at=9.4)
    h.digest("a", 9.6, removed=True, reg=1, cancel=9.4)
    h.digest("b", 9.7, removed=True, reg=1, cancel=9.4)
    h.read("c", 9.8, None)
    h.read("b", 14.3, ("UP", UNKNOWN), inc=2)
    assert props(h.check(outages=[KILL_B])) == ["cancel-undone-after-restart"]


def test_a_restored_node_cut_off_from_every_holder_is_restored_unconfirmed_not_a_violation():
    h = restored_history()
    cut = [Outage("link", 13.5, 16.0, link=("b", "a")), Outage("link", 13.5, 16.0, link=("b", "c"))]
    rep = h.check(outages=[KILL_B] + cut)
    assert rep.violations == [] and rep.restored_checked == 0
    assert len(rep.restored_unconfirmed) == 1
    assert "link b->a broken" in rep.restored_unconfirmed[0][1], rep.restored_unconfirmed
    # one holder reachable is enough: its tombstone had to be merged before the first read
    rep = h.check(outages=[KILL_B, cut[0]])
    assert props(rep) == ["cancel-undone-after-restart"]
    assert "could reach c throughout its start" in rep.violations[0].message
    # a holder paused during the start, or killed after its digest showed the tombstone, is no help
    rep = h.check(outages=[KILL_B, cut[0], Outage("pause", 14.2, 16.0, node="c")])
    assert rep.violations == [] and len(rep.restored_unconfirmed) == 1
    rep = h.check(outages=[KILL_B, cut[0], Outage("kill", 13.6, 13.9, node="c", restart=13.8)])
    assert rep.violations == [] and len(rep.restored_unconfirmed) == 1
    # the link the other way (a's connection to b) does not matter: b asks, a answers on b's connection
    assert props(h.check(outages=[KILL_B, Outage("link", 13.5, 16.0, link=("a", "b")),
                                  Outage("link", 13.5, 16.0, link=("c", "b"))])) == ["cancel-undone-after-restart"]


def test_a_peer_still_showing_the_instance_live_may_hand_the_restored_node_a_stale_copy():
    h = restored_history(c_applies=False)       # c lags: it still shows the instance after b's start
    h.read("c", 14.1, ("UP", UNKNOWN))
    rep = h.check(outages=[KILL_B])
    assert rep.violations == [] and rep.restored_excused == 1
    # c's last read before b's start showed it live, and no digest of c since showed the cancel
    h2 = H()
    h2.op(REGISTER, OK, own="UP", node="a", at=1)
    h2.op(CANCEL, OK, node="a", at=11)
    h2.digest("a", 11.6, removed=True, reg=1, cancel=11)
    h2.read("c", 11.7, ("UP", UNKNOWN))
    h2.read("b", 14.3, ("UP", UNKNOWN), inc=2)
    assert h2.check(outages=[KILL_B]).violations == []
    # once c's digest showed the cancel applied before b's start, c's earlier read excuses nothing
    h2.digest("c", 12.5, removed=True, reg=1, cancel=11)
    assert props(h2.check(outages=[KILL_B])) == ["cancel-undone-after-restart"]


def test_a_restored_node_may_show_a_late_indeterminate_registration_stamped_after_the_cancel():
    h = H()
    h.op(REGISTER, INDETERMINATE, own="UP", node="c", at=1, took=1.5)
    h.op(REGISTER, OK, own="UP", node="a", at=3)
    h.op(CANCEL, OK, node="a", at=11)
    h.digest("a", 11.6, removed=True, reg=3, cancel=11)
    h.read("c", 11.8, None)
    h.read("b", 14.3, ("UP", UNKNOWN), inc=2)
    h.digest("b", 14.4, removed=False, reg=13.0, inc=2)    # stamped after the cancel
    rep = h.check(outages=[KILL_B])
    assert rep.violations == [] and rep.restored_excused == 1
    # the restored (older) registration is no such excuse
    h2 = H()
    h2.op(REGISTER, INDETERMINATE, own="UP", node="c", at=1, took=1.5)
    h2.op(REGISTER, OK, own="UP", node="a", at=3)
    h2.op(CANCEL, OK, node="a", at=11)
    h2.digest("a", 11.6, removed=True, reg=3, cancel=11)
    h2.read("c", 11.8, None)
    h2.read("b", 14.3, ("UP", UNKNOWN), inc=2)
    h2.digest("b", 14.4, removed=False, reg=3, inc=2)
    assert props(h2.check(outages=[KILL_B])) == ["cancel-undone-after-restart"]


def test_a_cancel_applied_after_the_restart_began_or_a_new_registration_is_not_held_against_it():
    # a's digest shows the tombstone only after b's process may have asked it
    h = restored_history(cancel_at=13.8)
    assert h.check(outages=[KILL_B]).violations == []
    # the client registered again before b's read
    h = restored_history()
    h.op(REGISTER, OK, own="UP", node="a", at=14.0)
    assert h.check(live={KEY}, final=views(("UP", UNKNOWN)), outages=[KILL_B]).violations == []
    # beyond the tombstone retention the node may have forgotten it everywhere
    h = restored_history()
    assert h.check(outages=[KILL_B], retention_s=2.0).violations == []


def test_an_unknown_restart_time_falls_back_to_the_kill():
    """A meta.json written before restarts were recorded: the kill time stands for the start, so
    a cancel acknowledged while the node was down is not held against it (nothing proves the
    peer had applied it when the node started), one applied before the kill still is."""
    kill = Outage("kill", 10.0, 15.0, node="b")
    assert restored_history().check(outages=[kill]).violations == []
    h = H()
    h.op(REGISTER, OK, own="UP", node="a", at=1)
    h.op(CANCEL, OK, node="a", at=9.4)
    h.digest("a", 9.6, removed=True, reg=1, cancel=9.4)
    h.read("c", 9.8, None)
    h.read("b", 14.3, ("UP", UNKNOWN), inc=2)
    assert props(h.check(outages=[kill])) == ["cancel-undone-after-restart"]


def test_once_the_restored_node_shows_the_tombstone_property_2_takes_over():
    h = restored_history(b_shows=None)
    h.digest("b", 14.5, removed=True, reg=1, cancel=11, inc=2)
    h.read("b", 15.0, ("UP", UNKNOWN), inc=2)
    assert props(h.check(outages=[KILL_B])) == ["cancel-undone"]


def test_the_restart_times_are_recorded_and_rechecked(tmp_path, capsys):
    import json
    from fault import run
    from fault.nemesis import Fault
    faults = [Fault(10.0, 14.0, "kill", (1,), applied=10.0, healed=15.0)]
    outages = run.with_restarts([Outage("kill", 10.0, 15.0, node="b")], faults)
    assert outages[0].restart == 14.0
    h = restored_history()
    h.h.dump(tmp_path / "history.jsonl")
    (tmp_path / "meta.json").write_text(json.dumps({
        "live": [], "keys": [list(KEY)], "durable_after": 6.0, "mixed": False,
        "outages": [{"kind": "kill", "start": 10.0, "end": 15.0, "node": "b", "link": None, "restart": 14.0}],
        "final": {n: {"hashcode": "h", "instances": []} for n in NODES}}))
    assert run.recheck(tmp_path) == 1
    out = capsys.readouterr().out
    assert "[cancel-undone-after-restart]" in out and "after a restart (2b): checked 1" in out, out


# -- property (5): nothing crosses namespaces (run.py --namespaces) ------------------------------
OTHER = ("APP", "127.0.0.1:app:2")      # the same app name, an instance of namespace team-a
OWNERS = {KEY: "default", OTHER: "team-a"}


def test_an_instance_of_another_namespace_in_any_document_is_reported_once_per_node():
    h = H()
    h.read("a", 1.0, ("UP", UNKNOWN))
    h.h.observe(Observation("b", 1, 2.0, 2.005, "h", {KEY: ("UP", UNKNOWN), OTHER: ("UP", UNKNOWN)}))
    h.h.observe(Observation("b", 1, 3.0, 3.005, "h", {OTHER: ("UP", UNKNOWN)}))
    h.h.observe_digest(DigestRead("c", 1, 4.0, 4.005, 0, 0, {OTHER: DigestEntry(True, (1, 0, 1), (2, 0, 1))}))
    out = checker.check_isolation("default", OWNERS, h.obs, h.h.digest_reads(), views(("UP", UNKNOWN)),
                                  {"a": {KEY}})
    assert [(v.prop, v.instance) for v in out] == [("crossed-namespace", OTHER)] * 2
    assert "namespace team-a" in out[0].message and "on b (2 document(s))" in out[0].message
    assert "tombstone" in out[1].observations[0] and "on c" in out[1].message


def test_a_final_view_or_a_push_copy_holding_a_stranger_is_reported():
    stranger = ("APP", "127.0.0.1:app:99")
    final = views(("UP", UNKNOWN))
    final["c"] = View("h", {KEY: ("UP", UNKNOWN), stranger: ("UP", UNKNOWN)})
    out = checker.check_isolation("default", OWNERS, [], [], final, {"a (namespace default)": {OTHER}})
    assert sorted((v.instance, v.message.split(" in ")[0]) for v in out) == [
        (OTHER, "an instance of namespace team-a"), (stranger, "an instance no client made")]


def test_documents_holding_only_their_own_namespace_pass():
    h = H()
    h.read("a", 1.0, ("UP", UNKNOWN))
    h.digest("a", 1.1, removed=False, reg=0.5)
    assert checker.check_isolation("default", OWNERS, h.obs, h.h.digest_reads(), views(("UP", UNKNOWN)),
                                   {"a": {KEY}}) == []
