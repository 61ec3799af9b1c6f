//! The operator's calls against the real Klaxon router over loopback HTTP (SQLite): bootstrap,
//! the instance-scoped account, team provisioning with adoption, re-applied settings, invites.

use crate::common;

use common::{klaxon, Server};
use klaxon_operator::crd::{InviteRole, TeamOidc};
use klaxon_operator::klaxon::Klaxon;
use klaxon_operator::team;

/// What the server reconcile does on a fresh server: bootstrap, then an instance-scoped
/// account and its key.
async fn instance(server: &Server) -> Klaxon {
    let anonymous = Klaxon::new(&server.url, None);
    anonymous.version().await.unwrap();
    let admin = anonymous.bootstrap("klaxon-operator-admin").await.unwrap();
    let again = anonymous.bootstrap("someone").await.unwrap_err();
    assert_eq!(again.status(), Some(409));
    let admin = anonymous.with_key(&admin.api_key);
    let account = admin
        .create_instance_account("klaxon-operator")
        .await
        .unwrap();
    let key = admin.mint_key(account.id, "operator").await.unwrap();
    anonymous.with_key(&key.key)
}

#[tokio::test]
async fn teams_are_created_or_adopted_with_a_team_scoped_key() {
    let server = klaxon().await;
    let instance = instance(&server).await;
    let first = team::provision(&instance, "payments", Some("Payments"))
        .await
        .unwrap();
    assert_eq!(first.team.name, "payments");
    // A second reconcile (or a restarted operator) adopts both and mints another key.
    let second = team::provision(&instance, "payments", None).await.unwrap();
    assert_eq!(second.team.id, first.team.id);
    assert_eq!(second.account_id, first.account_id);
    assert_ne!(second.key, first.key);

    // The team key does what the instance key may not: owner operations.
    let as_team = instance.with_key(&second.key);
    let oidc = TeamOidc {
        member_groups: vec!["payments-oncall".into()],
        owner_groups: vec![],
    };
    let applied = team::apply(
        &as_team,
        first.team.id,
        "Payments & Billing",
        Some(&oidc),
        (Some("America/New_York"), Some("19:00")),
    )
    .await
    .unwrap();
    let day = as_team.oncall_day(first.team.id).await.unwrap();
    assert_eq!(
        (day.time_zone.as_str(), day.handoff_time.as_str()),
        ("America/New_York", "19:00"),
        "the spec's zone and hand-off time are the team's"
    );
    assert_eq!(applied.display_name, "Payments & Billing");
    assert_eq!(
        applied.oidc.member_groups,
        vec!["payments-oncall".to_string()]
    );
    // Whole-resource: clearing the spec's mapping clears the server's.
    let cleared = team::apply(&as_team, first.team.id, "Payments", None, (None, None))
        .await
        .unwrap();
    assert!(cleared.oidc.member_groups.is_empty());
    let day = as_team.oncall_day(first.team.id).await.unwrap();
    assert_eq!(day.time_zone, "UTC", "left out, the defaults");
    // A zone the server's database does not have is the server's refusal.
    let refused = team::apply(
        &as_team,
        first.team.id,
        "Payments",
        None,
        (Some("Mars/Olympus"), None),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.status(), Some(400));

    // Invites: minted, replaced (the old one revoked), revoked; a gone one is fine.
    let invite = team::refresh_invite(&as_team, first.team.id, None, InviteRole::Member, 3)
        .await
        .unwrap();
    assert!(invite.url.contains("/signup?invite="));
    assert_eq!(invite.invite.max_uses, 3);
    let next = team::refresh_invite(
        &as_team,
        first.team.id,
        Some(invite.invite.id),
        InviteRole::Owner,
        1,
    )
    .await
    .unwrap();
    assert_ne!(next.invite.id, invite.invite.id);
    team::revoke_invite(&as_team, first.team.id, next.invite.id)
        .await
        .unwrap();
    team::revoke_invite(&as_team, first.team.id, 999_999)
        .await
        .unwrap();

    // Deleting the team with its own key.
    as_team.delete_team(first.team.id).await.unwrap();
    assert!(instance.team_by_name("payments").await.unwrap().is_none());
}
