use super::*;

fn window(start: &str, end: &str) -> MaintenanceSpec {
    MaintenanceSpec {
        starts_at: start.into(),
        ends_at: end.into(),
    }
}

fn cover(who: &str, start: &str, end: &str) -> CoverSpec {
    CoverSpec {
        username: who.into(),
        covering: None,
        starts_at: start.into(),
        ends_at: end.into(),
    }
}

/// 2026-12-01T12:00:00Z.
const NOON: Timestamp = Timestamp(1_796_126_400);

#[test]
fn a_span_is_made_as_written_from_now_or_not_at_all() {
    let file = [
        window("2026-11-30T22:00:00Z", "2026-11-30T23:00:00Z"),
        window("2026-12-01T11:00:00Z", "2026-12-01T13:00:00Z"),
        window("2026-12-01T15:00:00+01:00", "2026-12-01T16:00:00+01:00"),
    ];
    let (make, end) = spans(&file, &[], true, NOON);
    assert_eq!(
        make,
        [
            (window("2026-12-01T12:00:00Z", "2026-12-01T13:00:00Z"), true),
            (file[2].clone(), false),
        ]
    );
    assert!(end.is_empty());
}

#[test]
fn the_server_holds_a_span_by_its_instants_or_once_begun_by_its_end() {
    let file = [
        window("2026-12-01T11:00:00Z", "2026-12-01T13:00:00Z"),
        window("2026-12-01T15:00:00+01:00", "2026-12-01T16:00:00+01:00"),
    ];
    let server = [
        window("2026-12-01T11:20:07Z", "2026-12-01T13:00:00Z"),
        window("2026-12-01T14:00:00Z", "2026-12-01T15:00:00Z"),
    ];
    assert_eq!(spans(&file, &server, true, NOON), (vec![], vec![]));
    // A window of the server the file does not hold goes with prune, and only then.
    let later = [window("2026-12-02T01:00:00Z", "2026-12-02T02:00:00Z")];
    let (_, end) = spans(&file, &later, true, NOON);
    assert_eq!(end, later);
    assert!(spans(&file, &later, false, NOON).1.is_empty());
    // A span to come is not the one that began, though their ends agree.
    let moved = [window("2026-12-01T12:30:00Z", "2026-12-01T13:00:00Z")];
    let (make, _) = spans(&moved, &server, false, NOON);
    assert_eq!(make, [(moved[0].clone(), false)]);
}

#[test]
fn a_cover_is_its_person_s() {
    let file = [cover("bob", "2026-12-01T11:00:00Z", "2026-12-02T11:00:00Z")];
    let server = [cover(
        "carol",
        "2026-12-01T11:00:00Z",
        "2026-12-02T11:00:00Z",
    )];
    let (make, end) = spans(&file, &server, true, NOON);
    assert_eq!(
        make,
        [(
            cover("bob", "2026-12-01T12:00:00Z", "2026-12-02T11:00:00Z"),
            true
        )]
    );
    assert_eq!(end, server);
}

#[test]
fn a_cover_of_someone_named_is_not_one_of_someone_else() {
    let mut named = cover("bob", "2026-12-02T11:00:00Z", "2026-12-02T15:00:00Z");
    named.covering = Some("alice".into());
    let mut of_carol = named.clone();
    of_carol.covering = Some("carol".into());
    // The server's cover of alice is the file's: named, or left to the server's choice.
    assert_eq!(
        spans(&[named.clone()], &[named.clone()], true, NOON),
        (vec![], vec![])
    );
    let unnamed = cover("bob", "2026-12-02T11:00:00Z", "2026-12-02T15:00:00Z");
    assert_eq!(
        spans(&[unnamed], &[named.clone()], true, NOON),
        (vec![], vec![])
    );
    let (make, end) = spans(&[of_carol.clone()], &[named.clone()], true, NOON);
    assert_eq!((make, end), (vec![(of_carol, false)], vec![named]));
}

