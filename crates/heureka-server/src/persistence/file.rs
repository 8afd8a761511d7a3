//! The registry's file: one redb database in `heureka.persistence.dir`, a table of kept
//! instances keyed by (application, instance id), each value a record of `heureka-wire`'s
//! `encode_kept`, and a table saying whose file it is.
//!
//! Damage is survived here: a file that does not open as a redb database, or opens but is not
//! Heureka's, is moved aside (renamed with `.damaged-<ms>`, never deleted: an operator may want
//! it) and a fresh file takes its place; rows that cannot be read end the reading, and the
//! caller rebuilds the file from what it restored. Only a file another live process holds open
//! is an error: moving it aside would take a running node's registry.
//!
//! A failed write (a full disk) is survived by [`RegistryFile::reopen`]: after an I/O error redb
//! refuses every later transaction on the same handle, and only a new handle recovers the file
//! to its last commit.

use std::path::{Path, PathBuf};

use heureka_core::Millis;
use parking_lot::RwLock;

use redb::{
    Database, DatabaseError, ReadableDatabase, ReadableTable, TableDefinition, TableHandle,
};

/// Kept instances by (upper-cased application, instance id).
const INSTANCES: TableDefinition<'_, (&str, &str), &[u8]> = TableDefinition::new("instances");
/// `format` → [`FORMAT`]: a redb file without it is someone else's.
const META: TableDefinition<'_, &str, &str> = TableDefinition::new("heureka");
const FORMAT: &str = "heureka-registry/1";
const FILE_NAME: &str = "registry.redb";

/// redb's page cache: the writer touches one leaf per dirty instance, and the operating
/// system's cache holds the rest; redb's default (1 GiB) would dwarf the registry itself.
const CACHE_BYTES: usize = 32 * 1024 * 1024;

/// The open file.
pub(crate) struct RegistryFile {
    /// `None` between a failed write's close and the reopen that succeeds.
    db: RwLock<Option<Database>>,
    path: PathBuf,
}

impl std::fmt::Debug for RegistryFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryFile")
            .field("path", &self.path)
            .finish()
    }
}

/// Why the file could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    #[error("{path}: held open by another process (another Heureka using the same heureka.persistence.dir?)")]
    HeldElsewhere { path: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Store(String),
}

/// What opening found.
#[derive(Debug)]
pub(crate) enum Found {
    /// The file was there and is Heureka's.
    Existing,
    /// There was none: a fresh file.
    New,
    /// It was damaged or foreign: moved aside to `to` (with the reason), and a fresh file made.
    MovedAside { reason: String, to: PathBuf },
}

/// (upper-cased application, instance id): a row's key.
pub(crate) type Key = (String, String);

/// One stored row; `Err` is a row that could not be read (the reading stops there).
pub(crate) type Row<'a> = Result<(&'a str, &'a str, &'a [u8]), String>;

