//! `heureka drain APP ID [--timeout S] [--deregister]`: takes an instance out of service
//! (`PUT {base}/apps/APP/ID/drain`, an OUT_OF_SERVICE override), then waits until every consumer
//! that fetches periodically and fetched from the cluster recently has fetched a registry
//! version holding it (`GET …/drain`, asked four times a second: a push consumer confirms as
//! soon as it applied the change, `docs/push.md`), or the timeout passes; prints who
//! confirmed and who did not, the one-off readers apart (never waited for: they will not
//! fetch again), and optionally deregisters the instance once all confirmed. For a rolling
//! deploy's step or a Kubernetes `preStop` hook (docs/deploy.md).

use std::time::Duration;

use heureka_wire::{ConsumerView, ConsumersDoc};
use reqwest::Method;
use serde_json::json;

use crate::error::CliError;
use crate::eureka::{Call, Eureka};
use crate::render;

/// How often the progress is asked: often enough that a drain whose consumers follow the push
/// returns within moments of their acknowledgments.
const ASK_EVERY: Duration = Duration::from_millis(250);

pub(crate) async fn run(
    eureka: &Eureka,
    app: &str,
    id: &str,
    timeout: Duration,
    deregister: bool,
    as_json: bool,
) -> Result<(), CliError> {
    let path = ["apps", app, id, "drain"];
    let what = format!("no instance {id} in {app}");
    let start = Call {
        method: Method::PUT,
        path: &path,
        query: &[],
        what: what.clone(),
    };
    let mut progress = read(eureka, &start).await?;
    if !as_json {
        println!(
            "{app}/{id}: OUT_OF_SERVICE; waiting up to {} s for the consumers that fetched recently",
            timeout.as_secs()
        );
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let ask = eureka.get(&path, what.clone());
    while !all_confirmed(&progress) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(ASK_EVERY).await;
        progress = read(eureka, &ask).await?;
    }
    let confirmed = all_confirmed(&progress);
    if as_json {
        println!(
            "{}",
            String::from_utf8_lossy(&heureka_wire::encode_consumers(&progress))
        );
    } else {
        print!("{}", report(&progress));
    }
    if !confirmed {
        let waiting = progress
            .consumers
            .iter()
            .filter(|consumer| consumer.confirmed != Some(true))
            .count();
        return Err(CliError::Unconfirmed(format!(
            "{app}/{id}: {waiting} consumer(s) did not fetch the change within {} s; not deregistered",
            timeout.as_secs()
        )));
    }
    if deregister {
        let call = Call {
            method: Method::DELETE,
            path: &["apps", app, id],
            query: &[],
            what,
        };
        eureka.expect_ok(&call).await?;
        if !as_json {
            println!("{app}/{id}: deregistered");
        } else {
            println!("{}", json!({"deregistered": true}));
        }
    }
    Ok(())
}

async fn read(eureka: &Eureka, call: &Call<'_>) -> Result<ConsumersDoc, CliError> {
    let answer = eureka.expect_ok(call).await?;
    let (_, body) = answer.body(eureka.format()).await?;
    heureka_wire::decode_consumers(&body).map_err(|error| {
        CliError::Server(format!(
            "{} {}: the answer does not decode: {error} (is this a Heureka server?)",
            call.method,
            call.path.join("/")
        ))
    })
}

/// Every consumer holds the change (none at all counts as all).
fn all_confirmed(progress: &ConsumersDoc) -> bool {
    progress
        .consumers
        .iter()
        .all(|consumer| consumer.confirmed == Some(true))
}

/// One line per consumer, confirmed first, then the one-off readers (not waited for), then
/// the nodes whose consumers could not be asked.
fn report(progress: &ConsumersDoc) -> String {
    let now = progress.now;
    let row = |first: &str, consumer: &ConsumerView| {
        let ago = (now - consumer.last_fetch).max(0) / 1000;
        let follows = if consumer.push { "push" } else { "fetch" };
        vec![
            first.to_owned(),
            consumer.address.clone(),
            consumer.agent.clone(),
            consumer.node.clone(),
            format!("{ago} s ago"),
            follows.to_owned(),
        ]
    };
    let mut rows: Vec<Vec<String>> = progress
        .consumers
        .iter()
        .map(|consumer| {
            let first = if consumer.confirmed == Some(true) {
                "confirmed"
            } else {
                "NOT CONFIRMED"
            };
            row(first, consumer)
        })
        .collect();
    rows.sort_by(|a, b| b[0].cmp(&a[0]).then(a[1].cmp(&b[1])));
    // Last, so that a script reading the first column sees the consumers first.
    let mut readers: Vec<Vec<String>> = progress
        .readers
        .iter()
        .map(|reader| row("one-off read", reader))
        .collect();
    readers.sort_by(|a, b| a[1].cmp(&b[1]));
    let none = rows.is_empty();
    rows.extend(readers);
    let mut text = if rows.is_empty() {
        "no consumer fetched from the cluster recently\n".to_owned()
    } else {
        render::table(
            &["", "ADDRESS", "CLIENT", "NODE", "LAST FETCH", "FOLLOWS"],
            &rows,
        )
    };
    if none && !progress.readers.is_empty() {
        text.push_str("no consumer that fetches periodically fetched from the cluster recently\n");
    }
    match progress.readers.len() {
        0 => {}
        1 => text.push_str(
            "not waited for: 1 one-off read (not a Eureka client's, and not at a steady pace)\n",
        ),
        n => text.push_str(&format!(
            "not waited for: {n} one-off reads (not Eureka clients', and not at a steady pace)\n"
        )),
    }
    for node in &progress.unseen {
        text.push_str(&format!(
            "warning: the consumers of {node} could not be asked (a Java server, or down)\n"
        ));
    }
    text
}
