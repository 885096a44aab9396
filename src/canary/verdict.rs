//! What one probe says about its source: the verdict, and how a source's verdict is drawn
//! from its accounts'.
//!
//! | The document said | Verdict |
//! |---|---|
//! | a profile with the account's name, followers given (and, on a document that gives it for a public account, the post count) | `ok` |
//! | a profile of another name, or without those counts | `changed` |
//! | it could not be read (`extraction_failed`; an inconclusive answer the site calls unreadable on its own: the photo-share JSON unreadable or with a status it never sends, the embed with a client error other than its 400) | `changed` |
//! | the platform says the account does not exist | `missing` |
//! | a block signal, the breaker open, every proxy resting, a region lock, the photo-share JSON's unconfirmed `"user": null` | `blocked` |
//! | unreachable, timed out, 5xx after its retry, an unexpected status or redirect | `unreachable` |
//! | the source withholds this kind of account by design (the short-video embed's 400 "private or missing", the photo-share JSON's business-account 400) | no verdict: skipped |
//! | nothing was sent: our own outbound budget is spent (`overloaded`) | no verdict: skipped |
//!
//! A skipped probe is counted (`profile_lookup_canary_skipped_total`) and says nothing: the
//! embed's 400 is "private or missing" alike, never a verdict of absence, and our budget is not
//! the platform's doing.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::finding::Finding;
use crate::username::Username;

/// A source's state as one canary round found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// A profile with the requested name and the counts the source gives.
    Ok,
    /// The platform refused us; the reader is not at fault.
    Blocked,
    /// Fetched but unreadable: the document's shape moved (the page is kept by drift
    /// capture when `upstream.capture_dir` is set).
    Changed,
    /// The platform says the canary account is gone: pick another one.
    Missing,
    /// The platform could not be reached, timed out or failed.
    Unreachable,
}

impl Verdict {
    /// Every verdict, most severe first: a source's verdict is the most severe of its
    /// accounts'.
    pub const BY_SEVERITY: [Verdict; 5] = [
        Verdict::Changed,
        Verdict::Blocked,
        Verdict::Unreachable,
        Verdict::Missing,
        Verdict::Ok,
    ];

    /// The label in metrics, `/status` and the CLI.
    pub const fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Blocked => "blocked",
            Verdict::Changed => "changed",
            Verdict::Missing => "missing",
            Verdict::Unreachable => "unreachable",
        }
    }

    /// The position in [`Verdict::BY_SEVERITY`]: lower is more severe.
    fn rank(self) -> usize {
        Verdict::BY_SEVERITY
            .iter()
            .position(|v| *v == self)
            .unwrap_or(usize::MAX)
    }

    /// The more severe of two verdicts (the first of equals).
    pub fn worse(self, other: Verdict) -> Verdict {
        if other.rank() < self.rank() {
            other
        } else {
            self
        }
    }
}

/// What one probe says about its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// A verdict, with its reason (none for `ok`).
    Verdict(Verdict, Option<String>),
    /// Nothing about the source; the reason says why (a metric label).
    Skipped(&'static str),
}

impl Judged {
    /// The verdict, if the probe gave one.
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Judged::Verdict(v, _) => Some(*v),
            Judged::Skipped(_) => None,
        }
    }

    /// The reason shown beside the verdict.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Judged::Verdict(_, reason) => reason.as_deref(),
            Judged::Skipped(why) => Some(why),
        }
    }

    /// The label of the table's verdict column: the verdict, or `skipped`.
    pub fn label(&self) -> &'static str {
        self.verdict().map_or("skipped", Verdict::label)
    }
}

