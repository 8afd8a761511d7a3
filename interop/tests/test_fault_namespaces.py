"""Randomized fault runs across two namespaces, short CI mode (interop/fault, ``--namespaces 2``).

The run of test_fault_random.py (three Heureka nodes, every peer link through a fault proxy, a
nemesis drawn from the seed) with its ~60 client instances split over two namespaces: half in
``default`` through ``/eureka``, half in ``team-a`` through ``/ns/team-a/eureka``, the same four
app names in both. Every client writes, and every poller and push follower reads, through its
namespace's URLs only. Each namespace's history is checked against the model on its own (nothing
acknowledged lost, no cancel undone, every node the same), and no registry read, digest, final
view or push copy of one namespace may list an instance of the other (property 5). Replay:
``python3 interop/fault/run.py --namespaces 2 --seeds N --duration 45 --anti-entropy-ms 2000``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault.run import Options, run_seed  # noqa: E402
from support import procs  # noqa: E402

SEEDS = [1501, 1502, 1503]      # about 46 s each
DURATION = 45.0
ANTI_ENTROPY_MS = 2000


@pytest.mark.parametrize("seed", SEEDS)
def test_random_faults_keep_each_namespace_to_the_model_and_cross_nothing(seed, tmp_path):
    binary = procs.HeurekaServer.binary()
    if not binary.exists():
        pytest.fail(f"Heureka binary {binary} not found: build it or set HEUREKA_BIN", pytrace=False)
    lines: list[str] = []

    def log(msg: str) -> None:
        lines.append(msg)
        print(msg, flush=True)

    res = run_seed(seed, str(binary), Options(duration=DURATION, anti_entropy_ms=ANTI_ENTROPY_MS,
                                              log_dir=tmp_path, namespaces=2), log=log)
    if res.errors:
        pytest.fail(f"seed {seed}: infrastructure errors: {res.errors}", pytrace=False)
    assert [ns["name"] for ns in res.namespaces] == ["default", "team-a"]
    assert all(ns["live"] > 0 and ns["reads"] > 0 for ns in res.namespaces), res.namespaces
    assert not res.violations, (f"seed {seed}: {len(res.violations)} violation(s) (replay: python3 "
                                f"interop/fault/run.py --namespaces 2 --seeds {seed} --duration {DURATION:.0f} "
                                f"--anti-entropy-ms {ANTI_ENTROPY_MS})\n" + "\n".join(lines))
