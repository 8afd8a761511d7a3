"""HTTPS: the registry serves TLS configured with Spring Boot's own keys, and the real clients and
peers talk to it over TLS, verifying its certificate with a private CA (support/pki.py).

Every server here is configured only through Spring Boot's standard keys (``server.ssl.*``,
``spring.ssl.bundle.*``) and every peer through Spring Cloud's ``eureka.client.tls.*``, as a
Spring user writes them: the same settings start the Java server and Heureka.

The server certificate is for localhost (SAN DNS:localhost, IP:127.0.0.1); URLs are
``https://localhost:PORT/eureka/``. Key stores and trust stores use the password ``changeit``.
"""
from __future__ import annotations

import http.client
import os
import shutil
import socket
import ssl
import warnings
from types import SimpleNamespace

import pytest

from support import cluster as cl
from support import procs, wire
from support.cluster import new_instance, view, wait_on_all
from support.pki import PASSWORD

pytestmark = pytest.mark.tls

DEADLINE = 60.0          # client registrations and fetches; JVM clients on a 2-core machine
HANDSHAKE_TIMEOUT = 10.0


# ---------------------------------------------------------------------------------------
# Spring Boot's keys for each form of the server's certificate
# ---------------------------------------------------------------------------------------
def server_ssl(form: str, pki, identity=None) -> dict:
    """``server.ssl.*`` (and ``spring.ssl.bundle.*``) serving ``identity`` (default pki.server)
    in the given form."""
    s = identity or pki.server
    if form == "pkcs12":
        return {"server.ssl.enabled": "true", "server.ssl.key-store": s.p12, "server.ssl.key-store-type": "PKCS12",
                "server.ssl.key-store-password": PASSWORD, "server.ssl.key-alias": s.alias}
    if form == "jks":
        return {"server.ssl.enabled": "true", "server.ssl.key-store": s.jks, "server.ssl.key-store-type": "JKS",
                "server.ssl.key-store-password": PASSWORD, "server.ssl.key-alias": s.alias,
                "server.ssl.key-password": PASSWORD}
    if form == "pem":
        return {"server.ssl.enabled": "true", "server.ssl.certificate": s.cert,
                "server.ssl.certificate-private-key": s.key}
    if form == "pem-bundle":
        return {"spring.ssl.bundle.pem.web.keystore.certificate": s.cert,
                "spring.ssl.bundle.pem.web.keystore.private-key": s.key,
                "server.ssl.bundle": "web"}
    raise ValueError(form)


def need_client_certs(pki) -> dict:
    """Mutual TLS: a client certificate signed by the test CA is required."""
    return {"server.ssl.client-auth": "need", "server.ssl.trust-store": pki.ca_p12,
            "server.ssl.trust-store-type": "PKCS12", "server.ssl.trust-store-password": PASSWORD}


def client_tls(pki, identity=None) -> dict:
    """Spring Cloud's ``eureka.client.tls.*``: trust the test CA (PKCS12 trust store), and
    present ``identity``'s certificate if given.

    The stores are Spring ``Resource``s: a bare path would be read as a servlet-context
    resource (and not found), so they carry the ``file:`` prefix, as Spring users write them."""
    s = {"eureka.client.tls.enabled": "true", "eureka.client.tls.trust-store": f"file:{pki.ca_p12}",
         "eureka.client.tls.trust-store-type": "PKCS12", "eureka.client.tls.trust-store-password": PASSWORD}
    if identity is not None:
        s.update({"eureka.client.tls.key-store": f"file:{identity.p12}", "eureka.client.tls.key-store-type": "PKCS12",
                  "eureka.client.tls.key-store-password": PASSWORD, "eureka.client.tls.key-password": PASSWORD})
    return s


def str_values(d: dict) -> dict:
    return {k: str(v) for k, v in d.items()}


def plain_url(server: procs.RegistryServer, path: str = "/apps/") -> str:
    return f"http://{procs.HOST}:{server.port}/eureka{path}"


