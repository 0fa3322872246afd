//! The OpenAPI 3.1 document of `/v1` (`GET /v1/openapi.json`): the operations and schemas the
//! handlers declare (gathered from their `utoipa-axum` routers), plus what every route answers
//! before its handler runs: 401 (the guard: no or a bad token, with `WWW-Authenticate`), 403
//! (the guard: a Host or Origin that is not loopback), 413 (a body over 4 MiB), 400 for a
//! path segment that is not UTF-8, and, on every route that writes to the store (a POST, PUT,
//! PATCH or DELETE not in [`NO_STORE_WRITE`]), 503 `disk_full` when the store's disk is full. `tests/contract/run.sh` checks the server
//! against it.

use std::sync::OnceLock;

use axum::{Json, extract::State};
use utoipa::openapi::{
    ContentBuilder, HeaderBuilder, OpenApi, Ref, RefOr, ResponseBuilder,
    path::{Operation, PathItem},
    response::Response as ResponseDoc,
    schema::{ObjectBuilder, Type},
    security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
};

use super::{
    approvals_api, audit_api, hooks_api, http_api, job_schemas, jobs_api, logs_api, policy_api,
    servers_api,
};
use crate::tools::external::EXTERNAL;
use taskdeck_engine::Engine;

/// The parts of the document no handler declares: title, description, security.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "Taskdeck HTTP API", description = "Tasks, input rounds, events, agents, jobs, upstream MCP servers, the policy and the audit log. Every route needs `Authorization: Bearer <token>` (else 401) and a loopback `Host` (and `Origin`, when sent; else 403); errors are RFC 9457 problem documents. A request body over 4 MiB is refused with 413 on every route; a method a path does not take is a 405 problem document with `Allow`."),
    security(("bearer" = []))
)]
struct ApiInfo;

/// The paths whose POST, PUT or DELETE never answers 503 `disk_full`: they write files of the
/// config dir, not the store (the policy, the servers), or report a full disk inside a 200 (a
/// hook's answer is then `{}`, no decision; a batch decision says it per item).
const NO_STORE_WRITE: [&str; 6] = [
    "/v1/policy",
    "/v1/policy/rules/{id}",
    "/v1/servers",
    "/v1/servers/{name}",
    "/v1/hooks/{agent}",
    "/v1/approvals/decide",
];

/// The `/v1` document of a server whose agent-callable task tools are `tools` (the names
/// `POST /v1/jobs` takes as `tool`; any name when empty).
pub fn build(tools: &[String]) -> OpenApi {
    let mut doc = <ApiInfo as utoipa::OpenApi>::openapi();
    doc.merge(http_api::routes().into_openapi());
    doc.merge(jobs_api::routes().into_openapi());
    doc.merge(logs_api::routes().into_openapi());
    doc.merge(servers_api::routes().into_openapi());
    doc.merge(policy_api::routes().into_openapi());
    doc.merge(hooks_api::routes().into_openapi());
    doc.merge(approvals_api::routes().into_openapi());
    doc.merge(audit_api::routes().into_openapi());
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    components
        .schemas
        .insert("CreateBody".into(), RefOr::T(job_schemas::job_start(tools)));
    for (path, item) in doc.paths.paths.iter_mut() {
        let has_path_params = path.contains('{');
        for op in operations(item) {
            add_guard_responses(op, has_path_params);
        }
        if !NO_STORE_WRITE.contains(&path.as_str()) {
            let writes = [
                &mut item.post,
                &mut item.put,
                &mut item.patch,
                &mut item.delete,
            ];
            for op in writes.into_iter().flatten() {
                add_disk_full_response(op);
            }
        }
    }
    doc
}

/// The document this server answers, built once from its engine's tools.
pub fn document(engine: &Engine) -> &'static OpenApi {
    static DOC: OnceLock<OpenApi> = OnceLock::new();
    DOC.get_or_init(|| {
        let tools: Vec<String> = engine
            .tools()
            .into_iter()
            .filter(|t| t.agent_callable && t.name != EXTERNAL)
            .map(|t| t.name)
            .collect();
        build(&tools)
    })
}

/// `GET /v1/openapi.json`.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "meta",
    responses((status = 200, description = "this document (OpenAPI 3.1)", body = Object)))]
pub(crate) async fn openapi(State(engine): State<Engine>) -> Json<&'static OpenApi> {
    Json(document(&engine))
}

fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.options.as_mut(),
        item.head.as_mut(),
        item.patch.as_mut(),
        item.trace.as_mut(),
    ]
    .into_iter()
    .flatten()
}

/// A problem document response (`application/problem+json`, schema `ProblemDocument`).
fn problem_response(description: &str) -> ResponseBuilder {
    ResponseBuilder::new().description(description).content(
        "application/problem+json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ProblemDocument")))
            .build(),
    )
}

/// Adds the statuses the guard and the body limit answer on every route (an operation's own
/// description of the same status wins).
fn add_guard_responses(op: &mut Operation, has_path_params: bool) {
    let unauthorized = problem_response(
        "no `Authorization: Bearer <token>`, or a token that is unknown or revoked",
    )
    .header(
        "WWW-Authenticate",
        HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some("`Bearer realm=\"taskdeck\"`"))
            .build(),
    )
    .build();
    let mut add = |status: &str, response: ResponseDoc| {
        op.responses
            .responses
            .entry(status.to_string())
            .or_insert(RefOr::T(response));
    };
    if has_path_params {
        add(
            "400",
            problem_response("a path segment that is not UTF-8 once percent-decoded").build(),
        );
    }
    add("401", unauthorized);
    add(
        "403",
        problem_response(
            "the `Host` is not a loopback name, or the `Origin` is not this server's (DNS-rebinding protection), or either is sent twice",
        )
        .build(),
    );
    add(
        "413",
        problem_response("the request body is over 4 MiB").build(),
    );
    if op.request_body.is_some() {
        add(
            "415",
            problem_response("the body was not sent as `Content-Type: application/json`").build(),
        );
    }
}

/// Adds the 503 a write refused on a full disk answers (`api_error::DISK_FULL_REASON`; an
/// operation's own description of 503 wins).
fn add_disk_full_response(op: &mut Operation) {
    let full = problem_response(
        "the store's disk is full: nothing was written (`reason: \"disk_full\"`); retry once \
         there is space",
    )
    .header(
        "Retry-After",
        HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::Integer))
            .description(Some("seconds to wait before retrying: `5`"))
            .build(),
    )
    .build();
    op.responses
        .responses
        .entry("503".to_string())
        .or_insert(RefOr::T(full));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_declares_the_guard_statuses() {
        let doc = serde_json::to_value(build(&["run_command".into()])).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        assert!(paths.contains_key("/v1/jobs/{taskId}/report"));
        for (path, item) in paths {
            for (method, op) in item.as_object().unwrap() {
                for status in ["401", "403", "413"] {
                    assert!(
                        op["responses"].get(status).is_some(),
                        "{method} {path} lacks {status}"
                    );
                }
                // A write to the store may be refused on a full disk.
                let writes = method != "get" && !NO_STORE_WRITE.contains(&path.as_str());
                assert_eq!(
                    op["responses"].get("503").is_some(),
                    writes,
                    "{method} {path}: 503"
                );
            }
        }
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
    }
}
