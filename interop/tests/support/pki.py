"""A throw-away PKI for the TLS tests, made with ``openssl`` and ``keytool`` in a temp dir.

One test CA signs everything:

* ``server``  — CN=localhost, SAN DNS:localhost + IP:127.0.0.1 (serverAuth): what the registries serve
* ``expired`` — the same names, valid only in January 2020 (``openssl ca -startdate/-enddate``:
  OpenSSL 3.0's ``x509 -req`` cannot backdate)
* ``wrong_host`` — CN=wrong.example, SAN DNS:wrong.example only
* ``reader``, ``registrar``, ``peer`` — client certificates (clientAuth; ``peer`` also
  serverAuth, so one identity can serve a peer's both ends)

Each identity comes as PEM certificate + PEM key (PKCS#8), a PKCS12 key store and a JKS key store
(password ``changeit``; alias ``server`` for server certificates, ``client`` for client ones).
The CA comes as PEM and as trust stores in PKCS12 and JKS (alias ``ca``, password ``changeit``).

Every openssl/keytool call is a bounded subprocess (timeout); a failure raises with its output.
"""
from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

PASSWORD = "changeit"
TIMEOUT = 60.0           # per openssl/keytool call; keytool is a JVM start


@dataclass(frozen=True)
class Identity:
    """One certificate with its key in every form the servers and clients take."""

    name: str
    alias: str
    cert: Path           # PEM
    key: Path            # PEM, PKCS#8, unencrypted
    p12: Path            # PKCS12 key store (PASSWORD)
    jks: Path            # JKS key store (PASSWORD)


@dataclass(frozen=True)
class Pki:
    dir: Path
    ca_cert: Path        # PEM
    ca_p12: Path         # PKCS12 trust store with the CA (PASSWORD)
    ca_jks: Path         # JKS trust store with the CA (PASSWORD)
    server: Identity
    expired: Identity
    wrong_host: Identity
    reader: Identity
    registrar: Identity
    peer: Identity

    def client_context(self, identity: Optional[Identity] = None) -> ssl.SSLContext:
        """A TLS client context verifying with the test CA (host name checked), presenting
        ``identity``'s certificate if given."""
        ctx = ssl.create_default_context(cafile=str(self.ca_cert))
        if identity is not None:
            ctx.load_cert_chain(str(identity.cert), str(identity.key))
        return ctx


def _run(argv: list[str], cwd: Path) -> None:
    try:
        out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"timed out after {TIMEOUT:.0f}s: {' '.join(argv)}") from exc
    if out.returncode != 0:
        raise RuntimeError(f"exit {out.returncode}: {' '.join(argv)}\n{out.stdout}\n{out.stderr}")


def _ext_file(d: Path, name: str, dns: list[str], ips: list[str], usage: str) -> Path:
    sans = [f"DNS:{h}" for h in dns] + [f"IP:{ip}" for ip in ips]
    lines = ["basicConstraints = critical, CA:FALSE",
             "keyUsage = critical, digitalSignature, keyEncipherment",
             f"extendedKeyUsage = {usage}"]
    if sans:
        lines.append("subjectAltName = " + ", ".join(sans))
    p = d / f"{name}.ext"
    p.write_text("\n".join(lines) + "\n")
    return p


def _ca(d: Path) -> tuple[Path, Path]:
    key, cert = d / "ca.key", d / "ca.pem"
    _run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)], d)
    _run(["openssl", "req", "-x509", "-new", "-key", str(key), "-sha256", "-days", "3650",
          "-subj", "/CN=Heureka interop test CA", "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", str(cert)], d)
    return key, cert


def _key_and_csr(d: Path, name: str, cn: str) -> tuple[Path, Path]:
    key, csr = d / f"{name}.key", d / f"{name}.csr"
    _run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key)], d)
    _run(["openssl", "req", "-new", "-key", str(key), "-subj", f"/CN={cn}", "-out", str(csr)], d)
    return key, csr