def handshake(port: int, ctx: ssl.SSLContext, host: str = procs.TLS_HOST) -> str:
    """One TLS handshake with 127.0.0.1:port (SNI and name check: ``host``); the version agreed."""
    with socket.create_connection((procs.HOST, port), timeout=HANDSHAKE_TIMEOUT) as raw:
        with ctx.wrap_socket(raw, server_hostname=host) as tls:
            return tls.version()


def unverified() -> ssl.SSLContext:
    """A client context that checks nothing: only for waiting until a server that serves a
    certificate the tests reject has started."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def only(pki, version: ssl.TLSVersion) -> ssl.SSLContext:
    """A client context verifying with the test CA that offers ``version`` and nothing else."""
    ctx = pki.client_context()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # Python deprecates TLS < 1.2: the point
        if version < ssl.TLSVersion.TLSv1_2:
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")    # OpenSSL 3 refuses TLS < 1.2 at level >= 1
        ctx.minimum_version = version
        ctx.maximum_version = version
    return ctx


# ---------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------
def start_tls_server(server_factory, server_kind, pki, settings: dict, identity=None):
    """A lone registry serving HTTPS with ``settings``; the suite verifies it with the test CA
    (and presents ``identity``'s client certificate if given)."""
    return server_factory(server_kind, settings=str_values(settings), tls=pki.client_context(identity))


@pytest.fixture(scope="module", params=["pkcs12", "jks", "pem", "pem-bundle"])
def keystore_server(request, server_factory, server_kind, pki):
    """One server per form of its key material (started once, stopped before the next)."""
    srv = start_tls_server(server_factory, server_kind, pki, server_ssl(request.param, pki))
    yield srv
    srv.stop()
    srv.kill()


@pytest.fixture(scope="module")
def https_registry(server_factory, server_kind, pki):
    """The registry the clients use: PKCS12 key store, TLS 1.2 and 1.3 only."""
    return start_tls_server(server_factory, server_kind, pki, {
        **server_ssl("pkcs12", pki), "server.ssl.enabled-protocols": "TLSv1.2,TLSv1.3"})


@pytest.fixture(scope="module")
def tls13_registry(server_factory, server_kind, pki):
    return start_tls_server(server_factory, server_kind, pki, {
        **server_ssl("pkcs12", pki), "server.ssl.enabled-protocols": "TLSv1.3"})


@pytest.fixture(scope="module")
def mtls_registry(server_factory, server_kind, pki):
    """Client certificates required (``client-auth=need``); the suite reads as CN=reader."""
    return start_tls_server(server_factory, server_kind, pki,
                            {**server_ssl("pkcs12", pki), **need_client_certs(pki)}, identity=pki.reader)


# ---------------------------------------------------------------------------------------
# The server's certificate in every form
# ---------------------------------------------------------------------------------------
def test_server_serves_the_registry_over_https_verified_with_the_ca(keystore_server):
    r = wire.get(keystore_server.url("/apps/"), accept="application/json", context=keystore_server.tls)
    assert r.status == 200, f"GET {keystore_server.url('/apps/')} -> {r.status}: {r.text[:300]}"
    assert "applications" in r.json()


def test_plain_http_to_the_https_port_gets_no_registry(keystore_server):
    # Tomcat answers a plain request on a TLS port with a 400 ("This combination of host and port
    # requires TLS"); a server may as well close the connection. Either way: no registry.
    try:
        r = wire.get(plain_url(keystore_server), accept="application/json", timeout=HANDSHAKE_TIMEOUT)
    except (ConnectionError, http.client.HTTPException):
        return
    assert r.status >= 400, f"plain HTTP on the TLS port answered {r.status}: {r.text[:300]}"
    assert b"applications" not in r.body


# ---------------------------------------------------------------------------------------
# Protocol versions (server.ssl.enabled-protocols=TLSv1.2,TLSv1.3)
# ---------------------------------------------------------------------------------------
def test_client_offering_only_tls_1_1_is_refused(https_registry, pki):
    ctx = only(pki, ssl.TLSVersion.TLSv1_1)
    with pytest.raises((ssl.SSLError, ConnectionError)) as refused:
        handshake(https_registry.port, ctx)
    # the refusal must come from the server (the Java server sends a protocol_version alert), not
    # from a local OpenSSL that would not even send a TLS 1.1 hello
    assert "NO_PROTOCOLS_AVAILABLE" not in str(refused.value), refused.value


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3], ids=["tls1.2", "tls1.3"])
def test_client_offering_only_tls_1_2_or_1_3_is_served(https_registry, pki, version):
    assert handshake(https_registry.port, only(pki, version)) == version.name.replace("_", ".")


