"""Unit tests of the fault runs' checker (interop/fault/checker.py) on synthetic histories.

No processes: each test writes a small history by hand, as the clients and pollers would record
it, and asserts what the checker makes of it, so the checker is known not to be vacuous (it
finds a resurrected cancel, a lost override removal, a divergence) and not to over-report
(indeterminate and crash-risk writes are not held against the system).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault import checker  # noqa: E402
from fault.checker import OOS, UNKNOWN, Outage  # noqa: E402
from fault.clients import View  # noqa: E402
from fault.history import (CANCEL, FAILED, HEARTBEAT, INDETERMINATE, OK, REGISTER, REMOVE_OVERRIDE,  # noqa: E402
                           SET_OVERRIDE, History, Observation)

KEY = ("APP", "127.0.0.1:app:1")
NODES = ["a", "b", "c"]


class H:
    """A hand-written history with a fake clock."""

    def __init__(self):
        self.h = History(t0=0.0)
        self.t = 0.0
        self.h.now = lambda: self.t

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
        self.h.observe(Observation(node, inc, at, at + 0.005, "h", inst))

    @property
    def ops(self):
        return self.h.snapshot()[0]

    @property
    def obs(self):
        return self.h.snapshot()[1]


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
def test_a_cancel_undone_on_a_node_is_reported():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.read("b", 1.5, ("UP", UNKNOWN))
    h.op(CANCEL, OK, node="a", at=2)
    h.read("b", 2.5, None)                  # gone...
    h.read("b", 3.0, ("UP", UNKNOWN))       # ...and back
    h.read("b", 3.5, None)
    rep = checker.check(h.ops, h.obs, set(), views(None))
    assert props(rep) == ["cancel-undone"]
    assert "had it again at 3.000" in rep.violations[0].message


def test_lag_before_a_cancel_arrives_is_not_a_resurrection():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, node="a", at=2)
    h.read("b", 1.9, None)                  # started before the cancel's ack: does not count
    h.read("b", 2.5, ("UP", UNKNOWN))       # not there yet
    h.read("b", 3.0, None)
    assert checker.check(h.ops, h.obs, set(), views(None)).violations == []


def test_a_new_registration_after_the_cancel_ends_the_window():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, at=2)
    h.read("b", 2.5, None)
    h.op(REGISTER, OK, own="UP", at=5)
    h.read("b", 5.5, ("UP", UNKNOWN))
    assert checker.check(h.ops, h.obs, {KEY}, views(("UP", UNKNOWN))).violations == []


def test_a_restarted_node_may_learn_a_cancelled_instance_again_from_a_lagging_peer():
    h = H()
    h.op(REGISTER, OK, own="UP", at=1)
    h.op(CANCEL, OK, at=2)
    h.read("b", 2.5, None, inc=1)
    h.read("b", 4.0, ("UP", UNKNOWN), inc=2)    # b was killed and restarted in between
    h.read("b", 6.0, None, inc=2)
    assert checker.check(h.ops, h.obs, set(), views(None)).violations == []


def test_an_indeterminate_registration_before_the_cancel_exempts_it():
    h = H()
    h.op(REGISTER, INDETERMINATE, own="UP", node="c", at=1, took=1.5)
    h.op(REGISTER, OK, own="UP", node="a", at=3)
    h.op(CANCEL, OK, node="a", at=4)
    h.read("b", 4.5, None)
    h.read("b", 5.0, ("UP", UNKNOWN))
    h.read("b", 9.0, None)
    rep = checker.check(h.ops, h.obs, set(), views(None))
    assert rep.violations == [] and len(rep.unchecked) == 1


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
