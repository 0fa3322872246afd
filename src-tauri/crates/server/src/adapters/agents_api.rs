//! `/v1/agents` (admin only): tokens for named principals, agents (programs) or humans
//! (people who may see every task and answer human-only requests; `taskdeck_engine::principal`).
//! `POST` makes one and answers it once, with ready-to-paste client configurations
//! (`mcp_config`); `GET` lists the names and roles, never the secrets (`auth` keeps only their
//! hashes). A human may not call either: making tokens is administration.

use axum::{
    Extension, Json,
    extract::State,
    http::{HeaderMap, StatusCode, header},
};
use serde::Deserialize;

use super::{
    api_error::{ApiError, ProblemDocument, json_body},
    api_types::{AgentCreated, AgentList, RoleName},
    auth::{self, AuthError},
    mcp_config,
};
use taskdeck_engine::{Engine, Principal, Role};

#[derive(Deserialize, utoipa::ToSchema)]
pub(crate) struct AgentBody {
    /// Principal name: 1-64 letters, digits, `-`, `_`, `.` (surrounding whitespace is dropped);
    /// `admin` and `anonymous` are Taskdeck's own (409).
    #[schema(pattern = r"^\s*[A-Za-z0-9._-]{1,64}\s*$")]
    name: String,
    /// `agent` (the default) or `human`.
    #[serde(default)]
    role: NewRole,
}

/// The role a new token gets: there is one admin token, so `admin` is not among them.
#[derive(Deserialize, utoipa::ToSchema, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NewRole {
    /// A program: sees its own tasks.
    #[default]
    Agent,
    /// A person: sees every task and answers human-only requests; administers nothing.
    Human,
}

impl From<NewRole> for Role {
    fn from(r: NewRole) -> Role {
        match r {
            NewRole::Agent => Role::Agent,
            NewRole::Human => Role::Human,
        }
    }
}

/// `POST /v1/agents`: a token for a new agent or human principal, with ready-to-paste client
/// configs for an agent's (none for a person's: in an agent's client it would let the agent
/// answer the person's questions).
#[utoipa::path(post, path = "/v1/agents", request_body = AgentBody, tag = "auth",
    responses((status = 201, description = "the token (shown this once), its role, and client configurations for it", body = AgentCreated),
              (status = 400, description = "malformed body", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "not the admin (a human may not make tokens)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "name taken, or reserved (`admin`, `anonymous`)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "bad name", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn create_agent(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    body: Result<Json<AgentBody>, axum::extract::rejection::JsonRejection>,
) -> Result<(StatusCode, Json<AgentCreated>), ApiError> {
    ApiError::admin_only(&p, "manages agent tokens")?;
    let body = json_body(body, "{\"name\": \"agent-name\", \"role\": \"agent\"}")?;
    let name = body.name.trim().to_string();
    let role = Role::from(body.role);
    let token = auth::create_token_with_role(engine.store(), &name, role)
        .await
        .map_err(|e| match e {
            AuthError::Exists(_) | AuthError::CaseOf(..) | AuthError::Reserved(_) => {
                ApiError::conflict(e.to_string())
            }
            AuthError::BadName(_) | AuthError::AdminRole => ApiError::unprocessable(e.to_string()),
            // A full disk is 503 disk_full, as for every write.
            AuthError::Store(e) => e.into(),
            e => ApiError::internal(e.to_string()),
        })?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let mcp_url = format!("http://{host}/mcp");
    // An agent's client takes an agent's token only: with a person's, the agent could answer
    // the questions Taskdeck asks the person about its own calls.
    let configs = match role {
        Role::Agent => mcp_config::CLIENTS
            .iter()
            .filter_map(|c| mcp_config::client_config(c, &mcp_url, &token))
            .collect(),
        _ => Vec::new(),
    };
    Ok((
        StatusCode::CREATED,
        Json(AgentCreated {
            name,
            role: RoleName::from(role),
            token,
            mcp_url,
            configs,
        }),
    ))
}

/// `GET /v1/agents`: token names and roles (never secrets).
#[utoipa::path(get, path = "/v1/agents", tag = "auth",
    responses((status = 200, description = "every token's name, role, creation time and whether it is revoked", body = AgentList),
              (status = 403, description = "not the admin", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn list_agents(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
) -> Result<Json<AgentList>, ApiError> {
    ApiError::admin_only(&p, "manages agent tokens")?;
    let agents =
        auth::list_tokens(engine.store()).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(AgentList { agents }))
}
