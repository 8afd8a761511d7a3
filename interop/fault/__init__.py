"""Jepsen-style randomized fault testing of a three-node Heureka cluster (issue 18, item 6).

``python3 interop/fault/run.py --help`` runs it; ``checker.py`` documents the model it checks.
The package reuses the interop suite's process and proxy helpers (interop/tests/support), so it
puts that directory on ``sys.path`` when imported.
"""
from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))
