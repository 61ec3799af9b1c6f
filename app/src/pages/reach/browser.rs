//! What only the browser knows: its push subscription and its time zone.

/// Subscribes this browser to Web Push with the install's key, asking for permission to
/// notify first: the subscription as `JSON.stringify` gives it, or why not, in words.
#[cfg(feature = "hydrate")]
pub async fn subscribe(key: &str) -> Result<String, String> {
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;
    let unsupported = || {
        "This browser cannot receive pages: add Klaxon to the Home Screen, or use Chrome, Firefox or Safari.".to_string()
    };
    let window = web_sys::window().ok_or_else(unsupported)?;
    let permission = web_sys::Notification::request_permission().map_err(|_| unsupported())?;
    let permission = JsFuture::from(permission)
        .await
        .map_err(|_| unsupported())?;
    if permission.as_string().as_deref() != Some("granted") {
        return Err("Notifications are not allowed for Klaxon: allow them in this phone's settings, then try again.".into());
    }
    let ready = window
        .navigator()
        .service_worker()
        .ready()
        .map_err(|_| unsupported())?;
    let registration: web_sys::ServiceWorkerRegistration = JsFuture::from(ready)
        .await
        .map_err(|_| unsupported())?
        .dyn_into()
        .map_err(|_| unsupported())?;
    let options = web_sys::PushSubscriptionOptionsInit::new();
    options.set_user_visible_only(true);
    options.set_application_server_key(&JsValue::from_str(key));
    let pending = registration
        .push_manager()
        .and_then(|m| m.subscribe_with_options(&options))
        .map_err(|_| unsupported())?;
    let subscription = JsFuture::from(pending).await.map_err(|e| {
        format!(
            "This phone refused to subscribe: {}",
            e.as_string().unwrap_or_else(|| "no reason given".into())
        )
    })?;
    js_sys::JSON::stringify(&subscription)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(unsupported)
}

#[cfg(not(feature = "hydrate"))]
pub async fn subscribe(_key: &str) -> Result<String, String> {
    Err("This needs the page to finish loading.".into())
}

/// The browser's IANA time zone.
#[cfg(feature = "hydrate")]
pub fn time_zone() -> Option<String> {
    let format = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new());
    js_sys::Reflect::get(&format.resolved_options(), &"timeZone".into())
        .ok()?
        .as_string()
}

#[cfg(not(feature = "hydrate"))]
pub fn time_zone() -> Option<String> {
    None
}

/// A name for this device's road: its platform, as the browser says it.
pub fn device_name() -> String {
    #[cfg(feature = "hydrate")]
    if let Some(p) = web_sys::window().and_then(|w| w.navigator().platform().ok()) {
        if !p.is_empty() {
            return format!("This phone ({p})");
        }
    }
    "This phone".into()
}
