//! HTTP basics: health, version, OpenAPI, 404s, the UI entry page, body limits and hostile bodies.

use crate::common;
use common::*;
use reqwest::Method;
use serde_json::json;

both!(health_and_version, |app| {
    let h = app.get("/healthz", &Auth::None).await.expect(200);
    assert_eq!(h["status"], "ok");
    let v = app.get("/api/version", &Auth::None).await.expect(200);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert!(v["commit"].is_string() && v["min_replicas_version"].is_string());
});

both!(healthz_reports_a_dead_database, |app| {
    app.core.db.pool.close().await;
    let r = app.get("/healthz", &Auth::None).await;
    r.expect_error(503, "unavailable");
});

both!(the_document_says_which_roads_this_server_offers, |app| {
    // This server has ntfy but no mail settings and no Matrix bot.
    let doc = app.get("/api/openapi.json", &Auth::None).await.expect(200);
    let said = |schema: &str| doc["components"]["schemas"][schema]["description"].to_string();
    let people = said("NewContactMethod");
    assert!(
        people.contains("Offered on this server: `ntfy`, `webpush`, `webhook`."),
        "{people}"
    );
    assert!(
        people.contains("`email` (this server has no mail settings (KLAXON_SMTP_URL))"),
        "{people}"
    );
    assert!(
        people.contains("`matrix` (no Matrix homeserver is configured"),
        "{people}"
    );
    let channels = said("NewChannel");
    assert!(
        channels.contains("Offered on this server: `webhook`, `slack`, `teams`, `mattermost`."),
        "{channels}"
    );
    assert!(
        channels.contains("`matrix` (no Matrix homeserver"),
        "{channels}"
    );
    assert!(
        channels.contains("`telegram` (no Telegram bot is configured (KLAXON_TELEGRAM_BOT_TOKEN))"),
        "{channels}"
    );
    assert!(
        channels.contains("`discord` (no Discord bot is configured (KLAXON_DISCORD_BOT_TOKEN))"),
        "{channels}"
    );
});

