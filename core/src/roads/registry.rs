//! Every road, registered once at start from the install's settings. Paging, the announcer, the
//! profile, the team page and the API ask it which roads there are, which are offered here, and
//! for a road by its name.

use super::email::{EmailRoad, Mailer};
use super::matrix::{Matrix, MatrixRoad};
use super::ntfy::{Ntfy, NtfyRoad};
use super::webhook::WebhookRoad;
use super::webpush::WebPushRoad;
use super::Road;
use crate::outbound::Outbound;
use crate::Config;
use std::sync::Arc;

pub struct Roads {
    all: Vec<Arc<dyn Road>>,
    /// The Matrix bot, which also proves rooms (`channels::proof`).
    matrix: Option<Arc<Matrix>>,
}

impl Roads {
    /// The roads as `config` sets them up; an error names the setting that is wrong.
    pub fn new(config: &Config) -> Result<Roads, String> {
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
        let all: Vec<Arc<dyn Road>> = vec![
            Arc::new(NtfyRoad(ntfy)),
            Arc::new(WebPushRoad),
            Arc::new(EmailRoad(mailer)),
            Arc::new(MatrixRoad(matrix.clone())),
            Arc::new(WebhookRoad),
            Arc::new(super::slack::road()),
            Arc::new(super::teams::road()),
        ];
        Ok(Roads { all, matrix })
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

    /// Names of the roads a person can add here, in the order they are shown.
    pub fn offered_to_people(&self) -> Vec<&'static str> {
        self.offered(|r| r.info().personal)
    }

    /// Names of the roads a team can announce on here.
    pub fn offered_to_channels(&self) -> Vec<&'static str> {
        self.offered(|r| r.info().channel)
    }

    /// Names of every road a person could add, offered here or not.
    pub fn all_personal(&self) -> Vec<&'static str> {
        self.names(|r| r.info().personal)
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
