//! Input rules shared by the server and the UI. Each returns a sentence naming the field.

pub const MAX_PASSWORD: usize = 1024;
pub const MIN_PASSWORD: usize = 8;

/// Usernames are case-insensitive: stored lowercase, 1–64 of `a-z 0-9 . _ @ -`.
pub fn username(raw: &str) -> Result<String, String> {
    let u = raw.trim().to_lowercase();
    if u.is_empty() || u.len() > 64 {
        return Err("username must be 1 to 64 characters".into());
    }
    if !u
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
    {
        return Err("username may contain only letters, digits and . _ @ -".into());
    }
    Ok(u)
}

/// An email address as Klaxon keeps it: trimmed, lower-case, one `@` with text on both sides,
/// at most 254 bytes, no spaces or control characters.
pub fn email(raw: &str) -> Result<String, String> {
    let e = raw.trim().to_lowercase();
    let ok = e.len() <= 254
        && !e.chars().any(|c| c.is_whitespace() || c.is_control())
        && matches!(e.split_once('@'), Some((local, domain)) if !local.is_empty() && !domain.is_empty() && !domain.contains('@'));
    if ok {
        Ok(e)
    } else {
        Err("email must look like name@example.com (at most 254 characters)".into())
    }
}

pub fn password(p: &str) -> Result<(), String> {
    if p.chars().count() < MIN_PASSWORD {
        return Err(format!(
            "password must be at least {MIN_PASSWORD} characters"
        ));
    }
    if p.len() > MAX_PASSWORD {
        return Err(format!("password must be at most {MAX_PASSWORD} bytes"));
    }
    Ok(())
}

/// Team names are identifiers (lowercase, 1–64 of `a-z 0-9 - _`); display names are free text.
pub fn team_name(raw: &str) -> Result<String, String> {
    let n = raw.trim().to_lowercase();
    if n.is_empty() || n.len() > 64 {
        return Err("name must be 1 to 64 characters".into());
    }
    if !n
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("name may contain only letters, digits, - and _".into());
    }
    Ok(n)
}

/// A human-readable label (display name, key name): trimmed, 1–100 characters, no control characters.
pub fn label(field: &str, raw: &str) -> Result<String, String> {
    let s = raw.trim();
    if s.is_empty() || s.chars().count() > 100 {
        return Err(format!("{field} must be 1 to 100 characters"));
    }
    if s.chars().any(char::is_control) {
        return Err(format!("{field} must not contain control characters"));
    }
    Ok(s.to_string())
}

/// ntfy topics: 1–64 of `A-Z a-z 0-9 _ -`. Empty means "no topic".
pub fn push_topic(raw: &str) -> Result<Option<String>, String> {
    let t = raw.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.len() > 64
        || !t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("push_topic must be 1 to 64 letters, digits, _ or -".into());
    }
    Ok(Some(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_lowercased_and_checked() {
        assert_eq!(
            username(" Alice@Example.com ").unwrap(),
            "alice@example.com"
        );
        assert!(username("").is_err());
        assert!(username("a b").is_err());
        assert!(username(&"x".repeat(65)).is_err());
        assert!(username("ünïcode").is_err());
    }

    #[test]
    fn passwords_have_length_bounds() {
        assert!(password("short").is_err());
        assert!(password("long enough").is_ok());
        assert!(password(&"x".repeat(2000)).is_err());
    }

    #[test]
    fn topics_and_labels() {
        assert_eq!(push_topic("").unwrap(), None);
        assert_eq!(
            push_topic("alice-pager").unwrap().as_deref(),
            Some("alice-pager")
        );
        assert!(push_topic("a/b").is_err());
        assert!(label("name", "  ").is_err());
        assert!(label("name", "bell\u{7}").is_err());
        assert_eq!(label("name", " Payments ").unwrap(), "Payments");
        assert_eq!(team_name("Payments-EU").unwrap(), "payments-eu");
        assert!(team_name("pay ments").is_err());
    }
}
