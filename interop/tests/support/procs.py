"""Start, watch and stop the real processes of the interop suite.

Everything listens on 127.0.0.1 on ports picked at run time. Every wait is a bounded poll
loop with a deadline; a missed deadline fails the test with a message that includes the
process logs. Processes are started in their own session so that teardown can signal the
whole process group of exactly the process we started (never by name).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Optional, TypeVar

from . import wire

INTEROP_DIR = Path(__file__).resolve().parents[2]          # .../interop
REPO_DIR = INTEROP_DIR.parent
CLIENTS_DIR = INTEROP_DIR / "clients"
JAVA_DIR = INTEROP_DIR / "java"
EUREKA_SERVER_JAR = JAVA_DIR / "eureka-server" / "target" / "eureka-server.jar"
SPRING_CLIENT_JAR = JAVA_DIR / "spring-client" / "target" / "spring-client.jar"
# The same app with Heureka's Spring add-on (spring/), built by interop/run.sh.
SPRING_CLIENT_PUSH_JAR = JAVA_DIR / "spring-client" / "target" / "spring-client-push.jar"
VENV_PYTHON = INTEROP_DIR / ".venv" / "bin" / "python"

HOST = "127.0.0.1"
# The host name in https:// URLs: the test server certificates are for localhost (and 127.0.0.1),
# and /etc/hosts maps localhost to 127.0.0.1, so this is still loopback.
TLS_HOST = "localhost"

T = TypeVar("T")


class DeadlineExceeded(AssertionError):
    """A bounded wait ran out of time (an assertion, so pytest reports it as a failure)."""


_handed_out: set[int] = set()
_handed_out_lock = threading.Lock()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago and that this test run has not
    handed out before: the kernel may offer a port again as soon as its probe socket closes,
    and two apps started side by side (scenarios run in threads) must not both get it."""
    for _ in range(1000):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((HOST, 0))
            port = s.getsockname()[1]
        with _handed_out_lock:
            if port not in _handed_out:
                _handed_out.add(port)
                return port
    raise RuntimeError(f"no port left that this run has not handed out ({len(_handed_out)} so far)")


