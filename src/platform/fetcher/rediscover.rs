//! Learning again what a site learns from answers, when an answer said it moved (a query's id
//! retired): the documents the site names ([`Site::rediscovery`]), read in the background on a
//! route of their own, as a probe (through the outbound budget; never recording into the
//! breaker, never resting a route), each handed to [`Site::learn_from`], the links it names
//! ([`Site::linked`]) read next, until the site learned what it looked for.

use std::collections::VecDeque;
use std::sync::Arc;

use super::Fetcher;
use super::send::{Sent, send};
use crate::platform::site::Site;
use crate::upstream::egress::RouteLease;
use crate::upstream::gate::{Mode, Signal};

/// The most documents one rediscovery reads (a page, the login page, its bundles).
const MAX_DOCUMENTS: usize = 34;

impl<S: Site> Fetcher<S> {
    /// Starts a rediscovery in the background when the site has one due.
    pub(super) async fn rediscover_if_due(&self) {
        let urls = self.site.rediscovery().await;
        if urls.is_empty() {
            return;
        }
        let Some(me) = self.me.upgrade() else {
            return;
        };
        tokio::spawn(async move { me.rediscover(urls.into()).await });
    }

    async fn rediscover(self: Arc<Self>, mut queue: VecDeque<url::Url>) {
        let platform = S::PLATFORM.as_str();
        let Ok(ticket) = self.gate.admit(Mode::Probe).await else {
            return;
        };
        let route = match self.egress.lease(false).await {
            Ok(route) => route,
            Err(_) => {
                self.gate.record(ticket, Signal::Inconclusive).await;
                return;
            }
        };
        let mut read = 0;
        while let Some(url) = queue.pop_front() {
            if read == MAX_DOCUMENTS {
                break;
            }
            read += 1;
            let headers = |_: &RouteLease<'_>| self.site.discovery_headers();
            let until = super::send::Deadline {
                at: std::time::Instant::now() + self.deadline,
                head: self.head_timeout,
            };
            let sent = send(
                &route,
                &self.gate,
                Mode::Probe,
                (&url, None),
                headers,
                &super::send::nobody,
                until,
            );
            let response = match sent.await {
                Sent::Answered(response) => response,
                Sent::Failed(err) => {
                    tracing::info!(platform, error = %err, "a rediscovery read failed");
                    continue;
                }
                Sent::Refused(_) => break,
            };
            if self.site.learn_from(&response).await {
                break;
            }
            queue.extend(self.site.linked(&response).await);
        }
        tracing::info!(platform, documents = read, "rediscovery done");
        self.gate.record(ticket, Signal::Inconclusive).await;
    }
}
