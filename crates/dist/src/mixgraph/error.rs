//! [`MixGraphError`]: why a mixgraph configuration was refused.

/// A mixgraph configuration db_bench would crash on, loop on, or silently reinterpret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MixGraphError {
    /// A flag holds a value outside its allowed range.
    #[error("mixgraph flag -{flag}={value}: expected {expected}")]
    Flag {
        /// The db_bench flag's name (`keyrange_num`, `mix_get_ratio`, …).
        flag: &'static str,
        /// The value given, as text.
        value: String,
        /// The allowed range, in words.
        expected: String,
    },
    /// The chosen key model needs flags that are not set.
    #[error("mixgraph key model {model}: expected {expected}")]
    KeyModel {
        /// The model chosen ([`super::KeyModel`]'s paper name).
        model: &'static str,
        /// What it needs.
        expected: &'static str,
    },
    /// kvlab's locality layer ([`crate::locality`]) cannot run as given.
    #[error("mixgraph locality: {0}")]
    Locality(String),
    /// kvlab's `value_model` or `scan_model` is not a distribution over sizes.
    #[error("mixgraph {which}: {why}")]
    SizeModel {
        /// `value_model` or `scan_model`.
        which: &'static str,
        /// The bad parameter ([`super::SizeModel::validate`]).
        why: String,
    },
}

impl MixGraphError {
    /// A [`MixGraphError::Flag`].
    pub(crate) fn flag(
        flag: &'static str,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
    ) -> MixGraphError {
        MixGraphError::Flag {
            flag,
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}