/// The verdict of one probe of `account` on a document that does (`gives_posts`) or does not
/// give a public account's post count.
pub fn judge(account: &Username, finding: &Finding, gives_posts: bool) -> Judged {
    let verdict = |v, why: &str| Judged::Verdict(v, Some(why.to_owned()));
    match finding {
        Finding::Profile(profile) => {
            let summary = profile.summary();
            if !account.matches(&summary.username) {
                return verdict(Verdict::Changed, "the profile read is another account's");
            }
            if summary.followers.is_none() {
                return verdict(Verdict::Changed, "the profile read has no follower count");
            }
            if gives_posts && !summary.private && summary.posts.1.is_none() {
                let why = format!("the profile read has no {} count", summary.posts.0);
                return Judged::Verdict(Verdict::Changed, Some(why));
            }
            Judged::Verdict(Verdict::Ok, None)
        }
        Finding::NotFound => verdict(
            Verdict::Missing,
            "the platform says the account does not exist",
        ),
        Finding::Blocked(reason) => verdict(Verdict::Blocked, reason),
        Finding::Unreadable(why) => verdict(Verdict::Changed, why),
        Finding::Unreachable(why) => verdict(Verdict::Unreachable, why),
        Finding::Withheld(why) => Judged::Skipped(why),
        Finding::NotSent => Judged::Skipped("overloaded"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::short_video::ShortVideoProfile;
    use crate::platform::{Platform, Profile};
    use stand_in::short_video as sv;

    fn name(raw: &str) -> Username {
        Username::parse(Platform::ShortVideo, raw).unwrap()
    }

    fn profile(user: &sv::SampleUser) -> Finding {
        let body: ShortVideoProfile = serde_json::from_value(sv::expected_body(user)).unwrap();
        Finding::Profile(Box::new(Profile::new(&body)))
    }

    #[test]
    fn a_profile_is_ok_only_with_its_name_and_counts() {
        let public = sv::PUBLIC_USER;
        let asked = name(public.unique_id);
        assert_eq!(
            judge(&asked, &profile(&public), true),
            Judged::Verdict(Verdict::Ok, None)
        );
        let other = judge(&name("someone.else"), &profile(&public), true);
        assert_eq!(other.verdict(), Some(Verdict::Changed));
        let no_videos = sv::SampleUser {
            video_count: None,
            ..public
        };
        let on_page = judge(&asked, &profile(&no_videos), true);
        assert_eq!(on_page.verdict(), Some(Verdict::Changed));
        assert!(on_page.reason().unwrap().contains("videos"));
        // The embed never gives the video count; a private account hides it everywhere.
        assert_eq!(
            judge(&asked, &profile(&no_videos), false).verdict(),
            Some(Verdict::Ok)
        );
        let private = sv::PRIVATE_USER;
        assert_eq!(
            judge(&name(private.unique_id), &profile(&private), true).verdict(),
            Some(Verdict::Ok)
        );
        let no_followers = sv::SampleUser {
            follower_count: None,
            ..public
        };
        assert_eq!(
            judge(&asked, &profile(&no_followers), false).verdict(),
            Some(Verdict::Changed)
        );
    }

    #[test]
    fn every_other_finding_has_one_verdict_or_none() {
        let asked = name("sunny.kitchen.lab");
        let cases = [
            (Finding::NotFound, Some(Verdict::Missing)),
            (Finding::Blocked("http_429"), Some(Verdict::Blocked)),
            (Finding::Unreadable("moved".into()), Some(Verdict::Changed)),
            (
                Finding::Unreachable("HTTP 502".into()),
                Some(Verdict::Unreachable),
            ),
            (Finding::Withheld("embed_private_or_missing"), None),
            (Finding::NotSent, None),
        ];
        for (finding, expected) in cases {
            assert_eq!(
                judge(&asked, &finding, true).verdict(),
                expected,
                "{finding:?}"
            );
        }
        assert_eq!(
            judge(&asked, &Finding::NotSent, true),
            Judged::Skipped("overloaded")
        );
    }

    #[test]
    fn the_worse_verdict_wins() {
        assert_eq!(Verdict::Ok.worse(Verdict::Changed), Verdict::Changed);
        assert_eq!(Verdict::Changed.worse(Verdict::Blocked), Verdict::Changed);
        assert_eq!(
            Verdict::Missing.worse(Verdict::Unreachable),
            Verdict::Unreachable
        );
        assert_eq!(Verdict::Ok.worse(Verdict::Ok), Verdict::Ok);
        for v in Verdict::BY_SEVERITY {
            assert!(
                crate::telemetry::canary::VERDICTS.contains(&v.label()),
                "{v:?}"
            );
        }
    }
}
