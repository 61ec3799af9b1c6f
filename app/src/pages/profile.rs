//! The signed-in user's own page: getting pages to the phone (the ntfy server and a private
//! topic, its subscribe link and QR code, a test page, or this phone by Web Push), the other ways
//! to reach them and their rules, API keys, password, sign-out.

use crate::api::account::{
    get_push_card, list_api_keys, ChangePassword, ChoosePrivateTopic, CreateApiKey, DeleteApiKey,
    PushCard, SetPushTopic,
};
use crate::api::load;
use crate::api::paging::SendTestPage;
use crate::api::reach::AddContactMethod;
use crate::api::session::{current_user, Logout};
use crate::components::clipboard::CopyButton;
use crate::components::form::{ActionDone, ActionError, Fold};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading, WhenLoaded};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
use crate::pages::chat_links::ChatAccounts;
use crate::pages::reach::{PageThisPhone, ReachCard};
use klaxon_domain::account::{ApiKeyInfo, Me, NewApiKey};
use klaxon_domain::sso::GrantSource;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn ProfilePage() -> impl IntoView {
    let set_topic = ServerAction::<SetPushTopic>::new();
    let private = ServerAction::<ChoosePrivateTopic>::new();
    // Outside the reloading part below, so its answer survives the topic being saved.
    let test = ServerAction::<SendTestPage>::new();
    // Shared by the push card's "Page this phone" and the roads' list, which reloads after it.
    let add = ServerAction::<AddContactMethod>::new();
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
        <PushCardView set_topic private test add />
        <ReachCard add />
        <ChatAccounts />
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

/// Getting pages to this phone, in the order a newcomer does it: the ntfy app subscribed to a
/// private topic (one tap to make it, a link or a QR code to subscribe), a test page, or this
/// phone by Web Push instead.
#[component]
fn PushCardView(
    set_topic: ServerAction<SetPushTopic>,
    private: ServerAction<ChoosePrivateTopic>,
    test: ServerAction<SendTestPage>,
    add: ServerAction<AddContactMethod>,
) -> impl IntoView {
    let card = load(
        move || {
            (
                set_topic.version().get(),
                private.version().get(),
                test.version().get(),
            )
        },
        |_| get_push_card(),
    );
    view! {
        <section class="card push-card" aria-labelledby="push-title">
            <h2 id="push-title">"Pages on your phone"</h2>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match card.await {
                        Ok(c) => view! { <PushSteps card=c set_topic private test add /> }.into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| card.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn PushSteps(
    card: PushCard,
    set_topic: ServerAction<SetPushTopic>,
    private: ServerAction<ChoosePrivateTopic>,
    test: ServerAction<SendTestPage>,
    add: ServerAction<AddContactMethod>,
) -> impl IntoView {
    let PushCard {
        setup,
        qr_svg,
        webpush_key,
    } = card;
    let topic = setup.topic.clone().unwrap_or_default();
    let has_topic = setup.topic.is_some();
    let server = setup.server.clone();
    let sent = move || test.value().with(|v| matches!(v, Some(Ok(()))));
    let tested = setup.test_page_at.map(when);
    // Open for a topic someone chose by hand, so it can be changed where it was typed.
    let own_topic = has_topic && !topic.starts_with("klaxon-");
    let sent_text = format!("Test page sent to {topic}.");
    let typed = topic.clone();
    view! {
        <h3>"With the ntfy app"</h3>
        {match server.clone() {
            Some(url) => view! {
                <p>"Klaxon publishes pages to the ntfy server " <code class="ntfy-server">{url}</code> ". Install the ntfy app, then subscribe to your topic on that server."</p>
            }.into_any(),
            None => view! {
                <p class="notice">"This Klaxon has no ntfy server (KLAXON_NTFY_URL), so pages by ntfy cannot leave it. Ask your administrator, or page this phone by Web Push below."</p>
            }.into_any(),
        }}
        {(!has_topic).then(|| view! {
            <ActionForm action=private attr:class="stack">
                <p class="hint">"A private topic is one nobody can guess, so nobody else reads your pages."</p>
                <ActionError action=private />
                <button type="submit" class="primary" disabled=move || private.pending().get()>"Use a private topic"</button>
            </ActionForm>
        })}
        {setup.subscribe_link.clone().map(|link| {
            let web = setup.web_link.clone().unwrap_or_default();
            view! {
                <div class="subscribe stack">
                    <p>"Your topic is " <code class="topic">{topic.clone()}</code> "."</p>
                    <a class="button primary" href=link.clone()>"Subscribe in the ntfy app"</a>
                    <p class="hint">"On this phone, the button opens the ntfy app subscribed to your topic. From another screen, scan the code with the phone's camera:"</p>
                    <figure class="qr" aria-label="QR code of the subscribe link" inner_html=qr_svg.clone()></figure>
                    <p class="hint">"In the ntfy web app, or on an iPhone: "<a href=web.clone()>{web.clone()}</a></p>
                    <CopyButton text=link label="Copy the subscribe link" />
                </div>
            }
        })}
        <ActionForm action=test attr:class="stack test-page">
            <p class="hint">"Check that pages reach your phone, with sound, before you are on call."</p>
            <ActionError action=test />
            <p class="done" role="status" hidden=move || !sent()>{sent_text}</p>
            {tested.map(|t| view! { <p class="hint tested">{format!("Last test page reached you {t}.")}</p> })}
            <button type="submit" class="secondary wide" disabled=move || test.pending().get() || !has_topic>
                {move || if test.pending().get() { "Sending…" } else { "Send test page" }}
            </button>
        </ActionForm>
        <Fold key="own-topic" class="inner" open=own_topic>
            <summary>"Choose the topic yourself"</summary>
            <ActionForm action=set_topic attr:class="stack">
                <label for="push-topic">"ntfy topic"</label>
                <input id="push-topic" name="topic" type="text" value=typed autocapitalize="none" spellcheck="false" aria-describedby="push-hint" />
                <p id="push-hint" class="hint">"Anyone who knows the topic can read your pages on a public server. Leave empty to get none by ntfy."</p>
                <ActionError action=set_topic />
                <ActionDone action=set_topic text="Saved." />
                <button type="submit" class="primary" disabled=move || set_topic.pending().get()>"Save topic"</button>
            </ActionForm>
            {has_topic.then(|| view! {
                <ActionForm action=private>
                    <button type="submit" class="secondary wide">"Use a new private topic"</button>
                </ActionForm>
            })}
        </Fold>
        <h3>"Or this phone, without an app"</h3>
        <PageThisPhone key=webpush_key add />
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
