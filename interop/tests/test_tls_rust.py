"""Heureka's own clients over HTTPS: the Rust client (its interop driver), the ``heureka`` command
line and ``heureka sidecar`` against Heureka serving TLS with a certificate of the test CA
(support/pki.py), each trusting that CA through a PKCS12 trust store as Spring's
``eureka.client.tls.*`` (or the CLI's ``--trust-store``) names it. A Spring client, trusting the
same store, discovers the app the sidecar registered.

Without the trust store, the CLI refuses the server in one line naming the unknown authority.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from support import procs
from support.pki import PASSWORD
from support.procs import HOST, wait_until
from support.rust_client import RustClient
from test_sidecar import PythonApp, Sidecar
from test_tls import client_tls, server_ssl, str_values

pytestmark = pytest.mark.tls

DEADLINE = 60.0
PATIENCE = 60.0
UNREACHABLE = 3


@pytest.fixture(scope="module")
def registry(server_factory, pki):
    """Heureka serving HTTPS from a PKCS12 key store; the suite verifies it with the test CA."""
    return server_factory("heureka", settings=str_values(server_ssl("pkcs12", pki)), tls=pki.client_context())


def trust_flags(pki) -> list[str]:
    return ["--trust-store", str(pki.ca_p12), "--trust-store-password", PASSWORD]


def cli(registry, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("EUREKA_")}
    argv = [str(procs.HeurekaServer.binary()), *args, "--eureka", registry.service_url]
    return subprocess.run(argv, capture_output=True, text=True, timeout=PATIENCE, env=env)


@pytest.fixture(scope="module")
def rust(tracker, log_dir, registry, pki):
    """The Rust client registered over HTTPS, trusting the CA through eureka.client.tls.*."""
    client = tracker.add(RustClient("rust-tls", [registry], log_dir, watch=("RUST-TLS",), extra_args=(
        "--tls", f"trust-store=file:{pki.ca_p12}", "--tls", "trust-store-type=PKCS12",
        "--tls", f"trust-store-password={PASSWORD}")))
    return client.start()


def test_rust_client_registers_over_https(registry, rust):
    wait_until("the Rust client registered UP over https",
               lambda: (registry.get_instance(rust.registry_app, rust.instance_id) or {}).get("status") == "UP",
               DEADLINE, logs=[rust.proc])


def test_rust_client_fetches_over_https(rust):
    rust.wait_event("the Rust client's copy holds itself, fetched over https",
                    lambda e: e["event"] == "refresh" and rust.instance_id in rust.up_ids(e, rust.registry_app),
                    DEADLINE)


def test_cli_lists_the_apps_over_https_with_a_trust_store(registry, rust, pki):
    wait_until("the Rust client registered", lambda: registry.get_instance(rust.registry_app, rust.instance_id),
               DEADLINE, logs=[rust.proc])
    run = cli(registry, "apps", *trust_flags(pki))
    assert run.returncode == 0, run.stderr
    assert rust.registry_app in run.stdout.split(), run.stdout


def test_cli_without_a_trust_store_names_the_unknown_authority_in_one_line(registry):
    run = cli(registry, "apps")
    assert run.returncode == UNREACHABLE, run.stderr
    assert run.stderr == (f"heureka: cannot reach {registry.service_url}: the server's certificate was issued "
                          "by an unknown authority (not in the trust store)\n"), run.stderr


@pytest.fixture(scope="module")
def sidecar(tracker, log_dir, registry, pki):
    """``heureka sidecar`` in front of the example Python app, registering over HTTPS."""
    app = tracker.add(PythonApp("tls-sidecar-app", log_dir)).start()
    sidecar = Sidecar("tls-sidecar", app, registry, log_dir)
    sidecar.proc.argv += trust_flags(pki)
    return tracker.add(sidecar).start()


def test_sidecar_registers_its_app_over_https(registry, sidecar):
    wait_until("the sidecar's app registered UP over https",
               lambda: (registry.get_instance(sidecar.registry_app, sidecar.instance_id) or {}).get("status") == "UP",
               DEADLINE, logs=[sidecar.proc])


def test_spring_client_over_https_discovers_the_sidecars_app(client_factory, registry, sidecar, pki):
    spring = client_factory("spring", "tls-rs-spring", registry, settings=client_tls(pki))
    wait_until("Spring's DiscoveryClient lists the sidecar's app (over https)",
               lambda: sidecar.instance_id in [i["instanceId"] for i in spring.instances_of(sidecar.app_name)],
               DEADLINE, logs=[spring.proc, sidecar.proc])
