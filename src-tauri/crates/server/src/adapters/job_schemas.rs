//! OpenAPI schemas of the `/v1/jobs` request bodies whose shape a derive cannot say: the two
//! exclusive forms of a job start (`{tool, arguments}` or `{external}`), an external job's
//! description (the `external` tool's `inputSchema`), and the form elicitations a runner may
//! ask (`tools::schema::check_input_request`). They describe exactly what the handlers accept.

use utoipa::openapi::{
    RefOr, Schema,
    schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, SchemaType, Type},
};

use taskdeck_engine::limits::INPUT_MESSAGE_MAX_BYTES;

fn null() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Null)
}

/// What the `data` of an `image` or `audio` block must be: base64 in the standard alphabet,
/// in groups of four, the last group padded with `=` or not (RFC 4648 §4), nothing else. Every
/// such text is one that `atob` decodes, so that the TypeScript SDK, which refuses a whole
/// result whose `data` `atob` cannot decode, reads it.
pub const BASE64_PATTERN: &str =
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$";

/// The `result` a runner's report completes its job with: a CallToolResult (MCP 2025-11-25
/// §Tools) of the content blocks every MCP client reads (`text`; `image` and `audio`, base64
/// `data` with its `mimeType`), `structuredContent`, `isError` and `_meta`, nothing else;
/// `content` defaults to `[]`. The jobs API checks a report's `result` against this very
/// schema, so what the API document allows is what it takes.
pub fn call_tool_result() -> serde_json::Value {
    let media = |kind: &str| {
        serde_json::json!({"type": "object", "title": kind,
            "properties": {"type": {"type": "string", "enum": [kind]}, "data": {"type": "string", "description": "base64 (RFC 4648 §4; the padding may be left out)", "pattern": BASE64_PATTERN}, "mimeType": {"type": "string"}},
            "required": ["type", "data", "mimeType"], "additionalProperties": false})
    };
    serde_json::json!({
        "type": "object",
        "description": "The final CallToolResult (`{content, structuredContent?, isError?}`; `content` defaults to `[]`): completes the job.",
        "properties": {
            "content": {"type": "array", "items": {"oneOf": [
                {"type": "object", "title": "text",
                 "properties": {"type": {"type": "string", "enum": ["text"]}, "text": {"type": "string"}},
                 "required": ["type", "text"], "additionalProperties": false},
                media("image"),
                media("audio"),
            ]}},
            "structuredContent": {"type": "object"},
            "isError": {"type": "boolean"},
            "_meta": {"type": "object"}
        },
        "additionalProperties": false
    })
}

fn object_or_null() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
}

/// `POST /v1/jobs`: `{tool, arguments?}` (one of `tools`, the agent-callable task tools;
/// `arguments` checked against its `inputSchema`) or `{external: {name, heartbeatMs?, ...}}`,
/// never both; no other members.
pub fn job_start(tools: &[String]) -> Schema {
    let tool = ObjectBuilder::new()
        .title(Some("Tool job"))
        .property(
            "tool",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values((!tools.is_empty()).then(|| tools.to_vec()))
                .description(Some("A task tool (`GET /v1/tools`), e.g. `run_command`.")),
        )
        .property(
            "arguments",
            object_or_null().description(Some(
                "The tool's arguments (default `{}`), checked against its `inputSchema`: 422 when they fail it.",
            )),
        )
        .property("external", null())
        .required("tool")
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let external = ObjectBuilder::new()
        .title(Some("External job"))
        .property("external", external_job())
        .property("tool", null())
        .property("arguments", null())
        .required("external")
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    OneOfBuilder::new()
        .item(tool)
        .item(external)
        .description(Some(
            "Start a job: `{tool, arguments}` (any task tool) or `{external: {name, heartbeatMs?, ...}}`.",
        ))
        .into()
}

/// An external job's description: `{name, heartbeatMs?}` plus any other members (kept as the
/// job's description, e.g. `command`).
pub fn external_job() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "Work this program runs itself and reports on: `name`, `heartbeatMs` (the runner must report within it, else the job fails as runner lost), and any other members, kept as the job's description.",
        ))
        .property(
            "name",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(200)),
        )
        .property(
            "heartbeatMs",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1000))
                .maximum(Some(86_400_000)),
        )
        .required("name")
}

