//! Request extractors: the authenticated caller, and JSON/path/query that fail in the API's
//! error shape instead of axum's plain-text rejections.

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::request::Parts;
use klaxon_core::credentials::Presented;
use klaxon_core::Actor;

/// The authenticated caller. A missing or bad credential is a 401 in the error shape.
pub struct Caller(pub Actor);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let presented = Presented::from_parts(parts);
        Ok(Caller(state.core.authenticate(&presented).await?))
    }
}

/// What a request presents to core (credentials, origin headers, peer address), for the
/// operations that read it themselves, such as sign-in. Read by `Presented::from_parts`, which
/// the server functions use too.
pub struct Request(Parts);

impl Request {
    pub fn presented(&self) -> Presented<'_> {
        Presented::from_parts(&self.0)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Request {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Request(parts.clone()))
    }
}

/// A JSON body. Numbers written with a zero fraction (`97.0`) count as the integers they are,
/// as JSON Schema says, so a client generated from the document is never refused for it.
pub struct Body<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let axum::Json(value) = axum::Json::<serde_json::Value>::from_request(req, state).await?;
        // serde would also read a struct from an array of its fields in order; every body the
        // document describes is an object.
        if value.is_array() {
            return Err(ApiError(klaxon_core::Error::Invalid(
                "invalid body: expected a JSON object, not an array".into(),
            )));
        }
        serde_path_to_error::deserialize(integral(value))
            .map(Body)
            .map_err(|e| ApiError(klaxon_core::Error::Invalid(format!("invalid body: {e}"))))
    }
}

/// A JSON body that may be left out: an empty body, or `null` (the document marks such bodies
/// nullable), reads as `T::default()`.
pub struct OptionalBody<T>(pub T);

impl<T: serde::de::DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for OptionalBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(body, crate::BODY_LIMIT)
            .await
            .map_err(|_| ApiError(klaxon_core::Error::PayloadTooLarge))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalBody(T::default()));
        }
        let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
        Body::<Option<T>>::from_request(req, state)
            .await
            .map(|Body(t)| OptionalBody(t.unwrap_or_default()))
    }
}

/// `value` with every integral float inside the i64 range turned into an integer.
fn integral(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral).collect()),
        Value::Object(fields) => {
            Value::Object(fields.into_iter().map(|(k, v)| (k, integral(v))).collect())
        }
        other => other,
    }
}

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);
