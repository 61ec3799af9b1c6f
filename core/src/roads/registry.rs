//! Every road, registered once at start from the install's settings. Paging, the announcer, the
//! profile, the team page and the API ask it which roads there are, which are offered here, and
//! for a road by its name.

use super::email::{EmailRoad, Mailer};
use super::matrix::{Matrix, MatrixRoad};
use super::ntfy::{Ntfy, NtfyRoad};
use super::phone::gateway::{Gateway, GatewayConfig};
use super::phone::twilio::{Twilio, TwilioConfig};
use super::phone::{Phones, Provider};
use super::webhook::WebhookRoad;
use super::webpush::WebPushRoad;
use super::Road;
use crate::outbound::Outbound;
use crate::Config;
use klaxon_domain::contact::{AddForm, ContactKind, RoadWords};
use std::sync::Arc;

/// The administrator's settings of the roads that need some, read at start: a road's settings
/// are one field here (and its flags in `klaxon serve`).
#[derive(Debug, Clone)]
pub struct RoadSettings {
    /// The ntfy server's base URL (`KLAXON_NTFY_URL`); no pages leave without it.
    pub ntfy_url: Option<String>,
    /// Bearer token for ntfy (`KLAXON_NTFY_TOKEN`).
    pub ntfy_token: Option<String>,
    /// `KLAXON_SMTP_*`; `None` sends no mail.
    pub smtp: Option<super::email::SmtpConfig>,
    /// `KLAXON_MATRIX_*`; `None`: no Matrix rooms.
    pub matrix: Option<super::matrix::MatrixConfig>,
    /// `KLAXON_TWILIO_*`: texts and calls by the Twilio REST API or a service speaking it.
    pub twilio: Option<TwilioConfig>,
    /// `KLAXON_SMS_GATEWAY_*`: texts by a team's own Android phone.
    pub sms_gateway: Option<GatewayConfig>,
    /// `KLAXON_PHONE_PROVIDER`: the default of several (`twilio`, `sms-gateway`).
    pub phone_provider: Option<String>,
    /// `KLAXON_PHONE_HOURLY_LIMIT`: texts and calls an hour, the whole install.
    pub phone_hourly_limit: i64,
    /// A number's own limits (one text a minute, three calls in 15 minutes). Always on in a
    /// server; `klaxon bench paging` turns them off to measure delivery itself.
    pub phone_number_limits: bool,
    /// `KLAXON_SLACK_SIGNING_SECRET`: the Slack app's, whose buttons and `/klaxon` command
    /// reach Klaxon (`chat::slack`); with it, Slack announcements offer buttons that act.
    pub slack_signing_secret: Option<String>,
    /// `KLAXON_SLACK_BOT_TOKEN` (and `_API_URL`): the Slack app's bot, which posts to channels
    /// given by id and edits their messages as incidents move.
    pub slack_bot: Option<super::slack::api::SlackBot>,
    /// `KLAXON_MATTERMOST_TOKEN`: the token of Klaxon's `/klaxon` slash command in Mattermost,
    /// which checks the command's requests and signs the buttons of Mattermost announcements
    /// (`chat::mattermost`); with it, those buttons act.
    pub mattermost_token: Option<String>,
    /// `KLAXON_MATTERMOST_URL` and `_BOT_TOKEN`: a Mattermost bot account, which posts to
    /// channels given by id and edits their messages as incidents move.
    pub mattermost_bot: Option<super::mattermost::api::MattermostBot>,
    /// `KLAXON_TELEGRAM_*`: the install's Telegram bot; `None`: no Telegram chats.
    pub telegram: Option<super::telegram::TelegramConfig>,
    /// `KLAXON_DISCORD_*`: the install's Discord bot; `None`: no Discord channels.
    pub discord: Option<super::discord::DiscordConfig>,
}

impl Default for RoadSettings {
    fn default() -> RoadSettings {
        RoadSettings {
            ntfy_url: None,
            ntfy_token: None,
            smtp: None,
            matrix: None,
            twilio: None,
            sms_gateway: None,
            phone_provider: None,
            phone_hourly_limit: super::phone::ceiling::HOURLY_LIMIT,
            phone_number_limits: true,
            slack_signing_secret: None,
            slack_bot: None,
            mattermost_token: None,
            mattermost_bot: None,
            telegram: None,
            discord: None,
        }
    }
}

