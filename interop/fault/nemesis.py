"""The nemesis: a schedule of faults drawn from a seed, and the thread that applies it.

Faults (each lasts a few seconds, then heals):

* ``kill N``            SIGKILL node N; at the end start it again (same port, same settings: it
                        comes back empty and syncs from its peers).
* ``pause N``           SIGSTOP node N; at the end SIGCONT. Requests to it hang (clients time out).
* ``isolate N``         partition N from the other two: every link between them resets
                        connections, both directions.
* ``cut I->J``          node I's link to node J resets connections (one direction only).
* ``blackhole I->J``    node I's link to node J accepts and never answers.

At most one process fault (kill / pause) is active at a time; link faults overlap with anything,
including each other. A link's mode is derived from every fault holding it (partition wins over
black hole), so the end of one fault never heals a link another fault still holds. All faults end
by the end of the active phase; ``heal_all`` then makes sure of it (SIGCONT, restart, PASS).
"""
from __future__ import annotations

import random
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from support.proxy import BLACKHOLE, PARTITION, PASS

PROCESS_FAULTS = ("kill", "pause")
KINDS = ("kill", "pause", "isolate", "cut", "blackhole")
WEIGHTS = (2, 2, 3, 2, 2)


@dataclass
class Fault:
    start: float
    end: float
    kind: str
    target: tuple                   # (node,) or (from, to)
    applied: Optional[float] = None     # run time it was applied
    healed: Optional[float] = None
    error: str = ""

    def describe(self, names: list[str]) -> str:
        t = (names[self.target[0]] if len(self.target) == 1
             else f"{names[self.target[0]]}->{names[self.target[1]]}")
        actual = ""
        if self.applied is not None:
            actual = f" (applied {self.applied:.1f}, healed {self.healed:.1f})" if self.healed is not None \
                else f" (applied {self.applied:.1f})"
        err = f" ERROR {self.error}" if self.error else ""
        return f"{self.start:6.1f}s-{self.end:6.1f}s {self.kind:9} {t}{actual}{err}"

    def to_json(self, names: list[str]) -> dict:
        return {"start": round(self.start, 3), "end": round(self.end, 3), "kind": self.kind,
                "target": [names[i] for i in self.target],
                "applied": self.applied, "healed": self.healed, "error": self.error}


def schedule(rng: random.Random, duration: float, n_nodes: int = 3, warmup: float = 6.0,
             mean_gap: float = 4.0, min_len: float = 2.0, max_len: float = 8.0) -> list[Fault]:
    """Faults starting after ``warmup``, all over by ``duration`` - 1 s."""
    faults: list[Fault] = []
    t = warmup
    proc_busy_until = 0.0
    last_end = duration - 1.0
    while True:
        t += rng.expovariate(1.0 / mean_gap)
        if t > last_end - min_len:
            break
        kind = rng.choices(KINDS, WEIGHTS)[0]
        if kind in PROCESS_FAULTS and t < proc_busy_until:
            kind = rng.choice(("isolate", "cut", "blackhole"))
        end = min(t + rng.uniform(min_len, max_len), last_end)
        if kind in ("cut", "blackhole"):
            a = rng.randrange(n_nodes)
            b = rng.choice([j for j in range(n_nodes) if j != a])
            target = (a, b)
        else:
            target = (rng.randrange(n_nodes),)
        if kind in PROCESS_FAULTS:
            proc_busy_until = end + 1.5      # room for a restart before the next one
        faults.append(Fault(round(t, 2), round(end, 2), kind, target))
    return faults


