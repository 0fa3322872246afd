//! The MCP endpoint's protocol handler: an rmcp [`ServerHandler`] over the engine.
//!
//! Eras (see `../shared/spec/mcp-tasks.md`):
//! - 2026-07-28 requests that declare `io.modelcontextprotocol/tasks` in their own
//!   `_meta.clientCapabilities` get a `CreateTaskResult` for task tools, and may call
//!   `tasks/get`, `tasks/update`, `tasks/cancel` (SEP-2663).
//! - Every other client (2025-11-25 sessions, 2026 clients without the extension) is never held
//!   on a long call: a task tool answers at once with an ordinary `CallToolResult` carrying the
//!   task handle, and the regular tools `task_status`, `task_respond`, `task_cancel` follow up.
//!   A tool registered as `required` answers such clients `-32021` instead.

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
        CreateTaskResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetTaskParams,
        GetTaskResult, Implementation, InitializeResult, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, Tool,
        UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::{Map, Value, json};

use super::{
    agent_view::{self, Reader},
    followup_tools::{followup_tools, handle_result},
    mcp_fixtures,
    mcp_sessions::Sessions,
    settle,
    task_watch::TaskWatch,
    wire,
};
use crate::gateway::{
    Gateway,
    catalog::{Answers, Scope},
};
use taskdeck_engine::{Engine, EngineError, Principal, ToolMode};

/// The upstream server a request came in for: set by the `/mcp/{server}` route, absent on
/// `/mcp`.
#[derive(Debug, Clone)]
pub struct UpstreamScope(pub String);

/// The tool scope of a request with these HTTP parts.
pub fn scope_of(parts: &http::request::Parts) -> Scope<'_> {
    match parts.extensions.get::<UpstreamScope>() {
        Some(UpstreamScope(server)) => Scope::Server(server),
        None => Scope::All,
    }
}

/// Shared state of all MCP sessions.
pub struct McpCore {
    /// The engine the tasks live in.
    pub engine: Engine,
    /// Serve the conformance suite's fixture tools.
    pub fixtures: bool,
    /// The 2025-11-25 sessions: principals, capabilities, peers, watched tasks.
    pub sessions: Arc<Sessions>,
    /// The upstream servers' tools, when the gateway runs.
    pub gateway: Option<Gateway>,
    /// Waiters for one task's changes (answering a quick call with its result).
    pub task_watch: Arc<TaskWatch>,
    /// Taskdeck's own tools (task tools, follow-up tools, fixtures).
    own_tools: Vec<Tool>,
}

impl McpCore {
    /// Builds the tool list from the engine's registered tools, and registers the input
    /// schemas of the tools this endpoint answers itself (follow-up tools, fixtures) with the
    /// engine, whose registry holds every compiled schema.
    ///
    /// Panics if one of those schemas is not a valid JSON Schema (a programming error).
    pub fn new(engine: Engine, fixtures: bool, gateway: Option<Gateway>) -> McpCore {
        let mut tools = Vec::new();
        let mut add = |name: &str, title: Option<&str>, description: &str, schema: Value| {
            let obj = schema.as_object().cloned().unwrap_or_default();
            let mut tool = Tool::new(name.to_string(), description.to_string(), Arc::new(obj));
            if let Some(t) = title {
                tool = tool.with_title(t);
            }
            tools.push(tool);
        };
        for d in engine.tools().into_iter().filter(|d| d.agent_callable) {
            add(
                &d.name,
                d.title.as_deref(),
                &d.description,
                d.input_schema.clone(),
            );
        }
        for (name, title, description, schema) in followup_tools() {
            engine.register_argument_schema(name, &schema);
            add(name, Some(title), description, schema);
        }
        if fixtures {
            for (name, description, schema) in mcp_fixtures::sync_tools() {
                engine.register_argument_schema(name, &schema);
                add(name, None, description, schema);
            }
        }
        tools.sort_by(|a, b| (a.name != "greet", &a.name).cmp(&(b.name != "greet", &b.name)));
        let sessions = Arc::new(Sessions::default());
        sessions.spawn_notifier(engine.clone());
        McpCore {
            task_watch: TaskWatch::spawn(&engine),
            engine,
            fixtures,
            sessions,
            gateway,
            own_tools: tools,
        }
    }