def _sign(d: Path, name: str, csr: Path, ext: Path, ca_key: Path, ca_cert: Path) -> Path:
    cert = d / f"{name}.pem"
    _run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
          "-CAcreateserial", "-days", "825", "-sha256", "-extfile", str(ext), "-out", str(cert)], d)
    return cert


def _sign_expired(d: Path, name: str, csr: Path, ext: Path, ca_key: Path, ca_cert: Path) -> Path:
    """Signed with a validity in the past: ``openssl ca`` takes explicit start and end dates."""
    db = d / "ca-db"
    db.mkdir(exist_ok=True)
    (db / "index.txt").write_text("")
    (db / "serial").write_text("1000\n")
    cnf = d / "ca.cnf"
    cnf.write_text("\n".join([
        "[ca]", "default_ca = test_ca",
        "[test_ca]",
        f"database = {db / 'index.txt'}", f"serial = {db / 'serial'}", f"new_certs_dir = {db}",
        f"certificate = {ca_cert}", f"private_key = {ca_key}",
        "default_md = sha256", "policy = any", "unique_subject = no", "copy_extensions = none",
        "[any]", "commonName = supplied",
    ]) + "\n")
    cert = d / f"{name}.pem"
    _run(["openssl", "ca", "-batch", "-notext", "-config", str(cnf), "-extfile", str(ext),
          "-startdate", "20200101000000Z", "-enddate", "20200201000000Z",
          "-in", str(csr), "-out", str(cert)], d)
    return cert


def _stores(d: Path, name: str, alias: str, key: Path, cert: Path, ca_cert: Path) -> tuple[Path, Path]:
    p12, jks = d / f"{name}.p12", d / f"{name}.jks"
    _run(["openssl", "pkcs12", "-export", "-name", alias, "-inkey", str(key), "-in", str(cert),
          "-certfile", str(ca_cert), "-passout", f"pass:{PASSWORD}", "-out", str(p12)], d)
    _run(["keytool", "-importkeystore", "-noprompt",
          "-srckeystore", str(p12), "-srcstoretype", "PKCS12", "-srcstorepass", PASSWORD, "-srcalias", alias,
          "-destkeystore", str(jks), "-deststoretype", "JKS", "-deststorepass", PASSWORD,
          "-destkeypass", PASSWORD, "-destalias", alias], d)
    return p12, jks


def _trust_stores(d: Path, ca_cert: Path) -> tuple[Path, Path]:
    out = []
    for kind, ext in (("PKCS12", "p12"), ("JKS", "jks")):
        p = d / f"ca-trust.{ext}"
        _run(["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_cert),
              "-keystore", str(p), "-storetype", kind, "-storepass", PASSWORD], d)
        out.append(p)
    return out[0], out[1]


def make_pki(d: Path) -> Pki:
    for tool in ("openssl", "keytool"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} not found on PATH (the TLS tests need openssl and a JDK's keytool)")
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _ca(d)

    def identity(name: str, cn: str, dns: list[str], ips: list[str], usage: str, alias: str,
                 expired: bool = False) -> Identity:
        key, csr = _key_and_csr(d, name, cn)
        ext = _ext_file(d, name, dns, ips, usage)
        cert = (_sign_expired if expired else _sign)(d, name, csr, ext, ca_key, ca_cert)
        p12, jks = _stores(d, name, alias, key, cert, ca_cert)
        return Identity(name, alias, cert, key, p12, jks)

    local = (["localhost"], ["127.0.0.1"])
    ca_p12, ca_jks = _trust_stores(d, ca_cert)
    return Pki(
        dir=d, ca_cert=ca_cert, ca_p12=ca_p12, ca_jks=ca_jks,
        server=identity("server", "localhost", *local, "serverAuth", "server"),
        expired=identity("expired", "localhost", *local, "serverAuth", "server", expired=True),
        wrong_host=identity("wrong-host", "wrong.example", ["wrong.example"], [], "serverAuth", "server"),
        reader=identity("reader", "reader", [], [], "clientAuth", "client"),
        registrar=identity("registrar", "registrar", [], [], "clientAuth", "client"),
        peer=identity("peer", "peer", *local, "serverAuth, clientAuth", "client"),
    )