class Nemesis(threading.Thread):
    """Applies a schedule against a support.cluster.Cluster (proxied) relative to ``clock()``."""

    def __init__(self, cluster, faults: list[Fault], clock: Callable[[], float], log: Callable[[str], None]):
        super().__init__(name="nemesis", daemon=True)
        self.cluster = cluster
        self.faults = faults
        self.clock = clock
        self.log = log
        self.names = [n.node_name for n in cluster.nodes]
        self.incarnations = [1] * len(cluster.nodes)
        self.lock = threading.Lock()              # node processes and proxy modes
        self.link_holds: dict[tuple, list] = {k: [] for k in cluster.proxies}
        self.stopped: set[int] = set()
        self.killed: set[int] = set()
        self.stop_event = threading.Event()
        self.errors: list[str] = []

    def outages(self) -> list:
        """The faults as applied, for the checker (checker.Outage)."""
        from .checker import Outage
        out = []
        for f in self.faults:
            if f.applied is None:
                continue
            end = f.healed if f.healed is not None else float("inf")
            if f.kind in ("kill", "pause"):
                out.append(Outage(f.kind, f.applied, end, node=self.names[f.target[0]]))
            else:
                for a, b in self._links(f):
                    out.append(Outage("link", f.applied, end, link=(self.names[a], self.names[b])))
        return out

    def incarnation(self, i: int) -> int:
        return self.incarnations[i]

    # -- links -----------------------------------------------------------------------------
    def _links(self, f: Fault) -> list[tuple]:
        if f.kind == "isolate":
            n = f.target[0]
            return [k for k in self.cluster.proxies if n in k]
        return [f.target]

    def _refresh(self, link: tuple) -> None:
        modes = [m for _, m in self.link_holds[link]]
        want = PARTITION if PARTITION in modes else BLACKHOLE if BLACKHOLE in modes else PASS
        p = self.cluster.proxies[link]
        if p.mode != want:
            p.set_mode(want)

    # -- one fault ---------------------------------------------------------------------------
    def begin(self, f: Fault) -> None:
        with self.lock:
            node = self.cluster.nodes[f.target[0]]
            if f.kind == "kill":
                self.incarnations[f.target[0]] += 1
                node.proc.kill()
                self.killed.add(f.target[0])
            elif f.kind == "pause":
                node.proc.send_signal(signal.SIGSTOP)
                self.stopped.add(f.target[0])
            else:
                mode = BLACKHOLE if f.kind == "blackhole" else PARTITION
                for link in self._links(f):
                    self.link_holds[link].append((id(f), mode))
                    self._refresh(link)

    def end(self, f: Fault) -> None:
        with self.lock:
            i = f.target[0]
            node = self.cluster.nodes[i]
            if f.kind == "kill":
                self._restart(i)
            elif f.kind == "pause":
                node.proc.send_signal(signal.SIGCONT)
                self.stopped.discard(i)
            else:
                for link in self._links(f):
                    self.link_holds[link] = [h for h in self.link_holds[link] if h[0] != id(f)]
                    self._refresh(link)

    def _restart(self, i: int) -> None:
        node = self.cluster.nodes[i]
        node.start()                     # same port, same settings; waits until it answers reads
        self.killed.discard(i)

    def run(self) -> None:
        events = []
        for f in self.faults:
            events.append((f.start, 1, f))
            events.append((f.end, 0, f))    # at equal times, end before begin
        events.sort(key=lambda e: (e[0], e[1]))
        for at, is_begin, f in events:
            delay = at - self.clock()
            if delay > 0 and self.stop_event.wait(delay):
                return
            try:
                if is_begin:
                    self.begin(f)
                    f.applied = self.clock()
                    self.log(f"nemesis {f.applied:7.2f}s  begin {f.describe(self.names)}")
                else:
                    self.end(f)
                    f.healed = self.clock()
                    self.log(f"nemesis {f.healed:7.2f}s  end   {f.describe(self.names)}")
            except Exception as exc:  # noqa: BLE001 - recorded; the heal retries
                f.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                self.errors.append(f"{f.kind} {f.target}: {f.error}")
                self.log(f"nemesis: {f.kind} {f.target} failed: {f.error}")

    def heal_all(self) -> None:
        """SIGCONT every paused node, restart every killed one, every link PASS."""
        self.stop_event.set()
        if self.is_alive():
            self.join(60)
        with self.lock:
            for i in list(self.stopped):
                self.cluster.nodes[i].proc.send_signal(signal.SIGCONT)
                self.stopped.discard(i)
            for link in self.link_holds:
                self.link_holds[link] = []
                self._refresh(link)
            for i, node in enumerate(self.cluster.nodes):
                if not node.proc.running():
                    if i not in self.killed:
                        self.errors.append(f"{node.node_name} had exited on its own")
                        self.incarnations[i] += 1
                    self._restart(i)
