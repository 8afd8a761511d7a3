//! The `--help` text, generated from the key table so that it cannot drift from what the
//! binder reads.

use super::names::table;
use super::rules::DEFAULT_ZONE;

/// The `--help` text, generated from the table's keys; refused keys are not settings.
pub(crate) fn help_text() -> String {
    let keys: Vec<_> = table()
        .keys()
        .iter()
        .filter(|key| !key.is_refused())
        .collect();
    let width = keys.iter().map(|key| key.name.len()).max().unwrap_or(0);
    let default_width = keys.iter().map(|key| key.default.len()).max().unwrap_or(0);
    let mut text = format!(
        "heureka {version} - a Eureka-compatible service registry server

Usage: heureka [--key=value]...

Settings are read like a Spring Boot Eureka server's, so an existing application.yml works.
Sources, highest precedence first:
  1. command-line arguments   --server.port=8761 (a bare --key means true)
  2. environment variables    SERVER_PORT=8761, EUREKA_SERVER_ENABLESELFPRESERVATION=false
  3. application-{{profile}}.{{properties,yml,yaml}} for spring.profiles.active
  4. ./config/application.{{properties,yml,yaml}}
  5. ./application.{{properties,yml,yaml}}
--spring.config.location=PATH[,PATH] replaces 3-5 (a directory means application.* in it);
--spring.config.additional-location adds PATH[,PATH] on top of them.
Names are relaxed: enableSelfPreservation, enable-self-preservation and
enable_self_preservation are the same key. Values may use ${{key}} and ${{key:default}}.

Options:
  -h, --help     print this help
  -V, --version  print the version

Keys:
  {:width$}  {:default_width$}  ABOUT
",
        "KEY",
        "DEFAULT",
        version = env!("CARGO_PKG_VERSION"),
    );
    for key in keys {
        let default = match key.name {
            "eureka.client.service-url.<zone>" => "defaultZone",
            _ if key.default.is_empty() => "-",
            _ => key.default,
        };
        text.push_str(&format!(
            "  {:width$}  {default:default_width$}  {}\n",
            key.name, key.about
        ));
    }
    text.push_str(&format!(
        "  (default eureka.client.service-url.{}={})\n\n\
         Other eureka.server.* keys of Spring Cloud's EurekaServerConfigBean (AWS, peer \
         pools)\nare accepted and ignored; any other unknown \
         eureka.server.* or\nheureka.* key is an error. Keys elsewhere are ignored, as in Spring.\n",
        DEFAULT_ZONE.0, DEFAULT_ZONE.1
    ));
    text
}
