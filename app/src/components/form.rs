//! Feedback next to a form's controls.

use crate::api::failure;
use leptos::prelude::*;

/// The sentence saying why the action's last attempt failed; empty otherwise. `role=alert`
/// makes screen readers announce it when it appears.
#[component]
pub fn ActionError<T>(action: ServerAction<T>) -> impl IntoView
where
    T: leptos::server_fn::ServerFn<Error = ServerFnError> + Clone + Send + Sync + 'static,
    T::Output: Clone + Send + Sync + 'static,
{
    let message = move || action.value().with(failure);
    view! {
        <p class="error" role="alert" hidden=move || message().is_none()>
            {message}
        </p>
    }
}

/// A short confirmation once the action's last attempt succeeded.
#[component]
pub fn ActionDone<T>(action: ServerAction<T>, text: &'static str) -> impl IntoView
where
    T: leptos::server_fn::ServerFn<Error = ServerFnError> + Clone + Send + Sync + 'static,
    T::Output: Clone + Send + Sync + 'static,
{
    let done = move || action.value().with(|v| matches!(v, Some(Ok(_))));
    view! {
        <p class="done" role="status" hidden=move || !done()>
            {text}
        </p>
    }
}

/// True while the action's last attempt failed: keeps the part of the page holding its form
/// open, so the error is seen next to the control, also after a form post without JavaScript.
pub fn failed<T>(action: ServerAction<T>) -> bool
where
    T: leptos::server_fn::ServerFn<Error = ServerFnError> + Clone + Send + Sync + 'static,
    T::Output: Clone + Send + Sync + 'static,
{
    action.value().with(|v| matches!(v, Some(Err(_))))
}
