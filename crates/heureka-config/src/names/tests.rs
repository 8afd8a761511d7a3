//! The key-table checks on names on their own: the canonical form, a pattern's shape, its map
//! prefix, and a key written twice in different relaxed spellings.

use super::*;

#[test]
fn canonical_patterns_are_lower_case_kebab_case_with_their_markers() {
    for pattern in [
        "server.port",
        "eureka.server.enable-self-preservation",
        "logging.level.<target>",
        "heureka.webhooks[<n>].url",
        "http2.enabled",
    ] {
        assert!(is_canonical(pattern), "{pattern}");
    }
    for pattern in [
        "eureka.server.enableSelfPreservation",
        "spring.application.instance_id",
        "server..port",
        "server.-port",
        "server.port-",
        "logging.<target>.level",
        "heureka.webhooks[0].url",
        "",
    ] {
        assert!(!is_canonical(pattern), "{pattern}");
    }
}

#[test]
fn a_pattern_has_the_shape_its_markers_say_or_none_when_misplaced() {
    assert_eq!(shape_of("server.port"), Some(Shape::Single));
    assert_eq!(shape_of("logging.level.<target>"), Some(Shape::Map));
    assert_eq!(shape_of("heureka.webhooks[<n>].url"), Some(Shape::Indexed));
    for misplaced in [
        "logging.<target>.level",
        "logging.level.<a>.<b>",
        "heureka.webhooks[0].url",
        "heureka.webhooks[<n>].url.x",
        "heureka.webhooks[<n>].<key>",
        "a[<n>].b[<n>].c",
    ] {
        assert_eq!(shape_of(misplaced), None, "{misplaced}");
    }
}

#[test]
fn a_map_pattern_belongs_to_the_map_before_its_marker() {
    assert_eq!(map_prefix("logging.level.<target>"), "logging.level");
    assert_eq!(map_prefix("port"), "port");
}

#[test]
fn the_first_repeat_is_a_key_written_again_in_another_relaxed_spelling() {
    let names = Names::new(&["logging.level"]);
    assert_eq!(
        names.first_repeat(["server.port", "a.b-c", "server.address", "a.bC", "a.b_c"]),
        Some(("a.bC", "a.b-c"))
    );
    assert_eq!(
        names.first_repeat(["logging.level.a", "logging.level.A"]),
        None
    );
}
