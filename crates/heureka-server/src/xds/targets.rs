//! What an xDS resource name stands for in the registry: an application (its name matched
//! case-insensitively) or else a VIP address (matched as Eureka matches VIPs, exactly), and its
//! UP instances as endpoints (`cache.rs` decides which and keeps applications' answers). Read from the registry's read documents, so statuses are those
//! readers see (overrides and health verdicts applied). Local registry only.

use heureka_core::{Application, Instance, InstanceStatus, Registry};

use super::resources::Endpoint;

/// The metadata key grpc-spring-boot-starter registers a service's gRPC port under.
const GRPC_PORT_KEY: &str = "gRPC_port";
/// The metadata key Spring Cloud's Eureka client registers an instance's zone under.
const ZONE_KEY: &str = "zone";
/// AmazonInfo's key for the instance's zone.
const AVAILABILITY_ZONE_KEY: &str = "availability-zone";

/// An application's UP instances, as endpoints, in the document's order.
pub(crate) fn application_endpoints(application: &Application) -> Vec<Endpoint> {
    up_endpoints(&application.instances)
}

/// The UP instances of VIP address `vip`, as endpoints; `None` when no instance has that
/// address (the resource does not exist), empty when some have but none is UP. Walks every
/// instance: asked only for a name that is no application.
pub(crate) fn vip_endpoints(registry: &Registry, vip: &str) -> Option<Vec<Endpoint>> {
    let instances: Vec<Instance> = registry
        .vip(vip, false)
        .applications
        .into_iter()
        .flat_map(|application| application.instances)
        .collect();
    if instances.is_empty() {
        return None;
    }
    Some(up_endpoints(&instances))
}

fn up_endpoints(instances: &[Instance]) -> Vec<Endpoint> {
    instances
        .iter()
        .filter(|instance| instance.status == InstanceStatus::Up)
        .filter_map(endpoint)
        .collect()
}

/// The names of every application that has instances: what a wildcard subscription gets.
pub(crate) fn application_names(registry: &Registry) -> Vec<String> {
    registry
        .application_versions()
        .into_iter()
        .map(|application| application.name.to_owned())
        .collect()
}

/// An instance's endpoint: its address, its `gRPC_port` when it has one, else its port (the
/// plain one when enabled, else the secure one); `None` when it has no usable port.
fn endpoint(instance: &Instance) -> Option<Endpoint> {
    let port = match instance.metadata.get(GRPC_PORT_KEY) {
        Some(port) => port.trim().parse::<u16>().ok().map(u32::from),
        None if instance.port.enabled => Some(instance.port.number),
        None if instance.secure_port.enabled => Some(instance.secure_port.number),
        None => None,
    }
    .filter(|port| (1..=u32::from(u16::MAX)).contains(port))?;
    Some(Endpoint {
        zone: zone(instance),
        address: instance.ip_addr.clone(),
        port,
    })
}

/// The instance's zone: metadata `zone`, else AmazonInfo's availability zone, else none.
fn zone(instance: &Instance) -> String {
    let amazon = instance
        .data_center_info
        .as_ref()
        .and_then(|info| info.metadata.get(AVAILABILITY_ZONE_KEY));
    instance
        .metadata
        .get(ZONE_KEY)
        .or(amazon)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use heureka_core::{Origin, RegistryPolicy};

    use super::*;

    /// NAME as a stream resolves it: the application of that name, else the VIP address.
    fn endpoints(registry: &Registry, name: &str) -> Option<Vec<Endpoint>> {
        match registry.application(name) {
            Some(application) => Some(application_endpoints(&application)),
            None => vip_endpoints(registry, name),
        }
    }

    fn instance(app: &str, id: &str, ip: &str) -> Instance {
        let mut instance = Instance::new(app, id, "host", ip, 0);
        instance.port.number = 8080;
        instance.vip_address = Some("orders-vip".to_owned());
        instance
    }

    fn registry_of(instances: Vec<Instance>) -> Registry {
        let mut registry = Registry::new(RegistryPolicy::default(), 0);
        for instance in instances {
            registry.register(instance, Origin::Client, 0);
        }
        registry
    }

    fn addresses(endpoints: Option<Vec<Endpoint>>) -> Vec<(String, u32)> {
        endpoints
            .unwrap()
            .into_iter()
            .map(|e| (e.address, e.port))
            .collect()
    }

    #[test]
    fn an_application_is_found_by_its_name_in_any_case() {
        let registry = registry_of(vec![instance("ORDERS", "a", "10.0.0.1")]);
        assert_eq!(
            addresses(endpoints(&registry, "orders")),
            [("10.0.0.1".to_owned(), 8080)]
        );
    }

    #[test]
    fn a_vip_address_stands_for_its_instances_when_no_application_has_the_name() {
        let registry = registry_of(vec![instance("ORDERS", "a", "10.0.0.1")]);
        assert_eq!(addresses(endpoints(&registry, "orders-vip")).len(), 1);
    }

    #[test]
    fn an_unknown_name_is_no_resource() {
        let registry = registry_of(vec![instance("ORDERS", "a", "10.0.0.1")]);
        assert_eq!(endpoints(&registry, "billing"), None);
    }

    #[test]
    fn only_up_instances_are_endpoints_and_an_override_counts() {
        let mut registry = registry_of(vec![
            instance("ORDERS", "a", "10.0.0.1"),
            instance("ORDERS", "b", "10.0.0.2"),
        ]);
        assert!(registry.set_status_override(
            "ORDERS",
            "b",
            InstanceStatus::OutOfService,
            None,
            Origin::Client,
            1
        ));
        assert_eq!(
            addresses(endpoints(&registry, "orders")),
            [("10.0.0.1".to_owned(), 8080)]
        );
    }

    #[test]
    fn an_application_with_none_up_is_a_resource_without_endpoints() {
        let mut down = instance("ORDERS", "a", "10.0.0.1");
        down.status = InstanceStatus::Down;
        let registry = registry_of(vec![down]);
        assert_eq!(endpoints(&registry, "orders"), Some(Vec::new()));
    }

    #[test]
    fn the_grpc_port_metadata_replaces_the_port() {
        let mut grpc = instance("ORDERS", "a", "10.0.0.1");
        grpc.metadata
            .insert(GRPC_PORT_KEY.to_owned(), "9090".to_owned());
        let registry = registry_of(vec![grpc]);
        assert_eq!(
            addresses(endpoints(&registry, "orders")),
            [("10.0.0.1".to_owned(), 9090)]
        );
    }

    #[test]
    fn the_zone_comes_from_metadata() {
        let mut zoned = instance("ORDERS", "a", "10.0.0.1");
        zoned
            .metadata
            .insert(ZONE_KEY.to_owned(), "zone-b".to_owned());
        let registry = registry_of(vec![zoned]);
        assert_eq!(endpoints(&registry, "orders").unwrap()[0].zone, "zone-b");
    }

    #[test]
    fn a_wildcard_names_every_application() {
        let registry = registry_of(vec![
            instance("ORDERS", "a", "10.0.0.1"),
            instance("BILLING", "b", "10.0.0.2"),
        ]);
        assert_eq!(application_names(&registry), ["BILLING", "ORDERS"]);
    }
}
