//! Spring keys Heureka does not act on and whose silent absence would leave a server less
//! protected than its operator believes: each one set is a start-up error saying what to do
//! instead. (Spring keys Heureka does not know are otherwise ignored, as Spring ignores
//! properties nothing binds; these are not unknown to Spring.)

use heureka_config::Properties;

use super::names::canonical;
use super::ConfigError;

/// A key (or every key under a prefix ending in `.`) and why it cannot be honoured.
const REFUSED: &[(&str, &str)] = &[
    (
        "management.server.address",
        "Heureka serves the actuator endpoints on the server's own address and port; keep \
         them private with management.endpoints.web.exposure.* and spring.security.user.*",
    ),
    (
        "management.server.ssl.",
        "Heureka serves the actuator endpoints on the server's own port, under server.ssl.*",
    ),
    (
        "spring.security.oauth2.",
        "OAuth2 and JWT authentication are not built in; Heureka authenticates with \
         spring.security.user.* (HTTP basic) or client certificates (server.ssl.client-auth)",
    ),
    (
        "spring.security.saml2.",
        "SAML authentication is not built in; Heureka authenticates with \
         spring.security.user.* (HTTP basic) or client certificates (server.ssl.client-auth)",
    ),
    (
        "server.ssl.key-store-provider",
        "Java security providers do not exist outside a JVM; PKCS12 and JKS files are read \
         directly",
    ),
    (
        "server.ssl.trust-store-provider",
        "Java security providers do not exist outside a JVM; PKCS12 and JKS files are read \
         directly",
    ),
    (
        "server.ssl.server-name-bundles",
        "a certificate per host name (SNI) is not supported; serve one certificate whose \
         names cover every host",
    ),
];

/// The first refused key that is set, as an error naming it, its source and the reason.
pub(crate) fn reject_refused_keys(properties: &Properties) -> Result<(), ConfigError> {
    for (name, property) in properties.iter() {
        if let Some(why) = refusal(name, properties) {
            return Err(ConfigError::new(format!(
                "{} ({}) is not supported: {why}",
                property.name, property.origin
            )));
        }
    }
    Ok(())
}

/// Why the key `canonical_name` is refused, if it is.
fn refusal(canonical_name: &str, properties: &Properties) -> Option<&'static str> {
    if canonical_name == canonical("management.server.port") {
        return management_port_refusal(properties);
    }
    REFUSED.iter().find_map(|(refused, why)| {
        let refused_canonical = canonical(refused.trim_end_matches('.'));
        let matches = if refused.ends_with('.') {
            canonical_name == refused_canonical
                || canonical_name.starts_with(&format!("{refused_canonical}."))
        } else {
            canonical_name == refused_canonical
        };
        matches.then_some(*why)
    })
}

/// `management.server.port` is accepted when it names the server's own port: nothing moves.
/// Another port is refused, since the endpoints the operator meant to keep on an internal
/// port would be served on the public one.
fn management_port_refusal(properties: &Properties) -> Option<&'static str> {
    let value = |key: &str| properties.get(key).map(|p| p.value.trim().to_owned());
    let server_port = value("server.port").unwrap_or_else(|| "8761".to_owned());
    let management_port = value("management.server.port")?;
    (management_port != server_port).then_some(
        "Heureka serves the actuator endpoints on server.port only, so they would be public \
         where a separate management port kept them private; remove the key (or set it to \
         server.port) and limit the endpoints with management.endpoints.web.exposure.* and \
         spring.security.user.*",
    )
}
