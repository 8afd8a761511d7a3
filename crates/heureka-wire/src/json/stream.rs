//! Reading a register body straight into an [`Instance`], with no syntax tree in between; and,
//! in [`registry`], a whole registry document or one application into its model the same way.
//!
//! A registration is the server's most frequent write with a body, and building the
//! order-preserving [`Node`](super::tree::Node) tree for it (a `String` per key and value, a
//! `Vec` per object) cost about a fifth of its CPU; for a full registry read on a peer's start-up
//! sync the tree took several times the registry's memory. This reader walks the same document with
//! serde's visitors and feeds each value to the same [`InstanceBuilder`] rules as it is read, so
//! it accepts exactly what the tree reader accepts and fails with the same message:
//!
//! * fields are applied in document order (the last of duplicate keys wins, two `metadata`
//!   objects merge), and the first field error is the one reported;
//! * a field error is held until the whole body has been read, so a syntax error anywhere still
//!   wins, as it does when the tree is parsed first;
//! * values nobody reads are skipped through `deserialize_any`, never serde's `IgnoredAny`,
//!   whose fast path neither checks UTF-8 in strings, number ranges nor the nesting limit that
//!   parsing a tree enforces.
//!
//! `tests` in this module checks the two readers against each other, for all three documents.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use heureka_core::{DataCenterInfo, Instance, Millis};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::decode::{fill_instance_id_from_metadata, malformed, prepare};
use crate::fields::{self, InstanceBuilder, Scalar};
use crate::DecodeError;

/// What a field did to the instance: nothing wrong, or the first field error.
type Outcome = Result<(), DecodeError>;

/// `{"instance":{…}}` read straight into an instance; see the module docs.
pub(crate) fn instance(body: &[u8], now: Millis) -> Result<Instance, DecodeError> {
    document(
        body,
        "instance",
        r#"a JSON object {"instance":{…}}"#,
        InstanceObject { now },
    )
}

/// Reads a document whose root wraps one object under `key`, as Eureka's documents do. The last
/// `key` counts, and only when it holds an object; otherwise the root is wrong.
fn document<T, R>(
    body: &[u8],
    key: &'static str,
    expected: &'static str,
    reader: R,
) -> Result<T, DecodeError>
where
    R: for<'de> ObjectReader<'de, Out = T>,
{
    let body = prepare(body)?;
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let root = Value(Root { key, reader })
        .deserialize(&mut deserializer)
        .and_then(|root| deserializer.end().map(|()| root))
        .map_err(malformed)?;
    match root {
        Some(Some(read)) => read,
        _ => Err(DecodeError::WrongRoot { expected }),
    }
}

/// Reads one kind of object (an instance, an application, a registry) from its entries.
/// `Copy`, so that a reader can be handed to every item of an array.
trait ObjectReader<'de>: Copy {
    type Out;
    /// The object, or its first field error; the map is consumed either way.
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Result<Self::Out, DecodeError>, A::Error>;
}

/// What one JSON value means to its reader, by kind. `seq` and `map` must consume everything.
trait Handler<'de>: Sized {
    type Out;
    fn null(self) -> Self::Out;
    fn scalar(self, value: Scalar<'_>) -> Self::Out;
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error>;
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error>;
}

/// Reads one value of any kind (as the tree does) and hands it to its handler.
struct Value<H>(H);

