//! Renderers: the same findings as rustc-like text, JSON or SARIF.

pub mod human;
pub mod json;
pub mod sarif;