both!(openapi_document_lists_the_handlers, |app| {
    let doc = app.get("/api/openapi.json", &Auth::None).await.expect(200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for p in [
        "/api/auth/login",
        "/api/bootstrap",
        "/api/me",
        "/api/users/{id}/api-keys",
        "/api/teams/{team_id}/members",
        "/api/admin/settings",
        "/api/signup",
        "/api/teams/{team_id}/invites",
        "/api/teams/{team_id}/invites/{invite_id}",
        "/api/teams/{team_id}/oidc",
        "/api/teams/{team_id}/service-accounts",
        "/api/service-accounts",
        "/api/service-accounts/{user_id}/api-keys",
        "/api/service-accounts/{user_id}/api-keys/{key_id}",
        "/api/oidc/device",
        "/api/oidc/device/token",
        "/api/oidc/device/approve",
        "/api/oidc/login",
        "/api/oidc/callback",
    ] {
        assert!(
            paths.contains_key(p),
            "{p} missing from the OpenAPI document"
        );
    }
    assert!(doc["paths"]["/api/teams"]["post"].is_object());
    // The limits a client must respect are in the document.
    let invite = &doc["components"]["schemas"]["InviteRequest"]["properties"]["max_uses"];
    assert_eq!(
        (invite["minimum"].as_i64(), invite["maximum"].as_i64()),
        (Some(1), Some(100))
    );
    let signup = &doc["paths"]["/api/signup"]["post"]["responses"];
    for status in ["201", "400", "403", "409", "429"] {
        assert!(signup[status].is_object(), "sign-up answers {status}");
    }
    for path in ["/api/oidc/login", "/api/oidc/callback"] {
        let answers = &doc["paths"][path]["get"]["responses"];
        for status in ["302", "404"] {
            assert!(answers[status].is_object(), "{path} answers {status}");
        }
    }
    let callback = doc["paths"]["/api/oidc/callback"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let state = callback.iter().find(|p| p["name"] == "state").unwrap();
    assert_eq!(state["schema"]["maxLength"], 512);
});

both!(unknown_api_paths_are_json_404, |app| {
    for p in ["/api/nope", "/api/teams/1/nope/2", "/api"] {
        app.get(p, &Auth::None).await.expect_error(404, "not_found");
    }
    let r = app
        .send(Method::POST, "/api/nope", &Auth::None, Some(json!({})))
        .await;
    assert_eq!(r.status.as_u16(), 404);
});

both!(deep_links_get_the_entry_page, |app| {
    for p in [
        "/",
        "/teams/42",
        "/incidents/7",
        "/login",
        "/some/unknown/page",
    ] {
        let r = app.get(p, &Auth::None).await;
        // Unknown pages are still the app (its "Not found" view), with a 404 status.
        assert!(
            r.status.is_success() || r.status.is_redirection() || r.status == 404,
            "{p}: {}",
            r.status
        );
        if !r.status.is_redirection() {
            assert!(r.text.contains("<html"), "{p} is not the app page");
            let csp = r.headers["content-security-policy"].to_str().unwrap();
            assert!(
                csp.contains("default-src 'self'") && !csp.contains("http"),
                "{csp}"
            );
        } else {
            let to = r.headers["location"].to_str().unwrap();
            assert!(to.starts_with("/login"), "{p} redirected to {to}");
        }
    }
    // A path with a file extension is a site file or a 404, never the page.
    let r = app.get("/no-such-file.js", &Auth::None).await;
    assert_eq!(r.status.as_u16(), 404);
});

both!(site_files_have_etags_and_answer_304, |app| {
    let path = "/pkg/klaxon.css";
    let r = app.get(path, &Auth::None).await;
    assert_eq!(
        r.status.as_u16(),
        200,
        "{path} missing: build the site first (scripts/test.sh does)"
    );
    let etag = r.headers["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.len() > 10);
    assert!(r.headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
    let again = app
        .raw(Method::GET, path, &[("if-none-match", &etag)], vec![])
        .await;
    assert_eq!(again.status.as_u16(), 304);
    // The service worker's own policy lets it fetch this origin and show its icon on a page's
    // notification.
    let sw = app.get("/sw.js", &Auth::None).await;
    let csp = sw.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("connect-src 'self'") && csp.contains("img-src 'self'"),
        "{csp}"
    );
    let stale = app
        .raw(Method::GET, path, &[("if-none-match", "\"other\"")], vec![])
        .await;
    assert_eq!(stale.status.as_u16(), 200);
    assert_eq!(r.headers["cache-control"], "no-cache");
});

both!(
    pages_load_content_hashed_files_compressed_at_build_time,
    |app| {
        let page = app.get("/login", &Auth::None).await;
        let html = page.text;
        let js = html
            .split('"')
            .find(|s| s.starts_with("/pkg/") && s.ends_with("/klaxon.js"))
            .unwrap_or_else(|| panic!("no script in {html}"))
            .to_string();
        // The build's folder is named after its content: /pkg/{16 hex digits}/.
        let build = js.trim_end_matches("/klaxon.js").to_string();
        let hash = build.trim_start_matches("/pkg/");
        assert!(
            hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{js} carries no hash"
        );
        // The loader of the pages' chunks, which the script imports, is fetched beside it.
        assert!(
            html.contains(&format!(
                "<link rel=\"modulepreload\" href=\"{build}/__wasm_split."
            )),
            "{html}"
        );
        // The stylesheet is inline, so the first paint waits for no second request.
        let css = app
            .raw(Method::GET, "/pkg/klaxon.css", &[], vec![])
            .await
            .text;
        assert!(css.len() > 1_000, "the built stylesheet");
        assert!(
            html.contains(&format!("<style>{css}</style>")),
            "the page carries the stylesheet inline"
        );
        assert!(
            !html.contains("rel=\"stylesheet\""),
            "and does not fetch it"
        );
        assert!(
            page.headers["vary"]
                .to_str()
                .unwrap()
                .contains("service-worker-navigation-preload"),
            "{:?}",
            page.headers
        );
        // Asked for by the installed app's service worker, which keeps this build's stylesheet
        // and says so in its navigation preload header, the page links it instead; a worker
        // that keeps another build's gets it inline.
        let kept = format!("{build}/klaxon.css");
        for (header, linked) in [
            (kept.as_str(), true),
            ("/pkg/0123456789abcdef/klaxon.css", false),
        ] {
            let html = app
                .raw(
                    Method::GET,
                    "/login",
                    &[("service-worker-navigation-preload", header)],
                    vec![],
                )
                .await
                .text;
            let link = format!("<link rel=\"stylesheet\" href=\"{kept}\">");
            assert_eq!(html.contains(&link), linked, "{header}: {html}");
            assert_eq!(html.contains("<style>"), !linked, "{header}");
        }
        for ext in ["css", "js", "wasm"] {
            let path = format!("{build}/klaxon.{ext}");
            assert!(
                ext == "css" || html.contains(&path),
                "the page does not load {path}"
            );
            let plain = app.raw(Method::GET, &path, &[], vec![]).await;
            assert_eq!(plain.status.as_u16(), 200, "{path}");
            assert_eq!(
                plain.headers["cache-control"],
                "public, max-age=31536000, immutable"
            );
            assert!(plain.headers.get("content-encoding").is_none());
            for (accept, encoding) in [("gzip, deflate, br", "br"), ("gzip", "gzip")] {
                let packed = app
                    .raw(Method::GET, &path, &[("accept-encoding", accept)], vec![])
                    .await;
                assert_eq!(packed.headers["content-encoding"], encoding, "{path}");
                assert_eq!(packed.headers["vary"], "accept-encoding");
                assert!(
                    packed.bytes.len() < plain.bytes.len() / 2,
                    "{path} {encoding}"
                );
            }
        }
        // A folder with another hash is not this build's.
        let old = app
            .raw(Method::GET, "/pkg/0123456789abcdef/klaxon.js", &[], vec![])
            .await;
        assert_eq!(old.status.as_u16(), 404);
    }
);

both!(oversized_bodies_are_413, |app| {
    let big = format!(
        "{{\"username\":\"{}\",\"password\":\"x\"}}",
        "a".repeat(300 * 1024)
    );
    let r = app
        .raw(
            Method::POST,
            "/api/auth/login",
            &[("content-type", "application/json")],
            big.into_bytes(),
        )
        .await;
    r.expect_error(413, "payload_too_large");
});

both!(hostile_bodies_get_clear_400s_and_change_nothing, |app| {
    let ct = [("content-type", "application/json")];
    for (body, hint) in [
        (&b"{not json"[..], "not valid JSON"),
        (&b"{\"username\": 5, \"password\": \"x\"}"[..], "username"),
        (&b"{\"password\": \"long enough\"}"[..], "username"),
        (&b"[]"[..], ""),
        (&b"\xff\xfe"[..], ""),
    ] {
        let r = app
            .raw(Method::POST, "/api/bootstrap", &ct, body.to_vec())
            .await;
        let msg = r.expect_error(400, "invalid");
        assert!(msg.contains(hint), "{msg:?} should mention {hint:?}");
    }
    let r = app
        .raw(Method::POST, "/api/bootstrap", &[], b"{}".to_vec())
        .await;
    r.expect_error(400, "invalid");
    let long = "x".repeat(10_000);
    app.post(
        "/api/bootstrap",
        &Auth::None,
        json!({"username": long, "password": "long enough"}),
    )
    .await
    .expect_error(400, "invalid");
    app.post(
        "/api/bootstrap",
        &Auth::None,
        json!({"username": "ok", "password": "short"}),
    )
    .await
    .expect_error(400, "invalid");
    // Nothing was written: bootstrapping still works afterwards.
    assert!(
        app.get("/api/auth/config", &Auth::None).await.expect(200)["needs_bootstrap"]
            .as_bool()
            .unwrap()
    );
    let admin = app.bootstrap().await;
    // serde reads a struct from an array of its fields too; the document says object, and an
    // array creates nothing.
    let team = app.team(&admin, "web").await;
    let invites = format!("/api/teams/{team}/invites");
    for (path, body) in [
        ("/api/teams", json!(["db", null])),
        (invites.as_str(), json!([null, null])),
    ] {
        let msg = app
            .post(path, &admin, body)
            .await
            .expect_error(400, "invalid");
        assert!(msg.contains("object"), "{msg}");
    }
    let teams = app.get("/api/teams", &admin).await.expect(200);
    assert_eq!(teams.as_array().unwrap().len(), 1);
    let made = app.get(&invites, &admin).await.expect(200);
    assert_eq!(made.as_array().unwrap().len(), 0);
    for p in [
        "/api/users/abc",
        "/api/users/99999999999999999999",
        "/api/teams/1.5",
    ] {
        app.get(p, &admin).await.expect_error(400, "invalid");
    }
    app.get("/api/users/424242", &admin)
        .await
        .expect_error(404, "not_found");
});

both!(
    the_document_says_what_snooze_and_resolve_answer_and_take,
    |app| {
        let doc = app.get("/api/openapi.json", &Auth::None).await.expect(200);
        let snooze = &doc["paths"]["/api/incidents/{id}/snooze"]["post"];
        assert!(snooze["responses"]["409"].is_object(), "{snooze}");
        let resolve = &doc["paths"]["/api/incidents/{id}/resolve"]["post"];
        assert_ne!(
            resolve["requestBody"]["required"], true,
            "a bare POST resolves: {resolve}"
        );
        // And the server does as the document says: a bare POST resolves; snoozing it then is 409.
        let w = app.paging_world().await;
        let incident = app.fire(&w.key, "g1").await;
        app.send(
            Method::POST,
            &format!("/api/incidents/{incident}/resolve"),
            &w.admin,
            None,
        )
        .await
        .expect(200);
        app.post(
            &format!("/api/incidents/{incident}/snooze"),
            &w.admin,
            json!({"duration": "30m"}),
        )
        .await
        .expect_error(409, "conflict");
    }
);
