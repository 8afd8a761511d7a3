//! What can go wrong, and the exit code each failure gives a script to test.

/// A failed command. The message is one line; credentials never appear in it.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The arguments or the environment do not make a valid command.
    #[error("{0}")]
    Usage(String),
    /// The server answered 404: no such application or instance.
    #[error("{0}")]
    NotFound(String),
    /// The server answered 401 or 403.
    #[error("{0}")]
    Auth(String),
    /// No server answered: connection refused, DNS failure, timeout.
    #[error("{0}")]
    Unreachable(String),
    /// A server answered, but not as the protocol says: another status code, or a body that
    /// does not decode.
    #[error("{0}")]
    Server(String),
    /// `drain`: consumers did not fetch the change before the timeout.
    #[error("{0}")]
    Unconfirmed(String),
}

impl CliError {
    /// 0 is success; 1 not found; 2 usage; 3 unreachable or any other server failure; 4 refused
    /// credentials; 5 a drain's consumers did not all confirm. Documented in every
    /// subcommand's `--help` and in docs/cli.md.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::NotFound(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Unreachable(_) | CliError::Server(_) => 3,
            CliError::Auth(_) => 4,
            CliError::Unconfirmed(_) => 5,
        }
    }
}
