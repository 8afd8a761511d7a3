//! The registry at scale: a hundred thousand instances registered, renewed and evicted.

use crate::origin::Origin;
use crate::outcomes::RenewOutcome;
use crate::registry::app_key;
use crate::test_util::{expiring_registry, heartbeat, instance};

#[test]
fn hundred_thousand_instances_register_renew_and_evict() {
    let mut registry = expiring_registry();
    for n in 0..100_000 {
        let app = format!("app{}", n % 1_000);
        registry.register(instance(&app, &format!("i{n}")), Origin::Client, 0);
    }
    for n in 0..100_000 {
        let app = format!("APP{}", n % 1_000);
        assert_eq!(
            heartbeat(&mut registry, &app, &format!("i{n}"), 30_000),
            RenewOutcome::Renewed
        );
    }
    assert_eq!(registry.registry_size(), 100_000);
    assert_eq!(registry.evict(200_000, 0, 3).evicted.len(), 15_000);
}

proptest::proptest! {
    #[test]
    fn an_applications_key_is_its_name_upper_cased(name in "[a-zA-Z0-9ıſßİǅ_.-]{0,8}") {
        proptest::prop_assert_eq!(app_key(&name), name.to_uppercase());
    }
}
