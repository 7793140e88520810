//! Why a stage failed, as a class: what the runner names itself, or any other name a command
//! brought (`runlog emit`, the API). Recorded as its name, so the encoding is the string it
//! always was.

use bincode::de::Decoder;
use bincode::enc::Encoder;
use bincode::error::{DecodeError, EncodeError};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A stage failure's class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
#[serde(from = "String", into = "String")]
pub enum ErrorType {
    /// The command exited with a code other than 0.
    ExitCode,
    /// The command was killed by a signal it did not ask for.
    Signal,
    /// The command could not be started.
    Spawn,
    /// The command ran past its timeout.
    Timeout,
    /// The runner stopped it (an interrupt, a cancel).
    Stopped,
    /// The tasks an agent added were refused by the plan's rules.
    PlanRefused,
    /// The agent submitted without the checkpoints its task requires.
    Checkpoints,
    /// Any other class, as a command named it.
    Other(String),
}

/// Written as its kebab-case name.
#[cfg(feature = "ts")]
impl schemars::JsonSchema for ErrorType {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorType".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

impl ErrorType {
    /// The classes the runner records itself, each with its name.
    pub const KNOWN: [ErrorType; 7] = [
        ErrorType::ExitCode,
        ErrorType::Signal,
        ErrorType::Spawn,
        ErrorType::Timeout,
        ErrorType::Stopped,
        ErrorType::PlanRefused,
        ErrorType::Checkpoints,
    ];

    /// The class's name, as recorded.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorType::ExitCode => "exit-code",
            ErrorType::Signal => "signal",
            ErrorType::Spawn => "spawn",
            ErrorType::Timeout => "timeout",
            ErrorType::Stopped => "stopped",
            ErrorType::PlanRefused => "plan-refused",
            ErrorType::Checkpoints => "checkpoints",
            ErrorType::Other(name) => name,
        }
    }
}

impl From<String> for ErrorType {
    fn from(name: String) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|known| known.as_str() == name)
            .unwrap_or(ErrorType::Other(name))
    }
}

impl From<&str> for ErrorType {
    fn from(name: &str) -> Self {
        Self::from(name.to_owned())
    }
}

impl From<ErrorType> for String {
    fn from(t: ErrorType) -> Self {
        match t {
            ErrorType::Other(name) => name,
            known => known.as_str().to_owned(),
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Encode for ErrorType {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        self.as_str().encode(encoder)
    }
}

impl<Context> Decode<Context> for ErrorType {
    fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
        String::decode(decoder).map(Self::from)
    }
}
bincode::impl_borrow_decode!(ErrorType);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_read_back_from_its_name() {
        for known in ErrorType::KNOWN {
            assert_eq!(ErrorType::from(known.as_str()), known);
        }
        assert_eq!(ErrorType::from("oom"), ErrorType::Other("oom".to_owned()));
    }

    #[test]
    fn a_class_encodes_as_the_string_it_was() {
        let config = bincode::config::standard();
        for name in ["exit-code", "plan-refused", "oom"] {
            let as_string = bincode::encode_to_vec(name, config).unwrap_or_default();
            let as_class =
                bincode::encode_to_vec(ErrorType::from(name), config).unwrap_or_default();
            assert_eq!(as_class, as_string);
        }
    }
}
