//! Enums stored as words: one table per enum gives its `as_str`, its `parse` and the
//! `TryFrom<String>` that database rows are read through, which fails on a word it does not
//! know instead of defaulting, so a bad row is an error and never a silently different state.

use std::fmt;

/// A stored or sent word that names no variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    pub what: &'static str,
    pub word: String,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} {:?}", self.what, self.word)
    }
}

impl std::error::Error for UnknownWord {}

/// `words!(Type, "what it is" { Variant => "word", … })`.
#[macro_export]
macro_rules! words {
    ($ty:ident, $what:literal { $($variant:ident => $word:literal),+ $(,)? }) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word),+
                }
            }
            pub fn parse(s: &str) -> Option<$ty> {
                match s {
                    $($word => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }
        impl TryFrom<String> for $ty {
            type Error = $crate::words::UnknownWord;
            fn try_from(s: String) -> Result<$ty, Self::Error> {
                $ty::parse(&s).ok_or($crate::words::UnknownWord { what: $what, word: s })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::alerting::IncidentState;

    #[test]
    fn unknown_words_fail_and_known_ones_round_trip() {
        for s in IncidentState::ALL {
            assert_eq!(IncidentState::try_from(s.as_str().to_string()), Ok(*s));
        }
        let e = IncidentState::try_from("trigered".to_string()).unwrap_err();
        assert_eq!(e.to_string(), "unknown incident state \"trigered\"");
    }
}
