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

/// Which folds (`<details>`) are open in the tab, kept outside the views that draw them: a live
/// update draws a section or a list again, and a form opened under the finger, or a question
/// asked before a removal, must still be open afterwards. Drawing a fold again sets its `open`
/// attribute from what it is drawn with (Leptos' erased views take every attribute off and put
/// the new ones on), so what the person opened has to be part of that.
#[derive(Clone, Copy)]
pub struct OpenFolds(StoredValue<std::collections::HashSet<String>>);

impl Default for OpenFolds {
    fn default() -> Self {
        OpenFolds(StoredValue::new(Default::default()))
    }
}

impl OpenFolds {
    fn here() -> StoredValue<std::collections::HashSet<String>> {
        use_context::<OpenFolds>().unwrap_or_default().0
    }

    /// Keeps `key` as the `toggle` event says its fold now is.
    fn follow(
        kept: StoredValue<std::collections::HashSet<String>>,
        key: &str,
        ev: &leptos::ev::Event,
    ) {
        let open = event_target::<leptos::web_sys::Element>(ev).has_attribute("open");
        kept.update_value(|k| {
            if open {
                k.insert(key.to_string());
            } else {
                k.remove(key);
            }
        });
    }
}

/// A fold of the page (`<details>` and its `children`, which start with its `<summary>`), open
/// while `open` holds (a failed form's error beside its fields, a filter in use) or since the
/// person opened it, through any number of redraws. `key` names it on its page (the page's
/// path is added, so the same fold of another team starts closed).
#[component]
pub fn Fold(
    #[prop(into)] key: String,
    #[prop(optional)] class: &'static str,
    #[prop(optional)] id: Option<&'static str>,
    #[prop(optional, into)] hidden: Signal<bool>,
    #[prop(optional, into)] open: Signal<bool>,
    children: Children,
) -> impl IntoView {
    let kept = OpenFolds::here();
    let key = format!(
        "{}#{key}",
        leptos_router::hooks::use_location()
            .pathname
            .get_untracked()
    );
    let opened = key.clone();
    view! {
        <details class=class id=id hidden=hidden
            open=move || open.get() || kept.with_value(|k| k.contains(&opened))
            on:toggle=move |ev| OpenFolds::follow(kept, &key, &ev)>
            {children()}
        </details>
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
    let kept = OpenFolds::here();
    let open = kept.with_value(|k| k.contains(&key));
    let (toggled, sent) = (key.clone(), key);
    view! {
        <details class="confirm" open=open
            on:toggle=move |ev| OpenFolds::follow(kept, &toggled, &ev)
            on:submit=move |_| kept.update_value(|k| {
                k.remove(&sent);
            })>
            <summary class=summary_class>{summary}</summary>
            {children()}
        </details>
    }
}
