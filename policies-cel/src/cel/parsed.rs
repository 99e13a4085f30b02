//! A parsed expression with the byte offset of every node: where the lint's findings and the
//! type checker's errors put their caret.
//!
//! The `cel` parser records each node's offset while it parses but hands that table out only
//! with a parse error. So the expression is parsed twice: once as written (the tree), and once
//! followed by a stray `)` on a line of its own, which the parser reports as extraneous input
//! after building the very same tree with the very same ids — and that error carries the
//! offsets. The table is used only if it agrees with the tree (every identifier and literal sits
//! where its text is); otherwise findings point at the start of the expression. The second parse
//! happens on the first offset asked for: most expressions the lint reads get no finding.

use std::cell::OnceCell;
use std::collections::HashMap;

use crate::cel::compile::{MAX_RECURSION_DEPTH, parser};
use crate::cel::nesting::deeper_than;
use crate::cel::quotes::rewrite_quote_escapes;
use crate::cel::upstream::common::ast::{EntryExpr, Expr, IdedExpr};

/// A parsed expression and where its nodes are.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) root: IdedExpr,
    source: String,
    /// Node id to byte offset in `source`, built on first use ([`offset_table`]).
    offsets: OnceCell<HashMap<u64, usize>>,
}

impl Parsed {
    /// Parses `source`; `None` when it does not parse or nests past the parser's bound (the
    /// loader reports both).
    pub(crate) fn new(source: &str) -> Option<Self> {
        if deeper_than(source, usize::from(MAX_RECURSION_DEPTH)).is_some() {
            return None;
        }
        let rewritten = rewrite_quote_escapes(source);
        let root = parser().parse(&rewritten.text).ok()?;
        Some(Self {
            root,
            source: source.to_owned(),
            offsets: OnceCell::new(),
        })
    }

    /// The byte offset of `node` in the source (0 when unknown). A call or macro is placed at
    /// its function's name rather than at its opening parenthesis.
    pub(crate) fn offset(&self, node: &IdedExpr) -> usize {
        self.offset_of(node.id)
    }

    /// [`Parsed::offset`] of the node numbered `id`.
    pub(crate) fn offset_of(&self, id: u64) -> usize {
        let offsets = self
            .offsets
            .get_or_init(|| offset_table(&self.source, &self.root));
        let offset = offsets.get(&id).copied().unwrap_or(0);
        if self
            .source
            .get(offset..)
            .is_some_and(|rest| rest.starts_with('('))
        {
            let before = &self.source[..offset];
            let name = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
            if name.len() < before.len() {
                return name.len();
            }
        }
        offset
    }
}

/// `a.b.c` as one dotted name, when it is made of selections on an identifier `is_free` accepts
/// (one that names no variable, so that the whole may name a type or a namespaced function).
pub(crate) fn qualified_name(expr: &IdedExpr, is_free: &dyn Fn(&str) -> bool) -> Option<String> {
    match &expr.expr {
        Expr::Ident(name) if is_free(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => {
            let mut prefix = qualified_name(&select.operand, is_free)?;
            prefix.push('.');
            prefix.push_str(&select.field);
            Some(prefix)
        }
        _ => None,
    }
}

/// Where each node of `root`, the tree of `source`, starts in `source`; empty when the probe's
/// table does not agree with the tree.
fn offset_table(source: &str, root: &IdedExpr) -> HashMap<u64, usize> {
    let rewritten = rewrite_quote_escapes(source);
    let mut offsets = probe_offsets(&rewritten.text);
    if !agrees(root, &rewritten.text, &offsets) {
        offsets.clear();
    }
    for offset in offsets.values_mut() {
        *offset = rewritten.original_offset(*offset);
    }
    offsets
}

/// The offset table of `source`, from the error of a parse with a trailing `)`.
fn probe_offsets(source: &str) -> HashMap<u64, usize> {
    let Err(errors) = parser().parse(&format!("{source}\n)")) else {
        return HashMap::new();
    };
    let Some(info) = errors.errors.iter().find_map(|e| e.source_info.clone()) else {
        return HashMap::new();
    };
    let mut table = HashMap::new();
    let mut id = 1;
    let mut misses = 0;
    // Ids are dense from 1; stop after a run of unknown ids.
    while misses < 64 {
        match info.offset_for(id) {
            Some((start, _)) => {
                table.insert(id, start as usize);
                misses = 0;
            }
            None => misses += 1,
        }
        id += 1;
    }
    table
}

/// True when every identifier and literal of the tree sits where the table says.
fn agrees(node: &IdedExpr, source: &str, offsets: &HashMap<u64, usize>) -> bool {
    let at = |text: &str| {
        offsets
            .get(&node.id)
            .and_then(|&offset| source.get(offset..))
            .is_some_and(|rest| rest.starts_with(text))
    };
    let here = match &node.expr {
        // Macro expansions name their accumulator `@result`, placed at the macro.
        Expr::Ident(name) if name.starts_with('@') => true,
        Expr::Ident(name) => at(name),
        // Literals are not checked: macro expansions add their own (`true` for `all`) at the macro.
        _ => true,
    };
    here && children(node)
        .into_iter()
        .all(|child| agrees(child, source, offsets))
}

/// The direct sub-expressions of `node`.
pub(crate) fn children(node: &IdedExpr) -> Vec<&IdedExpr> {
    match &node.expr {
        Expr::Call(call) => call.target.as_deref().into_iter().chain(&call.args).collect(),
        Expr::Comprehension(c) => vec![&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => entries(&map.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Select(select) => vec![&select.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

fn entries(entries: &[crate::cel::upstream::common::ast::IdedEntryExpr]) -> Vec<&IdedExpr> {
    entries
        .iter()
        .flat_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
            EntryExpr::StructField(f) => vec![&f.value],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::upstream::common::ast::LiteralValue;

    fn find<'a>(node: &'a IdedExpr, pred: &dyn Fn(&IdedExpr) -> bool) -> Option<&'a IdedExpr> {
        if pred(node) {
            return Some(node);
        }
        children(node).into_iter().find_map(|c| find(c, pred))
    }

    #[test]
    fn every_node_has_its_offset() {
        let source = "object.spec.replicas > 2 &&\n  false";
        let parsed = Parsed::new(source).unwrap();
        let literal = find(&parsed.root, &|n| matches!(n.expr, Expr::Literal(_))).unwrap();
        assert_eq!(parsed.offset(literal), source.find('2').unwrap());
        let falsity = find(
            &parsed.root,
            &|n| matches!(&n.expr, Expr::Literal(LiteralValue::Boolean(b)) if !*b.inner()),
        )
        .unwrap();
        assert_eq!(parsed.offset(falsity), source.find("false").unwrap());
        let and = find(
            &parsed.root,
            &|n| matches!(&n.expr, Expr::Call(c) if c.func_name == "_&&_"),
        )
        .unwrap();
        assert_eq!(parsed.offset(and), source.find("&&").unwrap());
    }

    #[test]
    fn a_trailing_comment_does_not_swallow_the_probe() {
        let parsed = Parsed::new("object.a == 1 // the end").unwrap();
        let literal = find(&parsed.root, &|n| matches!(n.expr, Expr::Literal(_))).unwrap();
        assert_eq!(parsed.offset(literal), 12);
    }

    #[test]
    fn nothing_for_what_does_not_parse() {
        assert!(Parsed::new("object.(").is_none());
    }
}
