use super::*;

const FILE: &str = "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: payments
    handoffTime: \"09:00\"
    members:
      - username: alice
        role: owner
    escalation:
      levels:
        - timeout: 5m
          targets: [{type: oncall}, {type: user, username: alice}]
";

#[test]
fn reads_a_file_and_the_line_of_each_field() {
    let p = read(FILE).unwrap();
    assert_eq!(p.file.teams[0].handoff_time.as_deref(), Some("09:00"));
    assert_eq!(p.line_of("teams[0].name"), Some(4));
    assert_eq!(p.line_of("teams[0].members[0].role"), Some(8));
    assert_eq!(
        p.line_of("teams[0].escalation.levels[0].targets[1].username"),
        Some(12)
    );
    // A path with no line of its own takes its parent's.
    assert_eq!(p.line_of("teams[0].members[0].nothing"), Some(7));
}

#[test]
fn an_unknown_field_is_refused_at_its_line() {
    let text = FILE.replace(
        "        role: owner",
        "        role: owner\n        rol: member",
    );
    let e = read(&text).err().unwrap();
    assert_eq!(e.line, Some(9), "{e}");
    assert!(e.message.contains("unknown field `rol`"), "{e}");
    assert!(e.path.starts_with("teams[0].members[0]"), "{e}");
}

#[test]
fn a_wrong_type_and_bad_yaml_are_refused_at_their_line() {
    let e = read(&FILE.replace("role: owner", "role: [owner]"))
        .err()
        .unwrap();
    assert_eq!(
        (e.line, e.path.as_str()),
        (Some(8), "teams[0].members[0].role"),
        "{e}"
    );
    let e = read("apiVersion: x\nkind: [\n").err().unwrap();
    assert!(e.message.starts_with("not YAML"), "{e}");
    assert!(e.line.is_some());
}

#[test]
fn aliases_that_multiply_are_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..8 {
        let p = i - 1;
        let ten = vec![format!("*a{p}"); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{ten}]\n"));
    }
    let e = read(&text).err().unwrap();
    assert!(e.message.contains("more than 100000 values"), "{e}");
    // A modest alias is read.
    let p = read("apiVersion: &v klaxon.dev/v1alpha1\nkind: KlaxonConfig\nteams: []\n").unwrap();
    assert!(p.file.teams.is_empty());
}

#[test]
fn one_long_string_aliased_many_times_is_refused_by_size() {
    // 1 MB of text, aliased 3 000 times: few values, 3 GB once expanded.
    let mut text = format!("a: &a \"{}\"\nb: [", "x".repeat(1_000_000));
    text.push_str(&vec!["*a"; 3000].join(", "));
    text.push_str("]\n");
    let e = read(&text).err().unwrap();
    assert!(
        e.message
            .contains("MiB of text once its aliases are expanded"),
        "{e}"
    );
    // Refused at the alias that goes past the bound, as it is read, not once built.
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn what_is_written_reads_back_the_same() {
    let p = read(FILE).unwrap();
    let again = read(&write(&p.file)).unwrap();
    assert_eq!(again.file, p.file);
}

#[test]
fn strings_a_yaml_1_1_reader_would_take_for_numbers_or_booleans_are_quoted() {
    let mut file = read(FILE).unwrap().file;
    file.teams[0].handoff_time = Some("18:30".into());
    file.teams[0].rotations = Some(vec![klaxon_domain::config::RotationSpec {
        name: "weekly".into(),
        members: vec!["alice".into()],
        shift_days: 7,
        start_date: "2026-12-07".into(),
        fill_days: None,
    }]);
    file.teams[0].rota = Some(klaxon_domain::config::rota::runs([("2026-12-07", "alice")]));
    file.teams[0].display_name = Some("on".into());
    let text = write(&file);
    assert!(text.contains("handoffTime: \"18:30\""), "{text}");
    assert!(text.contains("displayName: \"on\""), "{text}");
    // A date is a timestamp to YAML 1.1.
    assert!(text.contains("startDate: \"2026-12-07\""), "{text}");
    assert!(text.contains("from: \"2026-12-07\""), "{text}");
    // The fields keep the file's order: a team starts with its name.
    assert!(text.contains("- name: payments"), "{text}");
    assert_eq!(read(&text).unwrap().file, file);
}

#[test]
fn dates_are_quoted_everywhere_but_inside_block_text() {
    let text =
        "a: |\n  2026-12-07\n  - 2026-12-07\nb: 2026-12-07\nc:\n  - 2026-12-07\nd: 2026-12-7\n";
    assert_eq!(
        quote_dates(text),
        "a: |\n  2026-12-07\n  - 2026-12-07\nb: \"2026-12-07\"\nc:\n  - \"2026-12-07\"\nd: 2026-12-7\n"
    );
}
