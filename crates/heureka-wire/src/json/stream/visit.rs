//! The machinery the streaming readers share: serde's visitors turned into [`Handler`]s, one per
//! kind of JSON value, and [`document`], which reads a wrapped root object with an
//! [`ObjectReader`].

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::DecodeError;
use crate::fields::Scalar;
use crate::json::decode::{malformed, prepare};

/// What a field did to the instance: nothing wrong, or the first field error.
pub(super) type Outcome = Result<(), DecodeError>;

/// Reads a document whose root wraps one object under `key`, as Eureka's documents do. The last
/// `key` counts, and only when it holds an object; otherwise the root is wrong.
pub(super) fn document<T, R>(
    body: &[u8],
    key: &'static str,
    expected: &'static str,
    reader: R,
) -> Result<T, DecodeError>
where
    R: for<'de> ObjectReader<'de, Out = T>,
{
    let body = prepare(body)?;
    // Checked for UTF-8 once, as the tree reader does (`decode::parse`).
    let root = match std::str::from_utf8(body) {
        Ok(text) => read_root(serde_json::Deserializer::from_str(text), key, reader),
        Err(_) => read_root(serde_json::Deserializer::from_slice(body), key, reader),
    }
    .map_err(malformed)?;
    match root {
        Some(Some(read)) => read,
        _ => Err(DecodeError::WrongRoot { expected }),
    }
}

/// The root's reading, whole: `None` where the root is not an object, `Some(None)` where it
/// has no `key` object.
type RootRead<T> = Option<Option<Result<T, DecodeError>>>;

fn read_root<'de, T, R, J>(
    mut deserializer: serde_json::Deserializer<J>,
    key: &'static str,
    reader: R,
) -> Result<RootRead<T>, serde_json::Error>
where
    R: ObjectReader<'de, Out = T>,
    J: serde_json::de::Read<'de>,
{
    let root = Value(Root { key, reader }).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(root)
}

/// Reads one kind of object (an instance, an application, a registry) from its entries.
/// `Copy`, so that a reader can be handed to every item of an array.
pub(super) trait ObjectReader<'de>: Copy {
    type Out;
    /// The object, or its first field error; the map is consumed either way.
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Result<Self::Out, DecodeError>, A::Error>;
}

/// What one JSON value means to its reader, by kind. `seq` and `map` must consume everything.
pub(super) trait Handler<'de>: Sized {
    type Out;
    fn null(self) -> Self::Out;
    fn scalar(self, value: Scalar<'_>) -> Self::Out;
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error>;
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error>;
}

/// Reads one value of any kind (as the tree does) and hands it to its handler.
pub(super) struct Value<H>(pub(super) H);

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
pub(super) struct Skip;

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
pub(super) fn entries<'de, A: MapAccess<'de>>(
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

/// A value that matters only when it is a scalar; `null` and compounds are skipped.
pub(super) struct OnScalar<F>(pub(super) F);

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
