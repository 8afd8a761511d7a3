"""Persistence across a registry restart (issue 22) with real clients: a Spring Boot consumer
(interop/java/spring-client) calls a Spring Boot provider by name through Spring Cloud
LoadBalancer every 100 ms while the single Heureka node they both use is killed and started
again on the same port.

Both apps run at Spring's default client settings (heartbeat 30 s, fetch 30 s: ``DEFAULTS``;
Spring Cloud LoadBalancer's cache is at its default 35 s). Per scenario:

* ``off`` (no ``heureka.persistence.dir``, the default): the node comes back empty. The
  consumer's next fetch empties its DiscoveryClient; once the load balancer's cache expires it
  finds no instance ("No instances available") until the provider's next heartbeat (404, so it
  registers again) has reached the consumer through its following fetch. The test asserts at
  least one such failure and prints how many and for how long: the contrast.
* ``on-sigkill`` / ``on-sigterm`` (``--heureka.persistence.dir``): the node is killed with that
  signal and started at once with the same directory. Before a SIGKILL the test waits until
  nothing is pending (``heureka_persistence_pending_records`` 0, the default 1 s flush
  interval); the SIGTERM node flushes only every ``SIGTERM_FLUSH_INTERVAL``, so both
  registrations are still pending when it gets the signal: what it restores is what it flushed
  on the way down. The node restores the registry ("registry restored" with ``instances=2``),
  the clients' heartbeats get 200 (``heureka_registrations_total{origin="client"}`` stays 0 on
  the restarted node, while ``heureka_renewals_total`` shows their heartbeats), their delta
  fetches match their own ``apps__hashcode`` (the node's access log shows no full fetch by a
  client) and not one call fails.

When the node is restarted matters: an empty registry only hurts when the consumer fetches from
it before the provider's heartbeat has re-registered the provider, and the consumer only sees
that when its load balancer cache expires between that fetch and the next one (Spring Cloud
LoadBalancer does not serve an empty cached list: it asks the DiscoveryClient again on every
call). So each scenario measures the provider's heartbeat phase and the consumer's fetch phase
(its heartbeat phase: Eureka's client schedules both timers together, with the same 30 s)
from the leases in the registry, and the load balancer's cache phase from the consumer's first
call, and restarts the node at a moment where an empty registry is sure to cost failures (the
restart placed a few seconds before one of the consumer's fetches, the provider's heartbeat
after that fetch, a cache expiry in between). The "on" scenarios restart at such a moment too.
To keep the provider's heartbeat and the consumer's fetches apart (both timers start when the
client starts), the consumers are started after the providers are up.

The scenarios run side by side (each its own node and two JVMs), so the module takes about one
scenario's time. Every wait is a bounded poll, except the observation
window after the restart, which is what is measured.
"""
from __future__ import annotations

import re
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

import pytest

from support import procs, wire
from support.procs import wait_until

# Spring Cloud's defaults, written out: the spring-client app's application.yml has fast test
# timings, which the apps here must not have.
DEFAULTS = {
    "eureka.instance.lease-renewal-interval-in-seconds": "30",
    "eureka.instance.lease-expiration-duration-in-seconds": "90",
    "eureka.client.registry-fetch-interval-seconds": "30",
    "eureka.client.initial-instance-info-replication-interval-seconds": "40",
    "eureka.client.instance-info-replication-interval-seconds": "30",
}
HEARTBEAT_S = 30.0
FETCH_S = 30.0
LB_CACHE_S = 35.0            # spring.cloud.loadbalancer.cache.ttl, its default
CALL_INTERVAL_MS = 100
# A reload of the load balancer's cache happens at the first call after the entry expired
PERIOD_SLACK_S = 0.05
# The node is down from the signal until it answers again; no heartbeat or fetch may fall in
# there (it would fail and move that client's timeline by 30 s), nor just before the signal
RESTART_ROOM_S = 3.5
QUIET_BEFORE_S = 2.5
# The consumer's first fetch from the restarted node comes this much before the provider's
# heartbeat at least; the cache expiry between the consumer's two fetches this far from each
MARGIN_S = 2.0
TAIL_S = 6.0                 # a cache expiry at least this long before the second fetch
PLAN_HORIZON_S = 110.0
STARTUP_DEADLINE = 180.0     # six Spring JVMs on two cores, staggered
PHASE_DEADLINE = 75.0        # each app renews its lease within 30 s of its client starting
WINDOW_MIN_S = 65.0          # the observation window: at least this long after the signal
PENDING_DEADLINE = 10.0
POLL_S = 0.25
# The SIGTERM node's flush interval: longer than the whole module, so nothing reaches the disk
# but through the flush at shutdown
SIGTERM_FLUSH_INTERVAL = "10m"

