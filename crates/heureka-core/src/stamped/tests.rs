//! Stamped copies between Heureka servers.