def test_server_limited_to_tls_1_3_refuses_a_tls_1_2_only_client(tls13_registry, pki):
    with pytest.raises((ssl.SSLError, ConnectionError)):
        handshake(tls13_registry.port, only(pki, ssl.TLSVersion.TLSv1_2))


# ---------------------------------------------------------------------------------------
# Mutual TLS (server.ssl.client-auth=need)
# ---------------------------------------------------------------------------------------
def test_mutual_tls_refuses_a_client_without_a_certificate(mtls_registry, pki):
    # With TLS 1.3 the client may finish its side of the handshake before the server's
    # certificate_required alert arrives: the refusal then surfaces on the first read.
    with pytest.raises((ssl.SSLError, ConnectionError)):
        wire.get(mtls_registry.url("/apps/"), accept="application/json", context=pki.client_context(),
                 timeout=HANDSHAKE_TIMEOUT)


def test_mutual_tls_serves_a_client_with_a_ca_signed_certificate(mtls_registry, pki):
    r = wire.get(mtls_registry.url("/apps/"), accept="application/json",
                 context=pki.client_context(pki.registrar), timeout=HANDSHAKE_TIMEOUT)
    assert r.status == 200, f"-> {r.status}: {r.text[:300]}"


# ---------------------------------------------------------------------------------------
# Certificate rotation (spring.ssl.bundle.pem.<name>.reload-on-update)
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rotating_registry(server_factory, server_kind, pki, tmp_path_factory):
    """A PEM bundle with reload-on-update whose files hold, at start-up, a valid certificate for
    another host (``wrong.example``), which clients verifying ``localhost`` refuse (its own
    directory: Spring watches the directory of the files). An expired one would do for Java,
    which starts with it; Heureka refuses to start on an expired certificate."""
    d = tmp_path_factory.mktemp("rotating-cert")
    cert, key = d / "tls.crt", d / "tls.key"
    shutil.copyfile(pki.wrong_host.cert, cert)
    shutil.copyfile(pki.wrong_host.key, key)
    srv = server_factory(server_kind, tls=unverified(), settings=str_values({
        "spring.ssl.bundle.pem.web.keystore.certificate": cert,
        "spring.ssl.bundle.pem.web.keystore.private-key": key,
        "spring.ssl.bundle.pem.web.reload-on-update": "true",
        "spring.ssl.bundle.watch.file.quiet-period": "1s",     # Spring's default: 10 s
        "server.ssl.bundle": "web"}))
    return SimpleNamespace(server=srv, cert=cert, key=key)


def test_pem_bundle_with_reload_on_update_serves_a_replaced_certificate_without_a_restart(rotating_registry, pki):
    srv = rotating_registry.server
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch|not valid"):
        handshake(srv.port, pki.client_context())
    pid = srv.proc.pid
    # the key first: a reload between the two writes sees a pair that does not match and keeps
    # the old one; the certificate's write triggers the next reload
    for src, dst in ((pki.server.key, rotating_registry.key), (pki.server.cert, rotating_registry.cert)):
        tmp = dst.with_suffix(".new")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    procs.wait_until("the server presents the new certificate (verified with the CA)",
                     lambda: handshake(srv.port, pki.client_context()), DEADLINE, interval=0.5, logs=[srv.proc])
    assert srv.proc.running() and srv.proc.pid == pid, "the server restarted instead of reloading"


