//! The server's log: Spring's `logging.level.*` keys, a writer thread of its own, and lines
//! that clients cannot forge.

use std::fmt::{self, Write as _};
use std::io::IsTerminal;

use heureka_server::config::Config;
use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::EnvFilter;

mod linger;

/// `logging.level.root` sets the default; `logging.level.<target>` refines one target.
/// `RUST_LOG`, when set, wins, as it does for every Rust program.
///
/// Lines go to stdout through a queue and a thread of their own (`tracing-appender`), so a
/// request never waits on a `write` to a pipe or a file: Eureka logs every registration at
/// INFO, and writing that line unbuffered on the request's thread was about a tenth of a
/// registration's cost. The writer thread batches whatever queued up into one write, after
/// letting lines gather for a moment ([`linger::Lingering`]). The queue is not lossy: when it
/// is full (a stalled reader of stdout), logging waits, as a plain `write` would, rather than
/// drop lines or grow without bound.
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
        .finish(linger::Lingering::new(
            std::io::BufWriter::with_capacity(LOG_BUFFER_BYTES, std::io::stdout()),
            linger::LINGER,
        ));
    // Colour codes only on a terminal: redirected logs stay plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_timer(SecondCachedClock)
        .fmt_fields(OneLineFields)
        .with_ansi(std::io::stdout().is_terminal())
        .with_writer(writer)
        .init();
    guard
}

/// How much the log thread gathers into one write; it also writes once its queue has run dry
/// and the linger is over, so a quiet server's lines appear within 10 ms.
const LOG_BUFFER_BYTES: usize = 64 * 1024;

/// How many lines may wait for the log thread before a logging request waits for it (nothing is
/// dropped). The queue's slots are allocated up front: tracing-appender's default of 128,000
/// lines cost about 4 MiB of an idle server's memory; a burst of registrations fills 8,192 in
/// a fraction of a second only if the terminal cannot keep up anyway (the lines of one linger
/// are about a thousand at 100,000 registrations a second).
const LOG_QUEUE_LINES: usize = 8_192;

/// How every field of every line is written: as the default formatter would (the message bare,
/// others `name=value`, space-delimited), except that control characters are escaped.
///
/// App names, instance ids, hosts and paths come from clients and reach log fields verbatim. A
/// CR/LF in one would end the line and let its sender write a line of their own choosing (a
/// forged "registered" or "cancelled"), and terminal escape sequences would reach an operator's
/// terminal. The formatter escapes ESC, BEL and the C1 codes itself, but not CR, LF or TAB, so
/// every field's value passes through [`OneLine`]: a log line is always one line.
struct OneLineFields;

impl<'w> FormatFields<'w> for OneLineFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'w>, fields: R) -> fmt::Result {
        let mut visitor = OneLineVisitor {
            writer,
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

/// Writes the fields of one line in turn, space-delimited. Every value of every kind reaches
/// `record_debug` (`Visit`'s default for the others), so a `&str` field is quoted as the
/// default formatter quotes it, and a `%` field is written bare.
struct OneLineVisitor<'w> {
    writer: Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl Visit for OneLineVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_ok() {
            self.result = self.write_field(field, value);
        }
    }
}

impl OneLineVisitor<'_> {
    /// A field's name goes out as it is: names are written in the source, never sent by a
    /// client, so only the value passes through [`OneLine`]. Every registration writes a line
    /// of five fields; escaping each name and `=` too, through tracing-subscriber's delimited
    /// visitor, made the line about an eighth dearer (3,415 instructions against 3,010).
    fn write_field(&mut self, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
        if !std::mem::take(&mut self.first) {
            self.writer.write_char(' ')?;
        }
        if field.name() != "message" {
            self.writer.write_str(field.name())?;
            self.writer.write_char('=')?;
        }
        write!(OneLine(&mut self.writer), "{value:?}")
    }
}

/// Passes text through with every control character written as an escape (`\n`, `\r`, `\t`,
/// `\u{1b}`).
struct OneLine<W>(W);