impl<'de, H: Handler<'de>> DeserializeSeed<'de> for Value<H> {
    type Value = H::Out;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<H::Out, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, H: Handler<'de>> Visitor<'de> for Value<H> {
    type Value = H::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<H::Out, E> {
        Ok(self.0.null())
    }
    fn visit_none<E>(self) -> Result<H::Out, E> {
        Ok(self.0.null())
    }
    fn visit_bool<E>(self, b: bool) -> Result<H::Out, E> {
        Ok(self.0.scalar(Scalar::Bool(b)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<H::Out, E> {
        Ok(self.0.scalar(Scalar::Int(n)))
    }
    fn visit_u64<E>(self, n: u64) -> Result<H::Out, E> {
        // As the tree does: above i64::MAX a float, so that it reads as out of range.
        Ok(self.0.scalar(
            i64::try_from(n)
                .map(Scalar::Int)
                .unwrap_or(Scalar::Float(n as f64)),
        ))
    }
    fn visit_f64<E>(self, x: f64) -> Result<H::Out, E> {
        Ok(self.0.scalar(Scalar::Float(x)))
    }
    fn visit_str<E>(self, s: &str) -> Result<H::Out, E> {
        Ok(self.0.scalar(Scalar::Text(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<H::Out, A::Error> {
        self.0.seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<H::Out, A::Error> {
        self.0.map(map)
    }
}

/// An object key, borrowed from the body unless it holds escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key<'de>, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Reads a value nobody needs, checking it as strictly as the tree parser would.
struct Skip;

impl<'de> Handler<'de> for Skip {
    type Out = ();
    fn null(self) {}
    fn scalar(self, _: Scalar<'_>) {}
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Value(Skip))?.is_some() {}
        Ok(())
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<Key<'de>>()?.is_some() {
            map.next_value_seed(Value(Skip))?;
        }
        Ok(())
    }
}

/// Reads every entry of an object with `entry`, until the first field error; the entries after
/// it are only checked for syntax.
fn entries<'de, A: MapAccess<'de>>(
    mut map: A,
    mut entry: impl FnMut(&str, &mut A) -> Result<Outcome, A::Error>,
) -> Result<Outcome, A::Error> {
    let mut outcome = Ok(());
    while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
        if outcome.is_ok() {
            outcome = entry(&key, &mut map)?;
        } else {
            map.next_value_seed(Value(Skip))?;
        }
    }
    Ok(outcome)
}

/// The document's root: `Some(Some(object))` when the last `key` holds an object.
struct Root<R> {
    key: &'static str,
    reader: R,
}

type RootOut<T> = Option<Option<Result<T, DecodeError>>>;

impl<'de, R: ObjectReader<'de>> Handler<'de> for Root<R> {
    type Out = RootOut<R::Out>;
    fn null(self) -> Self::Out {
        None
    }
    fn scalar(self, _: Scalar<'_>) -> Self::Out {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Skip.seq(seq).map(|()| None)
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Out, A::Error> {
        let mut last = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key == self.key {
                last = map.next_value_seed(Value(Wrapped(self.reader)))?;
            } else {
                map.next_value_seed(Value(Skip))?;
            }
        }
        Ok(Some(last))
    }
}

/// The value under the root's key: the object when it is one, `None` otherwise.
struct Wrapped<R>(R);

impl<'de, R: ObjectReader<'de>> Handler<'de> for Wrapped<R> {
    type Out = Option<Result<R::Out, DecodeError>>;
    fn null(self) -> Self::Out {
        None
    }
    fn scalar(self, _: Scalar<'_>) -> Self::Out {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Skip.seq(seq).map(|()| None)
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        self.0.read(map).map(Some)
    }
}

/// An instance object, fields applied in document order through [`InstanceBuilder`].
#[derive(Clone, Copy)]
struct InstanceObject {
    now: Millis,
}

impl<'de> ObjectReader<'de> for InstanceObject {
    type Out = Instance;
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Result<Instance, DecodeError>, A::Error> {
        let mut b = InstanceBuilder::new(self.now);
        let outcome = entries(map, |key, map| {
            // `null` anywhere means absent; each handler below treats it so.
            match key {
                "port" | "securePort" => map.next_value_seed(Value(PortField { b: &mut b, key })),
                "dataCenterInfo" => map.next_value_seed(Value(DataCenterField { b: &mut b })),
                "leaseInfo" => map.next_value_seed(Value(LeaseField { b: &mut b })),
                "metadata" => map.next_value_seed(Value(Metadata {
                    map: b.metadata_mut(),
                    field: "metadata",
                })),
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

/// A value that matters only when it is a scalar; `null` and compounds are skipped.
struct OnScalar<F>(F);

impl<'de, F: FnOnce(Scalar<'_>) -> Outcome> Handler<'de> for OnScalar<F> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, value: Scalar<'_>) -> Outcome {
        (self.0)(value)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| Ok(()))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        Skip.map(map).map(|()| Ok(()))
    }
}

/// `leaseInfo`: an object of numbers; anything but a scalar inside is skipped.
struct LeaseField<'a> {
    b: &'a mut InstanceBuilder,
}

impl<'de> Handler<'de> for LeaseField<'_> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, _: Scalar<'_>) -> Outcome {
        not_an_object("leaseInfo")
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| not_an_object("leaseInfo"))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
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

impl<'de> Handler<'de> for Metadata<'_> {
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

impl<'de> Handler<'de> for DataCenterField<'_> {
    type Out = Outcome;
    fn null(self) -> Outcome {
        Ok(())
    }
    fn scalar(self, _: Scalar<'_>) -> Outcome {
        not_an_object("dataCenterInfo")
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Outcome, A::Error> {
        Skip.seq(seq).map(|()| not_an_object("dataCenterInfo"))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Outcome, A::Error> {
        let mut class = None;
        let mut name = None;
        let mut metadata = BTreeMap::new();
        let outcome = entries(map, |key, map| match key {
            "@class" => map.next_value_seed(Value(Text(&mut class))).map(Ok),
            "name" => map.next_value_seed(Value(Text(&mut name))).map(Ok),
            "metadata" => map.next_value_seed(Value(Metadata {
                map: &mut metadata,
                field: "dataCenterInfo.metadata",
            })),
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

mod registry;
#[cfg(test)]
mod tests;

pub(crate) use registry::{application, applications};
