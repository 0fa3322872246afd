//! `/v1/agents` (admin only): tokens for agent principals. `POST` makes one and answers it
//! once, with ready-to-paste client configurations (`mcp_config`); `GET` lists the names,
//! never the secrets (`auth` keeps only their hashes).

use axum::{
    Extension, Json,
    extract::State,
    http::{HeaderMap, StatusCode, header},
};
use serde::Deserialize;

use super::{
    api_error::{ApiError, ProblemDocument, json_body},
    api_types::{AgentCreated, AgentList},
    auth::{self, AuthError},
    mcp_config,
};
use taskdeck_engine::{Engine, Principal};

#[derive(Deserialize, utoipa::ToSchema)]
pub(crate) struct AgentBody {
    /// Principal name: 1-64 letters, digits, `-`, `_`, `.` (surrounding whitespace is dropped);
    /// `admin` and `anonymous` are Taskdeck's own (409).
    #[schema(pattern = r"^\s*[A-Za-z0-9._-]{1,64}\s*$")]
    name: String,
}

/// `POST /v1/agents`: a token for a new agent principal, with ready-to-paste client configs.
#[utoipa::path(post, path = "/v1/agents", request_body = AgentBody, tag = "auth",
    responses((status = 201, description = "the token (shown this once) and client configurations for it", body = AgentCreated),
              (status = 400, description = "malformed body", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "not the admin", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "name taken, or reserved (`admin`, `anonymous`)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "bad name", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn create_agent(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    body: Result<Json<AgentBody>, axum::extract::rejection::JsonRejection>,
) -> Result<(StatusCode, Json<AgentCreated>), ApiError> {
    ApiError::admin_only(&p, "manages agent tokens")?;
    let body = json_body(body, "{\"name\": \"agent-name\"}")?;
    let name = body.name.trim().to_string();
    let token = auth::create_token(engine.store(), &name)
        .await
        .map_err(|e| match e {
            AuthError::Exists(_) | AuthError::Reserved(_) => ApiError::conflict(e.to_string()),
            AuthError::BadName(_) => ApiError::unprocessable(e.to_string()),
            e => ApiError::internal(e.to_string()),
        })?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let mcp_url = format!("http://{host}/mcp");
    let configs = mcp_config::CLIENTS
        .iter()
        .filter_map(|c| mcp_config::client_config(c, &mcp_url, &token))
        .collect();
    Ok((
        StatusCode::CREATED,
        Json(AgentCreated {
            name,
            token,
            mcp_url,
            configs,
        }),
    ))
}

/// `GET /v1/agents`: token names (never secrets).
#[utoipa::path(get, path = "/v1/agents", tag = "auth",
    responses((status = 200, description = "every token's name, creation time and whether it is revoked", body = AgentList),
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
