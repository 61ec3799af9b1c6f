//! Editors' state kept by the section that lists what they edit: the list is drawn again whenever
//! the team changes (another owner's edit, a live update), and what is being typed, the last try
//! and the last save must outlive that.

use leptos::prelude::*;
use std::collections::HashMap;

/// One editor's state per item id, made under the owner of the section that holds them.
pub struct Drafts<T: Copy + Send + Sync + 'static>(StoredValue<(Owner, HashMap<i64, T>)>);

impl<T: Copy + Send + Sync + 'static> Clone for Drafts<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Copy + Send + Sync + 'static> Copy for Drafts<T> {}

/// Made by the section that lists the items, outside what it redraws.
impl<T: Copy + Send + Sync + 'static> Default for Drafts<T> {
    fn default() -> Drafts<T> {
        let owner = Owner::current().unwrap_or_default();
        Drafts(StoredValue::new((owner, HashMap::new())))
    }
}

impl<T: Copy + Send + Sync + 'static> Drafts<T> {
    /// The editor state of item `id`, made by `make` the first time.
    pub fn of(&self, id: i64, make: impl FnOnce() -> T) -> T {
        if let Some(d) = self.0.with_value(|(_, m)| m.get(&id).copied()) {
            return d;
        }
        // Made under the section's owner, so a redraw of the row does not dispose of them.
        let owner = self.0.with_value(|(o, _)| o.clone());
        let d = owner.with(make);
        self.0.update_value(|(_, m)| {
            m.insert(id, d);
        });
        d
    }
}
