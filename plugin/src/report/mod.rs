//! Reports: the verdict of `check`, and the results of `test` as text, JSON or JUnit XML.

pub mod check;
pub mod json;
pub mod junit;
pub mod text;
