//! Request extractors: the authenticated caller, and JSON/path/query that fail in the API's
//! error shape instead of axum's plain-text rejections.

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::request::Parts;
use klaxon_app::server::presented;
use klaxon_core::credentials::Presented;
use klaxon_core::Actor;

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
/// operations that read it themselves, such as sign-in. Read by the one function the server
/// functions use too (`klaxon_app::server::presented`).
pub struct Request(Parts);

impl Request {
    pub fn presented(&self) -> Presented<'_> {
        presented(&self.0)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Request {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Request(parts.clone()))
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