def wait_until(what: str, probe: Callable[[], T], timeout: float, interval: float = 0.25,
               logs: Iterable["Proc"] = ()) -> T:
    """Poll ``probe`` until it returns a truthy value or ``timeout`` seconds have passed.

    Exceptions raised by the probe count as "not yet". On timeout raises DeadlineExceeded
    with ``what``, the last value / exception seen and the tail of each process log in ``logs``.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = probe()
            if value:
                return value
            last = value
        except Exception as exc:  # noqa: BLE001 - any failure of the probe means "not yet"
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    msg = [f"timed out after {timeout:.0f}s waiting for: {what}", f"last observation: {last!r}"]
    for p in logs:
        msg.append(p.describe_log())
    raise DeadlineExceeded("\n".join(msg))


class Proc:
    """One child process with its output in a log file."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, cwd: Optional[Path] = None,
                 env: Optional[dict] = None):
        self.name = name
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.log_dir = Path(log_dir)
        self.log_path: Optional[Path] = None
        self.log_paths: list[Path] = []
        self.popen: Optional[subprocess.Popen] = None
        self._starts = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "Proc":
        assert self.popen is None or self.popen.poll() is not None, f"{self.name} already running"
        self._starts += 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        suffix = "" if self._starts == 1 else f".{self._starts}"
        self.log_path = self.log_dir / f"{self.name}{suffix}.log"
        self.log_paths.append(self.log_path)
        log = open(self.log_path, "wb")
        log.write(("$ " + " ".join(self.argv) + "\n").encode())
        log.flush()
        # Spring apps and Heureka bind environment variables too (relaxed binding): keep the
        # caller's SERVER_* / EUREKA_* / SPRING_* / HEUREKA_* settings out of the children
        env = {k: v for k, v in os.environ.items()
               if not k.upper().startswith(("SERVER_", "EUREKA_", "SPRING_", "HEUREKA_", "MANAGEMENT_"))}
        if self.env:
            env.update(self.env)
        # cwd = the log dir: Spring apps and Heureka read ./application.yml and ./config/ from
        # their working directory, so nothing from the caller's directory leaks in
        self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=self.cwd or self.log_dir, env=env,
                                      start_new_session=True)
        log.close()
        return self

    @property
    def pid(self) -> Optional[int]:
        return self.popen.pid if self.popen else None

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def send_signal(self, sig: int) -> None:
        if self.running():
            try:
                os.killpg(self.popen.pid, sig)   # our own session: pgid == pid
            except ProcessLookupError:
                pass

    def stop(self, timeout: float = 15.0, sig: int = signal.SIGTERM) -> Optional[int]:
        """Send ``sig`` (default SIGTERM) and wait up to ``timeout`` s; then SIGKILL."""
        if self.popen is None:
            return None
        if self.running():
            self.send_signal(sig)
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.popen.returncode

    def freeze(self, timeout: float = 10.0) -> None:
        """SIGSTOP, then wait until every thread of the process is stopped: the signal is
        delivered asynchronously, and on a busy machine a thread can run on for a while
        (long enough to answer a request the caller expects to sit unread)."""
        assert self.running(), f"{self.name} is not running"
        os.kill(self.popen.pid, signal.SIGSTOP)
        wait_until(f"every thread of {self.name} (pid {self.popen.pid}) stopped",
                   lambda: self.threads_stopped(), timeout, interval=0.01, logs=[self])

    def thaw(self) -> None:
        """SIGCONT (harmless when the process is not stopped)."""
        if self.running():
            os.kill(self.popen.pid, signal.SIGCONT)

    def threads_stopped(self) -> bool:
        """Whether every thread is in state T (stopped) in /proc (Linux)."""
        states = []
        for task in Path(f"/proc/{self.popen.pid}/task").iterdir():
            try:
                # the state follows the parenthesised command name, which may contain spaces
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
            except (OSError, IndexError):
                continue          # a thread that just exited
        return bool(states) and all(st in ("T", "t") for st in states)

    def kill(self) -> None:
        if self.popen is None:
            return
        self.send_signal(signal.SIGKILL)
        # Gone only once the kernel has torn its memory down, which for a JVM on a loaded
        # machine can take more than 10 s; a restart before that finds it still running.
        self.popen.wait(timeout=120)

    # -- diagnostics -----------------------------------------------------------------------
    def log_text(self, max_chars: int = 12000) -> str:
        """The tail of the log of every run of this process (restarts included)."""
        out = []
        for path in self.log_paths:
            if not path.exists():
                out.append(f"== {path}: (no log)")
                continue
            data = path.read_bytes().decode("utf-8", "replace")
            if len(data) > max_chars:
                data = "…(truncated)…\n" + data[-max_chars:]
            out.append(f"== {path}\n{data}")
        return "\n".join(out) if out else "(no log)"

    def describe_log(self) -> str:
        state = "running" if self.running() else f"exited rc={self.popen.returncode if self.popen else None}"
        return f"----- {self.name} ({state}) log {self.log_path} -----\n{self.log_text()}"

    def assert_alive(self) -> None:
        if not self.running():
            raise AssertionError(f"{self.name} is not running\n{self.describe_log()}")