fn run(who: &str, from: &str, to: &str) -> RotaSpec {
    RotaSpec {
        username: who.into(),
        from: from.into(),
        to: to.into(),
    }
}

fn with_rota(runs: Option<Vec<RotaSpec>>) -> ConfigFile {
    let mut team = TeamSpec::named("payments");
    team.rota = runs;
    ConfigFile::new(None, vec![team])
}

fn rota_steps(
    now: &ConfigFile,
    want: &ConfigFile,
    prune: bool,
) -> Vec<(Option<String>, Vec<String>, Vec<String>)> {
    plan(now, want, prune, NOON)
        .into_iter()
        .filter_map(|s| match s {
            Step::Rota {
                username,
                dates,
                replacing,
                ..
            } => Some((username, dates, replacing)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_rota_gives_what_differs_from_today_on_and_empties_the_rest_only_with_prune() {
    let server = with_rota(Some(vec![
        run("alice", "2026-12-01", "2026-12-03"),
        run("bob", "2026-12-04", "2026-12-05"),
    ]));
    let file = with_rota(Some(vec![
        // Yesterday is history: not compared, not given.
        run("carol", "2026-11-30", "2026-11-30"),
        run("alice", "2026-12-01", "2026-12-02"),
        run("bob", "2026-12-03", "2026-12-04"),
    ]));
    let d = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        rota_steps(&server, &file, false),
        vec![(Some("bob".into()), d(&["2026-12-03"]), d(&["2026-12-03"]))]
    );
    assert_eq!(
        rota_steps(&server, &file, true),
        vec![
            (Some("bob".into()), d(&["2026-12-03"]), d(&["2026-12-03"])),
            (None, d(&["2026-12-05"]), d(&["2026-12-05"])),
        ]
    );
    // The same rota, or none given: nothing to do.
    assert_eq!(rota_steps(&server, &server, true), vec![]);
    assert_eq!(rota_steps(&server, &with_rota(None), true), vec![]);
    // An empty Klaxon is given every date, before the ladder that needs them.
    let steps = plan(&with_rota(None), &server, false, NOON);
    assert!(
        matches!(&steps[0], Step::Rota { dates, .. } if dates.len() == 3),
        "{steps:?}"
    );
}

#[test]
fn today_is_the_team_s_own() {
    // At noon UTC it is already 2 December in Auckland (UTC+13).
    let mut server = with_rota(Some(vec![run("alice", "2026-12-01", "2026-12-02")]));
    server.teams[0].time_zone = Some("Pacific/Auckland".into());
    let mut file = server.clone();
    file.teams[0].rota = Some(vec![run("bob", "2026-12-01", "2026-12-02")]);
    let steps = rota_steps(&server, &file, false);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].1, vec!["2026-12-02".to_string()]);
}

#[test]
fn a_source_without_rules_leaves_the_servers_and_an_empty_list_removes_them() {
    use crate::config::AlertSourceSpec;
    use crate::routing::RoutingRule;
    let source = |rules: Option<Vec<RoutingRule>>| AlertSourceSpec {
        name: "prom".into(),
        kind: Default::default(),
        templates: None,
        rules,
    };
    let file = |s: AlertSourceSpec| {
        let mut team = TeamSpec::named("web");
        team.alert_sources = Some(vec![s]);
        ConfigFile::new(None, vec![team])
    };
    let drop_all = vec![RoutingRule {
        drop: true,
        ..Default::default()
    }];
    let server = file(source(Some(drop_all.clone())));
    assert_eq!(plan(&server, &file(source(None)), false, NOON), vec![]);
    assert_eq!(
        plan(&server, &file(source(Some(drop_all))), false, NOON),
        vec![]
    );
    let steps = plan(&server, &file(source(Some(vec![]))), false, NOON);
    assert_eq!(steps.len(), 1);
    assert_eq!(
        steps[0].to_string(),
        "~ change alert source web/prom\n    rules: [{\"matchers\":\"\",\"drop\":true}] → []"
    );
}
