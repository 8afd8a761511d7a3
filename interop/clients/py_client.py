#!/usr/bin/env python3
"""A long-running application using the real py-eureka-client (0.13.x), for the interop suite.

It registers under --app with its HTTP port --port (a real HTTP server listens there),
heartbeats and fetches every --interval seconds, and answers on 127.0.0.1:PORT:

  GET /whoami              -> {"client": "python", "app": ..., "instanceId": ...}
  GET /discovery           -> {APP: [instance, ...]} from eureka_client.get_client().applications
  GET /lookup/APP          -> [instance, ...] from applications.get_application(APP)
  GET /walk/APP?service=/p -> eureka_client.do_service(APP, /p, return_type="json"): calls /p on an
                              UP instance of APP found through the registry (py-eureka-client's walk_nodes)

SIGTERM / SIGINT -> eureka_client.stop() (re-registers DOWN, then DELETE), then exit 0.

HTTPS: give --server an https:// URL. py-eureka-client 0.13 has no TLS setting; it sends through
httpx.AsyncClient with default verification, which trusts the PEM file named by the environment
variable SSL_CERT_FILE instead of certifi's bundle: set that to a private CA (the suite does).

--remote-regions us-west,eu-central: py-eureka-client's remote_regions (its fetches ask for those
regions' instances too, `regions=` on apps/ and apps/delta); not given, the client is initialised
exactly as without the flag.

usage: py_client.py --server http://127.0.0.1:8761/eureka --app py-interop --port 9090
                    [--interval 1] [--metadata '{"k": "v"}'] [--remote-regions r1,r2]
"""
import argparse
import json
import signal
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

import py_eureka_client.eureka_client as ec

import py_eureka_lock

T0 = time.time()


def log(*parts):
    print(f"[{time.time() - T0:7.2f}s]", *parts, flush=True)


def instance_dict(i):
    port = i.port
    sport = i.securePort
    return {
        "instanceId": i.instanceId,
        "app": i.app,
        "hostName": i.hostName,
        "ipAddr": i.ipAddr,
        "status": i.status,
        "overriddenstatus": i.overriddenstatus,
        "port": port.port if port else None,
        "portEnabled": port.enabled if port else None,
        "securePort": sport.port if sport else None,
        "securePortEnabled": sport.enabled if sport else None,
        "vipAddress": i.vipAddress,
        "secureVipAddress": i.secureVipAddress,
        "metadata": dict(i.metadata or {}),
        "actionType": i.actionType,
        "lastDirtyTimestamp": i.lastDirtyTimestamp,
    }


class Stop(BaseException):   # not an Exception: handlers must not swallow it
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="eureka service URL, e.g. http://127.0.0.1:8761/eureka")
    ap.add_argument("--app", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--interval", type=int, default=1)
    ap.add_argument("--metadata", default="{}")
    ap.add_argument("--remote-regions", default="", help="comma-separated remote regions to fetch too")
    args = ap.parse_args()
    metadata = json.loads(args.metadata)
    extra = {}
    if args.remote_regions:
        extra["remote_regions"] = [r.strip() for r in args.remote_regions.split(",") if r.strip()]

    # Bind first: the port we register is a real endpoint.
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *a):
            pass

        def reply(self, code, obj):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            parts = [urllib.parse.unquote(p) for p in url.path.split("/") if p]
            try:
                if parts == ["whoami"]:
                    return self.reply(200, {"client": "python", "app": args.app.upper(),
                                            "port": args.port})
                client = ec.get_client()
                if parts == ["discovery"]:
                    apps = client.applications
                    return self.reply(200, {a.name: [instance_dict(i) for i in a.instances]
                                            for a in apps.applications})
                if len(parts) == 2 and parts[0] == "lookup":
                    app = client.applications.get_application(parts[1])
                    return self.reply(200, [instance_dict(i) for i in app.instances] if app else [])
                if len(parts) == 2 and parts[0] == "walk":
                    service = urllib.parse.parse_qs(url.query).get("service", ["/whoami"])[0]
                    try:
                        res = ec.do_service(app_name=parts[1], service=service, return_type="json",
                                            timeout=5)
                    except Exception as exc:  # noqa: BLE001
                        return self.reply(502, {"error": f"{type(exc).__name__}: {exc}"})
                    return self.reply(200, {"response": res})
                return self.reply(404, {"error": "no such endpoint"})
            except Exception as exc:  # noqa: BLE001
                log("handler error", type(exc).__name__, exc)
                return self.reply(500, {"error": f"{type(exc).__name__}: {exc}"})

    httpd = HTTPServer(("127.0.0.1", args.port), Handler)
    httpd.timeout = 0.5

    def on_error(kind, exc):
        log(f"ON_ERROR {kind}: {type(exc).__name__}: {str(exc)[:300]}")

    def on_signal(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # one graceful stop is enough
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise Stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    log(f"init: server={args.server} app={args.app} port={args.port} metadata={metadata} {extra}")
    py_eureka_lock.install()   # py-eureka-client 0.13's heartbeat deadlock, see there
    ec.init(eureka_server=args.server, app_name=args.app,
            instance_host="127.0.0.1", instance_ip="127.0.0.1", instance_port=args.port,
            renewal_interval_in_secs=args.interval, duration_in_secs=args.interval * 3,
            metadata=metadata, on_error=on_error, **extra)
    log("registered; serving")
    try:
        while True:
            httpd.handle_request()
    except Stop:
        log("signal received: stopping the eureka client (DOWN + DELETE)")
    finally:
        try:
            ec.stop()
            log("eureka client stopped")
        except Exception as exc:  # noqa: BLE001
            log("stop failed:", type(exc).__name__, exc)
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
