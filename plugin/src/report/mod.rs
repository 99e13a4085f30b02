//! Reports: the verdict of `check` (on one request, on a collection's, on a file of manifests', or on several named objects'), the estimate of `impact` as a tree, the findings of `replay` and `lint`, and the results of `test` as text, JSON or JUnit XML.

pub mod actions;
pub mod check;
pub mod collection;
pub mod impact;
pub mod json;
pub mod junit;
pub mod lint;
pub mod manifests;
pub mod replay;
pub mod sequence;
pub mod text;