# ---------------------------------------------------------------------------------------
# Registry servers
# ---------------------------------------------------------------------------------------
class RegistryServer:
    """A Eureka-compatible registry (Heureka or the Java reference) on 127.0.0.1:port."""

    kind = "?"
    startup_timeout = 60.0

    # Spring-style settings passed as --key=value; callers override single keys through
    # ``settings`` (never by repeating a flag: Spring would join repeated values with a comma).
    default_settings: dict = {}

    def __init__(self, log_dir: Path, port: Optional[int] = None, settings: Optional[dict] = None,
                 tls: Optional[ssl.SSLContext] = None, jvm_args: Optional[list[str]] = None):
        """``tls``: the server serves HTTPS (its ``server.ssl.*`` settings say how); the suite's
        own requests to it (readiness, registry reads) use this client context, and its URLs
        are ``https://localhost:PORT/eureka``. ``jvm_args``: JVM options (``-D...``) of a Java
        server; Heureka has none."""
        self.port = port or free_port()
        self.log_dir = Path(log_dir)
        self.settings = dict(self.default_settings)
        self.settings.update(settings or {})
        self.tls = tls
        self.jvm_args = list(jvm_args or [])
        self.proc = Proc(self.kind + "-server", self.argv(), self.log_dir)

    def setting_args(self) -> list[str]:
        return [f"--{k}={v}" for k, v in self.settings.items()]

    def argv(self) -> list[str]:
        raise NotImplementedError

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    @property
    def host(self) -> str:
        """The host in the URLs clients are given."""
        return TLS_HOST if self.tls else HOST

    @property
    def base_url(self) -> str:
        """Service URL as clients are configured with it (no trailing slash)."""
        return f"{self.scheme}://{self.host}:{self.port}/eureka"

    @property
    def service_url(self) -> str:
        """Spring's defaultZone form (with trailing slash)."""
        return self.base_url + "/"

    def start(self) -> "RegistryServer":
        self.proc.argv = self.argv()
        self.proc.start()
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        def ready():
            if not self.proc.running():
                raise DeadlineExceeded(f"{self.proc.name} exited during startup\n{self.proc.describe_log()}")
            return wire.get(self.url("/apps/"), timeout=2, context=self.tls).status == 200
        try:
            wait_until(f"{self.kind} server answers GET /eureka/apps/ with 200", ready,
                       self.startup_timeout, interval=0.2, logs=[self.proc])
        except DeadlineExceeded:
            self.proc.kill()
            raise

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.proc.stop(sig=sig)

    def kill(self) -> None:
        self.proc.kill()

    def restart_fresh(self) -> None:
        """Kill the server (crash-like, SIGKILL) and start a new empty one on the same port."""
        self.proc.kill()
        self.start()

    def url(self, path: str) -> str:
        return self.base_url + path

    # -- registry reads used by the tests (JSON, like the Java clients) -------------------
    def apps_json(self) -> dict:
        r = wire.get(self.url("/apps/"), accept="application/json", context=self.tls)
        assert r.status == 200, f"GET /eureka/apps/ -> {r.status}: {r.text[:500]}"
        return r.json()

    def instances(self) -> list[dict]:
        """All instances of the full registry (JSON), each a dict."""
        out = []
        apps = self.apps_json()["applications"].get("application") or []
        if isinstance(apps, dict):
            apps = [apps]
        for app in apps:
            insts = app.get("instance") or []
            if isinstance(insts, dict):
                insts = [insts]
            out.extend(insts)
        return out

    def find_instances(self, app: str) -> list[dict]:
        return [i for i in self.instances() if str(i.get("app", "")).upper() == app.upper()]

    def get_instance(self, app: str, instance_id: str) -> Optional[dict]:
        r = wire.get(self.url(f"/apps/{app}/{wire.quote(instance_id)}"), accept="application/json",
                     context=self.tls)
        if r.status == 404:
            return None
        assert r.status == 200, f"GET instance {app}/{instance_id} -> {r.status}: {r.text[:300]}"
        return r.json()["instance"]


class HeurekaServer(RegistryServer):
    kind = "heureka"
    startup_timeout = 30.0

    @staticmethod
    def binary() -> Path:
        env = os.environ.get("HEUREKA_BIN")
        return Path(env) if env else REPO_DIR / "target" / "release" / "heureka"

    default_settings = {
        "server.address": HOST,
        "eureka.server.enable-self-preservation": "false",
        "eureka.server.eviction-interval-timer-in-ms": "1000",
        # set up as the Java reference is: a standalone node that does not register itself
        "eureka.client.register-with-eureka": "false",
    }

    def argv(self) -> list[str]:
        # Its own URL as the only service URL, so it has no peers (the default peer list is
        # http://localhost:8761/eureka/), unless the caller names peers.
        own = ([] if any("service-url" in k for k in self.settings)
               else [f"--eureka.client.service-url.defaultZone=http://{HOST}:{self.port}/eureka/"])
        return [str(self.binary()), f"--server.port={self.port}", *own, *self.setting_args()]


class JavaEurekaServer(RegistryServer):
    """The real Spring Cloud Eureka server (the reference)."""

    kind = "java"
    startup_timeout = 90.0

    default_settings = {
        "server.address": HOST,
        # new registrations visible at once (no 30 s read-only cache)
        "eureka.server.use-read-only-response-cache": "false",
        "eureka.server.enable-self-preservation": "false",
        "eureka.server.eviction-interval-timer-in-ms": "1000",
        # isolate it: with its own URL as the only service URL and its host name equal to that
        # URL's host it has no peers (the default peer list is http://localhost:8761/eureka/)
        "eureka.instance.hostname": HOST,
        "eureka.server.registry-sync-retries": "0",
    }

    def argv(self) -> list[str]:
        return ["java", "-XX:TieredStopAtLevel=1", *self.jvm_args, "-jar", str(EUREKA_SERVER_JAR),
                f"--server.port={self.port}",
                f"--eureka.client.service-url.defaultZone=http://{HOST}:{self.port}/eureka/",
                *self.setting_args()]


