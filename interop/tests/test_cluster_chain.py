"""A chain of three nodes converges: a lists b, b lists c, c lists no peer.

Eureka replicates one hop, and only to the peers a server lists (protocol spec §7.7), so a Java
chain never carries a's registrations to c nor c's to a. Heureka promises that its anti-entropy
(each node comparing its registry with the peers it lists and repairing both sides) makes such
a chain converge within the anti-entropy interval. These tests are heureka_only: against a
Java chain they are strict xfails, which shows that they detect the divergence.
"""
from __future__ import annotations

import pytest

from support import cluster as cl
from support.cluster import new_instance, wait_converged

DEADLINE = cl.ANTI_ENTROPY_MS / 1000 + cl.HEAL_SLACK
JAVA = "Java replicates one hop and only to the peers it lists: a chain never converges"
HEAD, MIDDLE, TAIL = 0, 1, 2


@pytest.fixture(scope="module")
def chain(cluster_factory, cluster_kind):
    return cluster_factory([cluster_kind] * 3, topology="chain", label=f"{cluster_kind}-chain")


@pytest.mark.heureka_only(java=JAVA)
def test_registration_at_the_head_of_a_chain_reaches_the_tail(chain):
    inst = new_instance("chain-from-head")
    cl.register(chain[HEAD], inst)
    wait_converged(chain, f"{inst.instance_id} on every node of the chain", lambda v: v.status(inst) == "UP",
                   deadline=DEADLINE)


@pytest.mark.heureka_only(java=JAVA)
def test_writes_at_the_tail_of_a_chain_reach_the_head(chain):
    # the tail lists no peer at all: only the middle node's comparisons can carry these
    inst = new_instance("chain-from-tail")
    doomed = new_instance("chain-cancelled-at-tail")
    cl.register(chain[TAIL], inst)
    cl.register(chain[TAIL], doomed)
    cl.set_status(chain[TAIL], inst, "OUT_OF_SERVICE")
    wait_converged(chain, f"{inst.instance_id} OUT_OF_SERVICE on every node of the chain",
                   lambda v: v.status(inst) == "OUT_OF_SERVICE" and v.has(doomed), deadline=DEADLINE)
    cl.cancel(chain[TAIL], doomed)
    wait_converged(chain, f"{doomed.instance_id} cancelled on every node of the chain",
                   lambda v: not v.has(doomed) and v.status(inst) == "OUT_OF_SERVICE", deadline=DEADLINE)