impl RegistryFile {
    /// Opens (or creates) the file in `dir`, creating the directory if needed; a damaged file
    /// moved aside is named with `now` (wall-clock ms).
    pub(crate) fn open(dir: &Path, now: Millis) -> Result<(RegistryFile, Found), FileError> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE_NAME);
        let existed = path.exists();
        let problem = match open_database(&path) {
            Ok(db) => match check_format(&db, existed) {
                Ok(()) => {
                    let found = if existed { Found::Existing } else { Found::New };
                    return Ok((RegistryFile::of(db, path), found));
                }
                Err(reason) => reason,
            },
            Err(DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch) => {
                return Err(FileError::HeldElsewhere {
                    path: path.display().to_string(),
                })
            }
            Err(error) => error.to_string(),
        };
        let to = move_aside(&path, now)?;
        let db = open_database(&path).map_err(|e| FileError::Store(e.to_string()))?;
        check_format(&db, false).map_err(FileError::Store)?;
        let found = Found::MovedAside {
            reason: problem,
            to,
        };
        Ok((RegistryFile::of(db, path), found))
    }

    fn of(db: Database, path: PathBuf) -> RegistryFile {
        RegistryFile {
            db: RwLock::new(Some(db)),
            path,
        }
    }

    /// Closes the database and opens it again, after a write failed. The file is never moved
    /// aside here: what it holds is the registry up to its last commit, and a file that does
    /// not open yet (the disk still full) stays closed for the next attempt. A file that has
    /// gone is made again, empty (the caller then writes the whole registry).
    pub(crate) fn reopen(&self) -> Result<(), FileError> {
        let store = |e: &dyn std::fmt::Display| FileError::Store(e.to_string());
        let mut db = self.db.write();
        if let Some(old) = db.take() {
            // Its error is the failure already reported; the next open recovers the file.
            let _ = old.close();
        }
        let existed = self.path.exists();
        let fresh = open_database(&self.path).map_err(|e| store(&e))?;
        check_format(&fresh, existed).map_err(FileError::Store)?;
        *db = Some(fresh);
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Calls `each` with every row, in key order, until it has seen them all or a row does not
    /// read (then once more with the error, and stops). Returns the number of rows read.
    pub(crate) fn for_each(&self, mut each: impl FnMut(Row<'_>)) -> usize {
        let mut read = 0;
        let db = self.db.read();
        let table = db
            .as_ref()
            .ok_or_else(closed)
            .and_then(|db| db.begin_read().map_err(|e| e.to_string()))
            .and_then(|txn| txn.open_table(INSTANCES).map_err(|e| e.to_string()));
        let table = match table {
            Ok(table) => table,
            Err(error) => {
                each(Err(error));
                return 0;
            }
        };
        let rows = match table.iter() {
            Ok(rows) => rows,
            Err(error) => {
                each(Err(error.to_string()));
                return 0;
            }
        };
        for row in rows {
            match row {
                Ok((key, value)) => {
                    let (app, id) = key.value();
                    each(Ok((app, id, value.value())));
                    read += 1;
                }
                Err(error) => {
                    each(Err(error.to_string()));
                    break;
                }
            }
        }
        read
    }

    /// Writes one batch durably: `puts` replace rows, `deletes` remove them; one transaction,
    /// synced to disk before it returns.
    pub(crate) fn write(&self, puts: &[(Key, Vec<u8>)], deletes: &[Key]) -> Result<(), FileError> {
        let store = |e: &dyn std::fmt::Display| FileError::Store(e.to_string());
        let db = self.db.read();
        let db = db.as_ref().ok_or_else(|| FileError::Store(closed()))?;
        let txn = db.begin_write().map_err(|e| store(&e))?;
        {
            let mut table = txn.open_table(INSTANCES).map_err(|e| store(&e))?;
            for ((app, id), record) in puts {
                table
                    .insert((app.as_str(), id.as_str()), record.as_slice())
                    .map_err(|e| store(&e))?;
            }
            for (app, id) in deletes {
                table
                    .remove((app.as_str(), id.as_str()))
                    .map_err(|e| store(&e))?;
            }
        }
        txn.commit().map_err(|e| store(&e))
    }

    /// Rows in the file.
    #[cfg(test)]
    pub(crate) fn len(&self) -> Result<u64, FileError> {
        let store = |e: &dyn std::fmt::Display| FileError::Store(e.to_string());
        let db = self.db.read();
        let db = db.as_ref().ok_or_else(|| FileError::Store(closed()))?;
        let txn = db.begin_read().map_err(|e| store(&e))?;
        let table = txn.open_table(INSTANCES).map_err(|e| store(&e))?;
        redb::ReadableTableMetadata::len(&table).map_err(|e| store(&e))
    }

    /// Bytes the file takes on disk.
    pub(crate) fn size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Replaces the file with one holding only `rows`: after damage (the old file is moved
    /// aside first), or to give back space the live registry no longer needs (compaction).
    /// Written beside it and renamed over it, so a crash midway leaves the old file whole.
    pub(crate) fn rebuild(self, rows: &[(Key, Vec<u8>)]) -> Result<RegistryFile, FileError> {
        let RegistryFile { db, path } = self;
        drop(db);
        let fresh_path = path.with_extension("redb.new");
        let _ = std::fs::remove_file(&fresh_path);
        let fresh = open_database(&fresh_path).map_err(|e| FileError::Store(e.to_string()))?;
        check_format(&fresh, false).map_err(FileError::Store)?;
        let fresh = RegistryFile::of(fresh, fresh_path.clone());
        for chunk in rows.chunks(50_000) {
            fresh.write(chunk, &[])?;
        }
        drop(fresh);
        std::fs::rename(&fresh_path, &path)?;
        let db = open_database(&path).map_err(|e| FileError::Store(e.to_string()))?;
        Ok(RegistryFile::of(db, path))
    }
}

/// Why a closed file was not read or written.
fn closed() -> String {
    "the store is closed after a failed write and did not open again yet".to_owned()
}

fn open_database(path: &Path) -> Result<Database, DatabaseError> {
    Database::builder().set_cache_size(CACHE_BYTES).create(path)
}

/// Whether the file is Heureka's: a new file is made so; an existing one must say so.
fn check_format(db: &Database, existed: bool) -> Result<(), String> {
    let txn = db.begin_write().map_err(|e| e.to_string())?;
    {
        let mut meta = txn.open_table(META).map_err(|e| e.to_string())?;
        let format = meta
            .get("format")
            .map_err(|e| e.to_string())?
            .map(|v| v.value().to_owned());
        match format {
            Some(format) if format == FORMAT => {}
            Some(other) => return Err(format!("written as {other}, not {FORMAT}")),
            None if existed && has_other_tables(&txn) => {
                return Err("a redb file without Heureka's tables".to_owned())
            }
            None => {
                meta.insert("format", FORMAT).map_err(|e| e.to_string())?;
            }
        }
        txn.open_table(INSTANCES).map_err(|e| e.to_string())?;
    }
    txn.commit().map_err(|e| e.to_string())
}

fn has_other_tables(txn: &redb::WriteTransaction) -> bool {
    txn.list_tables()
        .map(|tables| tables.into_iter().any(|t| t.name() != "heureka"))
        .unwrap_or(true)
}

/// Renames a damaged or foreign file out of the way; returns where it went.
fn move_aside(path: &Path, now: Millis) -> Result<PathBuf, FileError> {
    let to = path.with_extension(format!("redb.damaged-{now}"));
    std::fs::rename(path, &to)?;
    Ok(to)
}
