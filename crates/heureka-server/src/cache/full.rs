//! The full document (`GET /apps`) as a cache's source: applications by name.

use heureka_core::{Application, ApplicationVersion, Registry};
use heureka_wire::ApplicationsPieces;

use super::document::DocumentCache;
use super::plan::{plan_runs, stale_among, Kept, Member, Planned, RunMembers, StaleApp, StaleRun};
use super::source::Source;

/// The full document (`GET /apps`): applications by name, keyed by the version of their last
/// change (`Registry::application_versions`).
#[derive(Debug)]
pub(crate) struct Full;

/// The cache of `GET /apps`.
pub(crate) type FullFetchCache = DocumentCache<Full>;

impl Source for Full {
    fn plan(
        registry: &Registry,
        pieces: ApplicationsPieces,
        kept: Kept<'_>,
    ) -> (Vec<u8>, Vec<Planned>) {
        let applications = registry.application_versions();
        let plan = plan_runs(
            &applications,
            full_member,
            kept,
            |application| registry.application(application.name),
            pieces,
        );
        (pieces.head(1, &registry.full_hashcode()), plan)
    }

    fn stale_runs(registry: &Registry, kept: Kept<'_>) -> Vec<StaleRun> {
        let applications = registry.application_versions();
        stale_among(&applications, full_member, |_| Vec::new(), kept)
    }

    /// An application gone since keeps its name with no instances: the plan will not find
    /// it so, and encodes that run again.
    fn copy_run(registry: &Registry, run: &StaleRun) -> (RunMembers, Vec<Application>) {
        let mut members = Vec::with_capacity(run.apps.len());
        let mut applications = Vec::with_capacity(run.apps.len());
        for StaleApp { name, .. } in &run.apps {
            let application = registry.application(name);
            let instances = application.as_ref().map_or(0, |app| app.instances.len());
            members.push((
                name.clone(),
                (registry.application_version(name), instances),
            ));
            applications.extend(application);
        }
        (members, applications)
    }
}

/// The full document's member for an application: keyed by its version and size.
fn full_member<'a>(application: &'a ApplicationVersion<'_>) -> Member<'a> {
    Member {
        name: application.name,
        key: (application.version, application.instances),
    }
}

#[cfg(test)]
mod tests;
