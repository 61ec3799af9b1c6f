//! Request extractors: the authenticated caller, and JSON/path/query that fail in the API's
//! error shape instead of axum's plain-text rejections.

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use klaxon_core::credentials::Presented;
use klaxon_core::Actor;
use std::net::{IpAddr, SocketAddr};

/// The authenticated caller. A missing or bad credential is a 401 in the error shape.
pub struct Caller(pub Actor);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let presented = presented(parts);
        Ok(Caller(state.core.authenticate(&presented).await?))
    }
}

/// What a request presents to core (credentials, origin headers, peer address), for the
/// operations that read it themselves, such as sign-in.
pub struct Request {
    method: Method,
    headers: HeaderMap,
    peer: Option<IpAddr>,
}

impl Request {
    pub fn presented(&self) -> Presented<'_> {
        Presented::from_request(&self.method, &self.headers, self.peer)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Request {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Request {
            method: parts.method.clone(),
            headers: parts.headers.clone(),
            peer: peer(parts),
        })
    }
}

/// The headers and peer of a request as core reads them.
pub fn presented(parts: &Parts) -> Presented<'_> {
    Presented::from_request(&parts.method, &parts.headers, peer(parts))
}

fn peer(parts: &Parts) -> Option<IpAddr> {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
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