# ---------------------------------------------------------------------------------------
# The real clients over HTTPS
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def https_clients(client_factory, https_registry, pki):
    """The three real clients on the HTTPS registry, each trusting the test CA its own way:
    Spring through eureka.client.tls.* (a PKCS12 trust store), py-eureka-client through
    SSL_CERT_FILE (httpx), eureka-js-client through eureka.ssl and requestMiddleware's ``ca``."""
    spring = client_factory("spring", "tls-spring", https_registry, start=False, settings=client_tls(pki))
    py = client_factory("python", "tls-python", https_registry, start=False, cafile=pki.ca_cert)
    js = client_factory("js", "tls-js", https_registry, start=False, cafile=pki.ca_cert)
    procs.start_all([spring, py, js])
    return SimpleNamespace(spring=spring, py=py, js=js, all=[spring, py, js])


def registered_up(registry, client):
    inst = registry.get_instance(client.registry_app, client.instance_id)
    return inst is not None and inst["status"] == "UP"


@pytest.mark.parametrize("kind", ["spring", "py", "js"])
def test_client_registers_over_https(https_registry, https_clients, kind):
    client = getattr(https_clients, kind)
    procs.wait_until(f"{client.instance_id} registered UP over https", lambda: registered_up(https_registry, client),
                     DEADLINE, logs=[client.proc])


def test_spring_client_renews_its_lease_over_https(https_registry, https_clients):
    client = https_clients.spring
    procs.wait_until(f"{client.instance_id} registered", lambda: registered_up(https_registry, client),
                     DEADLINE, logs=[client.proc])
    first = https_registry.get_instance(client.registry_app, client.instance_id)["leaseInfo"]
    # its lease is 1 s between renewals: the renewal timestamp moves without a re-registration
    procs.wait_until(f"{client.instance_id} renewed its lease", lambda: (
        https_registry.get_instance(client.registry_app, client.instance_id)["leaseInfo"]["lastRenewalTimestamp"]
        > first["lastRenewalTimestamp"]), DEADLINE, logs=[client.proc])
    now = https_registry.get_instance(client.registry_app, client.instance_id)["leaseInfo"]
    assert now["registrationTimestamp"] == first["registrationTimestamp"], (first, now)


def test_spring_client_discovers_the_others_over_https(https_clients):
    me = https_clients.spring
    for other in (https_clients.py, https_clients.js):
        procs.wait_until(f"Spring's DiscoveryClient sees {other.instance_id}",
                         lambda: other.instance_id in [i["instanceId"] for i in me.instances_of(other.vip)],
                         DEADLINE, logs=[me.proc])


def test_py_eureka_client_discovers_the_others_over_https(https_clients):
    me = https_clients.py
    for other in (https_clients.spring, https_clients.js):
        procs.wait_until(f"py-eureka-client sees {other.instance_id}",
                         lambda: other.instance_id in [i["instanceId"] for i in me.lookup(other.registry_app)],
                         DEADLINE, logs=[me.proc])


def test_eureka_js_client_discovers_the_others_over_https(https_clients):
    me = https_clients.js
    for other in (https_clients.spring, https_clients.py):
        procs.wait_until(f"eureka-js-client sees {other.instance_id}",
                         lambda: other.instance_id in [i["instanceId"] for i in me.lookup(other.registry_app)],
                         DEADLINE, logs=[me.proc])


