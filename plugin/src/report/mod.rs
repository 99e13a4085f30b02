//! Reports: the verdict of `check`, the estimate of `impact` as a tree, the findings of `replay` and `lint`, and the results of `test` as text, JSON or JUnit XML.

pub mod check;
pub mod impact;
pub mod json;
pub mod junit;
pub mod lint;
pub mod replay;
pub mod text;
