//! A team's members: everyone sees who is in it; owners also add existing people (found by
//! name), change roles and remove people here.

use crate::api::teams::{find_people, AddMember, RemoveMember, SetMemberRole};
use crate::api::{load, Loaded};
use crate::components::form::{ActionError, Confirm};
use crate::components::loaded::{Failed, Loading};
use klaxon_domain::sso::GrantSource;
use klaxon_domain::team::{Member, Role};
use leptos::prelude::*;

/// The changes made here, which the page's member list reloads on.
#[derive(Clone, Copy)]
pub struct MemberActions {
    pub add: ServerAction<AddMember>,
    pub set_role: ServerAction<SetMemberRole>,
    pub remove: ServerAction<RemoveMember>,
}

impl Default for MemberActions {
    fn default() -> Self {
        Self::new()
    }
}

impl MemberActions {
    pub fn new() -> Self {
        MemberActions {
            add: ServerAction::new(),
            set_role: ServerAction::new(),
            remove: ServerAction::new(),
        }
    }
    pub fn changes(&self) -> usize {
        self.add.version().get() + self.set_role.version().get() + self.remove.version().get()
    }
}

#[component]
pub fn Members(
    team_id: Signal<i64>,
    members: Loaded<Vec<Member>>,
    is_owner: Signal<bool>,
    actions: MemberActions,
) -> impl IntoView {
    view! {
        <section aria-labelledby="members-title">
            <h2 id="members-title">"Members"</h2>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match members.await {
                        Ok(list) if list.is_empty() => view! { <p class="empty">"No members."</p> }.into_any(),
                        Ok(list) => {
                            let owners = list.iter().filter(|m| m.role == Role::Owner).count();
                            view! {
                                <ul class="list members">
                                    {list
                                        .into_iter()
                                        .map(|m| {
                                            let only_owner = m.role == Role::Owner && owners == 1;
                                            view! { <MemberRow member=m team_id is_owner only_owner actions /> }
                                        })
                                        .collect_view()}
                                </ul>
                            }
                            .into_any()
                        }
                        Err(e) => view! { <Failed error=e retry=move |_| members.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=actions.set_role />
            <ActionError action=actions.remove />
            <Show when=move || is_owner.get()>
                <AddPeople team_id actions />
            </Show>
        </section>
    }
}

#[component]
fn MemberRow(
    member: Member,
    team_id: Signal<i64>,
    is_owner: Signal<bool>,
    /// The team's one owner: the server refuses to leave the team without one, so the row
    /// says so instead of offering buttons that would be refused.
    only_owner: bool,
    actions: MemberActions,
) -> impl IntoView {
    let Member {
        user_id,
        username,
        role,
        source,
    } = member;
    // Grants from the identity provider's groups change there, not here.
    let by_sso = source == GrantSource::Oidc;
    let other = match role {
        Role::Owner => Role::Member,
        Role::Member => Role::Owner,
    };
    let change = match other {
        Role::Owner => format!("Make {username} an owner"),
        Role::Member => format!("Make {username} a member"),
    };
    let remove_label = format!("Remove {username} from the team");
    view! {
        <li class="member">
            <div class="row">
                <span class="row-main">{username.clone()}</span>
                {by_sso.then(|| view! {
                    <span class="meta" title="Granted by the identity provider's groups">"via SSO"</span>
                })}
                <span class="chip">{role.as_str()}</span>
            </div>
            {move || (is_owner.get() && !by_sso && only_owner).then(|| view! {
                <p class="hint row-tools">"The team's only owner. Make someone else an owner before changing this."</p>
            })}
            {move || (is_owner.get() && !by_sso && !only_owner).then(|| {
                let (change, remove_label) = (change.clone(), remove_label.clone());
                view! {
                    <div class="row-tools">
                        <ActionForm action=actions.set_role>
                            <input type="hidden" name="team_id" value=team_id.get_untracked() />
                            <input type="hidden" name="user_id" value=user_id />
                            <input type="hidden" name="role" value=other.as_str() />
                            <button type="submit" class="secondary">{change}</button>
                        </ActionForm>
                        // Asks once: the first tap opens the question, the second removes.
                        <Confirm key=format!("remove-member-{}-{user_id}", team_id.get_untracked()) summary="Remove" summary_class="secondary">
                            <ActionForm action=actions.remove>
                                <input type="hidden" name="team_id" value=team_id.get_untracked() />
                                <input type="hidden" name="user_id" value=user_id />
                                <button type="submit" class="danger">{remove_label}</button>
                            </ActionForm>
                        </Confirm>
                    </div>
                }
            })}
        </li>
    }
}

/// Search by name, then add as member or owner. Needs the page to be interactive (owners'
/// forms wait for hydration anyway).
#[component]
fn AddPeople(team_id: Signal<i64>, actions: MemberActions) -> impl IntoView {
    let query = RwSignal::new(String::new());
    let found = load(
        move || (team_id.get(), query.get(), actions.changes()),
        |(team, q, _)| async move {
            if q.trim().is_empty() {
                Ok(Vec::new())
            } else {
                find_people(team, q).await
            }
        },
    );
    view! {
        <details class="inner add-people">
            <summary>"Add someone who has an account"</summary>
            <label for="people-search">"Name"</label>
            <input
                id="people-search"
                type="search"
                autocomplete="off"
                autocapitalize="none"
                spellcheck="false"
                maxlength="64"
                placeholder="username"
                aria-describedby="people-hint"
                on:input=move |e| query.set(event_target_value(&e))
                prop:value=move || query.get()
            />
            <p id="people-hint" class="hint">
                "People in your teams are found as you type; anyone else by their exact username. Someone without an account needs an invite link."
            </p>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    let typed = !query.get_untracked().trim().is_empty();
                    match found.await {
                        Ok(people) if people.is_empty() && typed => view! {
                            <p class="empty" role="status">"Nobody by that name who is not in the team already."</p>
                        }
                        .into_any(),
                        Ok(people) => view! {
                            <ul class="list found" aria-label="People found">
                                {people
                                    .into_iter()
                                    .map(|p| {
                                        let name = p.username.clone();
                                        view! {
                                            <li class="row">
                                                <span class="row-main">{p.username.clone()}</span>
                                                <ActionForm action=actions.add attr:class="row-tools">
                                                    <input type="hidden" name="team_id" value=move || team_id.get() />
                                                    <input type="hidden" name="user_id" value=p.id />
                                                    <button type="submit" class="primary" name="role" value="member" aria-label=format!("Add {name} as member")>"Add"</button>
                                                    <button type="submit" class="secondary" name="role" value="owner" aria-label=format!("Add {name} as owner")>"As owner"</button>
                                                </ActionForm>
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| found.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=actions.add />
        </details>
    }
}
