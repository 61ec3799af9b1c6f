//! The words a refusal is shown in, for the server functions (`server::errors`) and the pages
//! alike; kept apart from both so neither leans on the other.

/// What a read of something missing (or outside the caller's teams) says.
pub const NOT_FOUND: &str = "Not found, or not in one of your teams.";

/// Core and domain messages are lower-case phrases, sometimes led by the field name
/// (`current_password: ...`); the page wants a capitalised sentence.
pub fn sentence(message: &str) -> String {
    let message = match message.split_once(": ") {
        Some((field, rest)) if field.chars().all(|c| c.is_ascii_lowercase() || c == '_') => rest,
        _ => message,
    };
    let mut words = message.splitn(2, ' ');
    let first = words.next().unwrap_or_default().replace('_', " ");
    let rest = words.next().map(|r| format!(" {r}")).unwrap_or_default();
    let mut chars = first.chars();
    let mut out = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect::<String>(),
        None => String::new(),
    };
    out.push_str(&rest);
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}
