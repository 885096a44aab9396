//! The settings the demo runs with: every platform on its stand-in, one fresh key, the canary
//! on the stand-ins' accounts, and a short retry budget.

use std::net::SocketAddr;

use super::stand_ins::StandIns;
use crate::config::Settings;
use crate::config::canary::AccountList;
use crate::platform::Platform;

/// Seconds between the demo's canary rounds.
pub const CANARY_INTERVAL_SECONDS: u64 = 10;

/// The settings the demo runs with: `base` (defaults and environment) with every platform on
/// its stand-in and one fresh key.
pub fn settings(
    mut settings: Settings,
    listen: SocketAddr,
    stand_ins: &StandIns,
    key: String,
) -> Settings {
    settings.server.listen = listen;
    settings.auth.api_keys = vec![key];
    for &platform in Platform::ALL {
        settings.platform_mut(platform).base_url = format!("http://{}", stand_ins.addr(platform))
            .parse()
            .expect("loopback URL");
    }
    // The canary watches the stand-ins' accounts (invented, so their names may be shown).
    settings.canary.interval_seconds = CANARY_INTERVAL_SECONDS;
    settings.canary.public_names = true;
    settings.canary.accounts = Platform::ALL
        .iter()
        .map(|&p| {
            let names = stand_ins.plays(p).canary_accounts();
            let names = names.into_iter().map(str::to_owned).collect();
            (p.section().to_owned(), AccountList::Names(names))
        })
        .collect();
    // A short retry budget, so the throttled sample answers 429 within about a second instead of
    // retrying for the production budget (24 s with nothing printed meanwhile).
    settings.retry.max_attempts = settings.retry.max_attempts.min(2);
    settings.retry.base_delay_ms = settings.retry.base_delay_ms.min(200);
    settings.retry.max_delay_ms = settings.retry.max_delay_ms.min(1_000);
    settings.retry.max_total_ms = settings.retry.max_total_ms.min(1_500);
    settings
}

#[cfg(test)]
mod tests {
    use super::super::stand_ins::spawn_stand_ins;
    use super::*;

    #[tokio::test]
    async fn the_demo_watches_each_platforms_sample_accounts_every_ten_seconds() {
        let stand_ins = spawn_stand_ins().await.unwrap();
        let listen = "127.0.0.1:0".parse().unwrap();
        let s = settings(Settings::default(), listen, &stand_ins, "k".into());
        assert!(s.canary.is_on() && s.canary.public_names);
        assert_eq!(s.canary.interval_seconds, CANARY_INTERVAL_SECONDS);
        for &p in Platform::ALL {
            assert!(!s.canary.usernames(p).is_empty(), "{p}");
        }
        s.validate().expect("the demo's settings are valid");
    }
}
