//! `/v1/servers`: the upstream MCP servers of the gateway. `GET` (the admin or a human) lists
//! each one's status; the admin alone changes them: `POST` adds one, `DELETE
//! /v1/servers/{name}` removes one. servers.json is the truth:
//! a change is written to the file (`gateway::servers_file`), then the gateway reloads it. No
//! answer holds a value of `env` or `headers`, only their names (`gateway::server_target`).

use std::collections::BTreeMap;

use axum::{Extension, Json, Router, extract::State, http::StatusCode};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::api_error::{ApiError, ApiPath, ProblemDocument, json_body};
use crate::gateway::{
    Gateway, ServerState, ServerStatus,
    server_target::unreadable_status,
    servers_file::{self, ServerSpec, ServersConfig, ServersFileError, Transport},
};
use taskdeck_engine::Principal;

/// The server routes with their OpenAPI operations (state: the gateway).
pub fn routes() -> OpenApiRouter<Gateway> {
    OpenApiRouter::new()
        .routes(routes!(list_servers, add_server))
        .routes(routes!(remove_server))
}

/// The server router.
pub fn router(gateway: Gateway) -> Router {
    routes().split_for_parts().0.with_state(gateway)
}

/// `GET /v1/servers`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ServerList {
    /// Every server of servers.json, sorted by name.
    pub servers: Vec<ServerStatus>,
}

/// A new server: exactly one of the two shapes.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema only
pub(crate) enum NewServer {
    /// A child process spoken to over stdio.
    Stdio(NewStdioServer),
    /// A Streamable HTTP endpoint.
    Http(NewHttpServer),
}

/// `{name, command, args?, env?, cwd?, disabled?, timeoutMs?}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only
pub(crate) struct NewStdioServer {
    /// 1-64 of `a-z 0-9 _ -`, starting with a letter or digit, without `__`; not `taskdeck`.
    #[schema(pattern = r"^[a-z0-9][a-z0-9_-]{0,63}$")]
    name: String,
    /// The program to start.
    #[schema(min_length = 1)]
    command: String,
    /// Its arguments.
    #[schema(nullable = false)]
    args: Option<Vec<String>>,
    /// Extra environment variables; never shown again, only their names.
    #[schema(nullable = false)]
    env: Option<BTreeMap<String, String>>,
    /// Its working directory.
    #[schema(nullable = false)]
    cwd: Option<String>,
    /// Kept in the file but not started.
    #[schema(nullable = false)]
    disabled: Option<bool>,
    /// How long one call may take before Taskdeck gives up on it, in ms (default 10 minutes).
    #[serde(rename = "timeoutMs")]
    #[schema(nullable = false, minimum = 1)]
    timeout_ms: Option<u64>,
}

/// `{name, url, headers?, disabled?, timeoutMs?}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only
pub(crate) struct NewHttpServer {
    /// 1-64 of `a-z 0-9 _ -`, starting with a letter or digit, without `__`; not `taskdeck`.
    #[schema(pattern = r"^[a-z0-9][a-z0-9_-]{0,63}$")]
    name: String,
    /// The endpoint, `http` or `https`.
    #[schema(pattern = r"^https?://")]
    url: String,
    /// Headers sent with every request, e.g. `Authorization`; never shown again, only their
    /// names.
    #[schema(nullable = false)]
    headers: Option<BTreeMap<String, String>>,
    /// Kept in the file but not started.
    #[schema(nullable = false)]
    disabled: Option<bool>,
    /// How long one call may take before Taskdeck gives up on it, in ms (default 10 minutes).
    #[serde(rename = "timeoutMs")]
    #[schema(nullable = false, minimum = 1)]
    timeout_ms: Option<u64>,
}

/// Missing is `None`; `null` is refused like any other wrong type (the document says these
/// fields are not nullable).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A new server: `command` (stdio) or `url` (Streamable HTTP), not both. The OpenAPI document
/// describes it as [`NewServer`]; the handler reads both shapes' fields into this one struct, so
/// that it can say which field is wrong.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerBody {
    name: String,
    /// The program to start (stdio).
    #[serde(default, deserialize_with = "present")]
    command: Option<String>,
    /// Its arguments (stdio only).
    #[serde(default, deserialize_with = "present")]
    args: Option<Vec<String>>,
    /// Extra environment variables (stdio only); never shown again, only their names.
    #[serde(default, deserialize_with = "present")]
    env: Option<BTreeMap<String, String>>,
    /// Its working directory (stdio only).
    #[serde(default, deserialize_with = "present")]
    cwd: Option<String>,
    /// The Streamable HTTP endpoint (`http` or `https`).
    #[serde(default, deserialize_with = "present")]
    url: Option<String>,
    /// Headers sent with every request (http only), e.g. `Authorization`; never shown again,
    /// only their names.
    #[serde(default, deserialize_with = "present")]
    headers: Option<BTreeMap<String, String>>,
    /// Kept in the file but not started.
    #[serde(default)]
    disabled: bool,
    /// How long one call may take, in ms.
    #[serde(default, rename = "timeoutMs", deserialize_with = "present")]
    timeout_ms: Option<u64>,
}