    /// Every tool `tools/list` offers in `scope`: on `/mcp` Taskdeck's own (task tools,
    /// follow-up tools, fixtures; `greet` first) then the upstreams' as `SERVER__TOOL`; on
    /// `/mcp/SERVER` the follow-up tools and that server's other tools under their own names;
    /// shown as [`Answers`] says.
    pub fn tools(&self, scope: Scope<'_>, answers: Answers) -> Vec<Tool> {
        let upstream = match &self.gateway {
            Some(gateway) => gateway.tools(scope, answers),
            None => Vec::new(),
        };
        match scope {
            Scope::All => {
                let mut tools = self.own_tools.clone();
                tools.extend(upstream);
                tools
            }
            // A client answered with a task handle follows it up with Taskdeck's follow-up
            // tools; a server's tools of those names are reachable on `/mcp` only.
            Scope::Server(_) => {
                let mut tools: Vec<Tool> = self
                    .own_tools
                    .iter()
                    .filter(|t| is_followup(&t.name))
                    .cloned()
                    .collect();
                tools.extend(upstream.into_iter().filter(|t| !is_followup(&t.name)));
                tools
            }
        }
    }

    /// The engine's name of tool `name` as called in `scope` (an upstream tool on `/mcp/SERVER`
    /// is `SERVER__TOOL`), when `scope` offers it.
    /// "Unknown tool: NAME", saying why when its upstream is configured but serves no tools
    /// now (starting, disabled, failed: [`crate::gateway::Gateway::why_unknown`]).
    pub fn unknown_tool(&self, scope: Scope<'_>, name: &str) -> String {
        let why = self
            .gateway
            .as_ref()
            .map(|g| g.why_unknown(scope, name))
            .unwrap_or_default();
        format!("Unknown tool: {name}{why}")
    }

    /// The engine's name for tool `name` as called in `scope`: Taskdeck's own tools keep
    /// their name (on `/mcp/NAME` only the follow-up tools `task_status`, `task_respond` and
    /// `task_cancel` are its own); an upstream tool gets its registered name (`write_file` on
    /// `/mcp/fs` is `fs__write_file`). `None` when the scope offers no such tool.
    pub fn resolve(&self, scope: Scope<'_>, name: &str) -> Option<String> {
        let own = match scope {
            Scope::All => self.own_tools.iter().any(|t| t.name == name),
            Scope::Server(_) => is_followup(name),
        };
        if own {
            return Some(name.to_string());
        }
        self.gateway.as_ref()?.resolve(scope, name)
    }

    /// Validates `arguments` against `tool`'s input schema, compiled in the engine's registry
    /// ([`Engine::argument_errors`]; a tool with no schema there passes). Errors: `-32602`
    /// naming each violation, and the tool as the client called it (`called`: `write_file` on
    /// `/mcp/fs` for the engine's `fs__write_file`).
    pub fn validate(&self, tool: &str, called: &str, arguments: &Value) -> Result<(), McpError> {
        match self.engine.argument_errors(tool, arguments) {
            None => Ok(()),
            Some(problem) => Err(McpError::invalid_params(
                problem.replacen(tool, called, 1),
                None,
            )),
        }
    }
}

/// True for the follow-up tools of clients without the tasks extension.
fn is_followup(name: &str) -> bool {
    matches!(name, "task_status" | "task_respond" | "task_cancel")
}

/// One MCP session's handler (rmcp creates one per session; they share [`McpCore`]).
#[derive(Clone)]
pub struct McpHandler {
    /// The state every session shares.
    pub core: Arc<McpCore>,
}

/// The principal the guard attached to this request's HTTP parts.
pub fn principal_of(ctx: &RequestContext<RoleServer>) -> Result<Principal, McpError> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Principal>())
        .cloned()
        .ok_or_else(|| McpError::new(ErrorCode(-32001), "Unauthorized", None))
}

