"""The Rust client (crates/heureka-client) in a real process: its interop driver example.

interop/run.sh builds it (``cargo build --release -p heureka-client --example interop_driver``)
and exports RUST_CLIENT_DRIVER. The driver prints one JSON object per line on stdout (started,
one ``refresh`` per successful refresh of its local copy, the answers to commands) and reads
commands on stdin; see the example's doc comment. Here a reader thread collects those lines, and
every wait on them is a bounded poll (``wait_event``), as everywhere in the suite.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Callable, Optional

from . import procs
from .procs import HOST, DeadlineExceeded, wait_until

STARTUP_TIMEOUT = 30.0


def driver_binary() -> Path:
    env = os.environ.get("RUST_CLIENT_DRIVER")
    return Path(env) if env else procs.REPO_DIR / "target" / "release" / "examples" / "interop_driver"


class DriverProc(procs.Proc):
    """A Proc whose stdin and stdout are pipes: stdout lines are parsed and copied to the log."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.events: list[dict] = []
        self._lock = threading.Lock()

    def start(self) -> "DriverProc":
        self._starts += 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / f"{self.name}.log"
        self.log_paths.append(self.log_path)
        log = open(self.log_path, "ab")
        log.write(("$ " + " ".join(self.argv) + "\n").encode())
        log.flush()
        env = dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "heureka_client=debug"))
        self.popen = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=log, cwd=self.log_dir, env=env, start_new_session=True)
        log.close()
        threading.Thread(target=self._read, daemon=True, name=f"{self.name}-stdout").start()
        return self

    def _read(self) -> None:
        with open(self.log_path, "ab", buffering=0) as log:
            for raw in self.popen.stdout:
                log.write(b"stdout: " + raw)
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                with self._lock:
                    self.events.append(event)

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.events)


class RustClient:
    """One Rust client instance registered with ``servers`` (tried in this order)."""

    def __init__(self, name: str, servers: list[procs.RegistryServer], log_dir: Path,
                 watch: tuple[str, ...] = (), extra_args: tuple[str, ...] = ()):
        self.app_name = name
        self.servers = list(servers)
        self.port = procs.free_port()     # registered only: the driver serves nothing on it
        self.watch = [w.upper() for w in watch]
        self.extra_args = list(extra_args)
        self.proc = DriverProc(f"rust-client-{name}", [], Path(log_dir))

    @property
    def registry_app(self) -> str:
        return self.app_name.upper()

    @property
    def instance_id(self) -> str:
        return f"{HOST}:{self.app_name.lower()}:{self.port}"

    def argv(self) -> list[str]:
        args = [str(driver_binary()),
                "--service-urls", ",".join(s.service_url for s in self.servers),
                "--app", self.app_name, "--port", str(self.port), "--instance-id", self.instance_id,
                "--host", HOST,
                # the test clients' cadence: heartbeat and refresh every second
                "--renew-secs", "1", "--fetch-secs", "1",
                # a dead server is skipped for a while, then tried again
                "--quarantine-secs", "5"]
        if self.watch:
            args += ["--watch", ",".join(self.watch)]
        return args + self.extra_args

    def start(self) -> "RustClient":
        self.proc.argv = self.argv()
        self.proc.start()
        started = self.wait_event("the driver reports started",
                                  lambda e: e["event"] in ("started", "start_failed"), STARTUP_TIMEOUT)
        assert started["event"] == "started", f"Rust client failed to start: {started}\n{self.proc.describe_log()}"
        return self

    # -- events ------------------------------------------------------------------------------
    def events(self) -> list[dict]:
        return self.proc.snapshot()

    def wait_event(self, what: str, match: Callable[[dict], bool], timeout: float,
                   after: int = 0) -> dict:
        """The first event from index ``after`` on that ``match``es; bounded wait."""
        def probe():
            if not self.proc.running() and not any(match(e) for e in self.events()[after:]):
                raise DeadlineExceeded(f"{self.proc.name} exited\n{self.proc.describe_log()}")
            return next((e for e in self.events()[after:] if match(e)), None)
        return wait_until(f"{self.proc.name}: {what}", probe, timeout, interval=0.05, logs=[self.proc])

    def command(self, line: str, answer: str, timeout: float = 10.0) -> dict:
        """Sends a command; returns the driver's answer (the next event named ``answer``)."""
        mark = len(self.events())
        self.proc.popen.stdin.write((line + "\n").encode())
        self.proc.popen.stdin.flush()
        return self.wait_event(f"answer {answer!r} to {line!r}", lambda e: e["event"] == answer, timeout, after=mark)

    def refreshes(self, after: int = 0) -> list[dict]:
        return [e for e in self.events()[after:] if e["event"] == "refresh"]

    def up_ids(self, event: dict, app: str) -> list[str]:
        return [i["id"] for i in event["apps"].get(app.upper(), [])]

    # -- lifecycle (as the conftest tracker expects of a non-ClientApp item) -------------------
    def shutdown(self, timeout: float = 20.0) -> dict:
        """``shutdown`` on stdin: the client cancels its registration and the driver exits."""
        done = self.command("shutdown", "shutdown", timeout)
        self.proc.popen.wait(timeout=timeout)
        return done

    def stop(self, sig=None, timeout: float = 20.0) -> None:
        # SIGTERM: the driver shuts the client down (cancel) and exits
        self.proc.stop(timeout=timeout)

    def kill(self) -> None:
        self.proc.kill()
