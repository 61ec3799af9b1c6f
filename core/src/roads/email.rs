//! Email (`smtp`): a page, a verification code or a test as one mail with a plain-text and an
//! HTML part. The subject of a page names severity, team and title; a page that can be
//! acknowledged links to the confirmation page (a mail scanner following links must not
//! acknowledge anything).

mod pool;
pub mod smtp;

pub use pool::MailError;
pub use smtp::{Mail, Mailer, SmtpConfig};

use super::message::{Message, IGNORE, TEST_TITLE};
use super::{Failure, Form, Info, Profile, Road, Sent, To};
use crate::Core;
use klaxon_domain::contact::CODE_TTL;
use klaxon_domain::text::escape_html;

static INFO: Info = Info {
    name: "email",
    label: "email",
    personal: Some(Profile {
        listed_as: "email",
        code_from: "Code from the email",
        in_chat: false,
        form: Some(Form {
            name: "Email",
            field: "Email address",
            input: "email",
            placeholder: "",
            hint: "A code is sent there; enter it above to have pages sent there too.",
            button: "Add email address",
            folded: None,
        }),
    }),
    channel: false,
    needs_code: true,
    shared_service: true,
    signed: false,
    per_minute: None,
};

/// The road; `None` without `KLAXON_SMTP_URL`.
pub struct EmailRoad(pub Option<Mailer>);

#[async_trait::async_trait]
impl Road for EmailRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        self.0
            .is_none()
            .then(|| "this server has no mail settings (KLAXON_SMTP_URL)".into())
    }

    fn counted_as(&self, target: &str) -> String {
        klaxon_domain::contact::mailbox_key(target)
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Some(mailer) = &self.0 else {
            return Err(Failure::permanent(self.unconfigured().unwrap_or_default()));
        };
        let public_url = &core.config.public_url;
        let profile = format!("{public_url}/me");
        let mut letter = match message {
            Message::Page(page) => {
                let mut letter = Letter::new(&page.subject, &page.title);
                letter.paragraphs(&page.text);
                if let Some(ack) = page.ack_page(public_url) {
                    letter.link("Acknowledge", &ack, true);
                }
                if let Some(link) = &page.link {
                    letter.link("Open in Klaxon", link, false);
                }
                letter
            }
            Message::Code(code) => {
                let mut letter = Letter::new("Your Klaxon verification code", "");
                letter.part(
                    &format!("Your Klaxon verification code is {code}\n\n"),
                    &format!(
                        "<p>Your Klaxon verification code is</p>\
                         <p style=\"font-size:2em;letter-spacing:0.2em\"><b>{code}</b></p>"
                    ),
                );
                letter.paragraphs(&format!(
                    "Enter it in Klaxon within {} minutes to receive pages at this address:",
                    CODE_TTL / 60
                ));
                letter.link(&profile, &profile, false);
                letter.paragraphs(IGNORE);
                letter
            }
            Message::Test => {
                let mut letter = Letter::new(TEST_TITLE, "");
                letter.paragraphs(&format!(
                    "Pages reach this address. Klaxon sends them from {}.",
                    mailer.from()
                ));
                letter.link(&profile, &profile, false);
                letter
            }
            Message::Announcement(_) | Message::Update(_) => {
                return Err(Failure::not_carried("email"))
            }
        };
        letter.html.push_str("</body></html>");
        let mail = Mail {
            to: to.target.clone(),
            subject: letter.subject,
            text: letter.text,
            html: letter.html,
        };
        mailer.send(mail).await.map_err(|e| Failure {
            reason: e.reason,
            permanent: e.refused,
            outage: !e.refused,
            ..Failure::default()
        })
    }
}

/// One mail as it is written: the plain-text part and the HTML part side by side.
struct Letter {
    subject: String,
    text: String,
    html: String,
}

impl Letter {
    /// A mail whose body starts with `heading` (none when empty).
    fn new(subject: &str, heading: &str) -> Letter {
        let mut letter = Letter {
            subject: subject.to_string(),
            text: String::new(),
            // A line of its own, so the body's lines are where quoted-printable wraps them.
            html: "<!doctype html><html><body style=\"font-family:sans-serif\">\n".into(),
        };
        if !heading.is_empty() {
            letter.text.push_str(&format!("{heading}\n\n"));
            letter
                .html
                .push_str(&format!("<h2>{}</h2>", escape_html(heading)));
        }
        letter
    }

    /// Text, a paragraph per blank line, line breaks kept.
    fn paragraphs(&mut self, text: &str) {
        self.text.push_str(&format!("{text}\n\n"));
        for para in text.split("\n\n") {
            let para = escape_html(para).replace('\n', "<br>");
            self.html.push_str(&format!("<p>{para}</p>"));
        }
    }

    /// Text and HTML as given.
    fn part(&mut self, text: &str, html: &str) {
        self.text.push_str(text);
        self.html.push_str(html);
    }

    /// A link: `label: url` in the text, an anchor in the HTML (`strong` for the one to tap).
    fn link(&mut self, label: &str, url: &str, strong: bool) {
        if label == url {
            self.text.push_str(&format!("{url}\n"));
        } else {
            self.text.push_str(&format!(
                "{}: {url}\n",
                label.trim_end_matches(" in Klaxon")
            ));
        }
        let style = if strong {
            " style=\"font-size:1.3em;font-weight:bold\""
        } else {
            ""
        };
        self.html.push_str(&format!(
            "<p><a href=\"{}\"{style}>{}</a></p>",
            escape_html(url),
            escape_html(label)
        ));
    }
}
