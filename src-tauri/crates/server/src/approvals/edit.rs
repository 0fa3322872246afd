//! Checking an edited call against its tool's input schema (JSON Schema, as the tool declared
//! it), before anything is recorded (`POST /v1/approvals/decide` answers 422) and again inside
//! the call's task (an answer given through `/v1/tasks/{id}/input` is checked too).

use serde::Serialize;
use serde_json::Value;

/// One problem with edited arguments.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ArgumentError {
    /// JSON pointer into the arguments (`""` for the whole object).
    pub path: String,
    /// What is wrong, for people.
    pub message: String,
}

/// `Ok` when `arguments` is an object that validates against `schema`; else every problem.
/// A schema that does not compile accepts any object (the tool's server checks it again).
pub fn argument_errors(schema: &Value, arguments: &Value) -> Result<(), Vec<ArgumentError>> {
    if !arguments.is_object() {
        return Err(vec![ArgumentError {
            path: String::new(),
            message: "the arguments must be a JSON object".into(),
        }]);
    }
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Ok(());
    };
    let errors: Vec<ArgumentError> = validator
        .iter_errors(arguments)
        .map(|e| ArgumentError {
            path: e.instance_path().to_string(),
            message: taskdeck_engine::schema_error_message(&e),
        })
        .collect();
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_name_their_path() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]});
        assert!(argument_errors(&schema, &json!({"n": 3})).is_ok());
        let errors = argument_errors(&schema, &json!({"n": -1})).unwrap_err();
        assert_eq!(errors[0].path, "/n");
        assert!(argument_errors(&schema, &json!({})).is_err());
        assert!(argument_errors(&schema, &json!([1])).is_err());
    }
}
