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
