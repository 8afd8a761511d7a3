//! `heureka regions`: the remote regions a Heureka server fetches (`GET {base}/regions`, JSON
//! only), one line each: REGION STATE APPS INSTANCES LAST-SUCCESS LAG URL, then the last error
//! of each region whose last fetch failed. With `--json`, the document itself.

use heureka_core::Millis;
use heureka_wire::{decode_regions, RegionView, RegionsDoc};

use crate::error::CliError;
use crate::eureka::Eureka;
use crate::render;

/// The table's columns.
const HEADERS: [&str; 7] = [
    "REGION",
    "STATE",
    "APPS",
    "INSTANCES",
    "LAST-SUCCESS",
    "LAG",
    "URL",
];

pub(crate) async fn run(eureka: &Eureka, as_json: bool) -> Result<(), CliError> {
    let path = ["regions"];
    let call = eureka.get(
        &path,
        "no /regions here: not a Heureka server, or one from before remote regions".to_owned(),
    );
    let answer = eureka.expect_ok(&call).await?;
    let (_, body) = answer.body(eureka.format()).await?;
    let doc = decode_regions(&body).map_err(|error| {
        CliError::Server(format!(
            "GET regions: the answer does not decode: {error} (is this a Heureka server?)"
        ))
    })?;
    if as_json {
        println!(
            "{}",
            String::from_utf8_lossy(&heureka_wire::encode_regions(&doc))
        );
    } else {
        print!("{}", report(&doc, render::now_ms()));
    }
    Ok(())
}

/// The table, or a line saying there is no remote region; then one line per failing region.
fn report(doc: &RegionsDoc, now: Millis) -> String {
    if doc.regions.is_empty() {
        return format!(
            "no remote regions: {} fetches none (eureka.server.remote-region-urls-with-name)\n",
            render::printable(&doc.region)
        );
    }
    let rows: Vec<Vec<String>> = doc.regions.iter().map(|view| row(view, now)).collect();
    let mut text = render::table(&HEADERS, &rows);
    for view in &doc.regions {
        if let Some(error) = &view.error {
            text.push_str(&format!(
                "{}: last fetch failed: {}\n",
                render::printable(&view.name),
                render::printable(error)
            ));
        }
    }
    text
}

fn row(view: &RegionView, now: Millis) -> Vec<String> {
    vec![
        view.name.clone(),
        view.state.clone(),
        view.applications.to_string(),
        view.instances.to_string(),
        last_success(view, now),
        lag(view.lag_ms),
        view.url.clone(),
    ]
}

/// How long ago the last success was, `4s ago`, or `-` when never. The server's lag is used
/// when it gives one, so that a clock that differs from the server's does not shift the age.
fn last_success(view: &RegionView, now: Millis) -> String {
    match (view.last_success, view.lag_ms) {
        (None, _) => "-".to_owned(),
        (Some(_), Some(lag)) => render::age(now, now - lag),
        (Some(at), None) => render::age(now, at),
    }
}

/// The lag in seconds, to a tenth; `-` before the first success.
fn lag(lag_ms: Option<i64>) -> String {
    match lag_ms {
        Some(ms) => format!("{:.1}", ms.max(0) as f64 / 1000.0),
        None => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use heureka_wire::FetchCounts;

    use super::*;

    const NOW: Millis = 1_733_400_010_000;

    fn region(name: &str, state: &str, last_success: Option<Millis>) -> RegionView {
        RegionView {
            name: name.to_owned(),
            url: format!("http://{name}:8761/eureka/"),
            state: state.to_owned(),
            last_success,
            last_attempt: last_success,
            lag_ms: last_success.map(|at| NOW - at),
            stale_after_ms: 600_000,
            applications: 3,
            instances: 12,
            error: None,
            fetches: FetchCounts::default(),
        }
    }

    #[test]
    fn one_line_per_region_with_the_age_and_lag_of_its_last_success() {
        let doc = RegionsDoc {
            region: "us-east-1".to_owned(),
            fallback: true,
            regions: vec![
                region("us-west", "ready", Some(NOW - 4_200)),
                region("eu-west", "starting", None),
            ],
        };
        assert_eq!(
            report(&doc, NOW),
            "REGION   STATE     APPS  INSTANCES  LAST-SUCCESS  LAG  URL\n\
             us-west  ready     3     12         4s ago        4.2  http://us-west:8761/eureka/\n\
             eu-west  starting  3     12         -             -    http://eu-west:8761/eureka/\n"
        );
    }

    #[test]
    fn a_region_whose_fetch_failed_has_its_error_under_the_table() {
        let mut stale = region("us-west", "stale", Some(NOW - 90_000));
        stale.error = Some("connection refused".to_owned());
        let doc = RegionsDoc {
            region: "us-east-1".to_owned(),
            fallback: true,
            regions: vec![stale],
        };
        let text = report(&doc, NOW);
        assert!(text.contains(" 90s ago "), "{text}");
        assert!(
            text.ends_with("us-west: last fetch failed: connection refused\n"),
            "{text}"
        );
    }

    #[test]
    fn a_server_without_remote_regions_says_so() {
        let doc = RegionsDoc {
            region: "us-east-1".to_owned(),
            ..RegionsDoc::default()
        };
        assert!(report(&doc, NOW).starts_with("no remote regions: us-east-1 fetches none"));
    }
}
