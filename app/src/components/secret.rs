//! A value shown exactly once (a new key or webhook URL), with a way to copy it.

use crate::components::clipboard;
use leptos::html::Input;
use leptos::prelude::*;

#[component]
pub fn ShownOnce(
    /// The `id` of the field, for its label.
    id: &'static str,
    label: String,
    value: String,
    /// What to do with it, shown under the field.
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    let field = NodeRef::<Input>::new();
    let (copied, set_copied) = signal(None::<bool>);
    let raw = value.clone();
    let copy = move |_| {
        if let Some(input) = field.get() {
            input.select();
        }
        set_copied.set(Some(clipboard::copy(&raw)));
    };
    view! {
        <div class="new-key" role="status">
            <label for=id>{label}</label>
            <div class="with-button">
                <input id=id node_ref=field type="text" readonly value=value spellcheck="false" />
                <button type="button" class="secondary" on:click=copy>
                    {move || match copied.get() {
                        None => "Copy",
                        Some(true) => "Copied",
                        Some(false) => "Selected: copy it now",
                    }}
                </button>
            </div>
            {children.map(|c| c())}
            <p class="warning">"Copy it now: it will not be shown again."</p>
        </div>
    }
}
