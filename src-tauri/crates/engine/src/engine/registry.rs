//! The tool registry: the tools registered with the engine and the one cache of compiled input
//! schemas (JSON Schema draft 2020-12) every adapter validates `tools/call` arguments against.
//! Schemas are compiled once, at registration; tools an adapter answers itself (the MCP
//! follow-up tools, conformance fixtures) register their schema here too, so that no second
//! cache exists.

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
};

use serde_json::Value;

use super::{Engine, EngineError, TaskTool, ToolDescriptor};

/// Longest JSON text of a value an argument error quotes whole; a longer one is shown by its
/// start and length, so a 300,000-character argument does not come back in the error.
const QUOTED_VALUE_CHARS: usize = 120;

/// What schema error `e` says, for the person or program that sent the value: jsonschema's
/// message, with a value longer than [`QUOTED_VALUE_CHARS`] quoted by its first 40 characters
/// and its length (`"xxxx…" (12000 characters)`), so that a large value is not sent back
/// whole. Every refusal of a value against a JSON Schema words it so: tool arguments, answers
/// to input requests, edited arguments, runners' results.
pub fn schema_error_message(e: &jsonschema::ValidationError<'_>) -> String {
    let quoted = e.instance().to_string();
    if quoted.chars().count() <= QUOTED_VALUE_CHARS {
        return e.to_string();
    }
    let start: String = quoted.chars().take(40).collect();
    let length = match e.instance().as_ref() {
        Value::String(text) => format!("{} characters", text.chars().count()),
        _ => format!("{} characters of JSON", quoted.chars().count()),
    };
    e.masked_with(format!("{start}… ({length})")).to_string()
}

/// `"invalid arguments for TOOL: ..."` listing what `arguments` breaks in `validator` (each
/// with its JSON pointer, e.g. `at /count: -1 is less than the minimum of 0`, worded by
/// [`schema_error_message`]), or `None`.
pub fn argument_errors(
    tool: &str,
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| {
            let at = e.instance_path().to_string();
            let message = schema_error_message(&e);
            if at.is_empty() {
                message
            } else {
                format!("at {at}: {message}")
            }
        })
        .collect();
    (!errors.is_empty()).then(|| format!("invalid arguments for {tool}: {}", errors.join("; ")))
}

/// The registered tools and the compiled input schemas, by tool name.
#[derive(Default)]
pub(super) struct ToolRegistry {
    tools: RwLock<HashMap<String, Arc<dyn TaskTool>>>,
    /// Every registered tool's schema, and those registered by
    /// [`Engine::register_argument_schema`].
    schemas: RwLock<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl ToolRegistry {
    /// Compiles `schema` for `name`, replacing an earlier one.
    ///
    /// Panics if `schema` is not a valid JSON Schema (a programming error).
    fn add_schema(&self, name: &str, schema: &Value) {
        let validator = jsonschema::validator_for(schema).expect("tool input schema");
        self.schemas
            .write()
            .unwrap()
            .insert(name.to_string(), Arc::new(validator));
    }
}

impl Engine {
    /// Makes `tool` callable (and resumable after restarts), its input schema compiled.
    ///
    /// Panics if the tool's input schema is not a valid JSON Schema (a programming error).
    pub fn register_tool(&self, tool: Arc<dyn TaskTool>) {
        let registry = &self.parts.registry;
        let name = tool.descriptor().name.clone();
        registry.add_schema(&name, &tool.descriptor().input_schema);
        registry.tools.write().unwrap().insert(name, tool);
    }

    /// Like [`Engine::register_tool`] for a tool whose schema comes from elsewhere (e.g. an
    /// upstream server): Errors: the input schema is not a valid JSON Schema (the tool is not
    /// registered).
    pub fn try_register_tool(&self, tool: Arc<dyn TaskTool>) -> Result<(), String> {
        jsonschema::validator_for(&tool.descriptor().input_schema)
            .map_err(|e| format!("invalid input schema: {e}"))?;
        self.register_tool(tool);
        Ok(())
    }

    /// Makes tool `name` uncallable and drops its schema. Its tasks stay in the store; one still
    /// running keeps its run. Returns whether it was registered.
    pub fn unregister_tool(&self, name: &str) -> bool {
        let registry = &self.parts.registry;
        registry.schemas.write().unwrap().remove(name);
        registry.tools.write().unwrap().remove(name).is_some()
    }

    /// Compiles the input schema of a tool that runs no task, one an adapter answers itself
    /// (e.g. MCP's `task_status`), so that [`Engine::argument_errors`] checks its arguments too.
    /// It does not make `name` a task tool.
    ///
    /// Panics if `schema` is not a valid JSON Schema (a programming error).
    pub fn register_argument_schema(&self, name: &str, schema: &Value) {
        self.parts.registry.add_schema(name, schema);
    }

    /// What `arguments` break in `tool`'s input schema (see [`argument_errors`]): `None` when
    /// they match, or when no schema is registered under `tool`.
    pub fn argument_errors(&self, tool: &str, arguments: &Value) -> Option<String> {
        let schemas = self.parts.registry.schemas.read().unwrap();
        argument_errors(tool, schemas.get(tool)?, arguments)
    }

    /// Checks `arguments` for `tool`: its JSON Schema, then the tool's own checks.
    /// Errors: [`EngineError::Invalid`] naming every violation (or the unknown tool).
    pub fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), EngineError> {
        let Some(t) = self.tool(tool) else {
            return Err(EngineError::Invalid(format!("unknown tool: {tool}")));
        };
        if let Some(problem) = self.argument_errors(tool, arguments) {
            return Err(EngineError::Invalid(problem));
        }
        t.check_arguments(arguments).map_err(EngineError::Invalid)
    }

    /// The registered tool named `name`.
    pub fn tool(&self, name: &str) -> Option<Arc<dyn TaskTool>> {
        self.parts.registry.tools.read().unwrap().get(name).cloned()
    }

    /// Descriptors of all registered tools, sorted by name.
    pub fn tools(&self) -> Vec<ToolDescriptor> {
        let mut v: Vec<_> = self
            .parts
            .registry
            .tools
            .read()
            .unwrap()
            .values()
            .map(|t| t.descriptor().clone())
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::argument_errors;

    #[test]
    fn a_long_value_is_not_quoted_back_whole() {
        let schema =
            json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 200}}});
        let validator = jsonschema::validator_for(&schema).unwrap();
        let long = "n".repeat(300_000);
        let error = argument_errors("job", &validator, &json!({"name": long})).unwrap();
        assert!(
            error.len() < 300,
            "{} bytes: {}",
            error.len(),
            &error[..300]
        );
        assert!(error.contains("at /name:"), "{error}");
        assert!(error.contains("(300000 characters)"), "{error}");
        assert!(error.contains("longer than 200 characters"), "{error}");
        let short = argument_errors("job", &validator, &json!({"name": 7})).unwrap();
        assert_eq!(
            short,
            "invalid arguments for job: at /name: 7 is not of type \"string\""
        );
    }
}