impl ServerBody {
    /// The spec of the server the body describes (its name is `self.name`). Errors: 400 for
    /// neither or both of `command` and `url`, or fields of the other transport.
    fn spec(self) -> Result<ServerSpec, ApiError> {
        let transport = match (self.command, self.url) {
            (Some(command), None) => {
                if self.headers.is_some() {
                    return Err(ApiError::bad_request(
                        "`headers` go with `url`, not `command`",
                    ));
                }
                Transport::Stdio {
                    command,
                    args: self.args.unwrap_or_default(),
                    env: self.env.unwrap_or_default(),
                    cwd: self.cwd.map(Into::into),
                }
            }
            (None, Some(url)) => {
                if self.args.is_some() || self.env.is_some() || self.cwd.is_some() {
                    return Err(ApiError::bad_request(
                        "`args`, `env` and `cwd` go with `command`, not `url`",
                    ));
                }
                Transport::Http {
                    url,
                    headers: self.headers.unwrap_or_default(),
                }
            }
            _ => {
                return Err(ApiError::bad_request(
                    "give either `command` (a stdio server) or `url` (a Streamable HTTP server)",
                ));
            }
        };
        if self.timeout_ms == Some(0) {
            return Err(ApiError::bad_request("`timeoutMs` must be at least 1"));
        }
        Ok(ServerSpec {
            transport,
            disabled: self.disabled,
            timeout_ms: self.timeout_ms,
        })
    }
}

fn file_error(e: ServersFileError) -> ApiError {
    match e {
        ServersFileError::BadName(_) | ServersFileError::BadSpec(_) => {
            ApiError::bad_request(e.to_string())
        }
        ServersFileError::Exists(_) => ApiError::conflict(e.to_string()),
        ServersFileError::Unknown(_) => ApiError::not_found(e.to_string()),
        e => ApiError::internal(e.to_string()),
    }
}

/// Every server of the file, with the gateway's live status where it has one, else what the
/// file says (`starting`, or `disabled`): the file is the truth, the gateway may not have
/// reloaded it yet.
fn statuses(gateway: &Gateway) -> Result<Vec<ServerStatus>, ApiError> {
    let config = ServersConfig::load(gateway.servers_path()).map_err(file_error)?;
    let mut live: BTreeMap<String, ServerStatus> = gateway
        .statuses()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let now = chrono::Utc::now().timestamp_millis();
    let mut statuses: Vec<ServerStatus> = config
        .servers
        .into_iter()
        .map(|(name, spec)| {
            live.remove(&name)
                .unwrap_or_else(|| spec.public().status(&name, ServerState::Starting, now))
        })
        .collect();
    // Entries that are not a spec: failed, saying why.
    statuses.extend(config.unreadable.iter().map(|(name, entry)| {
        live.remove(name)
            .unwrap_or_else(|| unreadable_status(name, entry, now))
    }));
    statuses.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(statuses)
}

/// `GET /v1/servers`.
#[utoipa::path(get, path = "/v1/servers", tag = "servers",
    responses((status = 200, description = "every upstream server with its state; of `env` and `headers` only the names", body = ServerList),
              (status = 403, description = "an agent (only the admin or a human sees the servers)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 500, description = "servers.json cannot be read or is malformed (the detail says where)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn list_servers(
    State(gateway): State<Gateway>,
    Extension(p): Extension<Principal>,
) -> Result<Json<ServerList>, ApiError> {
    ApiError::humans_only(&p, "sees the upstream servers")?;
    let servers = tokio::task::spawn_blocking(move || statuses(&gateway)).await??;
    Ok(Json(ServerList { servers }))
}

/// `POST /v1/servers`: adds a server to servers.json and starts it.
#[utoipa::path(post, path = "/v1/servers", request_body = NewServer, tag = "servers",
    responses((status = 201, description = "added; its status (usually `starting`)", body = ServerStatus),
              (status = 400, description = "malformed body, bad name, neither or both of `command` and `url`, a spec that cannot start (bad URL, header, env name), or one that reaches this Taskdeck's own MCP endpoint", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "not the admin (a human may list the servers, not change them)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "a server of that name exists", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 500, description = "servers.json cannot be read, is malformed, or cannot be written", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn add_server(
    State(gateway): State<Gateway>,
    Extension(p): Extension<Principal>,
    body: Result<Json<ServerBody>, axum::extract::rejection::JsonRejection>,
) -> Result<(StatusCode, Json<ServerStatus>), ApiError> {
    ApiError::admin_only(&p, "manages upstream servers")?;
    let body = json_body(
        body,
        "{\"name\": ..., \"command\": ..., \"args\": [...]} or {\"name\": ..., \"url\": ...}",
    )?;
    let name = body.name.clone();
    let spec = body.spec()?;
    if let Some(why) = servers_file::own_endpoint(&spec, gateway.own_port()) {
        return Err(ApiError::bad_request(why));
    }
    let path = gateway.servers_path().to_path_buf();
    let added = name.clone();
    tokio::task::spawn_blocking(move || servers_file::add_server(&path, &added, spec))
        .await?
        .map_err(file_error)?;
    gateway.reload().await;
    let status = tokio::task::spawn_blocking(move || statuses(&gateway)).await??;
    let status = status
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| ApiError::internal("the server was removed again meanwhile"))?;
    Ok((StatusCode::CREATED, Json(status)))
}

/// `DELETE /v1/servers/{name}`: removes a server from servers.json and stops it.
#[utoipa::path(delete, path = "/v1/servers/{name}", tag = "servers",
    params(("name" = String, Path, description = "the server's name")),
    responses((status = 204, description = "removed"),
              (status = 403, description = "not the admin (a human may list the servers, not change them)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "no server of that name", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 500, description = "servers.json cannot be read, is malformed, or cannot be written", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn remove_server(
    State(gateway): State<Gateway>,
    Extension(p): Extension<Principal>,
    ApiPath(name): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    ApiError::admin_only(&p, "manages upstream servers")?;
    let path = gateway.servers_path().to_path_buf();
    tokio::task::spawn_blocking(move || servers_file::remove_server(&path, &name))
        .await?
        .map_err(file_error)?;
    gateway.reload().await;
    Ok(StatusCode::NO_CONTENT)
}
