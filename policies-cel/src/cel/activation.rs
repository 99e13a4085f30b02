//! What an expression reads at run time: the root variables, lazily computed `impact`, and
//! composited variables that are evaluated on first use and remembered.

use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::sync::Arc;

use crate::cel::{Budget, EvalError, Program, Root, Value};
use crate::cluster::ClusterView;
use crate::history::RequestHistory;

/// The run-time values an expression can read.
pub trait Activation {
    /// The value of a root variable. Absent roots read as `null` (e.g. `oldObject` on CREATE).
    fn root(&self, root: Root) -> Result<Value, EvalError>;

    /// The value of the composited variable at `index`, evaluated on first use.
    fn variable(&self, index: usize, budget: &Budget) -> Result<Value, EvalError>;

    /// The top-level field `field` of root `root`, read without building the whole root, when
    /// this activation can: `Some(None)` when the root (a map or null) has no such field, `None`
    /// when it cannot tell (the interpreter selects from [`Activation::root`] instead). It must
    /// answer what selecting from the whole root would.
    fn root_field(&self, _root: Root, _field: &str) -> Option<Option<Value>> {
        None
    }

    /// The cluster the `cluster` library looks into, when there is a model.
    fn cluster(&self) -> Option<&dyn ClusterView> {
        None
    }

    /// The history the `history` library answers from, when there is one.
    fn history(&self) -> Option<&RequestHistory<'_>> {
        None
    }
}

/// The compiled programs of composited variables, in declaration order: a policy's own list is
/// borrowed as it is, so a request builds nothing to read it.
pub trait VariablePrograms: Sync {
    /// The program of the variable at `index`.
    fn program(&self, index: usize) -> Option<&Program>;
    /// How many variables there are.
    fn count(&self) -> usize;
}

impl VariablePrograms for Vec<Arc<Program>> {
    fn program(&self, index: usize) -> Option<&Program> {
        self.get(index).map(|p| &**p)
    }

    fn count(&self) -> usize {
        self.len()
    }
}

/// No variables.
static NO_VARIABLES: Vec<Arc<Program>> = Vec::new();

/// Composited variables: evaluated in the activation that reads them, at most once each.
pub struct LazyVariables<'a> {
    programs: &'a dyn VariablePrograms,
    memo: RefCell<Vec<Option<Result<Value, EvalError>>>>,
}

impl<'a> LazyVariables<'a> {
    /// Variables from their compiled programs, in declaration order.
    pub fn new(programs: &'a dyn VariablePrograms) -> Self {
        let memo = RefCell::new(vec![None; programs.count()]);
        Self { programs, memo }
    }

    fn get(&self, index: usize, activation: &dyn Activation, budget: &Budget) -> Result<Value, EvalError> {
        if let Some(Some(known)) = self.memo.borrow().get(index) {
            return known.clone();
        }
        let program = self
            .programs
            .program(index)
            .ok_or_else(|| EvalError::Other(format!("variable #{index} is not declared")))?;
        let result = program.eval(activation, budget);
        if let Some(slot) = self.memo.borrow_mut().get_mut(index) {
            *slot = Some(result.clone());
        }
        result
    }
}

impl fmt::Debug for LazyVariables<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyVariables")
            .field("count", &self.programs.count())
            .finish()
    }
}

/// Computes a root's value on first use (`impact`; `object`, `oldObject` and `namespaceObject`,
/// which most expressions never read).
pub type LazyRoot<'a> = &'a dyn Fn() -> Result<Value, EvalError>;

/// Reads one top-level field of a root without building the whole root (see
/// [`Activation::root_field`]).
pub type LazyField<'a> = &'a dyn Fn(&str) -> Option<Option<Value>>;

