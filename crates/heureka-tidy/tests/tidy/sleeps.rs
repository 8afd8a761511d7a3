//! No fixed sleeps in tests: a test that waits in real time is slow, and flaky on a loaded
//! machine; timers are tested on paused Tokio time. The waits left are counted against a
//! committed ceiling, so that a new one is a conscious choice (raise the ceiling in the same
//! commit and say why) and removing one can lower it.

use crate::workspace::{calls, lines_matching, rust_files, Site, Source, Tests};

/// Real-time sleeps in test code today (each printed by the test): polling loops in the
/// server's and the binary's integration tests, `eventually`'s own among them (9 before issue
/// 17; the two copies of `eventually` it merged into heureka-testkit took their sleeps along;
/// 7 -> 8, issue 21: the consumer that `heureka drain` waits for, fetching every 200 ms as a
/// client does while the command runs in its own process; 8 -> 9, issue 37: the log thread's
/// linger is about lines that arrive spaced in time, so its test logs one every 300 µs,
/// `heureka/src/logging/linger/tests.rs`).
const REAL_TIME_SLEEPS_CEILING: usize = 9;

/// `eventually(...)` calls in test code today: each polls in real time until its condition
/// holds. (31 before issue 17, plus the health tests' two polls of a helper of their own,
/// which became calls of the shared one: 33; then 33 -> 17, the client tests awaiting the
/// client's own event that causes what they check instead of polling for it; then 17 -> 18,
/// issue 18: a node must open while its only peer is starting, and the only sign of that is
/// its reads turning 200, which a test can only poll for; then 18 -> 19, issue 19: the server
/// learns that an event stream's client left only when its next keep-alive comment cannot be
/// written, and the only sign of that is its count of open streams, which a test can only
/// poll for; then 19 -> 21, issue 20: a server process watching its certificate files on its
/// own clock, and three server processes replicating over HTTPS, show it only on a new
/// connection, which a test can only poll for; then 21 -> 24, issue 21: the server's health
/// checks probe instances over real sockets on its own clock, and what they decide shows
/// only in the registry a node serves, its health-checks view, and the probes an instance
/// receives: one helper each in `heureka-server/tests/it/health_checks.rs`; then 24 -> 18,
/// the client's sidecar tests waiting through one helper of their own instead of eight
/// calls; then 18 -> 19, issue 21's drain over two nodes: the override reaches the peer by
/// replication, which shows only in the peer's registry; then 19 -> 22, issue 22: a real
/// process's store reaching the disk (its health's `pendingRecords`), a restored node taking
/// its peer's later writes (anti-entropy between two processes), and the peer staying without
/// the cancelled instance over several rounds, each seen only in what a process serves; then
/// 22 -> 26, issue 38: a restored node's first read after its start-up sync (it answers 403
/// until then, on its own clock: `restore_sync.rs`), a store on a full disk failing twice and
/// recovering once the disk is freed (the flush task's attempts back off on the process's own
/// clock: three waits in `persistence.rs`'s full-disk test); then 26 -> 27, issue 34: a remote region
/// is fetched by its server's own task on its own clock, and what it fetched shows only in
/// what that server serves: one helper in `heureka-server/tests/it/regions.rs`; then 27 -> 28,
/// issue 35: the xDS port gives a connection slot back when the server's connection task sees
/// the client's close, which a client learns only by connecting again: `tests/it/xds.rs`; then
/// 28 -> 30, issue 36: a namespace's writes reaching it on a peer by replication, its start-up
/// sync or anti-entropy (one helper), and a namespace's queue for a peer without namespaces
/// emptied by its dispatcher: `tests/it/namespaced_cluster.rs`.)
const EVENTUALLY_CALLS_CEILING: usize = 30;

/// `fn eventually` definitions in test code: the one in heureka-testkit.
const EVENTUALLY_DEFINITIONS_CEILING: usize = 1;

/// Where test code lives: every crate (its `tests/`, its `#[cfg(test)]` modules, the
/// test-support crate). The tidy tests themselves are left out: they name what they look for.
fn test_files() -> Vec<Source> {
    rust_files("crates")
        .into_iter()
        .filter(|file| !file.path.starts_with("crates/heureka-tidy/"))
        .collect()
}

/// Whether every Tokio test in `file` starts on paused time, so that its sleeps advance the
/// clock at once instead of waiting.
fn on_paused_time(file: &Source) -> bool {
    let tokio_tests: Vec<&str> = file
        .lines
        .iter()
        .map(|line| line.text.as_str())
        .filter(|text| text.contains("#[tokio::test"))
        .collect();
    !tokio_tests.is_empty()
        && tokio_tests
            .iter()
            .all(|text| text.contains("start_paused = true"))
}

/// A sleep that waits in real time: std's always; Tokio's unless its file runs on paused
/// time.
fn real_time_sleeps(files: &[Source]) -> Vec<Site> {
    lines_matching(files, Tests::Only, |file, line| {
        let text = &line.text;
        let std_sleep = calls(text, "thread::sleep");
        let tokio_sleep = calls(text, "sleep") || calls(text, "sleep_until");
        std_sleep || (tokio_sleep && !on_paused_time(file))
    })
}

fn eventually_calls(files: &[Source]) -> Vec<Site> {
    lines_matching(files, Tests::Only, |_, line| {
        calls(&line.text, "eventually") && !line.text.contains("fn eventually")
    })
}

fn eventually_definitions(files: &[Source]) -> Vec<Site> {
    lines_matching(files, Tests::Only, |_, line| {
        line.text.contains("fn eventually")
    })
}

fn listing(what: &str, sites: &[Site], ceiling: usize) -> String {
    let list: String = sites.iter().map(|site| format!("  {site}\n")).collect();
    format!("{what}: {} (ceiling {ceiling})\n{list}", sites.len())
}

#[test]
fn tests_wait_in_real_time_no_more_than_committed() {
    let files = test_files();
    let counts = [
        (
            "real-time sleeps in tests",
            real_time_sleeps(&files),
            REAL_TIME_SLEEPS_CEILING,
        ),
        (
            "`eventually(` call sites",
            eventually_calls(&files),
            EVENTUALLY_CALLS_CEILING,
        ),
        (
            "`fn eventually` definitions",
            eventually_definitions(&files),
            EVENTUALLY_DEFINITIONS_CEILING,
        ),
    ];
    let report: String = counts
        .iter()
        .map(|(what, sites, ceiling)| listing(what, sites, *ceiling))
        .collect();
    // Printed on success too (`cargo test -p heureka-tidy -- --nocapture`): the issue reports
    // these counts before and after the refactor.
    println!("{report}");
    let over: String = counts
        .iter()
        .filter(|(_, sites, ceiling)| sites.len() > *ceiling)
        .map(|(what, sites, ceiling)| listing(what, sites, *ceiling))
        .collect();
    assert!(
        over.is_empty(),
        "\nRULE: tests wait in real time no more than the committed ceilings (real-time \
         sleeps, `eventually` calls and definitions in test code)\nover the ceiling:\n\
         {over}WHY: a real-time wait makes a test slow and, on a loaded machine, flaky; wait \
         on paused Tokio time (`start_paused = true`, `tokio::time::advance`) or on an event \
         instead. If a real-time wait is the only honest test, raise the ceiling in the same \
         commit and say why.\n"
    );
}
