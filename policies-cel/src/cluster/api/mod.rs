//! Reading a cluster through its API: which resources a model needs ([`kinds`]) and what of
//! each object it may keep ([`strip`]). Pure data, no client: the gateway's watches and the
//! plugin's lists use it.

pub mod kinds;
pub mod strip;