/// A report's `inputRequests`: key → a form elicitation, SEP-2663 shape
/// (`{"method": "elicitation/create", "params": {"mode"?: "form", "message", "requestedSchema"?}}`).
pub fn input_requests() -> ObjectBuilder {
    let field = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["string", "number", "integer", "boolean"])),
        )
        .property("title", ObjectBuilder::new().schema_type(Type::String))
        .property(
            "description",
            ObjectBuilder::new().schema_type(Type::String),
        )
        .required("type")
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let form = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "A flat form (MCP `ElicitRequest.requestedSchema`): string, number, integer and boolean fields (the server also takes formats, bounds and enums as MCP defines them).",
        ))
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["object"])),
        )
        .property(
            "properties",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .additional_properties(Some(field)),
        )
        .required("type")
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let params = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "mode",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["form"])),
        )
        .property(
            "message",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(r"\S"))
                .max_length(Some(INPUT_MESSAGE_MAX_BYTES))
                .description(Some("Not blank; at most 64 KiB as UTF-8.")),
        )
        .property("requestedSchema", form)
        .required("message");
    let request = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "method",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["elicitation/create"])),
        )
        .property("params", params)
        .required("method")
        .required("params");
    object_or_null()
        .description(Some(
            "Questions for the human, key → form elicitation. Keys are unique for the job's life; sending the same request again is harmless. The job is `input_required` until all are answered; answers come back in `inputResponses` of every report reply.",
        ))
        .additional_properties(Some(request))
}

/// `POST /v1/jobs/{taskId}/report`: any report is a heartbeat, and may carry `progress`, a
/// `statusMessage` and `inputRequests`; it ends the job at most one way (`result`, `error` or
/// `cancelled: true`). `progress` and `error` are the schemas of those two members.
pub fn report(progress: RefOr<Schema>, error: RefOr<Schema>) -> Schema {
    let form = |title: &str, ends: Option<(&str, RefOr<Schema>)>| {
        let mut o = ObjectBuilder::new()
            .schema_type(Type::Object)
            .title(Some(title))
            .property(
                "progress",
                OneOfBuilder::new().item(null()).item(progress.clone()),
            )
            .property(
                "statusMessage",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .description(Some(
                        "The job's latest status line; the first 4 KiB are kept (a longer one ends with `… [truncated N]`).",
                    )),
            )
            .property("inputRequests", input_requests())
            .property(
                "heartbeatMs",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::Integer, Type::Null]))
                    .minimum(Some(1000))
                    .maximum(Some(86_400_000))
                    .description(Some(
                        "From this report on, the runner counts as lost after this many ms without a report (the job's start set the first): e.g. longer while it is suspended. A restart of Taskdeck goes back to the start's.",
                    )),
            )
            .property(
                "output",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .description(Some(
                        "Lines of the job's output since the last report (the last may lack its newline), appended to its output log (`GET /v1/tasks/{taskId}/log`) before the rest of the report is applied; invalid UTF-8 is replaced and ANSI escapes are removed, and at most 16 MiB are kept in all.",
                    )),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(false)));
        let ending = ends.as_ref().map(|(name, _)| *name);
        for name in ["result", "error"] {
            if ending != Some(name) {
                o = o.property(name, null());
            }
        }
        if ending != Some("cancelled") {
            o = o.property(
                "cancelled",
                ObjectBuilder::new()
                    .schema_type(Type::Boolean)
                    .enum_values(Some([false])),
            );
        }
        if let Some((name, schema)) = ends {
            o = o.property(name, schema).required(name);
        }
        o
    };
    let result: Schema = serde_json::from_value(call_tool_result())
        .expect("the CallToolResult schema is an OpenAPI schema");
    let cancelled = ObjectBuilder::new()
        .schema_type(Type::Boolean)
        .enum_values(Some([true]))
        .description(Some(
            "The runner stopped because cancellation was requested, or on its own: the job ends cancelled. A runner that stopped on its own says why in `statusMessage`, which stays the job's status message (without one: `Cancelled`).",
        ));
    OneOfBuilder::new()
        .item(form("Heartbeat", None))
        .item(form("Completes", Some(("result", result.into()))))
        .item(form("Fails", Some(("error", error))))
        .item(form("Cancelled", Some(("cancelled", cancelled.into()))))
        .description(Some(
            "A runner's report on its external job. Every member is optional; any report is a heartbeat.",
        ))
        .into()
}
