//! The server's log: Spring's `logging.level.*` keys, a writer thread of its own, and lines
//! that clients cannot forge.

use std::fmt::{self, Write as _};
use std::io::IsTerminal;

use heureka_server::config::Config;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::format::{self, Writer};
use tracing_subscriber::EnvFilter;

/// `logging.level.root` sets the default; `logging.level.<target>` refines one target.
/// `RUST_LOG`, when set, wins, as it does for every Rust program.
///
/// Lines go to stdout through a queue and a thread of their own (`tracing-appender`), so a
/// request never waits on a `write` to a pipe or a file: Eureka logs every registration at
/// INFO, and writing that line unbuffered on the request's thread was about a tenth of a
/// registration's cost. The writer thread batches whatever queued up into one write. The
/// queue is not lossy: when it is full (a stalled reader of stdout), logging waits, as a plain
/// `write` would, rather than drop lines or grow without bound.
pub(crate) fn init(config: &Config) -> tracing_appender::non_blocking::WorkerGuard {
    // hickory's serving loops log every DNS answer at INFO (`dns/`): two lines a query.
    // Heureka counts them instead; `logging.level.hickory_server` brings the lines back.
    let mut directives = vec!["info".to_owned(), "hickory_server=warn".to_owned()];
    for (target, level) in &config.logging_levels {
        let level = level.to_ascii_lowercase();
        if target.eq_ignore_ascii_case("root") {
            directives[0] = level;
        } else {
            let target = match target.as_str() {
                "heureka" => "heureka_server".to_owned(),
                other => other.replace('.', "::"),
            };
            directives.retain(|directive| !directive.starts_with(&format!("{target}=")));
            directives.push(format!("{target}={level}"));
        }
    }
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|value| EnvFilter::try_new(value).ok())
        .unwrap_or_else(|| EnvFilter::new(directives.join(",")));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .thread_name("heureka-log")
        .finish(std::io::BufWriter::with_capacity(
            LOG_BUFFER_BYTES,
            std::io::stdout(),
        ));
    // Colour codes only on a terminal: redirected logs stay plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .fmt_fields(one_line_fields())
        .with_ansi(std::io::stdout().is_terminal())
        .with_writer(writer)
        .init();
    guard
}

/// How much the log thread gathers into one write; it also writes whenever its queue runs dry,
/// so a quiet server's lines appear at once.
const LOG_BUFFER_BYTES: usize = 64 * 1024;

/// How many lines may wait for the log thread before a logging request waits for it (nothing is
/// dropped). The queue's slots are allocated up front: tracing-appender's default of 128,000
/// lines cost about 4 MiB of an idle server's memory; a burst of registrations fills 8,192 in
/// a fraction of a second only if the terminal cannot keep up anyway.
const LOG_QUEUE_LINES: usize = 8_192;

/// How every field of every line is written: as the default formatter would (the message bare,
/// others `name=value`, space-delimited), except that control characters are escaped.
///
/// App names, instance ids, hosts and paths come from clients and reach log fields verbatim. A
/// CR/LF in one would end the line and let its sender write a line of their own choosing (a
/// forged "registered" or "cancelled"), and terminal escape sequences would reach an operator's
/// terminal. The formatter escapes ESC, BEL and the C1 codes itself, but not CR, LF or TAB, so
/// every field passes through [`OneLine`]: a log line is always one line.
fn one_line_fields() -> impl for<'w> format::FormatFields<'w> + 'static {
    format::debug_fn(|writer: &mut Writer<'_>, field, value| {
        let mut line = OneLine(writer);
        if field.name() == "message" {
            write!(line, "{value:?}")
        } else {
            write!(line, "{}={value:?}", field.name())
        }
    })
    .delimited(" ")
}

/// Passes text through with every control character written as an escape (`\n`, `\r`, `\t`,
/// `\u{1b}`).
struct OneLine<W>(W);

impl<W: fmt::Write> fmt::Write for OneLine<W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        // Runs of ordinary characters go through in one call: the common case costs one scan.
        let mut rest = text;
        while let Some(at) = rest.find(char::is_control) {
            self.0.write_str(&rest[..at])?;
            let control = rest[at..].chars().next().unwrap_or_default();
            write!(self.0, "{}", control.escape_default())?;
            rest = &rest[at + control.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_line(text: &str) -> String {
        let mut out = String::new();
        OneLine(&mut out).write_str(text).unwrap();
        out
    }

    #[test]
    fn line_breaks_in_a_value_are_escaped() {
        assert_eq!(
            one_line("app\r\nINFO registered EVIL"),
            "app\\r\\nINFO registered EVIL"
        );
    }

    #[test]
    fn terminal_escapes_and_c1_codes_are_escaped() {
        assert_eq!(one_line("\u{1b}[31mred\u{9b}"), "\\u{1b}[31mred\\u{9b}");
    }

    #[test]
    fn ordinary_text_passes_unchanged() {
        assert_eq!(
            one_line("ORDERS 10.0.0.1:orders:8080 ünï"),
            "ORDERS 10.0.0.1:orders:8080 ünï"
        );
    }
}
