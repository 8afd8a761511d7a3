//! An error and its causes on one line, for the log lines and reasons of outgoing requests.

/// `error`'s message and each of its causes, joined by `: `. reqwest's own message is generic
/// ("error sending request"); the causes say what happened. Line breaks become spaces, so the
/// text fits one log line or one-line reason.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.replace(['\n', '\r'], " ")
}
