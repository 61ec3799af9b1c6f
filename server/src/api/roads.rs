//! The OpenAPI document says which roads this server offers: a person's contact methods and a
//! team's channels, as the road registry (`klaxon_core::roads::Roads`) answers at start.

use klaxon_core::roads::Roads;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{OpenApi, RefOr};

/// Adds to the descriptions of `NewContactMethod` and `NewChannel` the kinds offered here, and
/// the setting each other kind needs.
pub fn describe_offered(doc: &mut OpenApi, roads: &Roads) {
    let note = |offered: Vec<&str>, all: &[&str]| {
        let missing: Vec<String> = all
            .iter()
            .filter(|k| !offered.contains(k))
            .map(|k| match roads.usable(k) {
                Err(why) => format!("`{k}` ({why})"),
                Ok(_) => format!("`{k}`"),
            })
            .collect();
        let mut text = format!(
            "Offered on this server: {}.",
            offered
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !missing.is_empty() {
            text.push_str(&format!(" Not set up here: {}.", missing.join(", ")));
        }
        text
    };
    let people = note(roads.offered_to_people(), &roads.all_personal());
    let channels = note(roads.offered_to_channels(), &roads.all_channel());
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    for (name, text) in [("NewContactMethod", people), ("NewChannel", channels)] {
        if let Some(RefOr::T(schema)) = components.schemas.get_mut(name) {
            let description = match schema {
                Schema::Object(o) => &mut o.description,
                Schema::AllOf(a) => &mut a.description,
                Schema::OneOf(o) => &mut o.description,
                Schema::AnyOf(a) => &mut a.description,
                _ => continue,
            };
            *description = Some(match description.take() {
                Some(d) => format!("{d}\n\n{text}"),
                None => text,
            });
        }
    }
}
