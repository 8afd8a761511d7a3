//! The one refused key whose refusal depends on another key: the reasons of the others are
//! their table entries' (`keys.rs`). Spring keys Heureka does not know are otherwise ignored,
//! as Spring ignores properties nothing binds; refused keys are not unknown to Spring.

/// `management.server.port` is accepted when it names the server's own port: nothing moves.
/// Another port is refused, since the endpoints the operator meant to keep on an internal
/// port would be served on the public one. `value` gives a key as set, else its default.
pub(crate) fn separate_management_port(
    value: &dyn Fn(&str) -> Option<String>,
) -> Option<&'static str> {
    let server_port = value("server.port")?;
    let management_port = value("management.server.port")?;
    (management_port != server_port).then_some(
        "Heureka serves the actuator endpoints on server.port only, so they would be public \
         where a separate management port kept them private; remove the key (or set it to \
         server.port) and limit the endpoints with management.endpoints.web.exposure.* and \
         spring.security.user.*",
    )
}