pytestmark = pytest.mark.timeout(900)


# ---------------------------------------------------------------------------------------
# Reading the processes
# ---------------------------------------------------------------------------------------
def metric(server: procs.RegistryServer, name: str, **labels: str) -> Optional[float]:
    """One sample of ``/actuator/prometheus`` (None: absent)."""
    r = wire.get(f"http://{procs.HOST}:{server.port}/actuator/prometheus", timeout=5)
    assert r.status == 200, f"GET /actuator/prometheus -> {r.status}"
    want = [f'{k}="{v}"' for k, v in labels.items()]
    for line in r.text.splitlines():
        if line.startswith(name) and line[len(name):len(name) + 1] in ("{", " "):
            if all(w in line for w in want):
                return float(line.rsplit(" ", 1)[1])
    return None


def lease(server: procs.RegistryServer, app: procs.SpringClient) -> Optional[dict]:
    inst = server.get_instance(app.registry_app, app.instance_id)
    return inst["leaseInfo"] if inst else None


def last_renewal_s(server: procs.RegistryServer, app: procs.SpringClient) -> Optional[float]:
    """When the app's last heartbeat reached the node (epoch s); None until it renewed once."""
    info = lease(server, app)
    if not info:
        return None
    renewed, registered = int(info["lastRenewalTimestamp"]), int(info["registrationTimestamp"])
    return renewed / 1000 if renewed > registered else None


def calls(consumer: procs.SpringClient) -> dict:
    return consumer.get_json("/calls")


def none_errors(summary: dict) -> int:
    """Calls that never got an address from the load balancer ("No instances available")."""
    return int(summary["targets"].get("none", {}).get("errors", 0))


def provider_calls_ok(summary: dict, provider: procs.SpringClient) -> int:
    t = summary["targets"].get(f"{procs.HOST}:{provider.port}", {})
    return int(t.get("calls", 0)) - int(t.get("errors", 0))


