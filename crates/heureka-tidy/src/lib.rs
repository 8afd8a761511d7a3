//! No code: this crate exists for its tests (`tests/tidy/`), which read the workspace's source
//! and manifests and fail, naming file and line, when an architecture invariant is broken.
