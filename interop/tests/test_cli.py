"""The ``heureka`` command line against the real Spring Cloud Eureka server (and Heureka).

Every subcommand is run as a script runs it (the real binary, stdout, exit code) on both wire
formats, against the Java reference and against Heureka, so the CLI is shown to need nothing
Heureka-specific. The Java server has no event stream: ``watch`` there must fall back to
polling ``apps/delta`` by itself.

Instances are registered with a raw POST (the body a Spring client sends) and a lease long
enough that nothing expires during the module.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import time

import pytest

from support import procs, wire

FORMATS = ["json", "xml"]
PATIENCE = 60.0


@pytest.fixture(scope="module", params=["java", "heureka"])
def server(request, server_factory):
    return server_factory(request.param)


def cli_env() -> dict:
    # Nothing from the caller's EUREKA_* reaches the command: the tests name the server.
    return {k: v for k, v in os.environ.items() if not k.upper().startswith("EUREKA_")}


def heureka(server, *args: str) -> subprocess.CompletedProcess:
    argv = [str(procs.HeurekaServer.binary()), *args, "--eureka", server.service_url]
    return subprocess.run(argv, capture_output=True, text=True, timeout=PATIENCE, env=cli_env())


def ok(server, *args: str) -> subprocess.CompletedProcess:
    run = heureka(server, *args)
    assert run.returncode == 0, f"heureka {args}: rc={run.returncode}\n{run.stderr}"
    return run


def rows(run) -> list[list[str]]:
    return [line.split() for line in run.stdout.splitlines()]


def register(server, app: str, instance_id: str) -> None:
    body = {"instance": {
        "instanceId": instance_id, "app": app.upper(), "hostName": "host-a", "ipAddr": "10.0.0.5",
        "status": "UP", "overriddenStatus": "UNKNOWN", "vipAddress": app.lower(),
        "secureVipAddress": app.lower(),
        "port": {"$": 8080, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"},
        "healthCheckUrl": "http://host-a:8080/actuator/health",
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                           "name": "MyOwn"},
        "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 600},
        "metadata": {"management.port": "8080"},
    }}
    r = wire.request("POST", server.url(f"/apps/{app.upper()}"),
                     {"Content-Type": "application/json"}, json.dumps(body))
    assert r.status == 204, f"register {app}/{instance_id} -> {r.status}: {r.text[:300]}"


def stored(server, app: str, instance_id: str) -> dict | None:
    return server.get_instance(app, instance_id)


@pytest.mark.parametrize("fmt", FORMATS)
def test_apps_counts_instances_by_status(server, fmt):
    app = f"CLI-APPS-{fmt.upper()}"
    register(server, app, f"{app}-1")
    register(server, app, f"{app}-2")
    assert wire.request("PUT", server.url(f"/apps/{app}/{app}-2/status?value=OUT_OF_SERVICE")).status == 200
    run = ok(server, "apps", "--format", fmt)
    table = rows(run)
    assert table[0] == ["APP", "INSTANCES", "UP", "DOWN", "STARTING", "OUT_OF_SERVICE", "UNKNOWN"]
    assert [app, "2", "1", "0", "0", "1", "0"] in table, run.stdout

    wide = rows(ok(server, "apps", "--wide", "--format", fmt))
    mine = [row[:4] for row in wide if row[0] == app]
    assert mine == [[app, f"{app}-1", "UP", "-"], [app, f"{app}-2", "OUT_OF_SERVICE", "OUT_OF_SERVICE"]]

    document = json.loads(ok(server, "apps", "--json", "--format", fmt).stdout)
    apps = {a["name"]: a for a in document["applications"]["application"]}
    assert sorted(i["instanceId"] for i in apps[app]["instance"]) == [f"{app}-1", f"{app}-2"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_app_lists_its_instances(server, fmt):
    app = f"CLI-APP-{fmt.upper()}"
    register(server, app, f"{app}-1")
    run = ok(server, "app", app.lower(), "--format", fmt)
    assert rows(run) == [
        ["ID", "STATUS", "OVERRIDE", "HOST", "IP", "PORT", "ZONE", "LAST", "RENEW"],
        [f"{app}-1", "UP", "-", "host-a", "10.0.0.5", "8080", "-", *rows(run)[1][7:]],
    ]
    assert rows(run)[1][8] == "ago", run.stdout
    document = json.loads(ok(server, "app", app, "--json", "--format", fmt).stdout)
    assert document["application"]["name"] == app


@pytest.mark.parametrize("fmt", FORMATS)
def test_instance_shows_every_field(server, fmt):
    app = f"CLI-INSTANCE-{fmt.upper()}"
    register(server, app, f"{app}-1")
    run = ok(server, "instance", f"{app}-1", "--format", fmt)
    fields = dict(line.split(":", 1) for line in run.stdout.splitlines())
    fields = {k: v.strip() for k, v in fields.items()}
    assert fields["app"] == app
    assert fields["hostName"] == "host-a"
    assert fields["vipAddress"] == app.lower()
    assert fields["healthCheckUrl"] == "http://host-a:8080/actuator/health"
    assert fields["leaseInfo.durationInSecs"] == "600"
    assert fields["metadata.management.port"] == "8080"
    document = json.loads(ok(server, "instance", f"{app}-1", "--json", "--format", fmt).stdout)
    assert document["instance"]["instanceId"] == f"{app}-1"


@pytest.mark.parametrize("fmt", FORMATS)
def test_status_set_and_clear(server, fmt):
    app = f"CLI-STATUS-{fmt.upper()}"
    register(server, app, f"{app}-1")
    ok(server, "status", "set", app, f"{app}-1", "out_of_service", "--format", fmt)
    instance = stored(server, app, f"{app}-1")
    assert (instance["status"], instance["overriddenStatus"]) == ("OUT_OF_SERVICE", "OUT_OF_SERVICE")
    ok(server, "status", "clear", app, f"{app}-1", "--value", "UP", "--format", fmt)
    instance = stored(server, app, f"{app}-1")
    assert (instance["status"], instance["overriddenStatus"]) == ("UP", "UNKNOWN")
    # Without --value the instance is left UNKNOWN, as Spring's CANCEL_OVERRIDE leaves it (a
    # clear with no override in place changes nothing, on both servers).
    ok(server, "status", "set", app, f"{app}-1", "DOWN", "--format", fmt)
    ok(server, "status", "clear", app, f"{app}-1", "--format", fmt)
    instance = stored(server, app, f"{app}-1")
    assert (instance["status"], instance["overriddenStatus"]) == ("UNKNOWN", "UNKNOWN")


@pytest.mark.parametrize("fmt", FORMATS)
def test_metadata_set_merges(server, fmt):
    app = f"CLI-META-{fmt.upper()}"
    register(server, app, f"{app}-1")
    run = ok(server, "metadata", "set", app, f"{app}-1", "zone=east", "owner=team a", "--json", "--format", fmt)
    assert json.loads(run.stdout)["action"] == "metadata-set"
    metadata = stored(server, app, f"{app}-1")["metadata"]
    assert metadata["zone"] == "east" and metadata["owner"] == "team a"
    assert metadata["management.port"] == "8080"
    assert rows(ok(server, "app", app, "--format", fmt))[1][6] == "east"


@pytest.mark.parametrize("fmt", FORMATS)
def test_deregister_then_not_found(server, fmt):
    app = f"CLI-BYE-{fmt.upper()}"
    register(server, app, f"{app}-1")
    ok(server, "deregister", app, f"{app}-1", "--format", fmt)
    assert stored(server, app, f"{app}-1") is None
    for args in (["deregister", app, f"{app}-1"], ["instance", f"{app}-1"], ["app", "CLI-NO-SUCH-APP"],
                 ["status", "set", app, f"{app}-1", "UP"], ["metadata", "set", app, f"{app}-1", "a=b"]):
        run = heureka(server, *args, "--format", fmt)
        assert run.returncode == 1, f"heureka {args}: rc={run.returncode}\n{run.stderr}"
        assert "404" in run.stderr


def test_an_unreachable_server_exits_3():
    argv = [str(procs.HeurekaServer.binary()), "apps", "--eureka",
            f"http://127.0.0.1:{procs.free_port()}/eureka/"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=PATIENCE, env=cli_env())
    assert run.returncode == 3, run.stderr


def start_watch(server, *args: str, ready: str) -> subprocess.Popen:
    argv = [str(procs.HeurekaServer.binary()), "watch", *args, "--eureka", server.service_url]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
    deadline = time.monotonic() + PATIENCE
    said = ""
    while ready not in said:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            proc.kill()
            _, rest = proc.communicate()
            pytest.fail(f"watch never said {ready!r} (exit {proc.returncode}):\n{said}{rest}")
        readable, _, _ = select.select([proc.stderr], [], [], left)
        if readable:
            said += proc.stderr.readline()
    return proc


def changes_of(proc) -> list[dict]:
    try:
        out, err = proc.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_watch_prints_changes_by_polling_the_delta(server, fmt):
    """On Java without --poll: it finds no event stream and polls by itself. One change per
    watch, since changes between two polls are coalesced."""
    app = f"CLI-WATCH-{fmt.upper()}"
    args = ["--interval", "0.2", "--count", "1", "--json", "--format", fmt]
    if server.kind == "heureka":
        args.append("--poll")

    def one_change(make) -> dict:
        proc = start_watch(server, app, *args, ready="watching by polling")
        make()
        changes = changes_of(proc)
        assert len(changes) == 1, changes
        return changes[0]

    added = one_change(lambda: register(server, app, f"{app}-1"))
    assert (added["action"], added["app"], added["id"], added["status"]) == ("ADDED", app, f"{app}-1", "UP")
    modified = one_change(lambda: ok(server, "status", "set", app, f"{app}-1", "DOWN"))
    assert (modified["action"], modified["status"], modified["overriddenStatus"]) == ("MODIFIED", "DOWN", "DOWN")
    deleted = one_change(lambda: ok(server, "deregister", app, f"{app}-1"))
    assert (deleted["action"], deleted["id"]) == ("DELETED", f"{app}-1")
