//! A self-contained value for stage results.
//!
//! `serde_json::Value` does not survive bincode (it needs a self-describing format), so stage
//! results are stored as this enum: positional for bincode, plain JSON for people and scripts.

use bincode::de::Decoder;
use bincode::enc::Encoder;
use bincode::error::{DecodeError, EncodeError};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How deep lists and maps may nest. Decoding deeper input is an error, not a stack overflow.
pub const MAX_DEPTH: usize = 64;

/// A JSON-like value, encodable with bincode.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(untagged)]
pub enum Value {
    /// No value.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    Str(String),
    /// An ordered list.
    List(Vec<Value>),
    /// A map with sorted keys.
    Map(BTreeMap<String, Value>),
}

impl Value {
    /// The value under `key` when this is a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// True for `Null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// How deeply lists and maps nest in it (0 for a scalar).
    pub fn depth(&self) -> usize {
        match self {
            Value::List(l) => 1 + l.iter().map(Value::depth).max().unwrap_or(0),
            Value::Map(m) => 1 + m.values().map(Value::depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Whether it can be recorded and read back: decoding refuses values nested deeper than
    /// [`MAX_DEPTH`], so encoding and every rule that records a value refuse them first.
    pub fn fits(&self) -> bool {
        self.depth() <= MAX_DEPTH
    }
}

impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::Str(s),
            serde_json::Value::Array(a) => Value::List(a.into_iter().map(Value::from).collect()),
            serde_json::Value::Object(o) => {
                Value::Map(o.into_iter().map(|(k, v)| (k, Value::from(v))).collect())
            }
        }
    }
}

impl From<&Value> for serde_json::Value {
    fn from(v: &Value) -> Self {
        match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::List(l) => serde_json::Value::Array(l.iter().map(Into::into).collect()),
            Value::Map(m) => {
                serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), v.into())).collect())
            }
        }
    }
}

// The wire tags are part of the on-disk format: never renumber them.
const TAG_NULL: u8 = 0;
const TAG_BOOL: u8 = 1;
const TAG_INT: u8 = 2;
const TAG_FLOAT: u8 = 3;
const TAG_STR: u8 = 4;
const TAG_LIST: u8 = 5;
const TAG_MAP: u8 = 6;

impl Encode for Value {
    fn encode<E: Encoder>(&self, e: &mut E) -> Result<(), EncodeError> {
        encode_at_depth(self, e, 0)
    }
}

/// Mirrors [`decode_at_depth`]'s limit, so that whatever encodes decodes back.
fn encode_at_depth<E: Encoder>(v: &Value, e: &mut E, depth: usize) -> Result<(), EncodeError> {
    if depth > MAX_DEPTH {
        return Err(EncodeError::Other("value nested deeper than 64 levels"));
    }
    match v {
        Value::Null => TAG_NULL.encode(e),
        Value::Bool(b) => {
            TAG_BOOL.encode(e)?;
            b.encode(e)
        }
        Value::Int(i) => {
            TAG_INT.encode(e)?;
            i.encode(e)
        }
        Value::Float(f) => {
            TAG_FLOAT.encode(e)?;
            f.encode(e)
        }
        Value::Str(s) => {
            TAG_STR.encode(e)?;
            s.encode(e)
        }
        Value::List(l) => {
            TAG_LIST.encode(e)?;
            (l.len() as u64).encode(e)?;
            l.iter()
                .try_for_each(|item| encode_at_depth(item, e, depth + 1))
        }
        Value::Map(m) => {
            TAG_MAP.encode(e)?;
            (m.len() as u64).encode(e)?;
            m.iter().try_for_each(|(k, item)| {
                k.encode(e)?;
                encode_at_depth(item, e, depth + 1)
            })
        }
    }
}

fn decode_at_depth<D: Decoder>(d: &mut D, depth: usize) -> Result<Value, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::Other("value nested deeper than 64 levels"));
    }
    let tag = u8::decode(d)?;
    Ok(match tag {
        TAG_NULL => Value::Null,
        TAG_BOOL => Value::Bool(bool::decode(d)?),
        TAG_INT => Value::Int(i64::decode(d)?),
        TAG_FLOAT => Value::Float(f64::decode(d)?),
        TAG_STR => Value::Str(String::decode(d)?),
        TAG_LIST => {
            let len = u64::decode(d)?;
            let len = usize::try_from(len).map_err(|_| DecodeError::Other("list too long"))?;
            d.claim_container_read::<Value>(len)?;
            let mut items = Vec::new();
            for _ in 0..len {
                d.unclaim_bytes_read(core::mem::size_of::<Value>());
                items.push(decode_at_depth(d, depth + 1)?);
            }
            Value::List(items)
        }
        TAG_MAP => {
            let len = u64::decode(d)?;
            let len = usize::try_from(len).map_err(|_| DecodeError::Other("map too long"))?;
            d.claim_container_read::<(String, Value)>(len)?;
            let mut map = BTreeMap::new();
            for _ in 0..len {
                d.unclaim_bytes_read(core::mem::size_of::<(String, Value)>());
                let key = String::decode(d)?;
                let value = decode_at_depth(d, depth + 1)?;
                map.insert(key, value);
            }
            Value::Map(map)
        }
        found => {
            return Err(DecodeError::UnexpectedVariant {
                type_name: "Value",
                allowed: &bincode::error::AllowedEnumVariants::Range { min: 0, max: 6 },
                found: u32::from(found),
            })
        }
    })
}

impl<Context> Decode<Context> for Value {
    fn decode<D: Decoder<Context = Context>>(d: &mut D) -> Result<Self, DecodeError> {
        decode_at_depth(d, 0)
    }
}

bincode::impl_borrow_decode!(Value);
