//! The store on disk: what a restart restores, and what a damaged, truncated or foreign file
//! leaves (the node starts, and says what it recovered).

use std::path::PathBuf;

use heureka_core::{InstanceStatus, Origin, RegistryPolicy};

use super::*;

/// A fresh directory for one test, under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("heureka-persist-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn registry() -> Registry {
    Registry::new(RegistryPolicy::default(), 0)
}

fn config(dir: &Path) -> PersistenceConfig {
    PersistenceConfig {
        dir: Some(dir.display().to_string()),
        flush_interval: Duration::from_secs(1),
    }
}

const NOW: Millis = 1_700_000_000_000;
const RETENTION: Millis = 300_000;

fn open(dir: &Path, registry: &mut Registry) -> Persistence {
    let dir_text = dir.display().to_string();
    Persistence::open(
        &config(dir),
        &dir_text,
        registry,
        NOW,
        RETENTION,
        Arc::new(Metrics::new()),
    )
    .expect("the store opens")
}

/// Writes `n` instances of ORDERS (the second one OUT_OF_SERVICE, the last cancelled) to a
/// store in `dir`, as the flush would.
fn store_with(dir: &Path, n: usize) {
    let mut source = registry();
    for i in 0..n {
        let instance = heureka_core::Instance::new("ORDERS", &format!("o{i}"), "h", "10.0.0.1", 0);
        source.register(instance, Origin::Client, NOW - 1_000);
    }
    assert!(source.set_status_override(
        "ORDERS",
        "o1",
        InstanceStatus::OutOfService,
        None,
        Origin::Client,
        NOW - 900
    ));
    assert!(source.cancel("ORDERS", &format!("o{}", n - 1), Origin::Client, NOW - 800));
    let (file, _) = RegistryFile::open(dir, NOW).expect("opens");
    let rows: Vec<(Key, Vec<u8>)> = source
        .kept_all()
        .iter()
        .map(|kept| {
            (
                (kept.copy.app.clone(), kept.copy.id.clone()),
                encode_kept(kept),
            )
        })
        .collect();
    file.write(&rows, &[]).expect("written");
}

fn file_path(dir: &Path) -> PathBuf {
    dir.join("registry.redb")
}

fn moved_aside(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().contains(".damaged-")
        })
        .count()
}

#[test]
fn a_store_restores_its_instances_overrides_and_removals() {
    let dir = scratch("restores");
    store_with(&dir, 10);
    let mut restored = registry();
    let persistence = open(&dir, &mut restored);
    assert_eq!(restored.registry_size(), 9);
    assert_eq!(
        restored.status_overrides(NOW),
        vec![("o1".to_owned(), InstanceStatus::OutOfService)]
    );
    assert!(
        restored.kept("ORDERS", "o9").is_some(),
        "the cancel's tombstone"
    );
    assert_eq!(persistence.view().restored, 9);
    assert!(restored.take_changes().is_empty());
}

#[test]
fn a_missing_directory_is_made_and_starts_empty() {
    let dir = scratch("missing").join("deeper");
    let mut restored = registry();
    let persistence = open(&dir, &mut restored);
    assert_eq!(restored.registry_size(), 0);
    assert!(file_path(&dir).exists());
    assert_eq!(persistence.view().restored, 0);
}

#[test]
fn a_garbage_file_is_moved_aside_and_the_node_starts_empty() {
    let dir = scratch("garbage");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        file_path(&dir),
        b"this is not a database at all\n".repeat(1000),
    )
    .unwrap();
    let mut restored = registry();
    open(&dir, &mut restored);
    assert_eq!(restored.registry_size(), 0);
    assert_eq!(moved_aside(&dir), 1);
    let (file, _) = RegistryFile::open(&dir, NOW).expect("the fresh store opens");
    assert_eq!(file.len().unwrap(), 0);
}

#[test]
fn a_truncated_file_starts_the_node_with_whatever_it_could_read() {
    let dir = scratch("truncated");
    store_with(&dir, 2_000);
    let full = std::fs::metadata(file_path(&dir)).unwrap().len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(file_path(&dir))
        .unwrap();
    file.set_len(full / 2).unwrap();
    drop(file);
    let mut restored = registry();
    open(&dir, &mut restored);
    assert!(restored.registry_size() < 2_000);
    // Whatever was restored is in the store again, and the store takes writes.
    let (file, _) = RegistryFile::open(&dir, NOW).expect("the store opens");
    assert!(file.len().unwrap() >= restored.registry_size() as u64);
}

#[test]
fn a_foreign_redb_file_is_moved_aside() {
    let dir = scratch("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    {
        let db = redb::Database::create(file_path(&dir)).unwrap();
        let txn = db.begin_write().unwrap();
        let table: redb::TableDefinition<'_, &str, u64> = redb::TableDefinition::new("accounts");
        txn.open_table(table).unwrap().insert("alice", &1).unwrap();
        txn.commit().unwrap();
    }
    let mut restored = registry();
    open(&dir, &mut restored);
    assert_eq!(restored.registry_size(), 0);
    assert_eq!(moved_aside(&dir), 1);
}

#[test]
fn an_unreadable_record_is_dropped_and_the_rest_restored() {
    let dir = scratch("record");
    store_with(&dir, 5);
    {
        let (file, _) = RegistryFile::open(&dir, NOW).unwrap();
        let bad = (
            ("ORDERS".to_owned(), "bad".to_owned()),
            b"{\"kept\":".to_vec(),
        );
        file.write(&[bad], &[]).unwrap();
    }
    let mut restored = registry();
    open(&dir, &mut restored);
    assert_eq!(restored.registry_size(), 4);
    let (file, _) = RegistryFile::open(&dir, NOW).unwrap();
    assert_eq!(
        file.len().unwrap(),
        5,
        "four leases and a tombstone; the bad row is gone"
    );
}

