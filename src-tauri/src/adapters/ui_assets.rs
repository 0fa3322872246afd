//! Serves the UI (`ui/`, plain ES modules) from the binary, so the same page works in the
//! desktop window and in a browser against `taskdeck serve`. Debug builds read the files from
//! disk (edit and reload); release builds embed them. The assets hold no data, so they need no
//! token (the Host/Origin guard still applies); the page asks for a token and talks to `/v1`.
//! Every response carries a strict Content-Security-Policy: agent-supplied text can never run
//! as script in the page.

use axum::{
    body::Body,
    http::{StatusCode, Uri, header},
    response::{IntoResponse, Response},
};

#[derive(rust_embed::RustEmbed)]
#[folder = "ui/"]
#[exclude = "node_modules/*"]
#[exclude = "test/*"]
struct Assets;

/// The Content-Security-Policy sent with every UI asset.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/// Axum fallback: `GET /` → `index.html`, `GET /path` → `ui/path`; 404 otherwise.
pub async fn serve(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match Assets::get(path) {
        Some(file) => Response::builder()
            .header(header::CONTENT_TYPE, file.metadata.mimetype())
            .header(header::CONTENT_SECURITY_POLICY, CSP)
            .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(Body::from(file.data.into_owned()))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        None => super::http_api::problem(StatusCode::NOT_FOUND, "no such page"),
    }
}