/// True when this very request is a 2026-07-28 request whose `_meta.clientCapabilities`
/// declares the tasks extension (SEP-2663: "regardless of prior declarations"; the extension is
/// not defined under 2025-11-25).
pub fn declares_tasks(ctx: &RequestContext<RoleServer>) -> bool {
    let modern = ctx
        .meta
        .protocol_version()
        .is_some_and(|v| v.as_str() >= wire::MODERN_PROTOCOL);
    modern
        && ctx
            .meta
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
}

/// True when this request arrived on a 2025-11-25 session (not a 2026-07-28 request).
fn on_session(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.meta
        .protocol_version()
        .is_none_or(|v| v.as_str() < wire::MODERN_PROTOCOL)
}

/// The `Mcp-Session-Id` this request came with, if any.
fn session_id(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

/// Who reads tasks through this request (`agent_view`): form elicitation as declared in this
/// request's `_meta` (2026-07-28) or at the session's `initialize` (2025-11-25).
pub fn reader(ctx: &RequestContext<RoleServer>, principal: &Principal) -> Reader {
    let capabilities = if on_session(ctx) {
        ctx.peer
            .peer_info()
            .and_then(|i| serde_json::to_value(&i.capabilities).ok())
    } else {
        ctx.meta
            .client_capabilities()
            .and_then(|c| serde_json::to_value(c).ok())
    };
    Reader {
        can_elicit: agent_view::declares_form_elicitation(capabilities.as_ref()),
        human: principal.is_human(),
    }
}

/// The tool scope of the request behind `context` (see [`scope_of`]).
fn request_scope(context: &RequestContext<RoleServer>) -> Scope<'_> {
    match context.extensions.get::<http::request::Parts>() {
        Some(parts) => scope_of(parts),
        None => Scope::All,
    }
}

/// A stored JSON-RPC error object `{code, message, data?}` as rmcp's error.
fn error_data(error: Map<String, Value>) -> McpError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the task failed")
        .to_string();
    McpError::new(ErrorCode(code as i32), message, error.get("data").cloned())
}

/// Maps an engine error to its JSON-RPC error.
pub fn mcp_error(e: EngineError) -> McpError {
    let (code, message) = wire::error_code(&e);
    McpError::new(ErrorCode(code as i32), message, wire::error_data(&e))
}

