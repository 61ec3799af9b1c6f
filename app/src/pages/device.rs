//! `/device?code=XXXX-XXXX`: a terminal (`klaxon login`) asks to be signed in as the person
//! holding this browser. They compare the code with the terminal's and approve or deny. A
//! signed-out visitor comes here through sign-in, by whatever means they sign in.

use crate::api::device::ApproveDevice;
use crate::components::form::ActionError;
use crate::components::layout::use_session_user;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn DevicePage() -> impl IntoView {
    let code = move || use_query_map().with(|q| q.get("code").unwrap_or_default());
    let decide = ServerAction::<ApproveDevice>::new();
    let me = use_session_user();
    let outcome = move || decide.value().get().and_then(Result::ok);
    view! {
        <Title text="Sign in a terminal" />
        <h1>"Sign in a terminal"</h1>
        {move || match outcome() {
            Some(true) => view! {
                <p class="done" role="status">"Approved: the terminal is signed in as you. You can close this page."</p>
            }.into_any(),
            Some(false) => view! {
                <p class="done" role="status">"Denied: the terminal was not let in."</p>
            }.into_any(),
            None => view! {
                <section class="card stack" aria-labelledby="device-title">
                    <h2 id="device-title">"Is this your terminal?"</h2>
                    <Suspense>
                        {move || Suspend::new(async move {
                            let name = me.await.ok().flatten().map(|m| m.user.username).unwrap_or_default();
                            view! { <p>{format!("A terminal asks to act as {name}. Approve only if it shows this same code and you started it.")}</p> }
                        })}
                    </Suspense>
                    <ActionForm action=decide attr:class="stack" attr:aria-label="Approve the terminal">
                        <label for="user-code">"Code shown in the terminal"</label>
                        <input id="user-code" name="user_code" type="text" required value=code autocapitalize="characters" autocomplete="off" spellcheck="false" maxlength="16" />
                        <input type="hidden" name="approve" value="true" />
                        <ActionError action=decide />
                        <button type="submit" class="primary big">"Approve"</button>
                    </ActionForm>
                    <ActionForm action=decide attr:aria-label="Deny the terminal">
                        <input type="hidden" name="user_code" value=code />
                        <input type="hidden" name="approve" value="false" />
                        <button type="submit" class="secondary wide">"Deny"</button>
                    </ActionForm>
                </section>
            }.into_any(),
        }}
    }
}
