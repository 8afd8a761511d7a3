//! Server-Sent Events read as their bytes arrive: the line protocol of `text/event-stream`,
//! which Heureka's push (`GET {base}/push`, docs/push.md) and event stream (`{base}/events`)
//! both speak. Public so that `heureka watch` reads both with the same parser.

/// One message: its `event:` name (`message` when it names none), its `id:` if it had one, and
/// its `data:` lines joined by `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseMessage {
    pub event: String,
    pub id: Option<String>,
    pub data: String,
}

/// The parser, fed bytes in whatever pieces they come: a message ends at a blank line; comment
/// lines (the `: keep-alive`s) and fields other than `event`, `id` and `data` are skipped; a
/// message without data is no message, as in `EventSource`.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    event: Option<String>,
    id: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// The messages the bytes complete, in order; a partial line waits for the next bytes.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseMessage> {
        self.pending.extend_from_slice(bytes);
        let mut messages = Vec::new();
        let mut start = 0;
        while let Some(end) = self.pending[start..].iter().position(|b| *b == b'\n') {
            let line = String::from_utf8_lossy(&self.pending[start..start + end]).into_owned();
            start += end + 1;
            if let Some(message) = self.line(line.trim_end_matches('\r')) {
                messages.push(message);
            }
        }
        self.pending.drain(..start);
        messages
    }

    fn line(&mut self, line: &str) -> Option<SseMessage> {
        if line.is_empty() {
            let event = self.event.take();
            let id = self.id.take();
            return self.data.take().map(|data| SseMessage {
                event: event.unwrap_or_else(|| "message".to_owned()),
                id,
                data,
            });
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "id" => self.id = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(event: &str, id: Option<&str>, data: &str) -> SseMessage {
        SseMessage {
            event: event.to_owned(),
            id: id.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    #[test]
    fn messages_end_at_a_blank_line_however_the_bytes_are_split() {
        let stream = b": keep-alive\n\nevent: delta\r\nid: 9f-1\r\ndata: {\"a\":1}\r\n\r\nda";
        let mut parser = SseParser::default();
        let mut messages = Vec::new();
        for byte in stream {
            messages.extend(parser.feed(std::slice::from_ref(byte)));
        }
        assert_eq!(messages, [message("delta", Some("9f-1"), "{\"a\":1}")]);
        assert_eq!(
            parser.feed(b"ta: x\ndata: y\n\n"),
            [message("message", None, "x\ny")]
        );
    }

    #[test]
    fn several_messages_in_one_chunk_come_out_in_order() {
        let mut parser = SseParser::default();
        let messages =
            parser.feed(b"event: snapshot\nid: s-0\ndata: 1\n\nevent: delta\nid: s-1\ndata: 2\n\n");
        assert_eq!(
            messages,
            [
                message("snapshot", Some("s-0"), "1"),
                message("delta", Some("s-1"), "2")
            ]
        );
    }

    #[test]
    fn a_message_without_data_is_no_message() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b"event: delta\nid: s-1\n\n").is_empty());
        // Nor do its fields leak into the next one.
        assert_eq!(parser.feed(b"data: x\n\n"), [message("message", None, "x")]);
    }
}