/// The ordinary activation: root values set by the caller or computed on first read, lazy
/// variables.
pub struct Bindings<'a> {
    roots: [Option<Value>; Root::ALL.len()],
    lazy: [Option<LazyRoot<'a>>; Root::ALL.len()],
    fields: [Option<LazyField<'a>>; Root::ALL.len()],
    computed: [OnceCell<Result<Value, EvalError>>; Root::ALL.len()],
    variables: LazyVariables<'a>,
    cluster: Option<&'a dyn ClusterView>,
    history: Option<&'a RequestHistory<'a>>,
}

impl<'a> Bindings<'a> {
    /// Bindings with no roots set and no variables.
    pub fn new() -> Self {
        Self {
            roots: Default::default(),
            lazy: Default::default(),
            fields: Default::default(),
            computed: Default::default(),
            variables: LazyVariables::new(&NO_VARIABLES),
            cluster: None,
            history: None,
        }
    }

    /// Supplies a root through a function called only if an expression reads it (at most once).
    pub fn with_lazy(mut self, root: Root, compute: LazyRoot<'a>) -> Self {
        self.set_lazy(root, compute);
        self
    }

    /// [`Bindings::with_lazy`] in place: a policy's bindings are set where they live instead of
    /// being moved through each builder call (a slot per root for its value, its function and
    /// its result make them large).
    pub fn set_lazy(&mut self, root: Root, compute: LazyRoot<'a>) -> &mut Self {
        self.lazy[root.index()] = Some(compute);
        self
    }

    /// Lets expressions read single fields of a lazy root through `field` until something reads
    /// the root whole.
    pub fn set_lazy_fields(&mut self, root: Root, field: LazyField<'a>) -> &mut Self {
        self.fields[root.index()] = Some(field);
        self
    }

    /// Lets the `cluster` library look into `view`.
    pub fn with_cluster(mut self, view: &'a dyn ClusterView) -> Self {
        self.set_cluster(view);
        self
    }

    /// [`Bindings::with_cluster`] in place.
    pub fn set_cluster(&mut self, view: &'a dyn ClusterView) -> &mut Self {
        self.cluster = Some(view);
        self
    }

    /// Lets the `history` library answer from `history`.
    pub fn with_history(mut self, history: &'a RequestHistory<'a>) -> Self {
        self.set_history(history);
        self
    }

    /// [`Bindings::with_history`] in place.
    pub fn set_history(&mut self, history: &'a RequestHistory<'a>) -> &mut Self {
        self.history = Some(history);
        self
    }

    /// Sets a root variable.
    pub fn set(&mut self, root: Root, value: Value) -> &mut Self {
        self.roots[root.index()] = Some(value);
        self
    }

    /// Sets a root variable (builder form).
    pub fn with(mut self, root: Root, value: Value) -> Self {
        self.set(root, value);
        self
    }

    /// Supplies `impact` through a function called only if an expression reads it.
    pub fn with_impact(self, impact: LazyRoot<'a>) -> Self {
        self.with_lazy(Root::Impact, impact)
    }

    /// Declares the composited variables (their programs, in order).
    pub fn with_variables(mut self, programs: &'a dyn VariablePrograms) -> Self {
        self.set_variables(programs);
        self
    }

    /// [`Bindings::with_variables`] in place.
    pub fn set_variables(&mut self, programs: &'a dyn VariablePrograms) -> &mut Self {
        self.variables = LazyVariables::new(programs);
        self
    }
}

impl Default for Bindings<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Bindings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set: Vec<&str> = Root::ALL
            .iter()
            .filter(|r| self.roots[r.index()].is_some() || self.lazy[r.index()].is_some())
            .map(|r| r.name())
            .collect();
        f.debug_struct("Bindings")
            .field("roots", &set)
            .field("variables", &self.variables)
            .finish()
    }
}

impl Activation for Bindings<'_> {
    fn root(&self, root: Root) -> Result<Value, EvalError> {
        if let Some(value) = &self.roots[root.index()] {
            return Ok(value.clone());
        }
        if let Some(compute) = self.lazy[root.index()] {
            return self.computed[root.index()].get_or_init(compute).clone();
        }
        match root {
            Root::Impact => Err(EvalError::Unavailable(
                "impact (no cluster model for this request)".into(),
            )),
            Root::Cluster => Err(EvalError::Unavailable("cluster (no cluster model)".into())),
            Root::History => Err(EvalError::Unavailable(
                "history as a value (call one of its functions, e.g. history.byRequester('10m'))".into(),
            )),
            _ => Ok(Value::Null),
        }
    }

    fn variable(&self, index: usize, budget: &Budget) -> Result<Value, EvalError> {
        self.variables.get(index, self, budget)
    }

    fn root_field(&self, root: Root, field: &str) -> Option<Option<Value>> {
        let index = root.index();
        if self.roots[index].is_some() || self.computed[index].get().is_some() {
            return None;
        }
        self.fields[index]?(field)
    }

    fn cluster(&self) -> Option<&dyn ClusterView> {
        self.cluster
    }

    fn history(&self) -> Option<&RequestHistory<'_>> {
        self.history
    }
}
