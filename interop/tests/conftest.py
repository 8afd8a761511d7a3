"""Fixtures of the real-client, real-process interop suite.

``--server=heureka|java`` (or env INTEROP_SERVER) picks the registry the client tests run
against; default heureka. The differential test always runs both.
Logs of every process go to a per-module temp dir; on a failure the logs of the processes
involved are attached to the report (pytest prints them under "Captured ... log").
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import procs  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--server", action="store", default=os.environ.get("INTEROP_SERVER", "heureka"),
                     choices=["heureka", "java"],
                     help="registry the client tests run against (default: heureka)")
    parser.addoption("--diff-against", action="store", default=os.environ.get("INTEROP_DIFF_AGAINST", "heureka"),
                     choices=["heureka", "java"],
                     help="what test_differential compares with the Java reference (default: heureka; "
                          "java = a second reference server, a self-test of the harness)")
    parser.addoption("--cluster-kinds", action="store", default=os.environ.get("INTEROP_CLUSTER_KINDS", "heureka"),
                     help="comma-separated server kinds the cluster tests run on (default: heureka; "
                          "java = clusters of the real Spring Cloud Eureka server, a self-test of the "
                          "cluster tests; heureka_only tests must fail there and are strict xfails)")


@pytest.fixture(scope="session")
def server_kind(request) -> str:
    return request.config.getoption("--server")


def _check_prerequisites(kind: str) -> None:
    if kind == "heureka":
        b = procs.HeurekaServer.binary()
        if not b.exists():
            pytest.fail(f"Heureka binary {b} not found: build it (cargo build --release -p heureka) "
                        f"or set HEUREKA_BIN", pytrace=False)
    elif not procs.EUREKA_SERVER_JAR.exists():
        pytest.fail(f"{procs.EUREKA_SERVER_JAR} not found: run mvn -q -B -DskipTests package in interop/java",
                    pytrace=False)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory, request) -> Path:
    return tmp_path_factory.mktemp(request.module.__name__.replace("test_", "logs_"))


class ProcessTracker:
    """Everything started for a module; torn down (killed if need be) at module end."""

    def __init__(self):
        self.items: list = []

    def add(self, item):
        self.items.append(item)
        return item

    def procs(self) -> list:
        return [i.proc for i in self.items]

    def teardown(self):
        # clients first (graceful, so they deregister), then servers
        for item in reversed(self.items):
            try:
                if isinstance(item, procs.ClientApp):
                    item.stop(timeout=10)
                else:
                    item.stop(sig=signal.SIGTERM)
            finally:
                item.kill()   # no-op when already gone


_TRACKERS: list[ProcessTracker] = []


@pytest.fixture(scope="module")
def tracker():
    t = ProcessTracker()
    _TRACKERS.append(t)
    yield t
    _TRACKERS.remove(t)
    t.teardown()


@pytest.fixture(scope="module")
def server_factory(tracker, log_dir):
    """Start a registry of the given kind (default: the --server one); ``tls`` and ``jvm_args``
    as procs.make_server takes them."""
    def make(kind: str, port: int | None = None, settings: dict | None = None, tls=None,
             jvm_args: list[str] | None = None, start: bool = True) -> procs.RegistryServer:
        _check_prerequisites(kind)
        srv = tracker.add(procs.make_server(kind, log_dir, port, settings, tls, jvm_args))
        if start:
            srv.start()
        return srv
    return make


@pytest.fixture(scope="module")
def registry(server_factory, server_kind) -> procs.RegistryServer:
    """The registry under test for the client tests of one module."""
    return server_factory(server_kind)


@pytest.fixture(scope="module")
def client_factory(tracker, log_dir):
    def make(kind: str, name: str, server: procs.RegistryServer, metadata=None, start=True, **kw):
        """``kw``: ``cafile``, ``settings`` (see procs.ClientApp)."""
        cls = {"python": procs.PythonClient, "js": procs.JsClient, "spring": procs.SpringClient,
               "spring-push": procs.SpringPushClient}[kind]
        if kind.startswith("spring") and not cls.jar.exists():
            pytest.fail(f"{cls.jar} not found: run interop/run.sh (it builds the Spring jars)", pytrace=False)
        c = tracker.add(cls(name, server, log_dir, metadata=metadata, **kw))
        if start:
            c.start()
        return c
    return make


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and report.when in ("setup", "call") and not item.get_closest_marker("no_process_logs"):
        for t in _TRACKERS:
            for p in t.procs():
                if p.log_path is not None:
                    report.sections.append((f"process log: {p.name}", p.log_text(max_chars=6000)))


# ---------------------------------------------------------------------------------------
# Cluster tests (test_cluster*.py, test_mixed_cluster.py)
# ---------------------------------------------------------------------------------------
CLUSTER_KINDS = ("heureka", "java")


def _cluster_kinds(config) -> list[str]:
    kinds = [k.strip() for k in config.getoption("--cluster-kinds").split(",") if k.strip()]
    bad = [k for k in kinds if k not in CLUSTER_KINDS]
    if bad:
        raise pytest.UsageError(f"--cluster-kinds: unknown kind(s) {bad}; choose from {list(CLUSTER_KINDS)}")
    return kinds


def pytest_generate_tests(metafunc):
    """``cluster_kind``: the server kind of a cluster test's nodes, one module-wide cluster per kind.

    A ``heureka_only`` test checks something only Heureka promises (anti-entropy, chains);
    against Java clusters it is a strict xfail, so ``--cluster-kinds=java`` proves that it
    detects the divergence it is about.
    """
    if "cluster_kind" not in metafunc.fixturenames:
        return
    only = metafunc.definition.get_closest_marker("heureka_only")
    params = []
    for kind in _cluster_kinds(metafunc.config):
        if only and kind != "heureka":
            reason = only.kwargs.get("java", "Java Eureka does not do this: the test must detect it")
            params.append(pytest.param(kind, marks=pytest.mark.xfail(strict=True, reason=reason), id=kind))
        else:
            params.append(pytest.param(kind, id=kind))
    metafunc.parametrize("cluster_kind", params, scope="module")


def _check_cluster_prerequisites(kind: str, secure: bool = False) -> None:
    _check_prerequisites(kind)
    if kind == "java" and secure:
        from support.cluster import EUREKA_SERVER_SECURE_JAR
        if not EUREKA_SERVER_SECURE_JAR.exists():
            pytest.fail(f"{EUREKA_SERVER_SECURE_JAR} not found: run mvn -q -B -DskipTests package in interop/java",
                        pytrace=False)


@pytest.fixture(scope="module")
def cluster_factory(tracker, log_dir):
    """Build and start a support.cluster.Cluster; its nodes are torn down with the module,
    its proxies closed, and the nodes' logs attached to a failure report."""
    from support.cluster import Cluster
    made = []

    def make(kinds: list[str], start: bool = True, **kw) -> Cluster:
        for k in set(kinds):
            _check_cluster_prerequisites(k, secure=bool(kw.get("credentials")))
        c = Cluster(kinds, log_dir, **kw)
        made.append(c)
        for node in c.nodes:
            tracker.add(node)
        if start:
            c.start()
        return c

    yield make
    for c in made:
        c.close_proxies()


# ---------------------------------------------------------------------------------------
# TLS tests (test_tls.py, marker ``tls``)
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    """The test CA and its certificates in every form (support/pki.py), made once per session."""
    from support.pki import make_pki
    return make_pki(tmp_path_factory.mktemp("pki"))
