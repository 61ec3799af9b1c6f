//! A phone number as Klaxon pages it: E.164, checked against libphonenumber's metadata (crate
//! `phonenumber`, a maintained port whose number plans follow Google's releases), so a number
//! that is not allocated, or that costs the caller (premium rate, shared cost), is refused
//! before a code is sent to it.

use phonenumber::{Mode, PhoneNumber, Type};

/// The number in E.164 when Klaxon may text and ring it; the sentence of the 400 otherwise.
pub fn check(written: &str) -> Result<String, String> {
    let number: PhoneNumber = phonenumber::parse(None, written)
        .map_err(|_| format!("number: {written} is not a phone number with its country code"))?;
    if !phonenumber::is_valid(&number) {
        return Err(format!(
            "number: {written} is not a number in use in its country's numbering plan"
        ));
    }
    let kind = number.number_type(&phonenumber::metadata::DATABASE);
    match kind {
        Type::PremiumRate | Type::SharedCost => Err(format!(
            "number: {written} is a premium-rate or shared-cost number; Klaxon does not call or text those"
        )),
        Type::Unknown => Err(format!(
            "number: {written} is not a number in use in its country's numbering plan"
        )),
        _ => Ok(number.format().mode(Mode::E164).to_string()),
    }
}

/// The number as others see it: its country code and last two digits.
pub fn masked(e164: &str) -> String {
    let Ok(number) = phonenumber::parse(None, e164) else {
        return "a phone number".into();
    };
    let code = number.code().value();
    let national = number.national().to_string();
    let tail: String = national
        .chars()
        .skip(national.len().saturating_sub(2))
        .collect();
    format!("+{code} ••• {tail}")
}

/// The number as its owner reads it: international format with spaces.
pub fn readable(e164: &str) -> String {
    phonenumber::parse(None, e164)
        .map(|n| n.format().mode(Mode::International).to_string())
        .unwrap_or_else(|_| e164.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_kept_in_e164_and_costly_or_unallocated_ones_refused() {
        assert_eq!(check("+44 20 7946 0018").unwrap(), "+442079460018");
        assert_eq!(check("+1 415 555 2671").unwrap(), "+14155552671");
        assert_eq!(check("+49 30 1234567").unwrap(), "+49301234567");
        // Premium rate in the UK (09) and the US (900).
        let premium = check("+44 909 879 0000").unwrap_err();
        assert!(premium.contains("premium-rate"), "{premium}");
        assert!(check("+1 900 555 0199").unwrap_err().contains("premium"));
        // No such range: UK numbers do not begin 04; +999 is no country.
        assert!(check("+44 4 1234 5678")
            .unwrap_err()
            .contains("not a number in use"));
        assert!(check("+999 1234 5678").is_err());
    }

    #[test]
    fn others_see_the_country_and_two_digits() {
        assert_eq!(masked("+442079460018"), "+44 ••• 18");
        assert_eq!(readable("+442079460018"), "+44 20 7946 0018");
    }
}