fn from_json<T: serde::de::DeserializeOwned>(m: Map<String, Value>) -> Result<T, McpError> {
    serde_json::from_value(Value::Object(m))
        .map_err(|e| McpError::internal_error(e.to_string(), None))
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_prompts()
            .enable_tasks()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("taskdeck", env!("CARGO_PKG_VERSION")).with_title("Taskdeck"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(
                "Taskdeck runs long work as tasks a human can watch, answer and cancel. Call request_approval to \
                 ask the human something. Clients without the tasks extension get a task handle in the tool \
                 result and follow up with task_status, task_respond and task_cancel.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(session) = session_id(&context.extensions) {
            self.core.sessions.attach_peer(&session, context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let answers = if declares_tasks(&context) {
            Answers::ResultOrTask
        } else {
            Answers::ResultOrHandle
        };
        Ok(ListToolsResult::with_all_items(
            self.core.tools(request_scope(&context), answers),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources = match &self.core.gateway {
            Some(g) => {
                g.resources(request_scope(&context), &principal_of(&context)?.name)
                    .await
            }
            None => Vec::new(),
        };
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let templates = match &self.core.gateway {
            Some(g) => {
                g.resource_templates(request_scope(&context), &principal_of(&context)?.name)
                    .await
            }
            None => Vec::new(),
        };
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let Some(gateway) = &self.core.gateway else {
            return Err(McpError::resource_not_found(
                format!("Resource not found: {}", request.uri),
                None,
            ));
        };
        gateway
            .read_resource(
                request_scope(&context),
                request,
                &principal_of(&context)?.name,
            )
            .await
            .map(ReadResourceResponse::Complete)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let prompts = match &self.core.gateway {
            Some(g) => {
                g.prompts(request_scope(&context), &principal_of(&context)?.name)
                    .await
            }
            None => Vec::new(),
        };
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let Some(gateway) = &self.core.gateway else {
            return Err(McpError::invalid_params(
                format!("Unknown prompt: {}", request.name),
                None,
            ));
        };
        gateway
            .get_prompt(
                request_scope(&context),
                request,
                &principal_of(&context)?.name,
            )
            .await
            .map(GetPromptResponse::Complete)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let principal = principal_of(&context)?;
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let Some(name) = self.core.resolve(request_scope(&context), &request.name) else {
            return Err(McpError::invalid_params(
                self.core
                    .unknown_tool(request_scope(&context), &request.name),
                None,
            ));
        };
        self.core.validate(&name, &request.name, &arguments)?;
        if is_followup(&name) {
            let reader = reader(&context, &principal);
            return self.followup(&name, &principal, reader, &arguments).await;
        }
        let declared = declares_tasks(&context);
        if self.core.fixtures
            && let Some(response) = mcp_fixtures::call_sync(
                &self.core.engine,
                &principal,
                &request,
                &arguments,
                declared,
            )
            .await
        {
            return response;
        }
        let engine = &self.core.engine;
        let Some(tool) = engine.tool(&name) else {
            return Err(McpError::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        };
        tool.check_arguments(&arguments)
            .map_err(|m| McpError::invalid_params(m, None))?;
        let mode = tool.descriptor().mode;
        let required = mode == ToolMode::Task { required: true };
        if required && on_session(&context) {
            // 2025-11-25 §Tool-Level Negotiation: `required` without `params.task` is -32601.
            return Err(McpError::new(
                ErrorCode(wire::METHOD_NOT_FOUND as i32),
                format!(
                    "Tool {name} requires a task-augmented call (execution.taskSupport is required)"
                ),
                None,
            ));
        }
        if !declared && required {
            return Err(McpError::new(
                ErrorCode(wire::MISSING_REQUIRED_CLIENT_CAPABILITY as i32),
                "Missing required client capability: this tool runs only as a task (io.modelcontextprotocol/tasks)",
                Some(wire::missing_tasks_capability_data()),
            ));
        }
        let mut task = engine
            .create_task(&principal, &name, arguments)
            .await
            .map_err(mcp_error)?;
        if let ToolMode::Settle { within_ms } = mode {
            task = settle::settle(engine, &self.core.task_watch, &principal, task, within_ms).await;
            match settle::settled_answer(&task) {
                Some(Ok(result)) => return Ok(CallToolResponse::Complete(from_json(result)?)),
                Some(Err(error)) => return Err(error_data(error)),
                None => task = settle::as_seen(engine, task, reader(&context, &principal)),
            }
        }
        if declared {
            let created: CreateTaskResult = from_json(wire::create_task_result(&task))?;
            Ok(CallToolResponse::Task(created))
        } else {
            let result: CallToolResult =
                serde_json::from_value(handle_result(&task, &request.name))
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            Ok(CallToolResponse::Complete(result))
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let principal = principal_of(&context)?;
        let engine = &self.core.engine;
        let task = engine
            .get(&principal, &request.task_id)
            .map_err(mcp_error)?;
        let human_only = engine.human_only_inputs(&task).map_err(mcp_error)?;
        let mut shown = agent_view::detailed(&task, &human_only, reader(&context, &principal));
        shown.insert("resultType".into(), json!("complete"));
        from_json(shown)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = principal_of(&context)?;
        let responses: Map<String, Value> = request.input_responses.into_iter().collect();
        let reader = reader(&context, &principal);
        self.answer(&principal, reader, &request.task_id, responses)
            .await
            .map(drop)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = principal_of(&context)?;
        self.core
            .engine
            .cancel(&principal, &request.task_id)
            .await
            .map_err(mcp_error)?;
        Ok(())
    }

    /// A method nobody serves: `-32601` saying so and naming it, as on the 2026-07-28 path
    /// (rmcp's default message is the method's name alone).
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            None,
        ))
    }
}