# ---------------------------------------------------------------------------------------
# When to restart
# ---------------------------------------------------------------------------------------
def _next(phase: float, period: float, after: float) -> float:
    """The first time ``phase + k * period`` (any whole k) strictly after ``after``."""
    return phase + (int((after - phase) // period) + 1) * period


def _any_in(phase: float, period: float, lo: float, hi: float) -> bool:
    return _next(phase, period, lo) <= hi


@dataclass
class Plan:
    kill_at: float           # epoch s
    first_fetch: float       # the consumer's first fetch from the restarted node
    heartbeat: float         # the provider's first heartbeat to the restarted node
    second_fetch: float      # the consumer's first fetch after that heartbeat
    expiry: float            # a load balancer cache expiry between the two fetches
    adversarial: bool = True

    def describe(self) -> str:
        rel = lambda t: f"{t - self.kill_at:+.1f} s"
        return (f"restart at T; consumer fetches at T{rel(self.first_fetch)} and T{rel(self.second_fetch)}, "
                f"provider heartbeat at T{rel(self.heartbeat)}, load-balancer cache expiry at "
                f"T{rel(self.expiry)}" + ("" if self.adversarial else " (no moment found where an empty "
                                                                       "registry must cost failures)"))


def plan_restart(now: float, heartbeat_phase: float, fetch_phase: float, lb_phase: float) -> Plan:
    """The first moment after ``now`` at which restarting an empty node must cost the consumer
    failures (see the module doc); with persistence nothing may fail then either."""
    lb_period = LB_CACHE_S + PERIOD_SLACK_S
    t = now + 3.0
    while t < now + PLAN_HORIZON_S:
        quiet = (not _any_in(heartbeat_phase, HEARTBEAT_S, t - QUIET_BEFORE_S, t + RESTART_ROOM_S)
                 and not _any_in(fetch_phase, FETCH_S, t - QUIET_BEFORE_S, t + RESTART_ROOM_S))
        if quiet:
            first = _next(fetch_phase, FETCH_S, t + RESTART_ROOM_S)
            beat = _next(heartbeat_phase, HEARTBEAT_S, t + RESTART_ROOM_S)
            if beat >= first + MARGIN_S and not _any_in(fetch_phase, FETCH_S, beat - MARGIN_S, beat + MARGIN_S):
                second = _next(fetch_phase, FETCH_S, beat)
                expiry = _next(lb_phase, lb_period, first + MARGIN_S)
                if expiry <= second - TAIL_S:
                    return Plan(t, first, beat, second, expiry)
        t += 0.1
    first = _next(fetch_phase, FETCH_S, now + 5 + RESTART_ROOM_S)
    beat = _next(heartbeat_phase, HEARTBEAT_S, now + 5 + RESTART_ROOM_S)
    return Plan(now + 5, first, beat, _next(fetch_phase, FETCH_S, beat),
                _next(lb_phase, lb_period, first), adversarial=False)


# ---------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------
@dataclass
class Scenario:
    label: str
    persistence: bool
    sig: int
    server: procs.HeurekaServer = None
    provider: procs.SpringClient = None
    consumer: procs.SpringClient = None
    plan: Optional[Plan] = None
    error: Optional[BaseException] = None
    done: threading.Event = field(default_factory=threading.Event)
    # measured
    killed_at: float = 0.0
    down_s: float = 0.0
    pending_before: Optional[float] = None
    calls: int = 0
    no_instance: int = 0
    other: int = 0
    errors_seen: dict = field(default_factory=dict)     # lastError message -> times seen
    outage: Optional[tuple[float, float]] = None        # first and last no-instance failure (epoch s)
    discovery_gaps: list = field(default_factory=list)  # [from, to] the DiscoveryClient lists no provider
    registrations: Optional[float] = None
    renewals: Optional[float] = None
    restored_line: str = ""
    delta_fetches: int = 0      # GET /eureka/apps/delta answered by the restarted node
    full_fetches: int = 0       # GET /eureka/apps/ by the clients (after a delta's hashcode mismatch)
    window_s: float = 0.0

    @property
    def outage_s(self) -> float:
        return 0.0 if not self.outage else self.outage[1] - self.outage[0] + CALL_INTERVAL_MS / 1000

    def figures(self) -> str:
        gaps = ", ".join(f"T{a - self.killed_at:+.1f}..T{(b or 0) - self.killed_at:+.1f} s" if b else
                         f"T{a - self.killed_at:+.1f} s..(end)" for a, b in self.discovery_gaps) or "none"
        outage = (f"{self.outage_s:.1f} s (T{self.outage[0] - self.killed_at:+.1f} to "
                  f"T{self.outage[1] - self.killed_at:+.1f} s)") if self.outage else "none"
        return (f"[{self.label}] {signal.Signals(self.sig).name}, node down {self.down_s:.2f} s; "
                f"{self.plan.describe() if self.plan else '(no plan)'}\n"
                f"[{self.label}] window {self.window_s:.0f} s: {self.calls} calls, {self.no_instance} "
                f"'no instances' failures, {self.other} other failures; outage {outage}; "
                f"DiscoveryClient without the provider: {gaps}; restarted node: "
                f"registrations(client)={self.registrations}, renewals(client)={self.renewals}, "
                f"delta fetches={self.delta_fetches}, full fetches={self.full_fetches}, "
                f"pending before the signal={self.pending_before}; "
                f"last errors seen by the polls: {self.errors_seen or 'none'}"
                + (f"\n[{self.label}] {self.restored_line}" if self.restored_line else ""))

    # -- the run --------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # noqa: BLE001 - reported by the scenario's test
            self.error = exc
        finally:
            self.done.set()

    def _logs(self):
        return [self.server.proc, self.provider.proc, self.consumer.proc]

    def _run(self) -> None:
        srv, provider, consumer = self.server, self.provider, self.consumer
        wait_until(f"[{self.label}] the consumer's DiscoveryClient lists the provider",
                   lambda: [i["instanceId"] for i in consumer.instances_of(provider.vip)] == [provider.instance_id],
                   STARTUP_DEADLINE, interval=0.5, logs=self._logs())
        # The load balancer caches the list at the first call and again at the first call after
        # each expiry: the first call fixes its phase.
        r = wire.request("POST", consumer.local(f"/calls/start?service={provider.vip}&intervalMs={CALL_INTERVAL_MS}"),
                         {"Accept": "application/json"}, b"", timeout=10)
        assert r.status == 200, f"[{self.label}] POST /calls/start -> {r.status}: {r.text[:300]}"
        first = wait_until(f"[{self.label}] the consumer's first call", lambda: calls(consumer)["total"] >= 1 and
                           calls(consumer), 60, interval=0.02, logs=self._logs())
        started = [t for t in first["targets"].values() if t.get("lastMs")]
        lb_phase = max(t["lastMs"] for t in started) / 1000 - (first["total"] - 1) * (CALL_INTERVAL_MS / 1000 + 0.005)
        wait_until(f"[{self.label}] the consumer calls the provider successfully",
                   lambda: provider_calls_ok(calls(consumer), provider) > 0, 60, interval=0.2, logs=self._logs())
        assert calls(consumer)["errors"] == 0, f"[{self.label}] calls failed before the restart: {calls(consumer)}"
        # Both clients' timers: the provider's heartbeat, the consumer's fetch (= its heartbeat)
        wait_until(f"[{self.label}] the provider and the consumer have each renewed their lease once",
                   lambda: last_renewal_s(srv, provider) and last_renewal_s(srv, consumer), PHASE_DEADLINE,
                   interval=0.5, logs=self._logs())
        self.plan = plan = plan_restart(time.time(), last_renewal_s(srv, provider), last_renewal_s(srv, consumer),
                                        lb_phase)
        print(f"[{self.label}] plan: {plan.describe()} (in {plan.kill_at - time.time():.0f} s)", flush=True)
        # waiting for the planned moment (both apps and the node must stay up meanwhile)
        while time.time() < plan.kill_at:
            for p in self._logs():
                p.assert_alive()
            time.sleep(min(0.5, max(0.0, plan.kill_at - time.time())))
        if self.persistence and self.sig == signal.SIGKILL:
            wait_until(f"[{self.label}] nothing pending on disk (heureka_persistence_pending_records 0)",
                       lambda: metric(srv, "heureka_persistence_pending_records") == 0,
                       PENDING_DEADLINE, interval=0.1, logs=[srv.proc])
        if self.persistence:
            self.pending_before = metric(srv, "heureka_persistence_pending_records")
        before = calls(consumer)
        self.killed_at = time.time()
        if self.sig == signal.SIGKILL:
            srv.proc.kill()
        else:
            srv.proc.stop(timeout=15, sig=self.sig)
        srv.start()
        self.down_s = time.time() - self.killed_at
        self._observe(before, end=max(self.killed_at + WINDOW_MIN_S, plan.second_fetch + 5.0))
        self.registrations = metric(srv, "heureka_registrations_total", origin="client")
        self.renewals = metric(srv, "heureka_renewals_total", origin="client")
        text = srv.proc.log_paths[-1].read_text(errors="replace")
        self.restored_line = next((line for line in text.splitlines() if "registry restored" in line), "")
        # the access log of the restarted node; its first full read is the harness's readiness poll
        answered = re.findall(r'method="GET" uri=(/eureka/apps(?:/|/delta)?) status=200', text)
        self.delta_fetches = answered.count("/eureka/apps/delta")
        self.full_fetches = max(0, len(answered) - self.delta_fetches - 1)
        for p in (provider, consumer):
            p.proc.assert_alive()
        print(self.figures(), flush=True)

    def _observe(self, before: dict, end: float) -> None:
        """Poll the consumer until ``end``: its calls and its DiscoveryClient."""
        consumer, provider = self.consumer, self.provider
        base_none, seen_none = none_errors(before), none_errors(before)
        last = before
        gap_from: Optional[float] = None
        while True:
            now = time.time()
            try:
                summary = calls(consumer)
                last = summary
                n = none_errors(summary)
                if n > seen_none:
                    last_ms = summary["targets"]["none"]["lastErrorMs"] / 1000
                    if self.outage is None:
                        first = last_ms - (n - seen_none - 1) * CALL_INTERVAL_MS / 1000
                        self.outage = (first, last_ms)
                    else:
                        self.outage = (self.outage[0], last_ms)
                    seen_none = n
                if summary["errors"] > before["errors"] and summary["lastError"]:
                    self.errors_seen[summary["lastError"]] = self.errors_seen.get(summary["lastError"], 0) + 1
                listed = [i["instanceId"] for i in consumer.instances_of(provider.vip)]
                if provider.instance_id not in listed and gap_from is None:
                    gap_from = now
                elif provider.instance_id in listed and gap_from is not None:
                    self.discovery_gaps.append((gap_from, now))
                    gap_from = None
            except (OSError, AssertionError, ValueError) as exc:
                self.errors_seen[f"(probe) {type(exc).__name__}: {exc}"] = 1
            if now >= end:
                break
            time.sleep(POLL_S)
        if gap_from is not None:
            self.discovery_gaps.append((gap_from, None))
        self.window_s = time.time() - self.killed_at
        self.calls = last["total"] - before["total"]
        self.no_instance = none_errors(last) - base_none
        self.other = (last["errors"] - before["errors"]) - self.no_instance


SCENARIOS = {
    "test_persistence_off_a_restarted_node_is_empty_and_the_consumer_finds_no_instance": ("off", False, signal.SIGKILL),
    "test_persistence_on_sigkill_the_consumer_never_misses_the_provider": ("on-sigkill", True, signal.SIGKILL),
    "test_persistence_on_sigterm_the_consumer_never_misses_the_provider": ("on-sigterm", True, signal.SIGTERM),
}


@pytest.fixture(scope="module")
def scenarios(request, server_factory, client_factory, tmp_path_factory) -> dict:
    """The selected scenarios, run side by side; each test reads its own."""
    selected = {item.originalname for item in request.session.items}
    chosen = [Scenario(*v) for name, v in SCENARIOS.items()
              if name in selected]
    for s in chosen:
        settings = {"heureka.access-log": "true"}
        if s.persistence:
            settings["heureka.persistence.dir"] = str(tmp_path_factory.mktemp(f"registry-{s.label}"))
        if s.persistence and s.sig == signal.SIGTERM:
            settings["heureka.persistence.flush-interval"] = SIGTERM_FLUSH_INTERVAL
        s.server = server_factory("heureka", settings=settings, start=False)
        s.server.proc.name = f"heureka-{s.label}"          # one log per node
    procs.start_all([s.server for s in chosen])
    # providers first: the consumers' timers then start well after the providers' (module doc)
    for s in chosen:
        s.provider = client_factory("spring", f"persist-provider-{s.label}", s.server, start=False,
                                    settings=dict(DEFAULTS))
    procs.start_all([s.provider for s in chosen])
    for s in chosen:
        s.consumer = client_factory("spring", f"persist-consumer-{s.label}", s.server, start=False,
                                    settings=dict(DEFAULTS))
    procs.start_all([s.consumer for s in chosen])
    threads = [threading.Thread(target=s.run, name=f"scenario-{s.label}", daemon=True) for s in chosen]
    for t in threads:
        t.start()
    return {s.label: s for s in chosen}


def finished(scenarios: dict, label: str) -> Scenario:
    s = scenarios[label]
    assert s.done.wait(PLAN_HORIZON_S + PHASE_DEADLINE + STARTUP_DEADLINE + 2 * WINDOW_MIN_S), \
        f"[{label}] did not finish"
    if s.error is not None:
        raise s.error
    return s


# ---------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------
def test_persistence_off_a_restarted_node_is_empty_and_the_consumer_finds_no_instance(scenarios):
    s = finished(scenarios, "off")
    assert s.plan.adversarial, f"no restart moment where an empty registry must cost failures\n{s.figures()}"
    assert s.no_instance >= 1, f"the empty restarted node cost the consumer nothing?\n{s.figures()}"
    assert any("No instances available" in e for e in s.errors_seen), s.figures()
    assert s.registrations is not None and s.registrations >= 2, \
        f"the provider and the consumer must have registered again with the empty node\n{s.figures()}"


def _assert_never_missed(s: Scenario) -> None:
    if s.sig == signal.SIGKILL:
        assert s.pending_before == 0, f"records still pending at the SIGKILL\n{s.figures()}"
    assert s.plan.adversarial, f"no restart moment where an empty registry would cost failures\n{s.figures()}"
    assert s.no_instance == 0 and s.other == 0, f"calls failed across the restart\n{s.figures()}"
    assert s.calls >= WINDOW_MIN_S * 1000 / CALL_INTERVAL_MS / 2, f"too few calls in the window\n{s.figures()}"
    assert not s.discovery_gaps, f"the consumer's DiscoveryClient lost the provider\n{s.figures()}"
    assert s.registrations == 0, f"a client registered again after the restart (a heartbeat got 404?)\n{s.figures()}"
    assert s.renewals is not None and s.renewals >= 2, \
        f"the window should have seen both apps' heartbeats to the restarted node\n{s.figures()}"
    assert s.delta_fetches >= 4, f"the window should have seen both apps' fetches (two each)\n{s.figures()}"
    assert s.full_fetches == 0, \
        f"a client fetched the full registry: a delta's apps__hashcode did not match its own\n{s.figures()}"
    m = re.search(r"instances\D{0,3}(\d+)", s.restored_line)
    assert m and int(m.group(1)) == 2, f"expected a 'registry restored' log line with instances=2\n{s.figures()}"
    for app in (s.provider, s.consumer):
        inst = s.server.get_instance(app.registry_app, app.instance_id)
        assert inst is not None and inst["status"] == "UP", f"{app.instance_id}: {inst}"


def test_persistence_on_sigkill_the_consumer_never_misses_the_provider(scenarios):
    _assert_never_missed(finished(scenarios, "on-sigkill"))


def test_persistence_on_sigterm_the_consumer_never_misses_the_provider(scenarios):
    s = finished(scenarios, "on-sigterm")
    assert s.pending_before is not None and s.pending_before >= 2, \
        f"both registrations should have been pending at the SIGTERM (flush interval {SIGTERM_FLUSH_INTERVAL})\n" \
        f"{s.figures()}"
    _assert_never_missed(s)
