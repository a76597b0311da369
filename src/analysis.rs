//! Walks the call graph from each binding, tracking the GIL state, and reconstructs the path that
//! reached a function in a given state.
//!
//! A function is visited once per (binding, entry state): two states keep this linear in the size
//! of the call graph per binding. Breadth-first order makes every reconstructed path a shortest one.

use std::collections::{HashMap, VecDeque};

use crate::callgraph::CallGraph;
use crate::model::{FnId, GilState, Program};

/// A function entered in a GIL state.
pub type Node = (FnId, GilState);

/// How a node was first reached.
#[derive(Clone, Copy, Debug)]
pub enum Pred {
    /// Directly by the binding.
    Entry,
    /// Through call number `call` of `caller`.
    Call { caller: Node, call: usize },
}

/// Everything one binding reaches, with how.
pub struct Reach {
    pub binding: usize,
    pub preds: HashMap<Node, Pred>,
    /// Nodes in the order they were reached (deterministic).
    pub order: Vec<Node>,
}

impl Reach {
    pub fn explore(program: &Program, graph: &CallGraph, binding: usize) -> Self {
        let entry = program.bindings[binding].entry;
        let mut preds = HashMap::new();
        let mut order = Vec::new();
        let mut queue = VecDeque::new();
        for &target in graph.binding_targets(binding) {
            if preds.insert((target, entry), Pred::Entry).is_none() {
                queue.push_back((target, entry));
            }
        }
        while let Some(node @ (function, state)) = queue.pop_front() {
            order.push(node);
            let f = &program.functions[function];
            for (call, site) in f.calls.iter().enumerate() {
                let at_call = f.gil_state_at(site.span.start, state);
                for &callee in graph.callees(function, call) {
                    let next = (callee, at_call);
                    if !preds.contains_key(&next) {
                        preds.insert(next, Pred::Call { caller: node, call });
                        queue.push_back(next);
                    }
                }
            }
        }
        Reach { binding, preds, order }
    }

    /// The calls from the binding to `node`: `(caller, call index)` pairs, outermost first.
    pub fn path_to(&self, node: Node) -> Vec<(Node, usize)> {
        let mut path = Vec::new();
        let mut current = node;
        while let Some(Pred::Call { caller, call }) = self.preds.get(&current) {
            path.push((*caller, *call));
            current = *caller;
        }
        path.reverse();
        path
    }
}
