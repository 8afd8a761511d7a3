//! Which Eureka servers to talk to, and with which credentials: from `--eureka`, else the
//! environment, else Spring's default zone. The environment is passed in as a function so
//! that the rules are tested without touching the process's variables.

use reqwest::Url;

use crate::error::CliError;

/// The first of these set wins when no `--eureka` is given. The second is how Spring Boot
/// users already have the URL (`eureka.client.service-url.defaultZone` in relaxed form).
pub(crate) const ENV_URL: [&str; 2] = ["EUREKA_URL", "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE"];
pub(crate) const ENV_USERNAME: &str = "EUREKA_USERNAME";
pub(crate) const ENV_PASSWORD: &str = "EUREKA_PASSWORD";
/// Spring's default `defaultZone`.
pub(crate) const DEFAULT_URL: &str = "http://localhost:8761/eureka/";

/// One Eureka server: its API base (ending in `/`, without credentials) and the credentials
/// to send to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Server {
    pub base: Url,
    pub credentials: Option<Credentials>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub username: String,
    pub password: String,
}

/// The servers to try, in order.
pub(crate) fn servers(
    flags: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Server>, CliError> {
    let listed: Vec<String> = if flags.is_empty() {
        let from_env = ENV_URL
            .iter()
            .find_map(|name| env(name).filter(|value| !value.trim().is_empty()));
        split(&from_env.unwrap_or_else(|| DEFAULT_URL.to_owned()))
    } else {
        flags.iter().flat_map(|flag| split(flag)).collect()
    };
    if listed.is_empty() {
        return Err(CliError::Usage("--eureka names no URL".to_owned()));
    }
    let from_env = match (env(ENV_USERNAME), env(ENV_PASSWORD)) {
        (Some(username), password) if !username.is_empty() => Some(Credentials {
            username,
            password: password.unwrap_or_default(),
        }),
        _ => None,
    };
    listed
        .iter()
        .map(|text| server(text, from_env.clone()))
        .collect()
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Credentials in the URL win over the environment's. A URL with no path gets `/eureka/`,
/// Spring's context path, and every base ends in `/` so that paths join beneath it.
fn server(text: &str, from_env: Option<Credentials>) -> Result<Server, CliError> {
    let mut url = Url::parse(text)
        .map_err(|error| CliError::Usage(format!("{}: {error}", redacted(text))))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(CliError::Usage(format!(
            "{}: only http:// and https:// URLs are supported",
            redacted(text)
        )));
    }
    let credentials = if url.username().is_empty() {
        from_env
    } else {
        Some(Credentials {
            username: decoded(url.username()),
            password: decoded(url.password().unwrap_or("")),
        })
    };
    // Both setters fail only for URLs that cannot have credentials, which http(s) ones can.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    if url.path() == "/" {
        url.set_path("/eureka/");
    } else if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(Server {
        base: url,
        credentials,
    })
}

