use super::*;

#[test]
fn metadata_and_link_local_are_refused_even_when_allowed() {
    let all = OutboundAllow::parse("0.0.0.0/0, ::/0").unwrap();
    for a in [
        "169.254.169.254",
        "100.100.100.200",
        "fe80::1",
        "fd00:ec2::254",
        "0.0.0.0",
        "224.0.0.1",
        "::ffff:169.254.169.254",
    ] {
        assert!(refusal(a.parse().unwrap(), &all).is_some(), "{a}");
    }
}

#[test]
fn internal_ranges_need_the_allow_list() {
    let none = OutboundAllow::default();
    for a in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "::1",
        "fd12::1",
        "::ffff:127.0.0.1",
        // IPv4 carried in IPv6: compatible, NAT64 (both prefixes), 6to4, Teredo (client
        // 127.0.0.1 stored inverted; server 10.0.0.1).
        "::7f00:1",
        "64:ff9b::7f00:1",
        "64:ff9b:1::a00:1",
        "2002:7f00:1::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "2001:0:a00:1::1",
    ] {
        assert!(refusal(a.parse().unwrap(), &none).is_some(), "{a}");
    }
    // A carried public address is judged as that address.
    assert!(refusal("64:ff9b::5db8:d70e".parse().unwrap(), &none).is_none());
    let lo = OutboundAllow::parse("127.0.0.0/8").unwrap();
    assert!(refusal("127.0.0.1".parse().unwrap(), &lo).is_none());
    assert!(refusal("10.0.0.1".parse().unwrap(), &lo).is_some());
    assert!(refusal("93.184.215.14".parse().unwrap(), &none).is_none());
    assert!(OutboundAllow::parse("nonsense").is_err());
}

/// A one-shot server on loopback answering `head` and then `body_len` bytes.
async fn answering(head: &'static str, body_len: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf).await;
        let _ = s.write_all(head.as_bytes()).await;
        let chunk = vec![b'x'; 64 * 1024];
        let mut sent = 0;
        while sent < body_len {
            if s.write_all(&chunk).await.is_err() {
                return;
            }
            sent += chunk.len();
        }
    });
    url
}

#[tokio::test]
async fn answers_are_read_up_to_the_cap_whoever_calls() {
    // ntfy and the identity provider go through `trusted`: the same cap and no redirects.
    let o = Outbound::trusted();
    let url = answering(
        "HTTP/1.1 200 OK\r\ncontent-length: 10485760\r\n\r\n",
        10 << 20,
    )
    .await;
    let f = o
        .send(o.request(reqwest::Method::GET, &url))
        .await
        .unwrap_err();
    assert_eq!(f.kind, FailureKind::Broken);
    assert!(f.sentence.contains("64 KiB"), "{}", f.sentence);
    let url = answering(
        "HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/\r\ncontent-length: 0\r\n\r\n",
        0,
    )
    .await;
    let a = o.send(o.request(reqwest::Method::GET, &url)).await.unwrap();
    assert_eq!(
        a.status.as_u16(),
        302,
        "a redirect is answered, not followed"
    );
    let url = answering("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n", 0).await;
    let f = o
        .send(o.request(reqwest::Method::GET, &url))
        .await
        .unwrap_err();
    assert_eq!(f.kind, FailureKind::Broken, "{}", f.sentence);
}

#[test]
fn urls_are_checked_before_any_connection() {
    let o = Outbound::for_users(OutboundAllow::default());
    assert!(o.check_url("ftp://example.com/").is_err());
    assert!(o.check_url("file:///etc/passwd").is_err());
    assert!(o.check_url("http://127.0.0.1:5432/").is_err());
    assert!(o.check_url("http://[::1]/").is_err());
    assert!(o
        .check_url("http://169.254.169.254/latest/meta-data/")
        .is_err());
    assert!(o.check_url("https://alertmanager.example.com/").is_ok());
}