pub struct Roads {
    all: Vec<Arc<dyn Road>>,
    /// The Matrix bot, which also proves rooms (`channels::proof`).
    matrix: Option<Arc<Matrix>>,
    /// The phone providers, which also check their own callbacks (`callbacks`).
    pub phones: Phones,
    pub twilio: Option<Arc<Twilio>>,
    pub sms_gateway: Option<Arc<Gateway>>,
}

impl Roads {
    /// The roads as `config` sets them up; an error names the setting that is wrong.
    pub fn new(config: &Config) -> Result<Roads, String> {
        let config = &config.roads;
        let ntfy = config
            .ntfy_url
            .as_deref()
            .map(|url| Ntfy::new(url, config.ntfy_token.as_deref()));
        let mailer = config.smtp.as_ref().map(Mailer::new).transpose()?;
        // The homeserver is the administrator's, as the ntfy server is: no address policy, so
        // an internal homeserver needs no network opened to everyone's URLs.
        let matrix = match &config.matrix {
            Some(m) => Some(Arc::new(Matrix::new(m, Outbound::trusted())?)),
            None => None,
        };
        let twilio = config.twilio.clone().map(|c| Arc::new(Twilio::new(c)));
        let sms_gateway = config
            .sms_gateway
            .clone()
            .map(|c| Arc::new(Gateway::new(c)));
        let mut providers: Vec<Arc<dyn Provider>> = Vec::new();
        if let Some(t) = &twilio {
            providers.push(t.clone());
        }
        if let Some(g) = &sms_gateway {
            providers.push(g.clone());
        }
        let phones = Phones::new(providers, config.phone_provider.as_deref())?;
        let all: Vec<Arc<dyn Road>> = vec![
            Arc::new(NtfyRoad(ntfy)),
            Arc::new(WebPushRoad),
            Arc::new(EmailRoad(mailer)),
            Arc::new(MatrixRoad(matrix.clone())),
            Arc::new(WebhookRoad),
            Arc::new(super::sms::SmsRoad(phones.clone())),
            Arc::new(super::voice::VoiceRoad(phones.clone())),
            Arc::new(super::slack::SlackRoad(config.slack_bot.clone())),
            Arc::new(super::teams::road()),
            Arc::new(super::mattermost::MattermostRoad(
                config.mattermost_bot.clone(),
            )),
            Arc::new(super::telegram::TelegramRoad(config.telegram.clone())),
            Arc::new(super::discord::DiscordRoad(config.discord.clone())),
        ];
        Ok(Roads {
            all,
            matrix,
            phones,
            twilio,
            sms_gateway,
        })
    }

    /// The road named `name` (`contact_methods.kind`, `channels.kind`).
    pub fn get(&self, name: &str) -> Option<&dyn Road> {
        self.all
            .iter()
            .find(|r| r.info().name == name)
            .map(|r| &**r)
    }

    /// The road named `name`, or why there is none here: the 409 of a road this install does not
    /// offer.
    pub fn usable(&self, name: &str) -> Result<&dyn Road, String> {
        let road = self
            .get(name)
            .ok_or_else(|| format!("{name} is not a road Klaxon knows"))?;
        match road.unconfigured() {
            Some(why) => Err(why),
            None => Ok(road),
        }
    }

