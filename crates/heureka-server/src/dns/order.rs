//! The order answers list instances in: the asker's zone first when the asker is a registered
//! instance whose zone is known (as Eureka's zone-aware clients prefer their own zone), and a
//! rotation by query within each part, so that clients taking the first record spread.

use super::endpoints::Endpoint;

/// `endpoints` rotated left by `turn`, then those in `asker_zone` first (a stable partition,
/// so each part keeps the rotation).
pub(crate) fn arrange(
    mut endpoints: Vec<Endpoint>,
    asker_zone: Option<&str>,
    turn: usize,
) -> Vec<Endpoint> {
    if !endpoints.is_empty() {
        let by = turn % endpoints.len();
        endpoints.rotate_left(by);
    }
    if let Some(zone) = asker_zone {
        endpoints.sort_by_key(|endpoint| endpoint.zone.as_deref() != Some(zone));
    }
    endpoints
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(last: u8, zone: &str) -> Endpoint {
        Endpoint {
            address: [10, 0, 0, last].into(),
            port: Some(8080),
            secure_port: None,
            zone: Some(zone.to_owned()).filter(|zone| !zone.is_empty()),
        }
    }

    fn lasts(endpoints: &[Endpoint]) -> Vec<u8> {
        endpoints
            .iter()
            .map(|endpoint| match endpoint.address {
                std::net::IpAddr::V4(v4) => v4.octets()[3],
                std::net::IpAddr::V6(_) => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn each_query_starts_one_further_along() {
        let endpoints = vec![endpoint(1, ""), endpoint(2, ""), endpoint(3, "")];
        assert_eq!(lasts(&arrange(endpoints.clone(), None, 0)), [1, 2, 3]);
        assert_eq!(lasts(&arrange(endpoints.clone(), None, 1)), [2, 3, 1]);
        assert_eq!(lasts(&arrange(endpoints, None, 5)), [3, 1, 2]);
    }

    #[test]
    fn the_askers_zone_comes_first_each_part_in_the_rotations_order() {
        let endpoints = vec![
            endpoint(1, "b"),
            endpoint(2, "a"),
            endpoint(3, "b"),
            endpoint(4, "a"),
        ];
        assert_eq!(
            lasts(&arrange(endpoints.clone(), Some("a"), 0)),
            [2, 4, 1, 3]
        );
        assert_eq!(lasts(&arrange(endpoints, Some("a"), 1)), [2, 4, 3, 1]);
    }

    #[test]
    fn an_unknown_zone_orders_by_rotation_alone() {
        let endpoints = vec![endpoint(1, "b"), endpoint(2, "a")];
        assert_eq!(lasts(&arrange(endpoints, Some("z"), 1)), [2, 1]);
    }
}
