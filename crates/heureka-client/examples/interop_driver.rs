//! A process around [`EurekaClient`] that the interop tests and `bench/client.py` drive.
//!
//! ```text
//! interop_driver --service-urls http://127.0.0.1:8761/eureka/[,URL...] --app NAME --port N
//!     [--instance-id ID] [--host 127.0.0.1] [--renew-secs 1] [--fetch-secs 1]
//!     [--lease-secs 90] [--quarantine-secs 30] [--watch APP[,APP...]] [--poll-ms 20]
//!     [--tls KEY=VALUE]... [--region R] [--fetch-regions R1[,R2...]] [--zone Z]
//!     [--zones REGION=Z1[,Z2...]]...
//! ```
//!
//! `--tls trust-store=/ca.p12` is `eureka.client.tls.trust-store=/ca.p12` (with
//! `eureka.client.tls.enabled=true`), read as a Spring application's keys are. `--region`,
//! `--fetch-regions` and `--zones` are `eureka.client.region`,
//! `eureka.client.fetch-remote-regions-registry` and `eureka.client.availability-zones.<region>`;
//! `--zone` is the instance's metadata `zone`. Each instance listed carries the `region` the
//! client places it in.
//!
//! It prints one JSON object per line on stdout:
//! `{"event":"started",...}` once registered (or `start_failed` and exit 1);
//! `{"event":"refresh","counts":{"full":F,"deltas":D,"pushed":P,"snapshots":S},"apps":{APP:[...]},...}`
//! after every successful refresh of the local copy (a fetch, or what a Heureka server pushed:
//! `deltas` counts both kinds of delta, `pushed` those of them that were pushed), with the `UP`
//! instances it holds for each watched app; and one answer per command read from stdin:
//! `watch APP` (add APP to the watched apps), `instances APP`, `counts`, `shutdown`, and
//!
//! ```text
//! call APP PATH [strategy=round_robin|random|weighted] [zone=Z] [meta=KEY=VALUE]...
//!     [attempts=N] [times=N]
//! ```
//!
//! which sends `GET http://APP/PATH` `times` times (1 by default) through one
//! [`DiscoveryHttpClient`] over the client's local copy, with a [`Selector`] built from the
//! options, and answers `{"event":"call","app":APP,"results":[...]}`: per call either
//! `{"ok":true,"status":S,"body":B,"instance":ID,"attempts":N}` or
//! `{"ok":false,"error":KIND,"attempts":N,"message":M}`, KIND one of `no_instance`,
//! `unreachable`, `request`, `bad_address`, `no_application`, `build`.
//! `shutdown`, the end of stdin and SIGTERM all cancel the registration and exit.
//!
//! The client has no refresh callback, so the driver notices a refresh by polling the fetch
//! counts every `--poll-ms`; each successful refresh moves one of them.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heureka_client::{
    ClientConfig, DiscoveryError, DiscoveryHttpClient, EurekaClient, FetchCounts, Selector,
    ServedBy, Strategy,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::{signal, SignalKind};

