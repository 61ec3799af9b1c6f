//! Maps the core error and every extractor rejection to the one error body of the API.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_core::Error;

/// An error on its way out of a handler.
#[derive(Debug)]
pub struct ApiError(pub Error);

pub type ApiResult<T> = Result<T, ApiError>;

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.0.report();
        let body = self.0.body();
        let status =
            StatusCode::from_u16(body.error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut res = (status, Json(body)).into_response();
        if let Some(retry_after) = self.0.retry_after() {
            if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        res
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError(Error::PayloadTooLarge);
        }
        let message = match r {
            JsonRejection::MissingJsonContentType(_) => {
                "expected a JSON body with content-type application/json".to_string()
            }
            JsonRejection::JsonSyntaxError(_) => "the body is not valid JSON".to_string(),
            // serde's sentence names the field and what was wrong with it.
            JsonRejection::JsonDataError(e) => format!(
                "invalid body: {}",
                e.body_text().trim_start_matches(
                    "Failed to deserialize the JSON body into the target type: "
                )
            ),
            other => other.body_text(),
        };
        ApiError(Error::Invalid(message))
    }
}

impl From<PathRejection> for ApiError {
    fn from(_: PathRejection) -> Self {
        ApiError(Error::Invalid(
            "a path parameter is malformed (ids are integers)".into(),
        ))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError(Error::Invalid(format!("invalid query: {}", r.body_text())))
    }
}
