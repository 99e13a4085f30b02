//! Placeholder: being written.
#[derive(Debug)]
pub(crate) struct BridgeCall;
