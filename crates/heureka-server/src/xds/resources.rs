//! The four xDS resources gRPC's `xds:///NAME` resolver asks for, built from plain endpoint
//! data (no registry, no I/O): a Listener NAME whose API listener holds an inline route
//! configuration sending every call to cluster NAME, a RouteConfiguration NAME (the same, for a
//! client that asks RDS), a Cluster NAME (EDS over ADS, round robin) and its
//! ClusterLoadAssignment: the endpoints grouped by locality.

use envoy_types::pb::envoy::config::cluster::v3::cluster::{
    ClusterDiscoveryType, DiscoveryType, EdsClusterConfig, LbPolicy,
};
use envoy_types::pb::envoy::config::cluster::v3::Cluster;
use envoy_types::pb::envoy::config::core::v3::address::Address as AddressKind;
use envoy_types::pb::envoy::config::core::v3::config_source::ConfigSourceSpecifier;
use envoy_types::pb::envoy::config::core::v3::socket_address::PortSpecifier;
use envoy_types::pb::envoy::config::core::v3::{
    Address, AggregatedConfigSource, ApiVersion, ConfigSource, HealthStatus, Locality,
    SocketAddress,
};
use envoy_types::pb::envoy::config::endpoint::v3::lb_endpoint::HostIdentifier;
use envoy_types::pb::envoy::config::endpoint::v3::{
    ClusterLoadAssignment, Endpoint as EnvoyEndpoint, LbEndpoint, LocalityLbEndpoints,
};
use envoy_types::pb::envoy::config::listener::v3::{ApiListener, Listener};
use envoy_types::pb::envoy::config::route::v3::route::Action;
use envoy_types::pb::envoy::config::route::v3::route_action::ClusterSpecifier;
use envoy_types::pb::envoy::config::route::v3::route_match::PathSpecifier;
use envoy_types::pb::envoy::config::route::v3::{
    Route, RouteAction, RouteConfiguration, RouteMatch, VirtualHost,
};
use envoy_types::pb::envoy::extensions::filters::http::router::v3::Router;
use envoy_types::pb::envoy::extensions::filters::network::http_connection_manager::v3::http_connection_manager::RouteSpecifier;
use envoy_types::pb::envoy::extensions::filters::network::http_connection_manager::v3::http_filter::ConfigType;
use envoy_types::pb::envoy::extensions::filters::network::http_connection_manager::v3::{
    HttpConnectionManager, HttpFilter,
};
use envoy_types::pb::google::protobuf::{Any, UInt32Value};
use prost::{Message, Name};

/// One UP instance as an endpoint: where to call it and the zone it is in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Endpoint {
    /// The zone first: endpoints sorted by it are grouped by locality.
    pub(crate) zone: String,
    pub(crate) address: String,
    pub(crate) port: u32,
}

/// Wraps a message in `google.protobuf.Any`, named by its type URL.
pub(crate) fn any<M: Message + Name>(message: &M) -> Any {
    Any {
        type_url: M::type_url(),
        value: message.encode_to_vec(),
    }
}

/// Listener NAME: an API listener (what gRPC reads; Envoy ignores it) whose
/// HttpConnectionManager routes every call to cluster NAME, the Router filter last as gRPC
/// requires.
pub(crate) fn listener(name: &str) -> Listener {
    let manager = HttpConnectionManager {
        route_specifier: Some(RouteSpecifier::RouteConfig(route_configuration(name))),
        http_filters: vec![HttpFilter {
            name: "envoy.filters.http.router".to_owned(),
            config_type: Some(ConfigType::TypedConfig(any(&Router::default()))),
            ..Default::default()
        }],
        ..Default::default()
    };
    Listener {
        name: name.to_owned(),
        api_listener: Some(ApiListener {
            api_listener: Some(any(&manager)),
        }),
        ..Default::default()
    }
}