#[test]
fn a_store_of_many_decoding_chunks_restores_every_row_and_drops_only_the_unreadable_one() {
    let dir = scratch("chunks");
    let n = 3 * restore::CHUNK_ROWS + 7;
    store_with(&dir, n);
    {
        // Sorts among the rows of the second chunk.
        let (file, _) = RegistryFile::open(&dir, NOW).unwrap();
        let bad = (("ORDERS".to_owned(), "o6bad".to_owned()), b"[".to_vec());
        file.write(&[bad], &[]).unwrap();
    }
    let mut restored = registry();
    let persistence = open(&dir, &mut restored);
    assert_eq!(
        restored.registry_size(),
        n - 1,
        "all leases but the cancelled one"
    );
    assert_eq!(persistence.view().restored, (n - 1) as u64);
    drop(persistence);
    for id in ["o0", "o600", &format!("o{}", n - 2)] {
        assert!(restored.status_of("ORDERS", id).is_some(), "{id} restored");
    }
    let (file, _) = RegistryFile::open(&dir, NOW).unwrap();
    assert_eq!(file.len().unwrap(), n as u64, "the bad row is gone");
}

#[test]
fn a_removal_older_than_the_retention_is_not_restored_and_its_row_goes() {
    let dir = scratch("expired");
    store_with(&dir, 3);
    let mut restored = registry();
    let dir_text = dir.display().to_string();
    let later = NOW + RETENTION + 1_000;
    Persistence::open(
        &config(&dir),
        &dir_text,
        &mut restored,
        later,
        RETENTION,
        Arc::new(Metrics::new()),
    )
    .expect("opens");
    assert!(restored.kept("ORDERS", "o2").is_none());
    let (file, _) = RegistryFile::open(&dir, NOW).unwrap();
    assert_eq!(file.len().unwrap(), 2);
}

#[test]
fn a_store_another_process_holds_is_an_error_not_a_fresh_start() {
    let dir = scratch("held");
    store_with(&dir, 3);
    let (_held, _) = RegistryFile::open(&dir, NOW).unwrap();
    let dir_text = dir.display().to_string();
    let error = Persistence::open(
        &config(&dir),
        &dir_text,
        &mut registry(),
        NOW,
        RETENTION,
        Arc::new(Metrics::new()),
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("held open by another process"),
        "{error}"
    );
    assert_eq!(moved_aside(&dir), 0);
}

#[tokio::test]
async fn a_node_started_on_a_store_expects_renewals_from_what_it_restored() {
    let dir = scratch("self-preservation");
    store_with(&dir, 50);
    let mut config = crate::config::Config::default();
    config.heureka.persistence.dir = Some(dir.display().to_string());
    let state = crate::state::AppState::new(&config, crate::clock::Clock::tokio(NOW), 8761)
        .expect("the store opens");
    let registry = state.store.read();
    assert_eq!(registry.registry_size(), 49);
    assert_eq!(registry.self_preservation().expected_clients, 49);
}

#[test]
fn attempts_after_a_failure_back_off_doubling_up_to_the_cap() {
    let interval = Duration::from_secs(1);
    let waits: Vec<u64> = (1..=7)
        .map(|failures| retry_wait(interval, failures).as_secs())
        .collect();
    assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
    assert_eq!(retry_wait(interval, u32::MAX), RETRY_WAIT_CAP);
}

/// A node on a store in `dir` (nothing spawned: flushes are the test's), and a way to register.
fn node(dir: &Path) -> crate::state::SharedState {
    let mut config = crate::config::Config::default();
    config.heureka.persistence.dir = Some(dir.display().to_string());
    crate::state::AppState::new(&config, crate::clock::Clock::tokio(NOW), 8761)
        .expect("the store opens")
}

fn register(state: &crate::state::SharedState, id: &str) {
    let instance = heureka_core::Instance::new("ORDERS", id, "h", "10.0.0.1", 0);
    state
        .store
        .write(|registry, now| registry.register(instance, Origin::Client, now));
}

fn rows(dir: &Path) -> u64 {
    let (file, _) = RegistryFile::open(dir, NOW).expect("opens");
    file.len().unwrap()
}

#[tokio::test]
async fn after_a_failed_batch_the_store_is_reopened_and_everything_pending_written() {
    let dir = scratch("reopened");
    let state = node(&dir);
    let persistence = state.node.persistence.clone().unwrap();
    register(&state, "o1");
    persistence.flush(&state.store).await;
    persistence.failed(&state.store, &FileError::Store("disk full".to_owned()));
    assert!(persistence.backing_off(state.store.instant()));
    assert_eq!(persistence.view().last_error.as_deref(), Some("disk full"));
    register(&state, "o2");
    register(&state, "o3");

    persistence.flush(&state.store).await;
    let view = persistence.view();
    assert_eq!((view.last_error, view.pending), (None, 0));
    assert!(!persistence.backing_off(state.store.instant()));
    drop((persistence, state));
    assert_eq!(rows(&dir), 3);
}

#[tokio::test]
async fn a_file_gone_while_writes_failed_is_written_whole_again() {
    let dir = scratch("gone");
    let state = node(&dir);
    let persistence = state.node.persistence.clone().unwrap();
    for id in ["o1", "o2", "o3"] {
        register(&state, id);
    }
    persistence.flush(&state.store).await;
    persistence.failed(&state.store, &FileError::Store("disk full".to_owned()));
    std::fs::remove_file(file_path(&dir)).unwrap();
    register(&state, "o4");

    persistence.flush(&state.store).await;
    assert_eq!(persistence.view().last_error, None);
    drop((persistence, state));
    assert_eq!(rows(&dir), 4, "not only the instance changed since");
}
