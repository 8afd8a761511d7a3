//! One instance's change, as both watch paths find it, and the printer that writes changes
//! one line each (or one JSON object each) and counts them down to `--count`.

use heureka_core::{InstanceStatus, Millis};
use serde_json::json;

use crate::render;

/// One instance's change, as Eureka's deltas name them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub at: Millis,
    pub action: Action,
    pub app: String,
    pub id: String,
    pub status: InstanceStatus,
    pub overridden_status: InstanceStatus,
    /// The event type when the change came from the event stream (`registered`,
    /// `status-changed`…); polling sees only the action.
    pub event: Option<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Added,
    Modified,
    Deleted,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Added => "ADDED",
            Action::Modified => "MODIFIED",
            Action::Deleted => "DELETED",
        }
    }
}

/// Prints changes and counts them down to `--count`.
pub(crate) struct Printer {
    pub(super) json: bool,
    pub(super) left: Option<u64>,
}

impl Printer {
    /// Prints one change; `false` once `--count` changes have been printed.
    pub(crate) fn print(&mut self, change: &Change) -> bool {
        if self.left == Some(0) {
            return false;
        }
        println!("{}", self.line(change));
        if let Some(left) = &mut self.left {
            *left -= 1;
        }
        self.left != Some(0)
    }

    /// Whether `--count` was 0 to begin with or has been reached.
    pub(crate) fn done(&self) -> bool {
        self.left == Some(0)
    }

    fn line(&self, change: &Change) -> String {
        if self.json {
            let mut object = json!({
                "at": change.at,
                "action": change.action.as_str(),
                "app": change.app,
                "id": change.id,
                "status": change.status.as_str(),
                "overriddenStatus": change.overridden_status.as_str(),
            });
            if let (Some(object), Some(event)) = (object.as_object_mut(), change.event) {
                object.insert("event".to_owned(), json!(event));
            }
            return object.to_string();
        }
        let mut line = format!(
            "{}  {:<8}  {}  {}  {}",
            render::timestamp(change.at),
            change.action.as_str(),
            render::printable(&change.app),
            render::printable(&change.id),
            change.status
        );
        if change.overridden_status != InstanceStatus::Unknown {
            line.push_str(&format!(" (override {})", change.overridden_status));
        }
        if let Some(event) = change.event {
            line.push_str(&format!("  [{event}]"));
        }
        line
    }
}
