//! One line explaining a certificate failure buried in an error's source chain.

/// The first TLS failure found in `error`'s source chain, explained in one line for an
/// operator; `None` when no TLS failure is in it.
pub fn explain(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    unimplemented!("{error}")
}