# ---------------------------------------------------------------------------------------
# Peers replicating over HTTPS, with client certificates (mutual TLS between peers)
# ---------------------------------------------------------------------------------------
def java_peer_jvm_args(pki) -> list[str]:
    """What makes the Java server's *replication* client trust the CA and present CN=peer.

    Its peer client (Jersey3ReplicationClient, built in Spring Cloud's RefreshablePeerEurekaNodes)
    takes no eureka.client.tls.* setting: for https peers it uses Apache HttpClient's socket
    factory — the JVM's system SSL configuration (javax.net.ssl.*) when the system property
    com.netflix.eureka.shouldSSLConnectionsUseSystemSocketFactory is true, else a context with
    the JVM's default trust managers (javax.net.ssl.trustStore still applies) and no client
    certificate. So the Java node gets its trust store and key store as JVM system properties —
    its peer credential is a client certificate, given outside the peer URLs — while
    eureka.client.tls.* covers its embedded client (Spring Cloud's
    EurekaServerJerseyClientAutoConfiguration builds that client's SSLContext from it)."""
    return ["-Dcom.netflix.eureka.shouldSSLConnectionsUseSystemSocketFactory=true",
            f"-Djavax.net.ssl.trustStore={pki.ca_p12}", "-Djavax.net.ssl.trustStoreType=PKCS12",
            f"-Djavax.net.ssl.trustStorePassword={PASSWORD}",
            f"-Djavax.net.ssl.keyStore={pki.peer.p12}", "-Djavax.net.ssl.keyStoreType=PKCS12",
            f"-Djavax.net.ssl.keyStorePassword={PASSWORD}"]


@pytest.fixture(scope="module")
def tls_peers(cluster_factory, cluster_kind, pki):
    """Node a is Java; node b is ``cluster_kind``. Both serve HTTPS and require a client
    certificate; each presents CN=peer to the other (eureka.client.tls.key-store; for the Java
    node's replication the JVM's key store, see java_peer_jvm_args). The suite reads as CN=reader."""
    extra = str_values({**server_ssl("pkcs12", pki), **need_client_certs(pki), **client_tls(pki, pki.peer)})
    return cluster_factory(["java", cluster_kind], label=f"tls-java+{cluster_kind}", extra=extra,
                           tls=pki.client_context(pki.reader), java_jvm_args=java_peer_jvm_args(pki))


@pytest.mark.parametrize("origin", [0, 1], ids=["from-java", "from-other"])
def test_registration_replicates_over_mutual_tls_between_peers(tls_peers, origin):
    here, there = tls_peers[origin], tls_peers[1 - origin]
    inst = new_instance(f"tls-peer-{origin}")
    cl.register(here, inst)
    wait_on_all([there], f"{inst.instance_id} registered on {here.node_name} replicated over https",
                lambda n: view(n).status(inst) == "UP")


@pytest.fixture(scope="module")
def wrong_name_peer(cluster_factory, cluster_kind, pki):
    """Node a (Java) serves a CA-signed certificate for wrong.example instead of localhost;
    node b (``cluster_kind``) lists it at https://localhost:PORT/eureka/ and trusts the CA.
    No client certificates here: only the peer's check of the host name is at stake."""
    extra = str_values(client_tls(pki))
    c = cluster_factory(["java", cluster_kind], start=False, label=f"tls-wrong-name-java+{cluster_kind}",
                        extra=extra, tls=pki.client_context(), java_jvm_args=java_peer_jvm_args(pki),
                        node_extra={0: str_values(server_ssl("pkcs12", pki, pki.wrong_host)),
                                    1: str_values(server_ssl("pkcs12", pki))})
    c[0].tls = unverified()      # the suite reads node a without checking its name
    return c.start()


def test_peer_serving_a_certificate_for_another_host_name_is_not_replicated_to(wrong_name_peer):
    a, b = wrong_name_peer
    inst = new_instance("tls-wrong-name")
    cl.register(b, inst)
    # a bounded negative check: the Java server sends a batch every 500 ms and retries failures
    cl.stays_true(f"{inst.instance_id} registered on {b.node_name} never reaches {a.node_name}",
                  lambda: not view(a).has(inst), window=10.0)
    assert view(b).status(inst) == "UP"
