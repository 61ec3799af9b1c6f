//! The signed-in user's own page: push topic and a test page, the other ways to reach them and
//! their rules, API keys, password, sign-out.

use crate::api::account::{
    list_api_keys, ChangePassword, CreateApiKey, DeleteApiKey, SetPushTopic,
};
use crate::api::load;
use crate::api::paging::SendTestPage;
use crate::api::session::{current_user, Logout};
use crate::components::form::{ActionDone, ActionError};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading, WhenLoaded};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
use crate::pages::reach::ReachCard;
use klaxon_domain::account::{ApiKeyInfo, Me, NewApiKey};
use klaxon_domain::sso::GrantSource;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn ProfilePage() -> impl IntoView {
    let set_topic = ServerAction::<SetPushTopic>::new();
    // Outside the reloading part below, so its answer survives the topic being saved.
    let test = ServerAction::<SendTestPage>::new();
    let me = load(move || set_topic.version().get(), |_| current_user());

    view! {
        <Title text="Me" />
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                match me.await {
                    Ok(Some(me)) => view! {
                        <h1 class="with-badge">
                            {me.user.username.clone()}
                            {me.user.is_admin.then(|| view! { <span class="chip chip-admin">"admin"</span> })}
                        </h1>
                        <ManagedBy me=me.clone() />
                        <PushTopicForm action=set_topic test current=me.user.push_topic.clone().unwrap_or_default() />
                    }
                    .into_any(),
                    Ok(None) => ().into_any(),
                    Err(e) => view! {
                        <h1>"Me"</h1>
                        <Failed error=e retry=move |_| me.refetch() />
                    }
                    .into_any(),
                }
            })}
        </Suspense>
        <ReachCard />
        <ApiKeys />
        <PasswordForm />
        <SignOut />
    }
}

/// How the account is managed: through the identity provider, and which grants its groups make
/// (those change only there, at the next sign-in).
#[component]
fn ManagedBy(me: Me) -> impl IntoView {
    let admin_from_provider = me.user.is_admin && me.user.source == GrantSource::Oidc;
    let granted: Vec<_> = me
        .teams
        .iter()
        .filter(|t| t.source == GrantSource::Oidc)
        .map(|t| format!("{} ({})", t.display_name, t.role.as_str()))
        .collect();
    let any = me.user.sso || admin_from_provider || !granted.is_empty();
    any.then(|| view! {
        <section class="card" aria-labelledby="managed-title">
            <h2 id="managed-title">"Single sign-on"</h2>
            <p>
                {if me.user.sso {
                    "You sign in through your organisation's identity provider. Its groups are read each time you sign in."
                } else {
                    "Some of your access comes from your organisation's identity provider."
                }}
            </p>
            {(admin_from_provider || !granted.is_empty()).then(|| view! {
                <p class="hint">"Granted by the provider's groups (change them there):"</p>
                <ul class="grants">
                    {admin_from_provider.then(|| view! { <li>"Klaxon administrator"</li> })}
                    {granted.into_iter().map(|g| view! { <li>{g}</li> }).collect_view()}
                </ul>
            })}
        </section>
    })
}

#[component]
fn PushTopicForm(
    action: ServerAction<SetPushTopic>,
    test: ServerAction<SendTestPage>,
    current: String,
) -> impl IntoView {
    let sent = if current.is_empty() {
        "Test page sent.".to_string()
    } else {
        format!("Test page sent to {current}.")
    };
    let sent_ok = move || test.value().with(|v| matches!(v, Some(Ok(()))));
    view! {
        <section class="card" aria-labelledby="push-title">
            <h2 id="push-title">"Push notifications"</h2>
            <ActionForm action attr:class="stack">
                <label for="push-topic">"ntfy topic"</label>
                <input id="push-topic" name="topic" type="text" value=current autocapitalize="none" spellcheck="false" aria-describedby="push-hint" />
                <p id="push-hint" class="hint">"Subscribe to this topic in the ntfy app to get pages. Leave empty to get none."</p>
                <ActionError action />
                <ActionDone action text="Saved." />
                <button type="submit" class="primary" disabled=move || action.pending().get()>"Save topic"</button>
            </ActionForm>
            <ActionForm action=test attr:class="stack test-page">
                <p class="hint">"Check that pages reach your phone, with sound, before you are on call."</p>
                <ActionError action=test />
                <p class="done" role="status" hidden=move || !sent_ok()>{sent}</p>
                <button type="submit" class="secondary wide" disabled=move || test.pending().get()>
                    {move || if test.pending().get() { "Sending…" } else { "Send test page" }}
                </button>
            </ActionForm>
        </section>
    }
}

