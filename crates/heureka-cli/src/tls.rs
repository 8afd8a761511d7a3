//! Whom the commands trust over `https://`, and the certificate they present when a server
//! asks for one: `--trust-store`, `--key-store` and companions, else the environment
//! (`EUREKA_CLIENT_TLS_TRUST_STORE`…, or Spring's relaxed `EUREKA_CLIENT_TLS_TRUSTSTORE`…, the
//! names of `eureka.client.tls.*`), else the public roots and no certificate.
//!
//! The files are read before the first request, so a wrong password is a usage error naming
//! the flag (or variable) that gave it, not a failed connection.

use std::path::PathBuf;

use heureka_client::tls::{KeyStoreSpec, StoreNaming, TlsError, TrustSource, PREFIX};
use heureka_client::ClientTls;
use heureka_tls::rustls;

use crate::args::Global;
use crate::error::CliError;

/// One setting: its flag (the suffix of its `eureka.client.tls.*` key) and the variables that
/// give it when the flag is absent, the first set winning.
struct Setting {
    flag: &'static str,
    env: &'static [&'static str],
}

const TRUST_STORE: Setting = Setting {
    flag: "trust-store",
    env: &[
        "EUREKA_CLIENT_TLS_TRUST_STORE",
        "EUREKA_CLIENT_TLS_TRUSTSTORE",
    ],
};
const TRUST_STORE_PASSWORD: Setting = Setting {
    flag: "trust-store-password",
    env: &[
        "EUREKA_CLIENT_TLS_TRUST_STORE_PASSWORD",
        "EUREKA_CLIENT_TLS_TRUSTSTOREPASSWORD",
    ],
};
const KEY_STORE: Setting = Setting {
    flag: "key-store",
    env: &["EUREKA_CLIENT_TLS_KEY_STORE", "EUREKA_CLIENT_TLS_KEYSTORE"],
};
const KEY_STORE_PASSWORD: Setting = Setting {
    flag: "key-store-password",
    env: &[
        "EUREKA_CLIENT_TLS_KEY_STORE_PASSWORD",
        "EUREKA_CLIENT_TLS_KEYSTOREPASSWORD",
    ],
};
const KEY_ALIAS: Setting = Setting {
    flag: "key-alias",
    env: &["EUREKA_CLIENT_TLS_KEY_ALIAS", "EUREKA_CLIENT_TLS_KEYALIAS"],
};
const CA_CERT: Setting = Setting {
    flag: "ca-cert",
    // No Spring key takes a PEM file for the client's trust: a name of the command line's own.
    env: &["EUREKA_CA_CERT"],
};

/// What the flags and the environment say, each value with where it came from (for errors).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct CliTls {
    pub trust_store: Option<Given>,
    pub trust_store_password: Option<Given>,
    pub key_store: Option<Given>,
    pub key_store_password: Option<Given>,
    pub key_alias: Option<Given>,
    pub ca_cert: Option<Given>,
}

/// A value and the flag or variable that gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Given {
    pub value: String,
    pub from: String,
}

