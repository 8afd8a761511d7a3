//! A temporary working directory for configuration tests: config files written into it,
//! removed when the test ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary working directory, removed on drop. Each is new, so that tests running at once
/// never read each other's files.
pub struct TempDir {
    /// Where it is.
    pub path: PathBuf,
}

impl TempDir {
    /// An empty directory of its own under the system's temporary directory.
    #[allow(clippy::new_without_default)] // each call makes a new directory
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "heureka-test-dir-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }

    /// Writes `text` to `relative` inside it, creating the directories on the way.
    pub fn write(&self, relative: &str, text: &str) -> &TempDir {
        let path = self.path.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
