//! A resolved incident's review: the figures, what fixed it, who was paged by which road, the
//! timeline, notes, similar incidents, and the follow-up items (any member adds one, ticks it off
//! or removes it), with the whole as Markdown one tap away. The team page lists the items not
//! done (`OpenFollowUps`).

use crate::api::load;
use crate::api::reports::{
    get_open_follow_ups, get_review, AddFollowUp, RemoveFollowUp, SetFollowUpDone,
};
use crate::api::teams::list_members;
use crate::components::form::{clear_on_success, ActionError};
use crate::components::loaded::{Failed, Loading, WhenLoaded};
use crate::components::text::{span, when};
use klaxon_domain::review::{FollowUp, Review};
use klaxon_domain::team::Member;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

/// The page's follow-up actions.
#[derive(Clone, Copy)]
struct Items {
    add: ServerAction<AddFollowUp>,
    set: ServerAction<SetFollowUpDone>,
    remove: ServerAction<RemoveFollowUp>,
}

impl Items {
    fn new() -> Items {
        Items {
            add: ServerAction::new(),
            set: ServerAction::new(),
            remove: ServerAction::new(),
        }
    }
    fn version(&self) -> usize {
        self.add.version().get() + self.set.version().get() + self.remove.version().get()
    }
}

#[component]
pub fn ReviewPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.with(|p| p.get("id").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0));
    let items = Items::new();
    // The team's people come with the review, in the one load the page makes before awaiting
    // anything: a load made under the awaited review would not be matched with the server's
    // answer when the page is hydrated (leptos issue #3398), and the page would fail to hydrate.
    let review = load(
        move || (id(), items.version()),
        |(id, _)| async move {
            let review = get_review(id).await?;
            let people = list_members(review.detail.incident.team_id).await?;
            Ok((review, people))
        },
    );
    view! {
        <Title text=move || format!("Review of #{}", id()) />
        <p class="back"><a href=move || format!("/incidents/{}", id())>"← The incident"</a></p>
        <h1>{move || format!("Review of #{}", id())}</h1>
        <Transition fallback=Loading>
            {move || Suspend::new(async move {
                match review.await {
                    Ok((r, people)) => view! { <ReviewBody r people items /> }.into_any(),
                    Err(e) => view! { <Failed error=e retry=move |_| review.refetch() /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ReviewBody(r: Review, people: Vec<Member>, items: Items) -> impl IntoView {
    let i = r.detail.incident.clone();
    let id = i.id;
    let acked = match (&i.acknowledged_by, r.seconds_to_acknowledge) {
        (Some(by), Some(s)) => format!("by {by}, after {}", span(s)),
        (None, Some(s)) => format!("by its sender, after {}", span(s)),
        _ => "never".into(),
    };
    let resolved = r
        .seconds_to_resolve
        .map(|s| format!("after {}", span(s)))
        .unwrap_or_default();
    let fix = r
        .detail
        .notes
        .iter()
        .rev()
        .find(|n| n.resolution)
        .map(|n| n.text.clone());
    let pages = r.detail.pages.iter().map(|p| {
        let who = p.recipient.clone().or_else(|| p.topic.clone()).unwrap_or_default();
        let sent = p.sent_at.map(when).unwrap_or_else(|| p.status.as_str().to_string());
        view! {
            <li class="row">
                <span class="row-main">
                    <strong>{who}</strong>
                    <span class="meta">{format!("{} · {} · {sent}", p.road.as_str(), p.kind.as_str())}</span>
                </span>
            </li>
        }
    }).collect_view();
    let timeline = r.detail.timeline.iter().map(|t| {
        let actor = t.actor.clone().map(|a| format!(" ({a})")).unwrap_or_default();
        view! { <li><span class="meta">{when(t.at)}</span>" "{format!("{}{actor}: {}", t.kind.as_str().replace('_', " "), t.text)}</li> }
    }).collect_view();
    let notes = r.detail.notes.iter().filter(|n| !n.resolution).map(|n| {
        let by = n.author.clone().unwrap_or_else(|| "someone".into());
        view! { <li><span class="meta">{format!("{by}, {}", when(n.created_at))}</span><p>{n.text.clone()}</p></li> }
    }).collect_view();
    let no_notes = r.detail.notes.iter().all(|n| n.resolution);
    let no_similar = r.similar.is_empty();
    let similar = r.similar.iter().map(|s| view! {
        <li><a href=format!("/incidents/{}", s.incident.id)>{format!("#{} {}", s.incident.id, s.incident.title)}</a></li>
    }).collect_view();
    view! {
        <p class="incident-title">{i.title.clone()}</p>
        <dl class="facts">
            <div><dt>"Team"</dt><dd>{r.team_name.clone()}</dd></div>
            <div><dt>"Opened"</dt><dd>{when(i.created_at)}</dd></div>
            <div><dt>"Acknowledged"</dt><dd>{acked}</dd></div>
            <div><dt>"Resolved"</dt><dd>{resolved}</dd></div>
            <div><dt>"What fixed it"</dt><dd>{fix.unwrap_or_else(|| "not written down".into())}</dd></div>
        </dl>
        <p>
            <a class="button" rel="external" download=format!("incident-{id}-review.md")
                href=format!("/api/incidents/{id}/review?format=markdown")>"Download as Markdown"</a>
        </p>
        <FollowUpList incident_id=id people list=r.follow_ups.clone() items />
        <section aria-labelledby="paged-title">
            <h2 id="paged-title">"Who was paged"</h2>
            <ul class="list">{pages}</ul>
        </section>
        <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">"Timeline"</h2>
            <ol class="timeline">{timeline}</ol>
        </section>
        <section aria-labelledby="notes-title" hidden=no_notes>
            <h2 id="notes-title">"Notes"</h2>
            <ul class="notes">{notes}</ul>
        </section>
        <section aria-labelledby="similar-title" hidden=no_similar>
            <h2 id="similar-title">"Like this before"</h2>
            <ul>{similar}</ul>
        </section>
    }
}

#[component]
fn FollowUpList(
    incident_id: i64,
    people: Vec<Member>,
    list: Vec<FollowUp>,
    items: Items,
) -> impl IntoView {
    let sent = clear_on_success(items.add);
    let rows = list
        .into_iter()
        .map(|f| view! { <FollowUpRow f items /> })
        .collect_view();
    view! {
        <section class="card" aria-labelledby="follow-ups-title">
            <h2 id="follow-ups-title">"Follow-up items"</h2>
            <ul class="list follow-ups">{rows}</ul>
            <ActionError action=items.set />
            <ActionError action=items.remove />
            <ActionForm action=items.add node_ref=sent attr:class="stack">
                <input type="hidden" name="incident_id" value=incident_id />
                <label for="follow-up-text">"What should be done so it does not happen again?"</label>
                <input id="follow-up-text" name="text" type="text" required maxlength="500" />
                <label for="follow-up-owner">"Who will do it"</label>
                <select id="follow-up-owner" name="owner_id">
                    <option value="">"Nobody yet"</option>
                    {people.into_iter().map(|m| view! { <option value=m.user_id>{m.username}</option> }).collect_view()}
                </select>
                <ActionError action=items.add />
                <button type="submit" class="primary" disabled=move || items.add.pending().get()>"Add the item"</button>
            </ActionForm>
        </section>
    }
}

#[component]
fn FollowUpRow(f: FollowUp, items: Items) -> impl IntoView {
    let done = f.done_at.is_some();
    let text_class = if done { "done-text" } else { "" };
    let state = if done { "done" } else { "to do" };
    let button = if done { "Not done yet" } else { "Mark done" };
    let owner = f
        .owner
        .clone()
        .map(|o| format!(" · {o}"))
        .unwrap_or_default();
    view! {
        <li>
            <span class="row-main">
                <span class=text_class>{f.text.clone()}</span>
                <span class="meta">{format!("{state}{owner}")}</span>
            </span>
            <ActionForm action=items.set>
                <input type="hidden" name="id" value=f.id />
                <input type="hidden" name="done" value=(!done).to_string() />
                <button type="submit" class="secondary">{button}</button>
            </ActionForm>
            <ActionForm action=items.remove>
                <input type="hidden" name="id" value=f.id />
                <button type="submit" class="secondary" aria-label=format!("Remove “{}”", f.text)>"Remove"</button>
            </ActionForm>
        </li>
    }
}

/// The team's follow-up items not done yet, each leading to its incident's review.
#[component]
pub fn OpenFollowUps(team_id: Signal<i64>) -> impl IntoView {
    let open = load(move || team_id.get(), get_open_follow_ups);
    view! {
        <section aria-labelledby="learning-title">
            <h2 id="learning-title">"Learning from incidents"</h2>
            <ul class="list">
                <li>
                    <a class="row" href=move || format!("/teams/{}/reports", team_id.get())>
                        <span class="row-main">
                            <strong>"Reports"</strong>
                            <span class="meta">"On-call health and alert noise"</span>
                        </span>
                        <span class="go" aria-hidden="true">"›"</span>
                    </a>
                </li>
            </ul>
            <h3>"Follow-up items to do"</h3>
            <WhenLoaded resource=open let:items>
                {if items.is_empty() {
                    view! { <p class="empty">"None: each incident's review can add some."</p> }.into_any()
                } else {
                    view! {
                        <ul class="list">
                            {items.into_iter().map(|f| view! {
                                <li>
                                    <a class="row" href=format!("/incidents/{}/review", f.incident_id)>
                                        <span class="row-main">
                                            <strong>{f.text.clone()}</strong>
                                            <span class="meta">{format!("{}{}", f.incident_title, f.owner.map(|o| format!(" · {o}")).unwrap_or_default())}</span>
                                        </span>
                                        <span class="go" aria-hidden="true">"›"</span>
                                    </a>
                                </li>
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }}
            </WhenLoaded>
        </section>
    }
}
