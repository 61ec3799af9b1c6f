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

/// What a person typed into forms that are drawn again when their data reloads (a live update
/// redraws a list, and the forms in its rows with it): kept per field, so the redrawn form shows
/// what was typed, not the stored value, until it is sent. Keys are the fields' ids.
#[derive(Clone, Copy)]
pub struct Drafts(StoredValue<std::collections::HashMap<String, String>>);

impl Default for Drafts {
    fn default() -> Self {
        Drafts(StoredValue::new(Default::default()))
    }
}

impl Drafts {
    /// The typed text of field `id`, else `stored`.
    pub fn value(&self, id: &str, stored: String) -> String {
        self.0.with_value(|d| d.get(id).cloned()).unwrap_or(stored)
    }

    /// Whether `<details>` `id` was left open (a redraw would close it).
    pub fn open(&self, id: &str) -> bool {
        self.0
            .with_value(|d| d.get(id).is_some_and(|v| v == "open"))
    }

    /// An `on:input` / `on:change` handler keeping field `id`'s text.
    pub fn keep(&self, id: String) -> impl Fn(leptos::ev::Event) + 'static {
        let drafts = *self;
        move |ev| {
            let text = event_target_value(&ev);
            drafts.0.update_value(|d| {
                d.insert(id.clone(), text);
            });
        }
    }

    /// An `on:toggle` handler keeping whether `<details>` `id` is open.
    pub fn keep_open(&self, id: String) -> impl Fn(leptos::ev::Event) + 'static {
        let drafts = *self;
        move |ev| {
            let open = event_target::<leptos::web_sys::Element>(&ev).has_attribute("open");
            drafts.0.update_value(|d| {
                if open {
                    d.insert(id.clone(), "open".into());
                } else {
                    d.remove(&id);
                }
            });
        }
    }

    /// Forgets field or fold `id`.
    pub fn forget_one(&self, id: &str) {
        self.0.update_value(|d| {
            d.remove(id);
        });
    }

    /// Forgets the fields whose ids start with `prefix` (a form that was sent).
    pub fn forget(&self, prefix: &str) {
        self.0
            .update_value(|d| d.retain(|k, _| !k.starts_with(prefix)));
    }
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
#[derive(Clone, Copy, Default)]
pub struct OpenConfirms(Drafts);

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
    let sent = key.clone();
    view! {
        <details class="confirm" open=kept.open(&key) on:toggle=kept.keep_open(key)
            on:submit=move |_| kept.forget_one(&sent)>
            <summary class=summary_class>{summary}</summary>
            {children()}
        </details>
    }
}
