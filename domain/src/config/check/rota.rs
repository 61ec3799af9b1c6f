//! The file's rota, checked: runs of a team's dates, each a member's.

use super::{Checker, Known};
use crate::config::RotaSpec;
use std::collections::BTreeSet;

/// The rota's runs: each a member's, real dates forward, none over another.
pub(super) fn check_rota(
    c: &mut Checker,
    at: &str,
    rota: &[RotaSpec],
    (members, known): (&BTreeSet<&str>, &Known),
    person: &mut dyn FnMut(&mut Checker, String, &str),
) {
    let mut seen = std::collections::BTreeMap::new();
    for (i, run) in rota.iter().enumerate() {
        let path = format!("{at}.rota[{i}]");
        person(c, format!("{path}.username"), &run.username);
        if known.usernames.contains(run.username.as_str())
            && !members.contains(run.username.as_str())
        {
            c.fail(
                format!("{path}.username"),
                format!("\"{}\" is not a member of the team", run.username),
            );
        }
        let Some(dates) = crate::config::rota::dates_of(run) else {
            c.fail(
                path,
                format!(
                    "from and to are dates YYYY-MM-DD, from first, at most {} dates",
                    crate::config::rota::MAX_RUN
                ),
            );
            continue;
        };
        if let Some(earlier) = dates.iter().find_map(|d| seen.insert(d.clone(), i)) {
            c.fail(
                format!("{path}.from"),
                format!("its dates overlap those of rota[{earlier}]"),
            );
        }
    }
}