    /// Names of the roads a person can add through the API here, in the order they are shown.
    pub fn offered_to_people(&self) -> Vec<&'static str> {
        self.offered(added_by_people)
    }

    /// Why a person cannot add `road` here: a road whose code cannot be sent. A topic can be
    /// chosen before the install has its ntfy server (pages by it wait, and say why, until it
    /// does).
    pub fn not_addable(road: &dyn Road) -> Option<String> {
        if road.info().needs_code {
            road.unconfigured()
        } else {
            None
        }
    }

    /// Every road a person can have, in the profile's words, each with its form when a person
    /// can add one here.
    pub fn profile_words(&self) -> Vec<RoadWords> {
        let mut words = Vec::new();
        for road in &self.all {
            let Some(profile) = &road.info().personal else {
                continue;
            };
            let Some(kind) = ContactKind::parse(road.info().name) else {
                continue;
            };
            let addable = Roads::not_addable(&**road).is_none();
            words.push(RoadWords {
                kind,
                listed_as: profile.listed_as.into(),
                code_from: profile.code_from.into(),
                form: profile.form.as_ref().filter(|_| addable).map(|f| AddForm {
                    name: f.name.into(),
                    field: f.field.into(),
                    input: f.input.into(),
                    placeholder: f.placeholder.into(),
                    hint: f.hint.into(),
                    button: f.button.into(),
                    folded: f.folded.map(Into::into),
                }),
            });
        }
        words
    }

    /// Names of the roads a team can announce on here.
    pub fn offered_to_channels(&self) -> Vec<&'static str> {
        self.offered(|r| r.info().channel)
    }

    /// Names of every road a person could add through the API, offered here or not.
    pub fn all_personal(&self) -> Vec<&'static str> {
        self.names(added_by_people)
    }

    /// Names of every road a team could announce on, offered here or not.
    pub fn all_channel(&self) -> Vec<&'static str> {
        self.names(|r| r.info().channel)
    }

    fn names(&self, which: impl Fn(&dyn Road) -> bool) -> Vec<&'static str> {
        self.all
            .iter()
            .filter(|r| which(&***r))
            .map(|r| r.info().name)
            .collect()
    }

    fn offered(&self, which: impl Fn(&dyn Road) -> bool) -> Vec<&'static str> {
        self.all
            .iter()
            .filter(|r| which(&***r) && r.unconfigured().is_none())
            .map(|r| r.info().name)
            .collect()
    }

    /// A road's name in a sentence; the stored name for one Klaxon does not know.
    pub fn label<'a>(&self, name: &'a str) -> &'a str {
        self.get(name).map_or(name, |r| r.info().label)
    }

    pub fn matrix_bot(&self) -> Option<&Arc<Matrix>> {
        self.matrix.as_ref()
    }
}

/// Whether a person adds the road's methods through the API (not by linking a chat account).
fn added_by_people(road: &dyn Road) -> bool {
    road.info().personal.as_ref().is_some_and(|p| !p.in_chat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms(roads: &Roads) -> Vec<(&'static str, Option<String>)> {
        roads
            .profile_words()
            .into_iter()
            .map(|w| (w.kind.as_str(), w.form.map(|f| f.field)))
            .collect()
    }

    // The mail pool is made inside a runtime.
    #[tokio::test]
    async fn the_profile_offers_a_form_only_where_its_code_can_be_sent() {
        let bare = Roads::new(&Config::default()).unwrap();
        // No mail or Matrix settings: their codes cannot be sent, so neither is offered; a topic
        // can be chosen before the ntfy server is set, and a webhook takes its code by itself.
        assert_eq!(
            forms(&bare),
            vec![
                ("ntfy", Some("Another ntfy topic".into())),
                ("webpush", None),
                ("email", None),
                ("matrix", None),
                ("webhook", Some("Webhook URL".into())),
                ("sms", None),
                ("voice", None),
                ("telegram", None),
            ]
        );
        let mut mail = Config::default();
        mail.roads.smtp = Some(super::super::email::SmtpConfig {
            url: "smtp://127.0.0.1:2525".into(),
            from: "klaxon@example.org".into(),
            ca_pem: None,
        });
        let with_mail = Roads::new(&mail).unwrap();
        let email = with_mail
            .profile_words()
            .into_iter()
            .find(|w| w.kind == ContactKind::Email)
            .unwrap();
        assert_eq!(email.form.unwrap().field, "Email address");
        assert_eq!(email.code_from, "Code from the email");
        // Web Push has no form (a browser adds itself), nor Telegram (linking the account in a
        // private chat with the bot adds it); every other road has one exactly when the API
        // would take it.
        for (name, form) in forms(&with_mail) {
            let road = with_mail.get(name).unwrap();
            let addable = Roads::not_addable(road).is_none();
            let elsewhere = name == "webpush" || name == "telegram";
            assert_eq!(addable, form.is_some() || elsewhere, "{name}");
        }
        assert!(!with_mail.all_personal().contains(&"telegram"));
    }
}
