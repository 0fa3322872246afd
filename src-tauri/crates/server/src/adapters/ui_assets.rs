//! Serves the UI (`ui/`, plain ES modules) from the binary, so the same page works in the
//! desktop window and in a browser against `taskdeck serve`. Debug builds read the files from
//! disk (edit and reload); release builds embed them. The assets hold no data, so they need no
//! token (the Host/Origin guard still applies); the page asks for a token and talks to `/v1`.
//! Every response carries a strict Content-Security-Policy: agent-supplied text can never run
//! as script in the page.

use axum::{
    body::Body,
    http::{HeaderMap, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};

#[derive(rust_embed::RustEmbed)]
#[folder = "../../../ui/"]
#[exclude = "node_modules/*"]
#[exclude = "test/*"]
struct Assets;

/// The Content-Security-Policy sent with every UI asset.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/// Axum fallback: `GET /` → `index.html`, `GET /path` → `ui/path`; 404 otherwise. Each asset
/// carries an `ETag` (its SHA-256) with `Cache-Control: no-cache`: the browser revalidates on
/// every load and gets a bodiless 304 while the file is unchanged.
pub async fn serve(uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    let Some(file) = Assets::get(path) else {
        return super::http_api::problem(StatusCode::NOT_FOUND, "no such page");
    };
    let etag = format!("\"{}\"", hex::encode(&file.metadata.sha256_hash()[..16]));
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let builder = Response::builder()
        .header(header::CONTENT_SECURITY_POLICY, CSP)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::ETAG, &etag);
    let response = if unchanged {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        builder
            .header(header::CONTENT_TYPE, file.metadata.mimetype())
            .body(Body::from(file.data.into_owned()))
    };
    response.unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
