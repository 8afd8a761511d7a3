"""Randomized fault runs, short CI mode (interop/fault; the long runs are interop/fault/run.py).

Three Heureka nodes, every peer link through a fault proxy, ~60 Eureka-like client instances, a
nemesis drawn from each seed (kills, pauses, partitions, cut and black-holed links), then a heal
and a check of the history against the model in interop/fault/checker.py. Each seed is printed,
so a failure can be replayed: ``python3 interop/fault/run.py --seeds N --duration 45
--anti-entropy-ms 2000`` (with ``--namespaces 2`` for the namespaced seeds).

The namespaced seeds split the clients over two namespaces: half in ``default`` through
``/eureka``, half in ``team-a`` through ``/ns/team-a/eureka``, the same four app names in both,
every client, poller and push follower using its namespace's URLs only. Each namespace's history
is checked against the model on its own (nothing acknowledged lost, no cancel undone, every node
the same), and no registry read, digest, final view or push copy of one namespace may list an
instance of the other (property 5).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault.run import Options, run_seed  # noqa: E402
from support import procs  # noqa: E402

# (seed, namespaces), about 46 s each: one run with every client in the default namespace, and
# two across two namespaces, which write the default namespace too under the same nemesis and
# checker.
RUNS = [(1, 1), (1501, 2), (1502, 2)]
DURATION = 45.0
ANTI_ENTROPY_MS = 2000
# The two runs that test the checker itself (no nemesis): long enough for every client to
# register, renew and be read a few times, and for the self-test's injections at half-time.
CHECKER_RUN_S = 15.0


@pytest.mark.parametrize("seed,namespaces", RUNS)
def test_random_faults_keep_each_namespace_to_the_model_and_cross_nothing(seed, namespaces, tmp_path):
    binary = procs.HeurekaServer.binary()
    if not binary.exists():
        pytest.fail(f"Heureka binary {binary} not found: build it or set HEUREKA_BIN", pytrace=False)
    lines: list[str] = []

    def log(msg: str) -> None:
        lines.append(msg)
        print(msg, flush=True)

    print(f"fault run: seed {seed}, {namespaces} namespace(s), {DURATION:.0f}s, "
          f"anti-entropy {ANTI_ENTROPY_MS} ms", flush=True)
    res = run_seed(seed, str(binary), Options(duration=DURATION, anti_entropy_ms=ANTI_ENTROPY_MS,
                                              log_dir=tmp_path, namespaces=namespaces), log=log)
    if res.errors:      # infrastructure, not the model: fail with what went wrong
        pytest.fail(f"seed {seed}: infrastructure errors: {res.errors}", pytrace=False)
    if namespaces > 1:
        assert [ns["name"] for ns in res.namespaces] == ["default", "team-a"]
        assert all(ns["live"] > 0 and ns["reads"] > 0 for ns in res.namespaces), res.namespaces
    replay = f"interop/fault/run.py --seeds {seed} --duration {DURATION:.0f} --anti-entropy-ms {ANTI_ENTROPY_MS}"
    if namespaces > 1:
        replay += f" --namespaces {namespaces}"
    assert not res.violations, (f"seed {seed}: {len(res.violations)} violation(s) (replay: python3 "
                                f"{replay})\n" + "\n".join(lines))


def test_a_calm_run_has_no_violations(tmp_path):
    """Nemesis off: whatever the binary, nothing may be reported (the checker does not over-report)."""
    res = run_seed(101, str(procs.HeurekaServer.binary()),
                   Options(duration=CHECKER_RUN_S, anti_entropy_ms=ANTI_ENTROPY_MS, log_dir=tmp_path, faults=False))
    assert not res.errors and not res.violations, [v.render() for v in res.violations]
    assert res.convergence_s is not None


def test_the_checker_sees_a_cancel_undone_behind_its_back(tmp_path):
    """--self-test: a cancelled instance registered again through a peer batch must be reported,
    and so must a push delta one follower did not apply."""
    res = run_seed(102, str(procs.HeurekaServer.binary()),
                   Options(duration=CHECKER_RUN_S, anti_entropy_ms=ANTI_ENTROPY_MS, log_dir=tmp_path, faults=False,
                           self_test=True))
    assert not res.errors
    props = {v.prop for v in res.violations}
    assert "cancel-undone" in props, [v.render() for v in res.violations]
    assert "push-hashcode" in props, [v.render() for v in res.violations]
