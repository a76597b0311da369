//! Renderers: the same findings as rustc-like text or JSON.

pub mod human;
pub mod json;
