//! What a block does on a gateway: it retires the lookup's session, and the lookup goes on
//! at once with a new one (a new exit address); the gateway rests only when
//! `upstream.gateway_block_threshold` fresh sessions in a row were refused (the platform
//! refuses the provider's whole pool), counted for the fleet ([`GatewayRefusals`]).
//!
//! A probe's lease (one that rests nothing) retires its own session too (cheap, and local to
//! that session) but never counts toward the threshold: a canary account a document refuses
//! must not rest the callers' gateway. A lookup retires at most the threshold's number of
//! sessions before it leaves a gateway without resting it, so that it ends.
//!
//! [`GatewayRefusals`]: crate::fleet::gateways::GatewayRefusals

use std::sync::atomic::Ordering;

use super::exit::Session;
use super::gateway::{AfterBlock, Gateway, Retirement};
use super::lease::RouteLease;

impl RouteLease<'_> {
    /// The current session of gateway `index` met a block: retire it, and say where to go.
    pub(super) async fn retire_session(&self, index: usize, gateway: &Gateway) -> AfterBlock {
        let exit = self.exit();
        let fresh = exit.session.as_ref().is_some_and(Session::is_fresh);
        // Lookups that share a session all see its block: only the one that retires it
        // counts the refusal.
        let retired_now = gateway.retire(&exit, Retirement::Blocked);
        if self.rests && fresh && retired_now {
            let in_a_row = self.routes.refusals.refused(index).await;
            if in_a_row >= self.routes.block_threshold {
                // The rest stands for the run; the count starts over after it.
                self.routes.refusals.cleared(index).await;
                return AfterBlock::PoolRefused;
            }
        }
        let retired = self.retired.fetch_add(1, Ordering::Relaxed) + 1;
        if retired >= self.routes.block_threshold {
            return AfterBlock::Leave;
        }
        self.go_to(index);
        AfterBlock::NewSession
    }

    /// Whether a block here would give this lookup a new session of its gateway.
    pub(super) fn keeps_retiring(&self) -> bool {
        self.route().gateway().is_some()
            && self.retired.load(Ordering::Relaxed) + 1 < self.routes.block_threshold
    }
}
