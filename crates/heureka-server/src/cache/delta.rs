//! The delta (`GET /apps/delta`) as a cache's source: applications in the delta's order.

use heureka_core::{Application, DeltaApplication, Registry};
use heureka_wire::ApplicationsPieces;

use super::document::DocumentCache;
use super::plan::{plan_runs, stale_among, Kept, Member, Planned, RunMembers, StaleApp, StaleRun};
use super::source::Source;

/// The delta (`GET /apps/delta`): applications in the delta's order, keyed by their version
/// and number of delta items (`Registry::delta_applications`), cancelled ones included.
#[derive(Debug)]
pub(crate) struct Delta;

/// The cache of `GET /apps/delta`.
pub(crate) type DeltaCache = DocumentCache<Delta>;

impl Source for Delta {
    fn plan(
        registry: &Registry,
        pieces: ApplicationsPieces,
        kept: Kept<'_>,
    ) -> (Vec<u8>, Vec<Planned>) {
        let applications = registry.delta_applications();
        let plan = plan_runs(
            &applications,
            delta_member,
            kept,
            |application| registry.delta_application(application),
            pieces,
        );
        let versions_delta = i64::try_from(registry.version()).unwrap_or(i64::MAX);
        (pieces.head(versions_delta, &registry.full_hashcode()), plan)
    }

    fn stale_runs(registry: &Registry, kept: Kept<'_>) -> Vec<StaleRun> {
        let applications = registry.delta_applications();
        stale_among(
            &applications,
            delta_member,
            DeltaApplication::item_numbers,
            kept,
        )
    }

    /// Items replaced or purged since are left out, and the key counts only those still
    /// queued; items queued since are missing, but they moved the application's version.
    /// Either way the plan finds the key moved where the content did, and encodes that run
    /// again.
    fn copy_run(registry: &Registry, run: &StaleRun) -> (RunMembers, Vec<Application>) {
        let mut members = Vec::with_capacity(run.apps.len());
        let mut applications = Vec::with_capacity(run.apps.len());
        for StaleApp { name, items } in &run.apps {
            let copied = registry.delta_application_items(name, items);
            members.push((name.clone(), (copied.version, copied.queued)));
            applications.extend(copied.application);
        }
        (members, applications)
    }
}

/// The delta's member for an application: keyed by its version and number of delta items.
fn delta_member<'a>(application: &'a DeltaApplication<'_>) -> Member<'a> {
    Member {
        name: application.name,
        key: (application.version, application.instances),
    }
}

#[cfg(test)]
mod tests;
