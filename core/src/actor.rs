//! Who is calling: the authenticated principal every operation is given.

use klaxon_domain::account::AccountKind;

/// The credential a request was authenticated with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Session(i64),
    ApiKey(i64),
    /// A calendar feed's link, which reads one team's schedule and nothing else.
    CalendarFeed(i64),
    /// A page's acknowledge token (its row), used from a call's keypress or a text's reply.
    Delivery(i64),
    /// A chat account linked to the person (its `chat_links` row, or for Matrix its verified
    /// contact method's), from a button, a command, a reply or a reaction.
    Chat(i64),
}

#[derive(Debug, Clone)]
pub struct Actor {
    pub user_id: i64,
    pub username: String,
    pub is_admin: bool,
    pub kind: AccountKind,
    /// For a team-scoped service account, the one team it may act on.
    pub team_scope: Option<i64>,
    pub via: Via,
    /// The request's client address, as the per-address limits count it.
    pub address: String,
}

impl Actor {
    pub fn is_human(&self) -> bool {
        self.kind == AccountKind::Human
    }
    pub fn session_id(&self) -> Option<i64> {
        match self.via {
            Via::Session(id) => Some(id),
            Via::ApiKey(_) | Via::CalendarFeed(_) | Via::Delivery(_) | Via::Chat(_) => None,
        }
    }

    /// An instance-scoped service account reading one team as that team's own service account
    /// would (one it may mint at any time); anyone else as themselves.
    pub fn reading_team(&self, team_id: i64) -> Actor {
        let mut a = self.clone();
        if crate::authz::lists_every_team(self) {
            a.team_scope = Some(team_id);
        }
        a
    }
}