fn decoded(text: &str) -> String {
    // Userinfo is percent-encoded in a URL (`p%40ss` for `p@ss`).
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The servers' bases moved into Heureka namespace `name`: `{prefix}/{name}` goes before
/// each base path (`/eureka/` becomes `/ns/team-a/eureka/`), as a Eureka client of that
/// namespace has it in its URL. The name is checked as the server checks it, so that a typo
/// is a usage error here and not a request elsewhere.
pub(crate) fn in_namespace(
    servers: Vec<Server>,
    prefix: &str,
    name: &str,
) -> Result<Vec<Server>, CliError> {
    let name = namespace_name(name)?;
    let prefix = prefix.trim_end_matches('/');
    if !prefix.starts_with('/') || prefix.contains(['?', '#']) {
        return Err(CliError::Usage(format!(
            "--namespace-prefix {prefix:?}: a path starting with /, as heureka.namespaces.path-prefix"
        )));
    }
    Ok(servers
        .into_iter()
        .map(|mut server| {
            let path = format!("{prefix}/{name}{}", server.base.path());
            server.base.set_path(&path);
            server
        })
        .collect())
}

/// A namespace name as Heureka accepts one (1-63 letters, digits, `-`, `_`, `.`, starting
/// with a letter or digit), lower-cased as the server shows it.
fn namespace_name(name: &str) -> Result<String, CliError> {
    let fits = (1..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !fits {
        return Err(CliError::Usage(format!(
            "--namespace {name:?}: 1-63 letters, digits, '-', '_' or '.', starting with a letter or digit"
        )));
    }
    Ok(name.to_ascii_lowercase())
}

/// A URL fit for a message: the userinfo replaced, if any.
fn redacted(text: &str) -> String {
    match (text.find("://"), text.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}***@{}", &text[..scheme_end + 3], &text[at + 1..])
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn resolve(flags: &[&str], env: &[(&str, &str)]) -> Result<Vec<Server>, CliError> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let flags: Vec<String> = flags.iter().map(|flag| flag.to_string()).collect();
        servers(&flags, &|name| env.get(name).cloned())
    }

    fn bases(servers: &[Server]) -> Vec<String> {
        servers.iter().map(|s| s.base.to_string()).collect()
    }

    #[test]
    fn without_flags_or_environment_the_default_zone_is_used() {
        assert_eq!(
            bases(&resolve(&[], &[]).unwrap()),
            ["http://localhost:8761/eureka/"]
        );
    }

    #[test]
    fn flags_win_over_the_environment_and_lists_split_on_commas() {
        let servers = resolve(
            &[
                "http://a:1/eureka,http://b:2/eureka/",
                "http://c:3/eureka/v2",
            ],
            &[("EUREKA_URL", "http://env:9/eureka/")],
        )
        .unwrap();
        assert_eq!(
            bases(&servers),
            [
                "http://a:1/eureka/",
                "http://b:2/eureka/",
                "http://c:3/eureka/v2/"
            ]
        );
    }

    #[test]
    fn eureka_url_wins_over_spring_s_default_zone_variable() {
        let env = [
            (
                "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE",
                "http://spring:1/eureka/",
            ),
            ("EUREKA_URL", "http://mine:2/eureka/"),
        ];
        assert_eq!(
            bases(&resolve(&[], &env).unwrap()),
            ["http://mine:2/eureka/"]
        );
        assert_eq!(
            bases(&resolve(&[], &env[..1]).unwrap()),
            ["http://spring:1/eureka/"]
        );
    }

    #[test]
    fn a_bare_host_gets_spring_s_context_path() {
        assert_eq!(
            bases(&resolve(&["http://h:8761"], &[]).unwrap()),
            ["http://h:8761/eureka/"]
        );
    }

    #[test]
    fn credentials_in_the_url_win_and_are_removed_from_it() {
        let env = [("EUREKA_USERNAME", "env"), ("EUREKA_PASSWORD", "envpw")];
        let servers =
            resolve(&["http://u:p%40ss@h:1/eureka/", "http://h:2/eureka/"], &env).unwrap();
        assert_eq!(servers[0].base.as_str(), "http://h:1/eureka/");
        let url_credentials = servers[0].credentials.clone().unwrap();
        assert_eq!(
            (
                url_credentials.username.as_str(),
                url_credentials.password.as_str()
            ),
            ("u", "p@ss")
        );
        let env_credentials = servers[1].credentials.clone().unwrap();
        assert_eq!(env_credentials.username, "env");
        assert_eq!(env_credentials.password, "envpw");
    }

    #[test]
    fn a_namespace_goes_before_the_base_path_of_every_server() {
        let servers = resolve(&["http://u:p@h:1/eureka/", "http://h:2/"], &[]).unwrap();
        let moved = in_namespace(servers, "/ns", "Team-A").unwrap();
        assert_eq!(
            bases(&moved),
            [
                "http://h:1/ns/team-a/eureka/",
                "http://h:2/ns/team-a/eureka/"
            ]
        );
        assert!(moved[0].credentials.is_some());
    }

    #[test]
    fn the_namespace_prefix_is_the_server_s_path_prefix() {
        let servers = resolve(&["http://h:1/eureka/"], &[]).unwrap();
        assert_eq!(
            bases(&in_namespace(servers, "/tenants/", "a").unwrap()),
            ["http://h:1/tenants/a/eureka/"]
        );
    }

    #[test]
    fn a_namespace_name_the_server_refuses_is_a_usage_error() {
        for name in ["", "a/b", "-a", "a b", &"x".repeat(64)] {
            let servers = resolve(&["http://h:1/eureka/"], &[]).unwrap();
            let error = in_namespace(servers, "/ns", name).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{name:?}");
        }
    }

    #[test]
    fn https_urls_are_accepted() {
        assert_eq!(
            bases(&resolve(&["https://h:8443/eureka/"], &[]).unwrap()),
            ["https://h:8443/eureka/"]
        );
    }

    #[test]
    fn a_bad_url_is_a_usage_error_that_hides_its_credentials() {
        let error = resolve(&["ftp://u:secret@h/"], &[]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(!error.to_string().contains("secret"), "{error}");
        assert_eq!(resolve(&["not a url"], &[]).unwrap_err().exit_code(), 2);
    }
}
