//! What a push stream carries (`docs/push.md`): `delta` messages, one per write, and the
//! `snapshot` a stream starts with, each sent as one SSE frame whose data is one line of
//! Eureka's own JSON, so that any Eureka client's codec reads it.

use std::sync::OnceLock;

use bytes::Bytes;
use heureka_core::{apps_hashcode, Application, Applications};
use heureka_wire::Format;

/// The applications a stream follows: every one, or those named (upper-cased, as the
/// registry keys them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Follows {
    Every,
    Only(Vec<String>),
}

impl Follows {
    /// `?app=` values, in any case; none means every application.
    pub(crate) fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Follows {
        let mut apps: Vec<String> = names
            .into_iter()
            .map(|name| name.trim().to_uppercase())
            .filter(|name| !name.is_empty())
            .collect();
        apps.sort();
        apps.dedup();
        match apps.is_empty() {
            true => Follows::Every,
            false => Follows::Only(apps),
        }
    }

    pub(crate) fn follows(&self, app: &str) -> bool {
        match self {
            Follows::Every => true,
            Follows::Only(apps) => apps.binary_search_by(|name| name.as_str().cmp(app)).is_ok(),
        }
    }
}

/// One write's changes: each changed instance as the delta document shows it (`actionType`
/// ADDED, MODIFIED or DELETED), by application.
#[derive(Debug)]
pub(crate) struct Delta {
    /// This process's stream id and the delta's number in it (`docs/push.md`'s `id:`).
    pub(crate) id: StreamPosition,
    /// The registry's version after the write.
    version: u64,
    /// The whole registry's `apps__hashcode` after the write.
    hashcode: String,
    /// Sorted by name, each with its changed instances.
    applications: Vec<Application>,
    /// The frame for a stream that follows every application it touches, encoded on first use
    /// (never under the registry lock) and once however many streams send it.
    whole: OnceLock<Bytes>,
}

impl Delta {
    pub(crate) fn new(
        id: StreamPosition,
        version: u64,
        hashcode: String,
        applications: Vec<Application>,
    ) -> Delta {
        Delta {
            id,
            version,
            hashcode,
            applications,
            whole: OnceLock::new(),
        }
    }

    /// The frame for a stream following `follows`: the whole delta, the part it follows, or
    /// `None` when it follows none of it.
    pub(crate) fn frame_for(&self, follows: &Follows) -> Option<Bytes> {
        let followed = |app: &&Application| follows.follows(&app.name);
        let count = self.applications.iter().filter(followed).count();
        if count == self.applications.len() {
            let whole = self
                .whole
                .get_or_init(|| self.frame(self.applications.clone()));
            return Some(whole.clone());
        }
        (count > 0)
            .then(|| self.frame(self.applications.iter().filter(followed).cloned().collect()))
    }

    fn frame(&self, applications: Vec<Application>) -> Bytes {
        let document = Applications {
            versions_delta: self.version as i64,
            apps_hashcode: self.hashcode.clone(),
            applications,
        };
        frame("delta", &self.id, &document)
    }
}

/// The followed applications as one registry version shows them, the first message of a
/// stream that does not resume.
pub(crate) fn snapshot_frame(
    id: &StreamPosition,
    version: u64,
    applications: Vec<Application>,
) -> Bytes {
    let hashcode = apps_hashcode(
        applications
            .iter()
            .flat_map(|app| app.instances.iter().map(|instance| &instance.status)),
    );
    let document = Applications {
        versions_delta: version as i64,
        apps_hashcode: hashcode,
        applications,
    };
    frame("snapshot", id, &document)
}

/// The keep-alive comment a quiet stream is sent.
pub(crate) const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// `event:`, `id:` and one `data:` line: the encoder writes JSON on one line (control
/// characters in strings escaped), as SSE data must be.
fn frame(event: &str, id: &StreamPosition, document: &Applications) -> Bytes {
    let json = heureka_wire::encode_applications(document, Format::Json);
    let mut frame = Vec::with_capacity(json.len() + 64);
    frame.extend_from_slice(format!("event: {event}\nid: {}\ndata: ", id.text()).as_bytes());
    frame.extend_from_slice(&json);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

/// Where a stream is: the process that numbered its messages, and the last one's number.
/// Written `STREAM-SEQ`, STREAM in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StreamPosition {
    pub(crate) stream: u64,
    pub(crate) seq: u64,
}

impl StreamPosition {
    pub(crate) fn text(&self) -> String {
        format!("{:016x}-{}", self.stream, self.seq)
    }

    /// A `Last-Event-ID` as this module writes it; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<StreamPosition> {
        let (stream, seq) = text.trim().split_once('-')?;
        if stream.len() != 16 {
            return None;
        }
        Some(StreamPosition {
            stream: u64::from_str_radix(stream, 16).ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests;
