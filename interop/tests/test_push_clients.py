"""The push stream (docs/push.md) read by a client someone else wrote: the `eventsource` npm
package (the WHATWG EventSource, interop/clients/push_follower.js), which reconnects by itself and
sends `Last-Event-ID` when it does.

* Following one application, it gets a snapshot of it, then one delta per write to it, in
  order.
* Following everything, its stream reset by a proxy while writes go on: it reconnects, the server
  resumes it (deltas, no new snapshot), its copy's hashcode agrees with every delta's and its
  copy is the registry again.
"""
from __future__ import annotations

import json
import shutil
import signal

import pytest

from support import cluster as cl
from support import procs
from support.procs import HOST, wait_until
from support.proxy import FaultProxy

DEADLINE = 30.0


class Follower:
    """push_follower.js in its own process; what it printed, parsed."""

    def __init__(self, url: str, log_dir):
        node = shutil.which("node")
        if node is None:
            pytest.fail("node not found", pytrace=False)
        self.proc = procs.Proc("push-follower", [node, str(procs.CLIENTS_DIR / "push_follower.js"), "--url", url],
                               log_dir).start()

    def lines(self) -> list[dict]:
        out = []
        for line in self.proc.log_text(max_chars=2_000_000).splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def messages(self) -> list[dict]:
        return [line for line in self.lines() if "event" in line]

    def copy(self) -> dict:
        messages = self.messages()
        return messages[-1]["instances"] if messages else {}

    def stop(self, sig=signal.SIGTERM):
        self.proc.stop(sig=sig)

    def kill(self):
        self.proc.kill()


def registry_statuses(node) -> dict:
    return {f"{app}/{iid}": status for (app, iid), (status, _) in cl.view(node).instances.items()}


@pytest.fixture(scope="module")
def node(cluster_factory):
    return cluster_factory(["heureka"], label="push-es")[0]


def test_eventsource_gets_a_snapshot_then_a_delta_per_write(node, tracker, log_dir):
    first = cl.new_instance("ES-ORDERS")
    cl.register(node, first)
    follower = tracker.add(Follower(node.url("/push?app=es-orders"), log_dir))
    wait_until("a snapshot", lambda: any(m["event"] == "snapshot" for m in follower.messages()), DEADLINE)
    second = cl.new_instance("ES-ORDERS")
    cl.register(node, second)
    cl.set_status(node, first, "OUT_OF_SERVICE")
    cl.cancel(node, second)
    wait_until("three deltas", lambda: len([m for m in follower.messages() if m["event"] == "delta"]) >= 3,
               DEADLINE)
    deltas = [m for m in follower.messages() if m["event"] == "delta"]
    assert follower.copy() == {f"ES-ORDERS/{first.instance_id}": "OUT_OF_SERVICE"}
    assert [m["version"] for m in deltas] == sorted(m["version"] for m in deltas)


def test_eventsource_cut_off_resumes_without_a_snapshot_and_misses_nothing(node, tracker, log_dir):
    proxy = FaultProxy(node.port, "es->node").start()
    try:
        follower = tracker.add(Follower(f"http://{HOST}:{proxy.port}/eureka/push", log_dir))
        wait_until("a snapshot", lambda: any(m["event"] == "snapshot" for m in follower.messages()), DEADLINE)
        proxy.partition()
        made = [cl.new_instance("ES-BILLING") for _ in range(3)]
        for inst in made:
            cl.register(node, inst)
        cl.set_status(node, made[0], "OUT_OF_SERVICE")
        wait_until("the stream broke", lambda: any("error" in line for line in follower.lines()), DEADLINE)
        proxy.pass_through()
        wait_until("the copy is the registry again", lambda: follower.copy() == registry_statuses(node),
                   DEADLINE, interval=0.2, logs=[follower.proc])
        messages = follower.messages()
        assert [m["event"] for m in messages].count("snapshot") == 1, "resumed, not started again"
        assert all(m["hashOk"] for m in messages if m["event"] == "delta"), messages
        assert sum(1 for line in follower.lines() if line.get("open")) >= 2, "it reconnected"
    finally:
        proxy.close()
