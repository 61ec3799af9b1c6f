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
