//! A register body read straight into an [`Instance`]: each field fed to the same
//! [`InstanceBuilder`] rules the tree reader applies, as serde's visitors meet it.

use std::collections::BTreeMap;

use heureka_core::{DataCenterInfo, Instance, Millis};
use serde::de::{MapAccess, SeqAccess};

use super::plain;
use super::visit::{document, entries, Handler, ObjectReader, OnScalar, Outcome, Skip, Value};
use crate::error::DecodeError;
use crate::fields::{self, InstanceBuilder, Scalar};
use crate::json::decode::{fill_instance_id_from_metadata, prepare};

/// `{"instance":{…}}` read straight into an instance: in the shape clients send by
/// [`plain`], anything else by serde's visitors; see the module docs.
pub(crate) fn instance(body: &[u8], now: Millis) -> Result<Instance, DecodeError> {
    match prepare(body).map(|body| plain::instance(body, now)) {
        Ok(Some(instance)) => Ok(instance),
        _ => general(body, now),
    }
}

/// Any register body, through serde's visitors: the answer, or the error with its message.
pub(super) fn general(body: &[u8], now: Millis) -> Result<Instance, DecodeError> {
    document(
        body,
        "instance",
        r#"a JSON object {"instance":{…}}"#,
        InstanceObject { now },
    )
}

/// An instance object, fields applied in document order through [`InstanceBuilder`].
#[derive(Clone, Copy)]
pub(super) struct InstanceObject {
    pub(super) now: Millis,
}

impl<'de> ObjectReader<'de> for InstanceObject {
    type Out = Instance;
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Result<Instance, DecodeError>, A::Error> {
        let mut b = InstanceBuilder::new(self.now);
        let outcome = entries(map, |key, map| {
            // `null` anywhere means absent; each handler below treats it so.
            match key {
                "port" | "securePort" => map.next_value_seed(Value(PortField { b: &mut b, key })),
                "dataCenterInfo" => map.next_value_seed(Value(ObjectField {
                    field: "dataCenterInfo",
                    entries: DataCenterField { b: &mut b },
                })),
                "leaseInfo" => map.next_value_seed(Value(ObjectField {
                    field: "leaseInfo",
                    entries: LeaseField { b: &mut b },
                })),
                "metadata" => {
                    map.next_value_seed(Value(Metadata::field(b.metadata_mut(), "metadata")))
                }
                _ => map.next_value_seed(Value(TopField { b: &mut b, key })),
            }
        })?;
        Ok(outcome.map(|()| {
            let mut instance = b.finish();
            fill_instance_id_from_metadata(&mut instance);
            instance
        }))
    }
}

/// A top-level field that holds one value (or an unknown field, skipped).
struct TopField<'a, 'k> {
    b: &'a mut InstanceBuilder,
    key: &'k str,
}

impl<'de> Handler<'de> for TopField<'_, '_> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, value: Scalar<'_>) -> Outcome {
        self.b.scalar(self.key, value)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| self.compound())
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        Skip.map(map).map(|()| self.compound())
    }
}

impl TopField<'_, '_> {
    fn compound(&self) -> Outcome {
        if fields::is_scalar_field(self.key) {
            Err(DecodeError::field(self.key, "is not a single value"))
        } else {
            Ok(())
        }
    }
}

/// The field error for an object field that holds something else.
fn not_an_object(field: &str) -> Outcome {
    Err(DecodeError::field(field, "is not an object"))
}

/// A field that must hold an object: `null` means absent, anything else is the field's
/// error, and the object's entries go to `entries`.
struct ObjectField<E> {
    field: &'static str,
    entries: E,
}

/// What reads the entries of an [`ObjectField`].
trait Entries<'de> {
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error>;
}

impl<'de, E: Entries<'de>> Handler<'de> for ObjectField<E> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, _: Scalar<'_>) -> Outcome {
        not_an_object(self.field)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| not_an_object(self.field))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        self.entries.read(map)
    }
}

/// `port` / `securePort`: `{"$": 8080, "@enabled": "true"}`, or a bare number.
struct PortField<'a, 'k> {
    b: &'a mut InstanceBuilder,
    key: &'k str,
}