impl<W: fmt::Write> fmt::Write for OneLine<W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        // Runs of ordinary characters go through in one call: the common case costs one scan.
        let mut rest = text;
        while let Some(at) = first_control(rest) {
            self.0.write_str(&rest[..at])?;
            let control = rest[at..].chars().next().unwrap_or_default();
            write!(self.0, "{}", control.escape_default())?;
            rest = &rest[at + control.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

/// Where the first control character (C0, DEL or C1) of `text` starts, scanning bytes: every
/// registration's line passes its fields through here, and decoding each character to ask
/// `char::is_control` cost more than the rest of the escaping. In UTF-8 a C0 or DEL is one byte
/// below 0x20 or 0x7F, and a C1 (U+0080–U+009F) is 0xC2 followed by 0x80–0x9F; no other
/// character's encoding contains those sequences.
fn first_control(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // A pass without early exit, which the compiler vectorizes, settles the common case of
    // none; 0xC2 alone (as in `é`) sends the text to the exact scan below.
    let suspect = bytes.iter().fold(false, |any, &byte| {
        any | (byte < 0x20) | (byte == 0x7F) | (byte == 0xC2)
    });
    if !suspect {
        return None;
    }
    bytes.iter().enumerate().position(|(at, &byte)| {
        byte < 0x20
            || byte == 0x7F
            || (byte == 0xC2 && matches!(bytes.get(at + 1), Some(0x80..=0x9F)))
    })
}

/// The default timer's format (RFC 3339 in UTC with microseconds, `2026-12-06T14:08:05.123456Z`),
/// with the date and time of day formatted once a second per thread instead of on every line:
/// calendar arithmetic and eight padded numbers through `fmt` were a third of a registration's
/// log line.
struct SecondCachedClock;

thread_local! {
    /// The whole second last formatted on this thread, and its text up to and including the `.`.
    static SECOND: std::cell::RefCell<(u64, String)> = const {
        std::cell::RefCell::new((u64::MAX, String::new()))
    };
}

impl FormatTime for SecondCachedClock {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let (secs, micros) = (since_epoch.as_secs(), since_epoch.subsec_micros());
        SECOND.with_borrow_mut(|(cached, prefix)| {
            if *cached != secs {
                *prefix = second_prefix(secs);
                *cached = secs;
            }
            w.write_str(prefix)
        })?;
        // Digits and 'Z' only: always UTF-8.
        w.write_str(std::str::from_utf8(&micros_and_zone(micros)).unwrap_or("000000Z"))
    }
}

/// `2026-12-06T14:08:05.`: the text of that whole second in UTC, up to its fraction.
fn second_prefix(secs_since_epoch: u64) -> String {
    let (days, secs) = (secs_since_epoch / 86_400, secs_since_epoch % 86_400);
    let (year, month, day) =
        heureka_server::tls::civil_from_days(i64::try_from(days).unwrap_or(i64::MAX));
    let (hour, minute, second) = (secs / 3_600, secs % 3_600 / 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.")
}

/// `123456Z`: the microseconds, six digits zero-padded, and the zone.
fn micros_and_zone(micros: u32) -> [u8; 7] {
    let mut text = *b"000000Z";
    let mut rest = micros.min(999_999);
    for digit in text[..6].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_line(text: &str) -> String {
        let mut out = String::new();
        OneLine(&mut out).write_str(text).unwrap();
        out
    }

    /// What `format` writes for the events `log` emits, without times, levels or colours.
    fn lines_written_by<F>(format: F, log: impl FnOnce()) -> String
    where
        F: for<'w> FormatFields<'w> + Send + Sync + 'static,
    {
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&out);
        let subscriber = tracing_subscriber::fmt()
            .without_time()
            .with_level(false)
            .with_target(false)
            .with_ansi(false)
            .fmt_fields(format)
            .with_writer(move || SharedBuffer(std::sync::Arc::clone(&sink)))
            .finish();
        tracing::subscriber::with_default(subscriber, log);
        let bytes = out.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct SharedBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for SharedBuffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The fields formatter this module had before its own visitor: tracing-subscriber's
    /// delimited visitor over a function that escapes the name, the `=` and the value.
    fn delimited_oracle() -> impl for<'w> FormatFields<'w> + Send + Sync + 'static {
        use tracing_subscriber::field::MakeExt;
        tracing_subscriber::fmt::format::debug_fn(|writer: &mut Writer<'_>, field, value| {
            let mut line = OneLine(writer);
            if field.name() != "message" {
                line.write_str(field.name())?;
                line.write_str("=")?;
            }
            write!(line, "{value:?}")
        })
        .delimited(" ")
    }

    /// Every kind of field the server logs: `%` and `?` values, text, numbers, a flag, no
    /// fields at all, and values that need escaping.
    fn every_kind_of_line() {
        let (app, id) = ("ORDERS".to_owned(), "10.0.0.1:orders:8080".to_owned());
        tracing::info!(%app, %id, status = %"UP", origin = ?Some("peer"), "registered instance");
        tracing::warn!(
            health = "UP",
            count = 3_i64,
            size = 7_u64,
            up = true,
            "text and numbers"
        );
        tracing::info!("a message alone");
        tracing::info!(%app, "a line break\r\nINFO forged in a message");
        let forged = "o-1\r\nINFO forged\u{1b}[2J\u{85}";
        tracing::info!(id = %forged, quoted = forged, "escaped values");
        tracing::info!(message = "a message field", after = 1_i64);
    }

    #[test]
    fn fields_are_written_as_the_delimited_visitor_wrote_them() {
        let ours = lines_written_by(OneLineFields, every_kind_of_line);
        let oracle = lines_written_by(delimited_oracle(), every_kind_of_line);
        assert_eq!(ours, oracle);
        assert_eq!(ours.lines().count(), 6, "{ours}");
        assert!(
            ours.contains("registered instance app=ORDERS id=10.0.0.1:orders:8080 status=UP"),
            "{ours}"
        );
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
    fn c1_codes_are_found_but_other_two_byte_characters_are_not() {
        assert_eq!(first_control("é£\u{a0}\u{bf}x"), None);
        assert_eq!(first_control("é\u{85}"), Some(2));
        assert_eq!(one_line("a\u{7f}b"), "a\\u{7f}b");
    }

    #[test]
    fn the_clock_writes_what_the_default_timer_writes_for_that_second() {
        let mut ours = String::new();
        let mut default = String::new();
        // Retried across a second boundary: the two clocks read the time one after the other.
        for _ in 0..3 {
            ours.clear();
            default.clear();
            SecondCachedClock
                .format_time(&mut Writer::new(&mut ours))
                .unwrap();
            tracing_subscriber::fmt::time::SystemTime
                .format_time(&mut Writer::new(&mut default))
                .unwrap();
            if ours[..20] == default[..20] {
                break;
            }
        }
        assert_eq!(ours[..20], default[..20]);
        assert_eq!(ours.len(), default.len(), "{ours} against {default}");
        assert!(ours.ends_with('Z'), "{ours}");
    }

    #[test]
    fn dates_across_leap_days_and_centuries_are_the_calendar_s() {
        assert_eq!(second_prefix(0), "1970-01-01T00:00:00.");
        assert_eq!(second_prefix(951_782_399), "2000-02-28T23:59:59.");
        assert_eq!(second_prefix(951_868_800), "2000-03-01T00:00:00.");
        assert_eq!(second_prefix(1_709_164_800), "2024-02-29T00:00:00.");
        assert_eq!(second_prefix(4_107_542_400), "2100-03-01T00:00:00.");
        assert_eq!(second_prefix(1_796_565_296), "2026-12-06T13:54:56.");
    }

    #[test]
    fn microseconds_are_zero_padded_to_six_digits() {
        assert_eq!(&micros_and_zone(42), b"000042Z");
        assert_eq!(&micros_and_zone(999_999), b"999999Z");
    }

    #[test]
    fn ordinary_text_passes_unchanged() {
        assert_eq!(
            one_line("ORDERS 10.0.0.1:orders:8080 ünï"),
            "ORDERS 10.0.0.1:orders:8080 ünï"
        );
    }
}