impl CliTls {
    /// The flags, else the environment.
    pub(crate) fn resolve(
        global: &Global,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<CliTls, CliError> {
        let pick = |flag: &Option<String>, setting: &Setting| -> Option<Given> {
            match flag {
                Some(value) => Some(Given {
                    value: value.clone(),
                    from: format!("--{}", setting.flag),
                }),
                None => setting.env.iter().find_map(|name| {
                    env(name)
                        .filter(|value| !value.is_empty())
                        .map(|value| Given {
                            value,
                            from: (*name).to_owned(),
                        })
                }),
            }
        };
        let tls = CliTls {
            trust_store: pick(&global.trust_store, &TRUST_STORE),
            trust_store_password: pick(&global.trust_store_password, &TRUST_STORE_PASSWORD),
            key_store: pick(&global.key_store, &KEY_STORE),
            key_store_password: pick(&global.key_store_password, &KEY_STORE_PASSWORD),
            key_alias: pick(&global.key_alias, &KEY_ALIAS),
            ca_cert: pick(&global.ca_cert, &CA_CERT),
        };
        if let (Some(store), Some(pem)) = (&tls.trust_store, &tls.ca_cert) {
            return Err(CliError::Usage(format!(
                "{} and {} both say whom to trust: give one",
                store.from, pem.from
            )));
        }
        Ok(tls)
    }

    /// The client's TLS settings, `None` when nothing is configured (the public roots).
    pub(crate) fn client_tls(&self) -> Option<ClientTls> {
        let trust = match (&self.trust_store, &self.ca_cert) {
            (Some(store), _) => {
                let mut spec = KeyStoreSpec::new(&store.value, PREFIX, StoreNaming::TrustStore);
                spec.password = self.trust_store_password.as_ref().map(|p| p.value.clone());
                Some(TrustSource::Store(spec))
            }
            (None, Some(pem)) => Some(TrustSource::NamedPem {
                key: pem.from.clone(),
                paths: vec![PathBuf::from(&pem.value)],
            }),
            (None, None) => None,
        };
        let identity = self.key_store.as_ref().map(|store| {
            let mut spec = KeyStoreSpec::new(&store.value, PREFIX, StoreNaming::KeyStore);
            spec.password = self.key_store_password.as_ref().map(|p| p.value.clone());
            spec.key_alias = self.key_alias.as_ref().map(|a| a.value.clone());
            spec
        });
        (trust.is_some() || identity.is_some()).then_some(ClientTls { trust, identity })
    }

    /// The rustls configuration the commands connect with; the stores are read now, and a
    /// store that cannot be used is a usage error naming the flag or variable to fix.
    pub(crate) fn rustls_config(&self) -> Result<rustls::ClientConfig, CliError> {
        ClientTls::rustls_config(self.client_tls().as_ref())
            .map_err(|error| CliError::Usage(self.relabel(error).to_string()))
    }

    /// The same settings as `eureka.client.tls.*` Spring keys, for the sidecar, whose
    /// configuration is Spring's (a PEM `--ca-cert` has no such key: see `client_tls`).
    pub(crate) fn spring_keys(&self) -> Vec<(String, String)> {
        let mut keys: Vec<(String, String)> = self
            .store_settings()
            .into_iter()
            .filter_map(|(given, setting)| {
                let given = given.as_ref()?;
                Some((format!("{PREFIX}.{}", setting.flag), given.value.clone()))
            })
            .collect();
        if !keys.is_empty() {
            keys.insert(0, (format!("{PREFIX}.enabled"), "true".to_owned()));
        }
        keys
    }

    /// `eureka.client.tls.trust-store-password: wrong password…` as
    /// `--trust-store-password: wrong password…` (or the variable that gave it): the user of
    /// the command line never wrote the Spring key.
    fn relabel(&self, error: TlsError) -> TlsError {
        let Some(suffix) = error
            .key
            .strip_prefix(PREFIX)
            .and_then(|key| key.strip_prefix('.'))
        else {
            return error;
        };
        let key = self
            .store_settings()
            .into_iter()
            .find(|(_, setting)| setting.flag == suffix)
            .and_then(|(given, _)| given.as_ref().map(|given| given.from.clone()))
            .unwrap_or_else(|| format!("--{suffix}"));
        TlsError::new(key, error.reason)
    }

    /// The settings that have an `eureka.client.tls.*` key, with their values.
    fn store_settings(&self) -> [(&Option<Given>, &'static Setting); 5] {
        [
            (&self.trust_store, &TRUST_STORE),
            (&self.trust_store_password, &TRUST_STORE_PASSWORD),
            (&self.key_store, &KEY_STORE),
            (&self.key_store_password, &KEY_STORE_PASSWORD),
            (&self.key_alias, &KEY_ALIAS),
        ]
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::Parser;

    use super::*;
    use crate::args::Cli;

    fn resolve(flags: &[&str], env: &[(&str, &str)]) -> Result<CliTls, CliError> {
        let cli = Cli::try_parse_from(["heureka", "apps"].iter().chain(flags)).unwrap();
        let env: HashMap<String, String> = env
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        CliTls::resolve(&cli.global, &|name| env.get(name).cloned())
    }

    #[test]
    fn without_flags_or_environment_nothing_is_configured_and_the_public_roots_are_trusted() {
        let tls = resolve(&[], &[]).unwrap();
        assert_eq!(tls.client_tls(), None);
        assert!(tls.rustls_config().is_ok());
    }

    #[test]
    fn a_flag_wins_over_the_environment() {
        let tls = resolve(
            &["--trust-store", "/flag.p12"],
            &[("EUREKA_CLIENT_TLS_TRUST_STORE", "/env.p12")],
        )
        .unwrap();
        let given = tls.trust_store.unwrap();
        assert_eq!(
            (given.value.as_str(), given.from.as_str()),
            ("/flag.p12", "--trust-store")
        );
    }

    #[test]
    fn spring_s_relaxed_variable_names_are_read_too() {
        let tls = resolve(&[], &[("EUREKA_CLIENT_TLS_KEYSTORE", "/me.p12")]).unwrap();
        assert_eq!(tls.key_store.unwrap().value, "/me.p12");
    }

    #[test]
    fn a_trust_store_and_a_ca_certificate_together_are_a_usage_error() {
        let error = resolve(&["--trust-store", "/a.p12", "--ca-cert", "/ca.pem"], &[]).unwrap_err();
        assert_eq!(error.exit_code(), 2, "{error}");
    }

    #[test]
    fn a_missing_store_is_a_usage_error_naming_the_flag_that_gave_it() {
        let error = resolve(&["--trust-store", "/no/such/ca.p12"], &[])
            .unwrap()
            .rustls_config()
            .unwrap_err();
        assert_eq!(error.exit_code(), 2, "{error}");
        assert!(error.to_string().starts_with("--trust-store: "), "{error}");
    }

    #[test]
    fn a_missing_store_given_by_a_variable_names_the_variable() {
        let error = resolve(&[], &[("EUREKA_CLIENT_TLS_KEY_STORE", "/no/such/me.p12")])
            .unwrap()
            .rustls_config()
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("EUREKA_CLIENT_TLS_KEY_STORE: "),
            "{error}"
        );
    }

    #[test]
    fn for_the_sidecar_the_options_are_eureka_client_tls_keys_with_tls_enabled() {
        let tls = resolve(
            &["--trust-store", "/ca.p12", "--trust-store-password", "pw"],
            &[],
        )
        .unwrap();
        assert_eq!(
            tls.spring_keys(),
            [
                ("eureka.client.tls.enabled".to_owned(), "true".to_owned()),
                (
                    "eureka.client.tls.trust-store".to_owned(),
                    "/ca.p12".to_owned()
                ),
                (
                    "eureka.client.tls.trust-store-password".to_owned(),
                    "pw".to_owned()
                ),
            ]
        );
    }
}
