//! Helpers shared by the unit tests: instances with test defaults and registries in the
//! states the rules care about.

use crate::instance_digest::InstanceDigest;
use crate::model::InstanceStatus::{OutOfService, Unknown, Up};
use crate::model::{Instance, InstanceStatus, Millis};
use crate::origin::Origin;
use crate::policy::RegistryPolicy;
use crate::registry::Registry;

/// An UP instance of `app` with id `id`, dirty timestamp 0, default lease terms (30/90 s).
pub(crate) fn instance(app: &str, id: &str) -> Instance {
    Instance::new(app, id, &format!("{id}.example.com"), "10.0.0.1", 0)
}

pub(crate) fn instance_with_status(app: &str, id: &str, status: InstanceStatus) -> Instance {
    Instance {
        status,
        ..instance(app, id)
    }
}

pub(crate) fn instance_with_dirty(app: &str, id: &str, last_dirty_timestamp: Millis) -> Instance {
    Instance {
        last_dirty_timestamp,
        ..instance(app, id)
    }
}

/// A Spring-like registry after open-for-traffic at time 0, self-preservation on.
pub(crate) fn registry() -> Registry {
    registry_with(RegistryPolicy::default())
}

/// A registry where leases always expire: self-preservation is off.
pub(crate) fn expiring_registry() -> Registry {
    registry_with(RegistryPolicy {
        enable_self_preservation: false,
        ..RegistryPolicy::default()
    })
}

pub(crate) fn registry_with(policy: RegistryPolicy) -> Registry {
    let mut registry = Registry::new(policy, 0);
    registry.open_for_traffic(0, 0);
    registry
}

/// A registry holding `a/a1`, its dirty timestamp `last_dirty_timestamp`, registered by its
/// client at time 0.
pub(crate) fn registered_with_dirty(last_dirty_timestamp: Millis) -> Registry {
    let mut registry = registry();
    let a1 = instance_with_dirty("a", "a1", last_dirty_timestamp);
    registry.register(a1, Origin::Client, 0);
    registry
}

/// A registry holding `a/a1`, registered at time 0, which an operator put OUT_OF_SERVICE at
/// time 10.
pub(crate) fn out_of_service_by_operator() -> Registry {
    let mut registry = registry();
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    registry
}

/// Registers each `(app, id)` as a client at time `now`.
pub(crate) fn register_all(registry: &mut Registry, ids: &[(&str, &str)], now: Millis) {
    for (app, id) in ids {
        registry.register(instance(app, id), Origin::Client, now);
    }
}

/// `registry` once `a/a1` registered as a client at time 0.
pub(crate) fn holding_a1(registry: Registry) -> Registry {
    holding(registry, &[("a", "a1")], 0)
}

/// `registry` once each `(app, id)` registered as a client at time `now`.
pub(crate) fn holding(mut registry: Registry, ids: &[(&str, &str)], now: Millis) -> Registry {
    register_all(&mut registry, ids, now);
    registry
}

/// A plain client heartbeat without a dirty timestamp.
pub(crate) fn heartbeat(
    registry: &mut Registry,
    app: &str,
    id: &str,
    now: Millis,
) -> crate::outcomes::RenewOutcome {
    registry.renew(app, id, None, None, Origin::Client, now)
}

/// The status the registry currently holds for `app/id`, ignoring expiry.
pub(crate) fn status_of(registry: &Registry, app: &str, id: &str) -> Option<InstanceStatus> {
    registry
        .application(app)?
        .instances
        .into_iter()
        .find(|i| i.id() == id)
        .map(|i| i.status)
}

/// A live UP copy of `app/id` as a digest lists it, without an override or stamps.
pub(crate) fn live_digest(
    app: &str,
    id: &str,
    dirty: Millis,
    updated: Millis,
    renewed: Millis,
) -> InstanceDigest {
    InstanceDigest {
        app: app.into(),
        id: id.into(),
        status: Up,
        overridden_status: Unknown,
        last_dirty_timestamp: dirty,
        last_updated_timestamp: updated,
        last_renewal_timestamp: renewed,
        removed: false,
        stamps: None,
    }
}
