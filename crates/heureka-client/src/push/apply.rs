//! One pushed message applied to the local copy: a `snapshot` replaces it, a `delta` patches it
//! the way a fetched delta does and is checked against the whole registry's `apps__hashcode`
//! (the client follows every application, so the check holds); then the same events a refresh
//! publishes.

use heureka_wire::Format;

use crate::events::FetchKind;
use crate::registry_copy::RegistryCopy;
use crate::sse::SseMessage;

/// What a message did to the copy.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Applied {
    /// The copy now holds the server's registry version `version` (`versions__delta`).
    Holds { version: u64 },
    /// A delta left the copy with another hash than the server's, or a document did not
    /// decode: the copy missed something, and only a new snapshot (a stream without
    /// `Last-Event-ID`) sets it right.
    Inconsistent,
    /// A message of another kind: nothing was applied.
    Skipped,
}

/// Applies `message` to `copy` and publishes what changed.
pub(crate) fn apply(copy: &RegistryCopy, message: &SseMessage) -> Applied {
    let kind = match message.event.as_str() {
        "snapshot" => FetchKind::Snapshot,
        "delta" => FetchKind::PushedDelta,
        _ => return Applied::Skipped,
    };
    let document = match heureka_wire::decode_applications(message.data.as_bytes(), Format::Json) {
        Ok(document) => document,
        Err(error) => {
            tracing::warn!(%error, event = %message.event, "a pushed document does not decode");
            return Applied::Inconsistent;
        }
    };
    // A node's registry version is never negative; a server that sends none (-1) is read as 0,
    // which acknowledges nothing.
    let version = u64::try_from(document.versions_delta).unwrap_or(0);
    if kind == FetchKind::Snapshot {
        let changed = copy.replace_pushed(document);
        copy.refreshed(kind, changed);
        return Applied::Holds { version };
    }
    let (consistent, changed) = copy.patch_pushed(document);
    copy.refreshed(kind, changed);
    if consistent {
        Applied::Holds { version }
    } else {
        Applied::Inconsistent
    }
}

#[cfg(test)]
mod tests {
    use heureka_core::InstanceStatus;
    use tokio::sync::broadcast;

    use super::*;
    use crate::events::ClientEvent;

    fn copy() -> (RegistryCopy, broadcast::Receiver<ClientEvent>) {
        let (events, receiver) = broadcast::channel(64);
        let own = ("BILLING".to_owned(), "b1".to_owned());
        (RegistryCopy::new(true, own, events), receiver)
    }

    fn message(event: &str, data: &str) -> SseMessage {
        SseMessage {
            event: event.to_owned(),
            id: Some("s-0".to_owned()),
            data: data.to_owned(),
        }
    }

    fn instance(id: &str, status: &str, action: &str) -> String {
        format!(
            r#"{{"instanceId":"{id}","app":"ORDERS","hostName":"h","ipAddr":"10.0.0.1","status":"{status}","port":{{"$":80,"@enabled":"true"}},"dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}}{action}}}"#
        )
    }

    fn document(version: u64, hashcode: &str, instances: &[String]) -> String {
        format!(
            r#"{{"applications":{{"versions__delta":"{version}","apps__hashcode":"{hashcode}","application":[{{"name":"ORDERS","instance":[{}]}}]}}}}"#,
            instances.join(",")
        )
    }

    fn statuses(copy: &RegistryCopy) -> Vec<(String, InstanceStatus)> {
        copy.read()
            .all_instances("ORDERS")
            .into_iter()
            .map(|instance| (instance.id().to_owned(), instance.status))
            .collect()
    }

    fn drain(events: &mut broadcast::Receiver<ClientEvent>) -> Vec<ClientEvent> {
        std::iter::from_fn(|| events.try_recv().ok()).collect()
    }

    #[test]
    fn a_snapshot_replaces_the_copy_and_names_the_version_it_holds() {
        let (copy, mut events) = copy();
        let snapshot = document(
            41,
            "UP_2_",
            &[instance("o1", "UP", ""), instance("o2", "UP", "")],
        );
        assert_eq!(
            apply(&copy, &message("snapshot", &snapshot)),
            Applied::Holds { version: 41 }
        );
        assert_eq!(statuses(&copy).len(), 2);
        assert_eq!(
            drain(&mut events),
            [
                ClientEvent::CacheRefreshed {
                    kind: FetchKind::Snapshot,
                    applications: 1,
                    instances: 2
                },
                ClientEvent::InstancesChanged {
                    app: "ORDERS".into()
                }
            ]
        );
        assert_eq!(copy.counts().snapshots, 1);
    }

    #[test]
    fn a_delta_patches_the_copy_and_publishes_the_change() {
        let (copy, mut events) = copy();
        let snapshot = document(
            41,
            "UP_2_",
            &[instance("o1", "UP", ""), instance("o2", "UP", "")],
        );
        apply(&copy, &message("snapshot", &snapshot));
        drain(&mut events);

        let modified = instance("o1", "DOWN", r#","actionType":"MODIFIED""#);
        let delta = document(42, "DOWN_1_UP_1_", &[modified]);
        assert_eq!(
            apply(&copy, &message("delta", &delta)),
            Applied::Holds { version: 42 }
        );
        assert_eq!(
            statuses(&copy),
            [
                ("o1".to_owned(), InstanceStatus::Down),
                ("o2".to_owned(), InstanceStatus::Up)
            ]
        );
        assert!(drain(&mut events).contains(&ClientEvent::InstancesChanged {
            app: "ORDERS".into()
        }));
        assert_eq!(copy.counts().pushed, 1);
    }

    #[test]
    fn a_delta_whose_hash_differs_from_the_copys_asks_for_a_new_snapshot() {
        let (copy, _events) = copy();
        apply(
            &copy,
            &message(
                "snapshot",
                &document(41, "UP_1_", &[instance("o1", "UP", "")]),
            ),
        );
        // The server holds an instance this copy never saw.
        let added = instance("o2", "UP", r#","actionType":"ADDED""#);
        let delta = document(43, "UP_3_", &[added]);
        assert_eq!(
            apply(&copy, &message("delta", &delta)),
            Applied::Inconsistent
        );
    }

    #[test]
    fn a_message_of_another_kind_changes_nothing() {
        let (copy, mut events) = copy();
        assert_eq!(apply(&copy, &message("lagged", "{}")), Applied::Skipped);
        assert!(drain(&mut events).is_empty());
    }

    #[test]
    fn a_document_that_does_not_decode_asks_for_a_new_snapshot() {
        let (copy, mut events) = copy();
        assert_eq!(
            apply(&copy, &message("delta", "not json")),
            Applied::Inconsistent
        );
        assert!(drain(&mut events).is_empty());
    }

    #[test]
    fn a_fetch_overtaken_by_the_push_is_dropped() {
        let (copy, _events) = copy();
        let mark = copy.mark();
        apply(
            &copy,
            &message(
                "snapshot",
                &document(41, "UP_1_", &[instance("o1", "UP", "")]),
            ),
        );
        let stale = heureka_core::Applications {
            versions_delta: 40,
            apps_hashcode: String::new(),
            applications: Vec::new(),
        };
        assert_eq!(copy.replace_fetched(stale, mark), None);
        assert_eq!(statuses(&copy).len(), 1);
    }
}
