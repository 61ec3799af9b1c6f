//! Copying text from the browser. Only the WASM build can; the server never needs to.

#[cfg(target_arch = "wasm32")]
mod js {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        // `catch` also covers `navigator.clipboard` being absent (plain http on another host).
        #[wasm_bindgen(catch, js_namespace = ["navigator", "clipboard"], js_name = writeText)]
        pub fn write_text(text: &str) -> Result<JsValue, JsValue>;
    }
}

/// Starts copying `text` to the clipboard; false when the browser offers no clipboard.
pub fn copy(text: &str) -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        js::write_text(text).is_ok()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = text;
        false
    }
}

/// "Copy" beside a block of text (a configuration snippet): says whether it worked.
#[leptos::component]
pub fn CopyButton(
    /// What is copied.
    text: String,
    /// What the button names, for screen readers: "Copy the Alertmanager snippet".
    label: &'static str,
) -> impl leptos::IntoView {
    use leptos::prelude::*;
    let (copied, set_copied) = signal(None::<bool>);
    view! {
        <button type="button" class="secondary copy" aria-label=label on:click=move |_| set_copied.set(Some(copy(&text)))>
            {move || match copied.get() {
                None => "Copy",
                Some(true) => "Copied",
                Some(false) => "Select it and copy",
            }}
        </button>
    }
}
