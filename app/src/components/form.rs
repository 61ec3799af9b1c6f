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

/// Once the action succeeds, the form is emptied (back to what the page drew) and the
/// `<details>` holding it closes: a finished form does not sit open with what was sent. Its
/// confirmation (`ActionDone`) belongs outside the fold.
pub fn clear_on_success<T>(action: ServerAction<T>) -> NodeRef<leptos::html::Form>
where
    T: leptos::server_fn::ServerFn<Error = ServerFnError> + Clone + Send + Sync + 'static,
    T::Output: Clone + Send + Sync + 'static,
{
    let form = NodeRef::<leptos::html::Form>::new();
    Effect::new(move |_| {
        let ok = action.value().with(|v| matches!(v, Some(Ok(_))));
        if !ok {
            return;
        }
        if let Some(f) = form.get_untracked() {
            f.reset();
            if let Ok(Some(details)) = f.closest("details") {
                let _ = details.remove_attribute("open");
            }
        }
    });
    form
}

/// Which confirmations are open on the page, kept outside the rows that hold them: a live
/// update redraws a list and its rows, and a question opened under the finger must still be
/// open for the second tap.
#[derive(Clone, Copy)]
pub struct OpenConfirms(StoredValue<std::collections::HashSet<String>>);

impl Default for OpenConfirms {
    fn default() -> Self {
        OpenConfirms(StoredValue::new(Default::default()))
    }
}

/// A question asked once before a destructive form (its `children`): the first tap opens it,
/// the second acts. `key` names what it removes, unique on the page; sending the form forgets
/// it, so the row's next drawing (or a later one with the same name) starts closed.
#[component]
pub fn Confirm(
    #[prop(into)] key: String,
    #[prop(into)] summary: String,
    #[prop(optional)] summary_class: &'static str,
    children: Children,
) -> impl IntoView {
    let kept = use_context::<OpenConfirms>().unwrap_or_default().0;
    let open = kept.with_value(|k| k.contains(&key));
    let (toggled, sent) = (key.clone(), key);
    view! {
        <details class="confirm" open=open
            on:toggle=move |ev| {
                let open = event_target::<leptos::web_sys::Element>(&ev).has_attribute("open");
                kept.update_value(|k| {
                    if open {
                        k.insert(toggled.clone());
                    } else {
                        k.remove(&toggled);
                    }
                });
            }
            on:submit=move |_| kept.update_value(|k| {
                k.remove(&sent);
            })>
            <summary class=summary_class>{summary}</summary>
            {children()}
        </details>
    }
}
