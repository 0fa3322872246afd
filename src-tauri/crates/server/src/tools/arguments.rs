//! Typed tool arguments: each tool's arguments are a serde struct deriving
//! [`JsonSchema`], whose doc comments and `#[schemars(...)]` bounds become the tool's
//! `inputSchema` (JSON Schema draft 2020-12, as MCP 2025-11-25 §Tools `inputSchema` assumes),
//! and the arguments are parsed into that struct at the tool's boundary. One schema serves both
//! what `tools/list` shows clients and what the engine validates a call against (the
//! `invalid arguments for TOOL: ...` errors), so the two cannot drift apart.
//!
//! The generator is set up so a derived schema says what a hand-written one would: no `$schema`,
//! root `title` or type `description` (noise in a tool listing), subschemas inlined (no
//! `$defs`), no Rust-only `format`s (`uint64`, `double`), an `Option` field is one that may be
//! left out (not one that may be `null`), and no `additionalProperties: true` (the default).

use std::borrow::Cow;

use schemars::{
    JsonSchema, Schema, SchemaGenerator,
    generate::SchemaSettings,
    transform::{RecursiveTransform, RestrictFormats},
};
use serde::{Deserialize, Deserializer, de::DeserializeOwned, de::Error as _};
use serde_json::{Number, Value};

use taskdeck_engine::{FailureKind, Outcome, TaskFailure};

/// The `inputSchema` of a tool whose arguments are `T`: a JSON object schema, e.g.
/// `{"type": "object", "properties": {"message": {"type": "string", "minLength": 1,
/// "description": "..."}}, "required": ["message"], "additionalProperties": false}` (the last
/// from `#[serde(deny_unknown_fields)]`).
pub fn input_schema<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    // Runs while `$schema` is still there: it keeps the formats draft 2020-12 defines (`uri`).
    settings
        .transforms
        .push(Box::new(RestrictFormats::default()));
    settings.transforms.push(Box::new(RecursiveTransform(
        omitted_not_null as fn(&mut Schema),
    )));
    settings.transforms.push(Box::new(RecursiveTransform(
        without_default_additional_properties as fn(&mut Schema),
    )));
    settings
        .transforms
        .push(Box::new(without_root_annotations as fn(&mut Schema)));
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// `arguments` as `T`. Errors: `invalid arguments for TOOL: <serde's reason>`; after the
/// engine checked the arguments against [`input_schema::<T>`] this does not happen (the schema
/// is at least as strict as `T`'s `Deserialize`: integers are [`WholeNumber`]s, `Option`s
/// leave out what the schema lets callers leave out).
pub fn parse<T: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, String> {
    T::deserialize(arguments).map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

/// `arguments` as `T` for a run. Errors: the outcome the task then ends with, `failed` as
/// [`FailureKind::InvalidArguments`] (JSON-RPC `-32602` on the wire) with [`parse`]'s message
/// (only arguments that bypassed the engine's schema check could get there).
pub fn parse_for_run<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, Outcome> {
    serde_json::from_value(arguments).map_err(|e| {
        Outcome::Failed(TaskFailure::new(
            FailureKind::InvalidArguments,
            format!("invalid arguments for {tool}: {e}"),
            None,
        ))
    })
}

/// A whole number at least 0 as JSON Schema's `"integer"` counts one: `5000`, and also
/// `5000.0` (what a client that computes in floats sends; the schema lets it through, so the
/// struct takes it too). Its schema is `u64`'s: `{"type": "integer", "minimum": 0}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeNumber(pub u64);

impl JsonSchema for WholeNumber {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        u64::schema_name()
    }

    /// `u64`'s schema (this type's doc comment is for Rust readers, not for the field's
    /// description).
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        u64::json_schema(generator)
    }
}

impl<'de> Deserialize<'de> for WholeNumber {
    /// Errors: a number with a fraction, below 0 or above `u64::MAX`, or no number at all.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<WholeNumber, D::Error> {
        let n = Number::deserialize(deserializer)?;
        let whole = n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(f))
                .map(|f| f as u64)
        });
        whole
            .map(WholeNumber)
            .ok_or_else(|| D::Error::custom(format!("{n} is not a whole number of at least 0")))
    }
}

/// An `Option` field is an argument the caller may leave out; `null` is no value for it. Undoes
/// what schemars adds for `Option<T>`: `"null"` in `type`, `null` in `enum`, and an
/// `anyOf: [T, {"type": "null"}]` wrapper (kept keywords such as `description` move into `T`).
fn omitted_not_null(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let is_null = |s: &Value| s.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(alternatives)) = object.get("anyOf")
        && alternatives.len() == 2
        && let Some(kept) = alternatives.iter().find(|s| !is_null(s))
        && alternatives.iter().any(is_null)
        && let Value::Object(kept) = kept.clone()
    {
        object.remove("anyOf");
        for (key, value) in kept {
            object.entry(key).or_insert(value);
        }
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = &types[..] {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(choices)) = object.get_mut("enum") {
        choices.retain(|c| !c.is_null());
    }
}

/// Drops `additionalProperties: true`, which allows what JSON Schema allows anyway.
fn without_default_additional_properties(schema: &mut Schema) {
    if schema.get("additionalProperties") == Some(&Value::Bool(true)) {
        schema.remove("additionalProperties");
    }
}

/// Drops the root's `$schema` (draft 2020-12 is MCP's default), `title` (the Rust type's name)
/// and `description` (the struct's doc comment, written for Rust readers; the tool has its own).
fn without_root_annotations(schema: &mut Schema) {
    for key in ["$schema", "title", "description"] {
        schema.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{WholeNumber, parse};

    /// What JSON Schema calls an integer parses; fractions, negatives and non-numbers do not.
    #[test]
    fn whole_numbers_are_what_json_schema_calls_integers() {
        for (given, want) in [(json!(5000), 5000), (json!(5000.0), 5000), (json!(0), 0)] {
            assert_eq!(
                parse::<WholeNumber>("t", &given),
                Ok(WholeNumber(want)),
                "{given}"
            );
        }
        for given in [json!(1.5), json!(-1), json!(-1.0), json!(1e30), json!("5")] {
            let refused = parse::<WholeNumber>("t", &given).unwrap_err();
            assert!(
                refused.starts_with("invalid arguments for t: "),
                "{refused}"
            );
        }
        let fraction = parse::<WholeNumber>("t", &json!(1.5)).unwrap_err();
        assert!(
            fraction.ends_with("1.5 is not a whole number of at least 0"),
            "{fraction}"
        );
    }
}
