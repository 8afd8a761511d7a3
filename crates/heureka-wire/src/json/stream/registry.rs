//! The registry document (`{"applications":{…}}`) and the single-application document
//! (`{"application":{…}}`), read without a tree by the same rules as
//! [`decode`](super::super::decode)'s tree reader.
//!
//! A full registry at 1,000,000 instances is close to a gigabyte of JSON; its tree took several
//! times that in memory on a peer's start-up sync. Here only the decoded [`Application`]s are
//! held. Field errors name their place (`application[3].instance[0].port.$`), the first one
//! wins, and the rest of the document is still read for syntax, so a syntax error anywhere wins
//! over them, as when the tree is parsed first.

use heureka_core::{Application, Applications};
use serde::de::{MapAccess, SeqAccess};

use super::instance::InstanceObject;
use super::visit::{document, entries, Handler, ObjectReader, OnScalar, Skip, Value};
use crate::error::DecodeError;
use crate::fields::{self, Scalar};
use crate::json::decode::NO_VERSION;

/// `{"applications":{…}}` read straight into a registry.
pub(crate) fn applications(body: &[u8]) -> Result<Applications, DecodeError> {
    document(
        body,
        "applications",
        r#"a JSON object {"applications":{…}}"#,
        ApplicationsObject,
    )
}

/// `{"application":{…}}` read straight into one application.
pub(crate) fn application(body: &[u8]) -> Result<Application, DecodeError> {
    document(
        body,
        "application",
        r#"a JSON object {"application":{…}}"#,
        ApplicationObject,
    )
    .map_err(|e| e.within("application"))
}

/// The registry object: its version, its hash and its applications, in document order.
#[derive(Clone, Copy)]
struct ApplicationsObject;

impl<'de> ObjectReader<'de> for ApplicationsObject {
    type Out = Applications;
    fn read<A: MapAccess<'de>>(
        self,
        map: A,
    ) -> Result<Result<Applications, DecodeError>, A::Error> {
        let mut apps = Applications {
            versions_delta: NO_VERSION,
            apps_hashcode: String::new(),
            applications: Vec::new(),
        };
        let outcome = entries(map, |key, map| {
            if key == "application" {
                // A later `application` replaces an earlier one, and `null` empties it.
                let list = List {
                    name: "application",
                    item: ApplicationObject,
                };
                return Ok(map
                    .next_value_seed(Value(list))?
                    .map(|list| apps.applications = list));
            }
            // Spring's `Applications` builder takes any key starting with `version` as the
            // version and any starting with `apps` as the hash (`@JsonAnySetter`); the legacy
            // reader knows only the exact names, which this includes. Only scalars count.
            if key.starts_with("version") {
                map.next_value_seed(Value(OnScalar(|value: Scalar<'_>| {
                    apps.versions_delta = value.int(&|| key.to_owned())?.unwrap_or(NO_VERSION);
                    Ok(())
                })))
            } else if key.starts_with("apps") {
                map.next_value_seed(Value(OnScalar(|value: Scalar<'_>| {
                    apps.apps_hashcode = value.text().into_owned();
                    Ok(())
                })))
            } else {
                map.next_value_seed(Value(Skip)).map(Ok)
            }
        })?;
        Ok(outcome.map(|()| apps))
    }
}

/// One application: its upper-cased `name` and its instances.
#[derive(Clone, Copy)]
struct ApplicationObject;

impl<'de> ObjectReader<'de> for ApplicationObject {
    type Out = Application;
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Result<Application, DecodeError>, A::Error> {
        let mut app = Application {
            name: String::new(),
            instances: Vec::new(),
        };
        let outcome = entries(map, |key, map| match key {
            "name" => map.next_value_seed(Value(OnScalar(|value: Scalar<'_>| {
                app.name = fields::upper_case(&value.text());
                Ok(())
            }))),
            "instance" => {
                // Instances inside a registry document always carry their timestamps; if one
                // does not, 0 ("never") is the honest default, as there is no parse time.
                let list = List {
                    name: "instance",
                    item: InstanceObject { now: 0 },
                };
                Ok(map
                    .next_value_seed(Value(list))?
                    .map(|list| app.instances = list))
            }
            _ => map.next_value_seed(Value(Skip)).map(Ok),
        })?;
        Ok(outcome.map(|()| app))
    }
}

/// `application` and `instance` may be an array or, from older servers, a single object;
/// `null` is an empty list. An item's error is prefixed with where it sits (`instance[2]`).
struct List<R> {
    name: &'static str,
    item: R,
}

type ListOut<T> = Result<Vec<T>, DecodeError>;

impl<'de, R: ObjectReader<'de>> Handler<'de> for List<R> {
    type Out = ListOut<R::Out>;
    fn null(self) -> Self::Out {
        Ok(Vec::new())
    }
    fn scalar(self, _: Scalar<'_>) -> Self::Out {
        Err(DecodeError::field(
            self.name,
            "is not an array or an object",
        ))
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut items = Vec::new();
        let mut index = 0;
        loop {
            match seq.next_element_seed(Value(Item(self.item)))? {
                None => return Ok(Ok(items)),
                Some(Ok(item)) => items.push(item),
                Some(Err(e)) => {
                    // The remaining items are only checked for syntax.
                    while seq.next_element_seed(Value(Skip))?.is_some() {}
                    return Ok(Err(e.within(&format!("{}[{index}]", self.name))));
                }
            }
            index += 1;
        }
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        Ok(self
            .item
            .read(map)?
            .map(|item| vec![item])
            .map_err(|e| e.within(self.name)))
    }
}

/// An item of a list: an object, or the error that it is not one.
struct Item<R>(R);

impl<R> Item<R> {
    fn not_an_object<T>() -> Result<T, DecodeError> {
        Err(DecodeError::field("", "is not an object"))
    }
}

impl<'de, R: ObjectReader<'de>> Handler<'de> for Item<R> {
    type Out = Result<R::Out, DecodeError>;
    fn null(self) -> Self::Out {
        Self::not_an_object()
    }
    fn scalar(self, _: Scalar<'_>) -> Self::Out {
        Self::not_an_object()
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Skip.seq(seq).map(|()| Self::not_an_object())
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        self.0.read(map)
    }
}