/// RouteConfiguration NAME: one virtual host for any authority, one route for any path, to
/// cluster NAME.
pub(crate) fn route_configuration(name: &str) -> RouteConfiguration {
    let route = Route {
        r#match: Some(RouteMatch {
            path_specifier: Some(PathSpecifier::Prefix(String::new())),
            ..Default::default()
        }),
        action: Some(Action::Route(RouteAction {
            cluster_specifier: Some(ClusterSpecifier::Cluster(name.to_owned())),
            ..Default::default()
        })),
        ..Default::default()
    };
    RouteConfiguration {
        name: name.to_owned(),
        virtual_hosts: vec![VirtualHost {
            name: name.to_owned(),
            domains: vec!["*".to_owned()],
            routes: vec![route],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Cluster NAME: its endpoints come by EDS over the same ADS stream, balanced round robin.
pub(crate) fn cluster(name: &str) -> Cluster {
    Cluster {
        name: name.to_owned(),
        cluster_discovery_type: Some(ClusterDiscoveryType::Type(DiscoveryType::Eds as i32)),
        eds_cluster_config: Some(EdsClusterConfig {
            eds_config: Some(ConfigSource {
                config_source_specifier: Some(ConfigSourceSpecifier::Ads(
                    AggregatedConfigSource {},
                )),
                resource_api_version: ApiVersion::V3 as i32,
                ..Default::default()
            }),
            service_name: name.to_owned(),
        }),
        lb_policy: LbPolicy::RoundRobin as i32,
        ..Default::default()
    }
}

/// ClusterLoadAssignment NAME: the endpoints grouped by locality (`region`, each endpoint's
/// zone), every locality weighted by its number of endpoints, since gRPC ignores a locality
/// of weight 0 and picks localities by weight before endpoints.
pub(crate) fn load_assignment(
    name: &str,
    region: &str,
    endpoints: &[Endpoint],
) -> ClusterLoadAssignment {
    let mut sorted: Vec<&Endpoint> = endpoints.iter().collect();
    sorted.sort();
    let mut localities: Vec<LocalityLbEndpoints> = Vec::new();
    for endpoint in sorted {
        let same_zone = localities.last().is_some_and(|last| {
            last.locality
                .as_ref()
                .is_some_and(|l| l.zone == endpoint.zone)
        });
        if !same_zone {
            localities.push(LocalityLbEndpoints {
                locality: Some(Locality {
                    region: region.to_owned(),
                    zone: endpoint.zone.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        if let Some(locality) = localities.last_mut() {
            locality.lb_endpoints.push(lb_endpoint(endpoint));
        }
    }
    for locality in &mut localities {
        let count = u32::try_from(locality.lb_endpoints.len()).unwrap_or(u32::MAX);
        locality.load_balancing_weight = Some(UInt32Value { value: count });
    }
    ClusterLoadAssignment {
        cluster_name: name.to_owned(),
        endpoints: localities,
        ..Default::default()
    }
}

fn lb_endpoint(endpoint: &Endpoint) -> LbEndpoint {
    LbEndpoint {
        host_identifier: Some(HostIdentifier::Endpoint(EnvoyEndpoint {
            address: Some(Address {
                address: Some(AddressKind::SocketAddress(SocketAddress {
                    address: endpoint.address.clone(),
                    port_specifier: Some(PortSpecifier::PortValue(endpoint.port)),
                    ..Default::default()
                })),
            }),
            ..Default::default()
        })),
        health_status: HealthStatus::Healthy as i32,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(zone: &str, address: &str, port: u32) -> Endpoint {
        Endpoint {
            zone: zone.to_owned(),
            address: address.to_owned(),
            port,
        }
    }

    #[test]
    fn the_listener_routes_every_call_to_the_cluster_of_the_same_name_through_the_router_last() {
        let listener = listener("orders");
        let any = listener.api_listener.unwrap().api_listener.unwrap();
        assert_eq!(any.type_url, HttpConnectionManager::type_url());
        let manager = HttpConnectionManager::decode(any.value.as_slice()).unwrap();
        let last = manager.http_filters.last().unwrap();
        assert_eq!(last.name, "envoy.filters.http.router");
        let Some(RouteSpecifier::RouteConfig(routes)) = manager.route_specifier else {
            panic!("no inline route configuration");
        };
        let action = routes.virtual_hosts[0].routes[0].action.clone();
        assert_eq!(
            action,
            Some(Action::Route(RouteAction {
                cluster_specifier: Some(ClusterSpecifier::Cluster("orders".to_owned())),
                ..Default::default()
            }))
        );
        assert_eq!(routes.virtual_hosts[0].domains, ["*"]);
    }

    #[test]
    fn the_cluster_takes_its_endpoints_by_eds_over_ads_round_robin() {
        let cluster = cluster("orders");
        assert_eq!(
            cluster.cluster_discovery_type,
            Some(ClusterDiscoveryType::Type(DiscoveryType::Eds as i32))
        );
        let eds = cluster.eds_cluster_config.unwrap();
        assert_eq!(eds.service_name, "orders");
        assert!(matches!(
            eds.eds_config.unwrap().config_source_specifier,
            Some(ConfigSourceSpecifier::Ads(_))
        ));
        assert_eq!(cluster.lb_policy, LbPolicy::RoundRobin as i32);
    }

    #[test]
    fn endpoints_are_grouped_by_zone_under_the_region_each_locality_weighted_by_its_size() {
        let assignment = load_assignment(
            "orders",
            "eu-west-1",
            &[
                endpoint("b", "10.0.0.3", 9000),
                endpoint("a", "10.0.0.1", 9000),
                endpoint("b", "10.0.0.2", 9001),
            ],
        );
        let summary: Vec<(String, String, u32, usize)> = assignment
            .endpoints
            .iter()
            .map(|l| {
                let locality = l.locality.clone().unwrap();
                let weight = l.load_balancing_weight.unwrap().value;
                (locality.region, locality.zone, weight, l.lb_endpoints.len())
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("eu-west-1".to_owned(), "a".to_owned(), 1, 1),
                ("eu-west-1".to_owned(), "b".to_owned(), 2, 2)
            ]
        );
        let first = &assignment.endpoints[1].lb_endpoints[0];
        assert_eq!(first.health_status, HealthStatus::Healthy as i32);
        let Some(HostIdentifier::Endpoint(found)) = &first.host_identifier else {
            panic!("no endpoint");
        };
        let Some(AddressKind::SocketAddress(socket)) = found.address.clone().unwrap().address
        else {
            panic!("no socket address");
        };
        assert_eq!(
            (socket.address.as_str(), socket.port_specifier),
            ("10.0.0.2", Some(PortSpecifier::PortValue(9001)))
        );
    }

    #[test]
    fn no_endpoints_make_an_assignment_without_localities() {
        let assignment = load_assignment("orders", "us-east-1", &[]);
        assert_eq!(assignment.cluster_name, "orders");
        assert!(assignment.endpoints.is_empty());
    }
}
