//! Who may get into a team, for its owners: invite links (made with a role and a number of
//! uses, copied or scanned as a QR code, listed with their state, revoked) and service
//! accounts (made, given keys shown once, keys revoked).

use crate::api::load;
use crate::api::team_access::{
    list_invites, list_service_accounts, CreateInvite, CreateServiceAccount, CreateServiceKey,
    CreatedInvite, RevokeInvite, RevokeServiceKey,
};
use crate::components::form::{failed, ActionError, Fold};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
use klaxon_domain::account::ServiceAccount;
use klaxon_domain::invite::{Invite, InviteState};
use leptos::prelude::*;

#[component]
pub fn InviteLinks(team_id: Signal<i64>) -> impl IntoView {
    let create = ServerAction::<CreateInvite>::new();
    let revoke = ServerAction::<RevokeInvite>::new();
    let list = load(
        move || {
            (
                team_id.get(),
                create.version().get() + revoke.version().get(),
            )
        },
        |(team, _)| list_invites(team),
    );
    let hydrated = use_hydrated();
    let created = move || create.value().get().and_then(Result::ok);
    view! {
        <section class="card" aria-labelledby="invites-title">
            <h2 id="invites-title">"Invite links"</h2>
            <p class="hint">"Anyone with a link can create an account and join this team, for a week or until its uses run out."</p>
            {move || created().map(|c| view! { <NewLink created=c /> })}
            <Fold key="new-invite" class="inner" open=move || failed(create)>
                <summary>"Make an invite link"</summary>
                <ActionForm action=create attr:class="stack" attr:aria-label="Make an invite link">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="invite-role">"Joins as"</label>
                    <select id="invite-role" name="role">
                        <option value="member" selected>"Member: works incidents"</option>
                        <option value="owner">"Owner: also changes the team"</option>
                    </select>
                    <label for="invite-uses">"How many people may use it"</label>
                    <input id="invite-uses" name="max_uses" type="number" min="1" max="100" value="1" required inputmode="numeric" />
                    <p class="hint" hidden=move || hydrated.get()>"Making a link needs the page to finish loading."</p>
                    <ActionError action=create />
                    // The link is shown only in this page's memory, so this waits for hydration.
                    <button type="submit" class="primary" disabled=move || !hydrated.get() || create.pending().get()>
                        "Make link"
                    </button>
                </ActionForm>
            </Fold>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(items) if items.is_empty() => view! { <p class="empty">"No invite links yet."</p> }.into_any(),
                        Ok(items) => view! {
                            <ul class="list invites">
                                {items.into_iter().map(|i| view! { <InviteRow invite=i revoke /> }).collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| list.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=revoke />
        </section>
    }
    .into_any()
}

/// The new link, once: to copy, or to scan from the screen.
#[component]
fn NewLink(created: CreatedInvite) -> impl IntoView {
    let uses = match created.invite.invite.max_uses {
        1 => "one person".to_string(),
        n => format!("{n} people"),
    };
    view! {
        <ShownOnce id="new-invite-url" label=format!("Invite link for {uses}, as {}", created.invite.invite.role.as_str()) value=created.invite.url.clone()>
            // Drawn on the server from the link alone (no user text), so it is inserted as is.
            <figure class="qr" aria-label="QR code of the invite link" inner_html=created.qr_svg></figure>
            <p class="hint">"Send the link, or let a phone in the room scan the code."</p>
        </ShownOnce>
    }
}

#[component]
fn InviteRow(invite: Invite, revoke: ServerAction<RevokeInvite>) -> impl IntoView {
    let (class, word) = match invite.state {
        InviteState::Usable => ("usable", "usable"),
        InviteState::Expired => ("expired", "expired"),
        InviteState::Revoked => ("revoked", "revoked"),
        InviteState::UsedUp => ("used-up", "used up"),
    };
    let by = invite
        .created_by
        .clone()
        .unwrap_or_else(|| "a service account".into());
    let meta = format!(
        "{} · used {} of {} · made by {by} {} · until {}",
        invite.role.as_str(),
        invite.uses,
        invite.max_uses,
        when(invite.created_at),
        when(invite.expires_at)
    );
    view! {
        <li class="invite">
            <div class="row">
                <span class="row-main">
                    <strong>{format!("Link {}", invite.id)}</strong>
                    <span class="meta">{meta}</span>
                </span>
                <span class=format!("chip invite-{class}")>{word}</span>
            </div>
            {(invite.state == InviteState::Usable).then(|| view! {
                <ActionForm action=revoke attr:class="row-tools">
                    <input type="hidden" name="team_id" value=invite.team_id />
                    <input type="hidden" name="id" value=invite.id />
                    <button type="submit" class="secondary" aria-label=format!("Revoke link {}", invite.id)>"Revoke"</button>
                </ActionForm>
            })}
        </li>
    }
}

#[component]
pub fn ServiceAccounts(team_id: Signal<i64>) -> impl IntoView {
    let create = ServerAction::<CreateServiceAccount>::new();
    let mint = ServerAction::<CreateServiceKey>::new();
    let revoke = ServerAction::<RevokeServiceKey>::new();
    let list = load(
        move || {
            (
                team_id.get(),
                create.version().get() + mint.version().get() + revoke.version().get(),
            )
        },
        |(team, _)| list_service_accounts(team),
    );
    let hydrated = use_hydrated();
    let minted = move || mint.value().get().and_then(Result::ok);
    view! {
        <section class="card" aria-labelledby="service-title">
            <h2 id="service-title">"Service accounts"</h2>
            <p class="hint">"For automation such as the Kubernetes operator: API keys only, an owner of this team and of nothing else."</p>
            {move || minted().map(|k| view! {
                <ShownOnce id="new-service-key" label=format!("Key “{}”", k.name) value=k.key />
            })}
            <Fold key="new-service-account" class="inner" open=move || failed(create)>
                <summary>"Add a service account"</summary>
                <ActionForm action=create attr:class="stack" attr:aria-label="Add a service account">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="service-name">"Name"</label>
                    <input id="service-name" name="name" type="text" required maxlength="64" autocapitalize="none" spellcheck="false" placeholder="payments-operator" />
                    <ActionError action=create />
                    <button type="submit" class="primary" disabled=move || create.pending().get()>"Add account"</button>
                </ActionForm>
            </Fold>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(items) if items.is_empty() => view! { <p class="empty">"No service accounts."</p> }.into_any(),
                        Ok(items) => view! {
                            <ul class="list">
                                {items.into_iter().map(|a| view! { <AccountRow account=a mint revoke hydrated /> }).collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| list.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=mint />
            <ActionError action=revoke />
        </section>
    }
    .into_any()
}

#[component]
fn AccountRow(
    account: ServiceAccount,
    mint: ServerAction<CreateServiceKey>,
    revoke: ServerAction<RevokeServiceKey>,
    hydrated: ReadSignal<bool>,
) -> impl IntoView {
    let user = account.user;
    let field = format!("key-name-{}", user.id);
    let (id, name) = (user.id, user.username.clone());
    view! {
        <li class="service-account">
            <div class="row">
                <span class="row-main">
                    <strong>{user.username.clone()}</strong>
                    <span class="meta">{match account.keys.len() { 1 => "1 key".to_string(), n => format!("{n} keys") }}</span>
                </span>
            </div>
            <ul class="keys">
                {account.keys.into_iter().map(|k| { let name = name.clone(); view! {
                    <li class="row">
                        <span class="row-main">
                            <span>{format!("{} · {}…", k.name, k.prefix)}</span>
                            <span class="meta">{k.last_used_at.map(|t| format!("last used {}", when(t))).unwrap_or_else(|| "never used".into())}</span>
                        </span>
                        <ActionForm action=revoke>
                            <input type="hidden" name="user_id" value=id />
                            <input type="hidden" name="key_id" value=k.id />
                            <button type="submit" class="secondary" aria-label=format!("Revoke key {} of {name}", k.name)>"Revoke"</button>
                        </ActionForm>
                    </li>
                }}).collect_view()}
            </ul>
            <ActionForm action=mint attr:class="with-button">
                <input type="hidden" name="user_id" value=user.id />
                <label class="visually-hidden" for=field.clone()>{format!("Name of a new key for {}", user.username)}</label>
                <input id=field name="name" type="text" placeholder="key name" maxlength="100" />
                // The key is shown only in this page's memory, so this waits for hydration.
                <button type="submit" class="secondary" disabled=move || !hydrated.get() || mint.pending().get()>
                    {format!("New key for {}", user.username)}
                </button>
            </ActionForm>
        </li>
    }
}