struct Args {
    config: ClientConfig,
    watch: BTreeSet<String>,
    poll: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut urls = Vec::new();
    let (mut app, mut instance_id, mut host, mut port) = (None, None, "127.0.0.1".to_owned(), None);
    let secs = |value: &str| value.parse::<u64>().map(Duration::from_secs);
    let (mut renew, mut fetch, mut lease, mut quarantine) = (None, None, None, None);
    let mut watch = BTreeSet::new();
    let mut poll = Duration::from_millis(20);
    let mut tls = Vec::new();
    let (mut region, mut fetch_regions, mut zone) = (None, Vec::new(), None);
    let mut zones = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: std::num::ParseIntError| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--service-urls" => urls = value.split(',').map(str::to_owned).collect(),
            "--app" => app = Some(value),
            "--instance-id" => instance_id = Some(value),
            "--host" => host = value,
            "--port" => port = Some(value.parse::<u16>().map_err(bad)?),
            "--renew-secs" => renew = Some(secs(&value).map_err(bad)?),
            "--fetch-secs" => fetch = Some(secs(&value).map_err(bad)?),
            "--lease-secs" => lease = Some(secs(&value).map_err(bad)?),
            "--quarantine-secs" => quarantine = Some(secs(&value).map_err(bad)?),
            "--watch" => watch.extend(value.split(',').map(str::to_uppercase)),
            "--poll-ms" => poll = Duration::from_millis(value.parse().map_err(bad)?),
            "--tls" => {
                let (key, setting) = value
                    .split_once('=')
                    .ok_or(format!("--tls {value}: not KEY=VALUE"))?;
                tls.push((format!("eureka.client.tls.{key}"), setting.to_owned()));
            }
            "--region" => region = Some(value),
            "--fetch-regions" => fetch_regions = value.split(',').map(str::to_owned).collect(),
            "--zone" => zone = Some(value),
            "--zones" => {
                let (name, list) = value
                    .split_once('=')
                    .ok_or(format!("--zones {value}: not REGION=Z1,Z2"))?;
                let list: Vec<String> = list.split(',').map(str::to_owned).collect();
                zones.push((name.to_owned(), list));
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let app = app.ok_or("--app is required")?;
    let port = port.ok_or("--port is required")?;
    let instance_id =
        instance_id.unwrap_or_else(|| format!("{host}:{}:{port}", app.to_lowercase()));
    let mut config = ClientConfig::new(urls, &app, &instance_id, &host, &host, port);
    config.lease_renewal_interval = renew.unwrap_or(config.lease_renewal_interval);
    config.registry_fetch_interval = fetch.unwrap_or(config.registry_fetch_interval);
    config.lease_duration = lease.unwrap_or(config.lease_duration);
    config.quarantine = quarantine.unwrap_or(config.quarantine);
    config.region = region.unwrap_or(config.region);
    config.fetch_remote_regions_registry = fetch_regions;
    config.availability_zones.extend(zones);
    if let Some(zone) = zone {
        config.metadata.insert("zone".to_owned(), zone);
    }
    if !tls.is_empty() {
        let enabled = ("eureka.client.tls.enabled".to_owned(), "true".to_owned());
        let keys = tls.iter().chain([&enabled]);
        config.tls = ClientConfig::from_properties(keys.map(|(k, v)| (k.as_str(), v.as_str())))
            .map_err(|error| error.to_string())?
            .tls;
    }
    Ok(Args {
        config,
        watch,
        poll,
    })
}

fn emit(event: Value) {
    // println! locks stdout per call, so lines never interleave; the reader needs them at once
    println!("{event}");
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// `full`: full fetches; `deltas`: deltas applied, fetched or pushed (a change that came in a
/// delta rather than a full fetch, whichever way); `pushed` of them pushed; `snapshots`: the
/// snapshots the push replaced the copy with.
fn counts_json(counts: FetchCounts) -> Value {
    json!({"full": counts.full, "deltas": counts.deltas + counts.pushed,
           "pushed": counts.pushed, "snapshots": counts.snapshots})
}

fn up_instances(client: &EurekaClient, app: &str) -> Value {
    let mut instances: Vec<Value> = client
        .instances(app)
        .iter()
        .map(|i| {
            let region = client.region_checker().instance_region(i);
            json!({"id": i.id(), "status": i.status.as_str(), "port": i.port.number,
                   "region": region})
        })
        .collect();
    // the client shuffles; a sorted list is easier to compare
    instances.sort_by_key(|i| i["id"].as_str().map(str::to_owned));
    Value::Array(instances)
}

fn watched(client: &EurekaClient, watch: &BTreeSet<String>) -> Value {
    watch
        .iter()
        .map(|app| (app.clone(), up_instances(client, app)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// One `call` command: what to call, how to choose, how often.
struct Call {
    app: String,
    path: String,
    selector: Selector,
    attempts: usize,
    times: usize,
}

fn parse_call(app: &str, path: &str, options: &[&str]) -> Result<Call, String> {
    let mut strategy = Strategy::RoundRobin;
    let mut zone = None;
    let mut metadata = Vec::new();
    let mut attempts = DiscoveryHttpClient::<EurekaClient>::DEFAULT_MAX_ATTEMPTS;
    let mut times = 1;
    for option in options {
        let (key, value) = option
            .split_once('=')
            .ok_or(format!("option {option:?} is not KEY=VALUE"))?;
        let count = |value: &str| {
            value
                .parse::<usize>()
                .map_err(|e| format!("{option:?}: {e}"))
        };
        match key {
            "strategy" => {
                strategy = match value {
                    "round_robin" => Strategy::RoundRobin,
                    "random" => Strategy::Random,
                    "weighted" => Strategy::Weighted,
                    _ => return Err(format!("unknown strategy {value:?}")),
                }
            }
            "zone" => zone = Some(value.to_owned()),
            "meta" => metadata.push(
                value
                    .split_once('=')
                    .ok_or(format!("meta {value:?} is not KEY=VALUE"))?,
            ),
            "attempts" => attempts = count(value)?,
            "times" => times = count(value)?,
            _ => return Err(format!("unknown option {key:?}")),
        }
    }
    let mut selector = Selector::new(strategy);
    if let Some(zone) = zone {
        selector = selector.prefer_zone(&zone);
    }
    for (key, value) in metadata {
        selector = selector.require_metadata(key, value);
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    Ok(Call {
        app: app.to_owned(),
        path: path.to_owned(),
        selector,
        attempts,
        times,
    })
}

/// Runs `call`, one call after another, and answers with every result. `http` is the driver's
/// one reqwest client, so that connections kept alive by earlier calls are reused, as in a
/// service, and a killed instance leaves stale ones in its pool.
async fn run_call(http: &reqwest::Client, client: &EurekaClient, call: Call) -> Value {
    let calls =
        DiscoveryHttpClient::new(http.clone(), client, call.selector).max_attempts(call.attempts);
    let url = format!("http://{}/{}", call.app, call.path);
    let mut results = Vec::new();
    for _ in 0..call.times {
        results.push(match calls.get(url.as_str()).send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                let served = response.extensions().get::<ServedBy>().cloned();
                let body = response.text().await.unwrap_or_default();
                json!({"ok": true, "status": status, "body": body,
                       "instance": served.as_ref().map(|s| s.instance_id.clone()),
                       "attempts": served.map(|s| s.attempts)})
            }
            Err(error) => {
                let (kind, attempts) = match &error {
                    DiscoveryError::NoInstance { .. } => ("no_instance", 0),
                    DiscoveryError::Unreachable { attempts, .. } => ("unreachable", *attempts),
                    DiscoveryError::Request { .. } => ("request", 1),
                    DiscoveryError::BadAddress { .. } => ("bad_address", 0),
                    DiscoveryError::NoApplication { .. } => ("no_application", 0),
                    DiscoveryError::Build(_) => ("build", 0),
                };
                json!({"ok": false, "error": kind, "attempts": attempts, "message": error.to_string()})
            }
        });
    }
    json!({"event": "call", "app": call.app.to_uppercase(), "results": results})
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "heureka_client=info".into()),
        )
        .init();
    let Args {
        config,
        mut watch,
        poll,
    } = match parse_args() {
        Ok(args) => args,
        Err(error) => {
            eprintln!("interop_driver: {error}");
            std::process::exit(2);
        }
    };
    let instance_id = config.instance_id.clone();
    let client = match EurekaClient::start(config).await {
        Ok(client) => client,
        Err(error) => {
            emit(json!({"event": "start_failed", "error": error.to_string()}));
            std::process::exit(1);
        }
    };
    let mut last = client.fetch_counts();
    emit(
        json!({"event": "started", "instance_id": instance_id, "pid": std::process::id(),
                "counts": counts_json(last), "apps": watched(&client, &watch)}),
    );

    // a bound on each attempt, so that a hung instance cannot stall the driver; instances
    // are called with the public roots, the registry's trust being for the registry
    let http = heureka_client::ClientTls::reqwest_builder(None)
        .expect("the public roots")
        .timeout(Duration::from_secs(10))
        .build()
        .expect("reqwest client");
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut sigterm = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut ticks = tokio::time::interval(poll);
    loop {
        tokio::select! {
            _ = ticks.tick() => {
                let counts = client.fetch_counts();
                if counts != last {
                    last = counts;
                    emit(json!({"event": "refresh", "at_ms": now_ms(), "counts": counts_json(counts),
                                "apps": watched(&client, &watch)}));
                }
            }
            line = lines.next_line() => {
                let line = line.ok().flatten();
                let words: Vec<&str> = line.as_deref().unwrap_or("shutdown").split_whitespace().collect();
                match words.as_slice() {
                    ["watch", app] => {
                        watch.insert(app.to_uppercase());
                        emit(json!({"event": "watching", "apps": watched(&client, &watch)}));
                    }
                    ["instances", app] => emit(json!({"event": "instances", "app": app.to_uppercase(),
                                                      "instances": up_instances(&client, app)})),
                    ["counts"] => emit(json!({"event": "counts", "counts": counts_json(client.fetch_counts())})),
                    ["call", app, path, options @ ..] => match parse_call(app, path, options) {
                        Ok(call) => emit(run_call(&http, &client, call).await),
                        Err(error) => emit(json!({"event": "error", "error": error})),
                    },
                    ["shutdown"] => break,
                    [] => {}
                    _ => emit(json!({"event": "error", "error": format!("unknown command {line:?}")})),
                }
            }
            _ = sigterm.recv() => break,
        }
    }
    let result = client.shutdown().await;
    emit(json!({"event": "shutdown", "ok": result.is_ok(),
                "error": result.err().map(|e| e.to_string())}));
    // Exit now: after SIGTERM the runtime's blocking stdin read still waits for a line, and
    // returning would drop the runtime, which waits for that read until the parent closes stdin
    // (the interop harness SIGKILLed the driver 20 s later).
    std::process::exit(0);
}
