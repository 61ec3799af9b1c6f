//! The password rule, shared by the server and the UI. Other input is parsed into the types of
//! `crate::text`.

pub const MAX_PASSWORD: usize = 1024;
pub const MIN_PASSWORD: usize = 8;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_have_length_bounds() {
        assert!(password("short").is_err());
        assert!(password("long enough").is_ok());
        assert!(password(&"x".repeat(2000)).is_err());
    }
}