def make_server(kind: str, log_dir: Path, port: Optional[int] = None,
                settings: Optional[dict] = None, tls: Optional[ssl.SSLContext] = None,
                jvm_args: Optional[list[str]] = None) -> RegistryServer:
    if kind == "heureka":
        return HeurekaServer(log_dir, port, settings, tls)
    if kind == "java":
        return JavaEurekaServer(log_dir, port, settings, tls, jvm_args)
    raise ValueError(f"unknown server kind {kind!r} (heureka|java)")


# ---------------------------------------------------------------------------------------
# Client applications
# ---------------------------------------------------------------------------------------
class ClientApp:
    """A real Eureka client in its own process.

    Each one runs an HTTP endpoint on the very port it registers, so the port in the
    registry is real and tests can ask the client what it discovered.
    """

    kind = "?"
    startup_timeout = 60.0

    def __init__(self, name: str, server: RegistryServer, log_dir: Path,
                 metadata: Optional[dict] = None, port: Optional[int] = None,
                 cafile: Optional[Path] = None, settings: Optional[dict] = None):
        """``cafile``: PEM CA the Python and JS clients verify an https registry with;
        ``settings``: extra Spring keys of the Spring client (``--key=value``)."""
        self.app_name = name                     # as configured (lower case)
        self.server = server
        self.port = port or free_port()
        self.metadata = dict(metadata or {})
        self.cafile = cafile
        self.settings = dict(settings or {})
        self.proc = Proc(f"{self.kind}-client-{name}", [], Path(log_dir), env=self.env())

    # identity as it appears in the registry
    @property
    def registry_app(self) -> str:
        return self.app_name.upper()

    @property
    def vip(self) -> str:
        return self.app_name

    @property
    def instance_id(self) -> str:
        raise NotImplementedError

    @property
    def expected_metadata(self) -> dict:
        return dict(self.metadata)

    def argv(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> Optional[dict]:
        return None

    def local(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def ready_path(self) -> str:
        return "/whoami"

    def start(self) -> "ClientApp":
        self.proc.argv = self.argv()
        self.proc.start()
        def up():
            if not self.proc.running():
                raise DeadlineExceeded(f"{self.proc.name} exited during startup\n{self.proc.describe_log()}")
            return wire.get(self.local(self.ready_path()), timeout=2).status == 200
        wait_until(f"{self.proc.name} serves {self.ready_path()} on port {self.port}", up,
                   self.startup_timeout, interval=0.2, logs=[self.proc])
        return self

    def stop(self, timeout: float = 20.0) -> Optional[int]:
        """SIGTERM (graceful: the client deregisters), SIGKILL after ``timeout``."""
        return self.proc.stop(timeout=timeout)

    def kill(self) -> None:
        self.proc.kill()

    def get_json(self, path: str):
        r = wire.get(self.local(path), accept="application/json", timeout=10)
        assert r.status == 200, f"{self.proc.name} GET {path} -> {r.status}: {r.text[:500]}"
        return r.json()


class PythonClient(ClientApp):
    """interop/clients/py_client.py around py-eureka-client."""

    kind = "python"
    startup_timeout = 30.0

    @property
    def instance_id(self) -> str:
        return f"{HOST}:{self.app_name.lower()}:{self.port}"   # py-eureka-client's default

    @property
    def expected_metadata(self) -> dict:
        # py-eureka-client adds management.port and zone itself
        md = {"management.port": str(self.port), "zone": "default"}
        md.update(self.metadata)
        return md

    def env(self) -> Optional[dict]:
        # py-eureka-client 0.13 has no TLS option of its own: its requests go through
        # httpx.AsyncClient with default verification, which trusts SSL_CERT_FILE (httpx's
        # trust_env) instead of certifi's bundle
        return {"SSL_CERT_FILE": str(self.cafile)} if self.cafile else None

    def argv(self) -> list[str]:
        py = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
        return [py, "-u", str(CLIENTS_DIR / "py_client.py"), "--server", self.server.base_url,
                "--app", self.app_name, "--port", str(self.port), "--interval", "1",
                "--metadata", json.dumps(self.metadata)]

    def discovered(self) -> dict:
        """{APP: [instance dicts]} from the client's local registry (``applications``)."""
        return self.get_json("/discovery")

    def lookup(self, app: str) -> list:
        """Instances from ``applications.get_application(app)`` (UP and others)."""
        return self.get_json(f"/lookup/{app}")

    def walk(self, app: str, service: str = "/whoami"):
        """``eureka_client.walk_nodes(app, service)``: call ``service`` on an UP instance of ``app``."""
        return self.get_json(f"/walk/{app}?service={wire.quote(service)}")


class JsClient(ClientApp):
    """interop/clients/js_client.js around eureka-js-client."""

    kind = "js"
    startup_timeout = 30.0

    @property
    def instance_id(self) -> str:
        return f"{self.app_name}-{self.port}"

    def argv(self) -> list[str]:
        node = shutil.which("node") or "node"
        args = [node, str(CLIENTS_DIR / "js_client.js"), "--server-host", self.server.host,
                "--server-port", str(self.server.port),
                "--app", self.app_name, "--port", str(self.port), "--instance-id", self.instance_id,
                "--interval", "1000", "--metadata", json.dumps(self.metadata)]
        if self.server.tls:
            args.append("--ssl")          # eureka.ssl: https to the registry
        if self.cafile:
            args += ["--ca", str(self.cafile)]
        return args

    def discovered(self) -> dict:
        """{APP: [instances]} = the client's cache (client.cache.app)."""
        return self.get_json("/discovery")

    def lookup(self, app: str) -> list:
        """``client.getInstancesByAppId(app)``"""
        return self.get_json(f"/lookup/{app}")

    def lookup_vip(self, vip: str) -> list:
        """``client.getInstancesByVipAddress(vip)``"""
        return self.get_json(f"/vip/{vip}")


class SpringClient(ClientApp):
    """interop/java/spring-client: a Spring Boot app with spring-cloud-starter-netflix-eureka-client."""

    kind = "spring"
    startup_timeout = 90.0
    jar = SPRING_CLIENT_JAR

    @property
    def instance_id(self) -> str:
        return f"{HOST}:{self.app_name}:{self.port}"

    @property
    def expected_metadata(self) -> dict:
        md = {"zone": "zone1", "team": "interop", "management.port": str(self.port)}
        md.update(self.metadata)
        return md

    def ready_path(self) -> str:
        return "/services"

    def argv(self) -> list[str]:
        args = ["java", "-XX:TieredStopAtLevel=1", "-jar", str(self.jar),
                f"--server.port={self.port}",
                f"--server.address={HOST}",
                f"--spring.application.name={self.app_name}",
                f"--eureka.client.service-url.defaultZone={self.server.service_url}",
                # keep everything on loopback: the machine's first non-loopback address
                # would otherwise be registered as the instance's host
                f"--eureka.instance.ip-address={HOST}",
                f"--eureka.instance.hostname={HOST}",
                f"--spring.cloud.client.hostname={HOST}",   # -> default instance id HOST:app:port
                "--spring.main.banner-mode=off"]
        for k, v in self.metadata.items():
            args.append(f"--eureka.instance.metadata-map.{k}={v}")
        args += [f"--{k}={v}" for k, v in self.settings.items()]
        return args

    def services(self) -> list:
        return self.get_json("/services")

    def instances_of(self, service_id: str) -> list:
        """``DiscoveryClient.getInstances(serviceId)``"""
        return self.get_json(f"/instances/{service_id}")


class SpringPushClient(SpringClient):
    """The same Spring Boot app with Heureka's Spring add-on on its classpath (spring/)."""

    kind = "spring-push"
    jar = SPRING_CLIENT_PUSH_JAR


class PrometheusServer:
    """The Prometheus process, in the shape the suite's process tracker tears down."""

    def __init__(self, proc: Proc):
        self.proc = proc

    def stop(self, sig: int) -> None:
        self.proc.stop(sig=sig)

    def kill(self) -> None:
        self.proc.kill()


def start_all(items: Iterable) -> None:
    """Start several processes in parallel (Spring apps take seconds), then wait for each."""
    import concurrent.futures as cf
    items = list(items)
    with cf.ThreadPoolExecutor(max_workers=max(1, len(items))) as ex:
        futures = [ex.submit(i.start) for i in items]
        errors = []
        for f in futures:
            try:
                f.result()
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
    if errors:
        raise errors[0]
