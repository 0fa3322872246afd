//! Pins every tool's `inputSchema` to the JSON Schema clients have always been shown (written
//! here as it was when the schemas were hand-written `json!` literals): deriving them from the
//! argument structs must not change what `tools/list` and `/v1/tools` show, nor the
//! `invalid arguments for TOOL: ...` texts the engine's validation answers `-32602` with.

use serde_json::{Value, json};

use taskdeck_engine::{
    Engine, EngineConfig, argument_errors,
    feed::ChangeFeed,
    store::{Durability, Store},
};

/// The schemas as clients knew them, by tool name.
fn known_schemas() -> Vec<(&'static str, Value)> {
    let obj = |props: Value| json!({"type": "object", "properties": props});
    vec![
        (
            "request_approval",
            json!({
                "type": "object",
                "properties": {
                    "message": {"type": "string", "minLength": 1, "description": "What you ask the human, in plain words (at most 64 KiB)."},
                    "requestedSchema": {
                        "type": "object",
                        "description": "Optional form: an elicitation schema (flat object of string, number, integer, boolean and enum fields)."
                    }
                },
                "required": ["message"],
                "additionalProperties": false
            }),
        ),
        (
            "run_command",
            json!({
                "type": "object",
                "properties": {
                    "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Program and arguments (no shell)."},
                    "command": {"type": "string", "minLength": 1, "description": "A shell command line (run with /bin/sh -c)."},
                    "cwd": {"type": "string", "description": "Working directory (default: Taskdeck's)."},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Environment additions."},
                    "timeoutMs": {"type": "integer", "minimum": 1, "description": "Stop and fail the task after this many ms."}
                },
                "additionalProperties": false
            }),
        ),
        (
            "wait_for_http_job",
            json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string", "format": "uri", "description": "Operation to start."},
                    "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH"], "description": "Default: POST with a body, else GET."},
                    "body": {"description": "JSON body of the starting request."},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "monitor": {"type": "string", "format": "uri", "description": "Follow this status monitor instead of starting anything."},
                    "pollIntervalMs": {"type": "integer", "minimum": 100, "description": "Poll interval in ms when the server gives no Retry-After, and the shortest wait between polls whatever it gives (default 1000; a smaller value is taken as 1000)."}
                },
                "additionalProperties": false
            }),
        ),
        (
            "external",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "heartbeatMs": {"type": "integer", "minimum": 1000, "maximum": 86400000}
                },
                "required": ["name"]
            }),
        ),
        (
            "slow_compute",
            obj(json!({"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}})),
        ),
        ("failing_job", obj(json!({}))),
        ("protocol_error_job", obj(json!({}))),
        (
            "confirm_delete",
            obj(json!({"filename": {"type": "string"}})),
        ),
        ("multi_input", obj(json!({}))),
        ("echo", json!({"type": "object"})),
        ("test_tool_with_task", obj(json!({}))),
    ]
}

/// An engine with every tool registered (fixtures too), in `dir`.
fn engine_with_all_tools(dir: &std::path::Path) -> Engine {
    let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).unwrap();
    let engine = Engine::new(
        store,
        EngineConfig::default(),
        crate::adapters::wire::task_error_object,
    );
    let policy = std::sync::Arc::new(crate::policy::Policy::new(dir));
    super::register_all(&engine, true, policy, dir);
    engine
}

/// The derived schema of each tool equals the known one: the same properties with the same
/// types, bounds, formats, enums and descriptions, the same `required` list and
/// `additionalProperties`, and nothing more (no `$schema`, `title`, `$defs`, `null` types or
/// Rust formats such as `uint64`). Property order is compared too: it is the order clients list
/// the fields in.
#[test]
fn derived_schemas_are_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_all_tools(dir.path());
    let tools = engine.tools();
    let known = known_schemas();
    assert_eq!(tools.len(), known.len(), "a tool without a pinned schema");
    for (name, schema) in known {
        let tool = tools.iter().find(|t| t.name == name).expect(name);
        assert_eq!(tool.input_schema, schema, "{name}");
        let keys = |s: &Value| -> Vec<String> {
            s.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(
            keys(&tool.input_schema),
            keys(&schema),
            "{name}: property order"
        );
    }
}

/// The validation texts agents get for bad arguments are those the known schemas gave.
#[test]
fn validation_errors_read_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_all_tools(dir.path());
    for (tool, arguments, text) in [
        (
            "slow_compute",
            json!({"seconds": "soon"}),
            "invalid arguments for slow_compute: at /seconds: \"soon\" is not of type \"number\"",
        ),
        (
            "request_approval",
            json!({}),
            "invalid arguments for request_approval: \"message\" is a required property",
        ),
        (
            "run_command",
            json!({"command": "ls", "shell": true}),
            "invalid arguments for run_command: Additional properties are not allowed ('shell' was unexpected)",
        ),
        (
            "run_command",
            json!({"argv": [], "timeoutMs": 0}),
            "invalid arguments for run_command: at /argv: [] has less than 1 item; at /timeoutMs: 0 is less than the minimum of 1",
        ),
        (
            "run_command",
            json!({"command": "ls", "cwd": null}),
            "invalid arguments for run_command: at /cwd: null is not of type \"string\"",
        ),
        (
            "wait_for_http_job",
            json!({"url": "http://x", "method": "DELETE"}),
            "invalid arguments for wait_for_http_job: at /method: \"DELETE\" is not one of \"GET\", \"POST\" or 2 other candidates",
        ),
        (
            "external",
            json!({"name": "", "heartbeatMs": 5}),
            "invalid arguments for external: at /name: \"\" is shorter than 1 character; at /heartbeatMs: 5 is less than the minimum of 1000",
        ),
    ] {
        let schema = &engine.tool(tool).unwrap().descriptor().input_schema.clone();
        let validator = jsonschema::validator_for(schema).unwrap();
        let known = known_schemas()
            .into_iter()
            .find(|(n, _)| *n == tool)
            .unwrap()
            .1;
        let known = jsonschema::validator_for(&known).unwrap();
        let got = argument_errors(tool, &validator, &arguments);
        assert_eq!(got, argument_errors(tool, &known, &arguments), "{tool}");
        assert_eq!(got.as_deref(), Some(text), "{tool}");
    }
}
