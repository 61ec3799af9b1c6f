//! Request extractors: the authenticated caller, and JSON/path/query that fail in the API's
//! error shape instead of axum's plain-text rejections.

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts};
use axum::http::request::Parts;
use klaxon_core::credentials::Presented;
use klaxon_core::Actor;
use std::net::SocketAddr;

/// The authenticated caller. A missing or bad credential is a 401 in the error shape.
pub struct Caller(pub Actor);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let presented = Presented::from_headers(&parts.method, &parts.headers);
        Ok(Caller(state.core.authenticate(&presented).await?))
    }
}

/// The client's address for throttling: the first `X-Forwarded-For` hop, else the peer.
pub struct ClientAddress(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let forwarded = parts
            .headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().chars().take(64).collect::<String>())
            .filter(|v| !v.is_empty());
        let peer = || {
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip().to_string())
                .unwrap_or_else(|| "unknown".into())
        };
        Ok(ClientAddress(forwarded.unwrap_or_else(peer)))
    }
}

#[derive(FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct Body<T>(pub T);

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);