impl<'de> Handler<'de> for PortField<'_, '_> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, value: Scalar<'_>) -> Outcome {
        self.b.scalar(self.key, value)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| not_an_object(self.key))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        let (b, port) = (self.b, self.key);
        entries(map, |key, map| {
            let part = match key {
                "$" => PortPart::Number,
                "@enabled" => PortPart::Enabled,
                _ => return map.next_value_seed(Value(Skip)).map(|()| Ok(())),
            };
            map.next_value_seed(Value(OnScalar(|value: Scalar<'_>| match part {
                PortPart::Number => b.port_number(port, value),
                PortPart::Enabled => {
                    b.port_enabled(port, value.boolean());
                    Ok(())
                }
            })))
        })
    }
}

#[derive(Clone, Copy)]
enum PortPart {
    Number,
    Enabled,
}

/// `leaseInfo`: an object of numbers; anything but a scalar inside is skipped.
struct LeaseField<'a> {
    b: &'a mut InstanceBuilder,
}

impl<'de> Entries<'de> for LeaseField<'_> {
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        let b = self.b;
        entries(map, |key, map| {
            map.next_value_seed(Value(OnScalar(|value: Scalar<'_>| b.lease(key, value))))
        })
    }
}

/// `metadata` or `dataCenterInfo.metadata`: values read as text; `null` entries skipped, a
/// nested object or array fails.
struct Metadata<'a> {
    map: &'a mut BTreeMap<String, String>,
    field: &'static str,
}

impl<'a> Metadata<'a> {
    /// The object field `field` (`metadata` or `dataCenterInfo.metadata`), read into `map`.
    fn field(map: &'a mut BTreeMap<String, String>, field: &'static str) -> ObjectField<Self> {
        ObjectField {
            field,
            entries: Metadata { map, field },
        }
    }
}

impl<'de> Entries<'de> for Metadata<'_> {
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        let (target, field) = (self.map, self.field);
        entries(map, |key, map| {
            map.next_value_seed(Value(MetadataValue {
                map: &mut *target,
                field,
                key,
            }))
        })
    }
}

struct MetadataValue<'a, 'k> {
    map: &'a mut BTreeMap<String, String>,
    field: &'static str,
    key: &'k str,
}

impl<'de> Handler<'de> for MetadataValue<'_, '_> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, value: Scalar<'_>) -> Outcome {
        fields::put_metadata(self.map, self.key, value);
        Ok(())
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| self.not_text())
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        Skip.map(map).map(|()| self.not_text())
    }
}

impl MetadataValue<'_, '_> {
    fn not_text(&self) -> Outcome {
        Err(DecodeError::field(
            format!("{}.{}", self.field, self.key),
            "is not text",
        ))
    }
}

/// `dataCenterInfo`: its `@class`, `name` and (for Amazon) `metadata`.
struct DataCenterField<'a> {
    b: &'a mut InstanceBuilder,
}

impl<'de> Entries<'de> for DataCenterField<'_> {
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        let mut class = None;
        let mut name = None;
        let mut metadata = BTreeMap::new();
        let outcome = entries(map, |key, map| match key {
            "@class" => map.next_value_seed(Value(Text(&mut class))).map(Ok),
            "name" => map.next_value_seed(Value(Text(&mut name))).map(Ok),
            "metadata" => map.next_value_seed(Value(Metadata::field(
                &mut metadata,
                "dataCenterInfo.metadata",
            ))),
            _ => map.next_value_seed(Value(Skip)).map(Ok),
        })?;
        Ok(outcome.and_then(|()| {
            let dc: DataCenterInfo = fields::data_center(class.as_deref(), name, metadata)?;
            self.b.set_data_center(dc);
            Ok(())
        }))
    }
}

/// A text field of `dataCenterInfo`: a scalar sets it, `null` leaves it, a compound clears it
/// (the tree reader's `scalar(v).map(…)`).
struct Text<'a>(&'a mut Option<String>);

impl<'de> Handler<'de> for Text<'_> {
    type Out = ();
    fn null(self) {}
    fn scalar(self, value: Scalar<'_>) {
        *self.0 = Some(value.text().into_owned());
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        *self.0 = None;
        Skip.seq(seq)
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        *self.0 = None;
        Skip.map(map)
    }
}
