//! Which document a cache holds: how its applications are listed, keyed and rendered.

use heureka_core::{Application, Registry};
use heureka_wire::ApplicationsPieces;

use super::plan::{Kept, Planned, RunMembers, StaleRun};

/// Which document a cache holds: how its applications are listed, keyed and rendered.
pub(crate) trait Source: Send + Sync + 'static {
    /// Under the registry lock: the document's head and its runs, encoding those whose
    /// members are not `kept`.
    fn plan(
        registry: &Registry,
        pieces: ApplicationsPieces,
        kept: Kept<'_>,
    ) -> (Vec<u8>, Vec<Planned>);

    /// Under the registry lock, before the plan: the runs it would encode now, for
    /// [`Runs::encode_stale_unlocked`] to copy out later.
    fn stale_runs(registry: &Registry, kept: Kept<'_>) -> Vec<StaleRun>;

    /// Under a later registry lock: a stale run's applications as they are now, each with
    /// the key it has now (so the two agree).
    fn copy_run(registry: &Registry, run: &StaleRun) -> (RunMembers, Vec<Application>);
}
