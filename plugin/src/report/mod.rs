//! Reports: the verdict of `check` (on one request, or on a collection's), the estimate of `impact` as a tree, the findings of `replay` and `lint`, and the results of `test` as text, JSON or JUnit XML.

pub mod check;
pub mod collection;
pub mod impact;
pub mod json;
pub mod junit;
pub mod lint;
pub mod replay;
pub mod text;