#[component]
fn ApiKeys() -> impl IntoView {
    let create = ServerAction::<CreateApiKey>::new();
    let delete = ServerAction::<DeleteApiKey>::new();
    let keys = load(
        move || (create.version().get(), delete.version().get()),
        |_| list_api_keys(),
    );
    let hydrated = use_hydrated();
    let created = move || create.value().get().and_then(Result::ok);

    view! {
        <section class="card" aria-labelledby="keys-title">
            <h2 id="keys-title">"API keys"</h2>
            <p class="hint">"For scripts and the command line. A key acts with all your rights."</p>
            {move || created().map(|key| view! { <NewKey key /> })}
            <ActionForm action=create attr:class="stack">
                <label for="key-name">"Key name"</label>
                <input id="key-name" name="name" type="text" required placeholder="laptop" />
                <p class="hint" hidden=move || hydrated.get()>
                    "Creating a key needs the page to finish loading."
                </p>
                <ActionError action=create />
                // The new key is shown only in this page's memory; a plain form post would
                // reload the page and lose it, so creating waits for the page to be interactive.
                <button type="submit" class="primary" disabled=move || !hydrated.get() || create.pending().get()>
                    "Create key"
                </button>
            </ActionForm>
            <WhenLoaded resource=keys let:list>
                {if list.is_empty() {
                    view! { <p class="empty">"No API keys."</p> }.into_any()
                } else {
                    view! { <KeyList keys=list delete /> }.into_any()
                }}
            </WhenLoaded>
            <ActionError action=delete />
        </section>
    }
}

/// A key just created: the raw value, once, with a way to copy it.
#[component]
fn NewKey(key: NewApiKey) -> impl IntoView {
    view! {
        <ShownOnce id="new-key-value" label=format!("Your new key “{}”", key.name) value=key.key />
    }
}

#[component]
fn KeyList(keys: Vec<ApiKeyInfo>, delete: ServerAction<DeleteApiKey>) -> impl IntoView {
    view! {
        <ul class="list keys">
            {keys
                .into_iter()
                .map(|k| {
                    let used = k.last_used_at.map(when).unwrap_or_else(|| "never".to_string());
                    view! {
                        <li class="row">
                            <div class="row-main">
                                <strong>{k.name.clone()}</strong>
                                <code class="prefix">{format!("{}…", k.prefix)}</code>
                                <span class="meta">{format!("Created {} · last used {}", when(k.created_at), used)}</span>
                            </div>
                            <ActionForm action=delete>
                                <input type="hidden" name="key_id" value=k.id />
                                <button type="submit" class="danger" aria-label=format!("Delete key {}", k.name)>"Delete"</button>
                            </ActionForm>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

#[component]
fn PasswordForm() -> impl IntoView {
    let change = ServerAction::<ChangePassword>::new();
    view! {
        <section class="card" aria-labelledby="password-title">
            <h2 id="password-title">"Password"</h2>
            <ActionForm action=change attr:class="stack">
                <label for="current-password">"Current password"</label>
                <input id="current-password" name="current_password" type="password" autocomplete="current-password" required />
                <label for="new-password">"New password"</label>
                <input id="new-password" name="new_password" type="password" autocomplete="new-password" minlength="8" required aria-describedby="new-password-hint" />
                <p id="new-password-hint" class="hint">"At least 8 characters. Your other sessions will be signed out."</p>
                <ActionError action=change />
                <ActionDone action=change text="Password changed." />
                <button type="submit" class="primary" disabled=move || change.pending().get()>"Change password"</button>
            </ActionForm>
        </section>
    }
}

#[component]
fn SignOut() -> impl IntoView {
    let logout = ServerAction::<Logout>::new();
    view! {
        <ActionForm action=logout attr:class="sign-out">
            <ActionError action=logout />
            <button type="submit" class="secondary wide">"Sign out"</button>
        </ActionForm>
    }
}
