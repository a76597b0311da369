//! Which of the Python objects a destructor (or a lambda) owns its body leaves empty, so that the
//! member destructors that run after the body release nothing. An object counts as emptied only
//! when it is emptied on every path through the body, with the GIL held: inside a branch or
//! after an early return it may still hold its reference, and emptied without the GIL it drops
//! that reference unsafely anyway.

use rustc_hash::{FxHashMap, FxHashSet};
use tree_sitter::Node;

use super::fields::{Field, FieldChild};
use crate::knowledge::Knowledge;
use crate::model::{Function, GilState};

/// How many of the class's own helpers deep (`~C() { clear(); }`) the search follows.
const MAX_HELPER_DEPTH: u8 = 4;
/// Longer expressions are not compared as text: an emptying is a short expression.
const MAX_EMPTYING_LEN: usize = 256;

pub(super) struct Emptying<'a, 't> {
    pub src: &'a [u8],
    pub k: &'a Knowledge,
    /// The function whose body is searched: its GIL switches say where the GIL is held.
    pub function: &'a Function,
    /// The names of what it owns: the class's fields or the lambda's captures.
    pub owned: Vec<&'a str>,
    /// The body of the class whose destructor it is, where its helpers are found.
    pub class: Option<Node<'t>>,
}

/// One search: what is emptied so far, and the class's helpers.
struct Walk<'t> {
    out: FxHashSet<String>,
    /// The class's member functions with no parameters, by name, with their bodies.
    helpers: FxHashMap<String, Node<'t>>,
    /// The helpers already walked (by body start): walking one again adds nothing, since
    /// helpers are followed only where the GIL is held.
    walked: FxHashSet<usize>,
}

impl<'t> Emptying<'_, 't> {
    /// The owned objects that `body` empties on every path, with the GIL held.
    pub fn emptied(&self, body: Node<'t>) -> FxHashSet<String> {
        let mut walk = Walk {
            out: FxHashSet::default(),
            helpers: self.helpers(),
            walked: FxHashSet::default(),
        };
        self.block(body, None, 0, &mut walk);
        walk.out
    }

    fn text(&self, node: Node) -> &str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("")
    }

    /// Walks `block`'s statements in order, adding what each empties to `walk`; returns false
    /// where a statement may leave the block early (what follows is not on every path). `held`
    /// is the GIL state a helper was called in; `None` in the function's own body, where its
    /// guards decide.
    fn block(&self, block: Node<'t>, held: Option<bool>, depth: u8, walk: &mut Walk<'t>) -> bool {
        let mut cursor = block.walk();
        for statement in block.named_children(&mut cursor) {
            match statement.kind() {
                "compound_statement" if !self.block(statement, held, depth, walk) => return false,
                "compound_statement" => {}
                _ if leaves(statement) => return false,
                "expression_statement" | "declaration" => {
                    let held = held.unwrap_or_else(|| {
                        self.function
                            .gil_state_at(statement.start_byte() as u32, GilState::Released)
                            == GilState::Held
                    });
                    if held {
                        self.statement(statement, depth, walk);
                    }
                }
                // A branch, a loop or a `try` (an exception may skip its rest): not every path.
                _ => {}
            }
        }
        true
    }

    /// What one statement, run with the GIL held, empties: `f.reset()`, `f.release().dec_ref()`,
    /// `f = {}`, `f = py::object()`, `T g(std::move(f))`, or a helper of the class that does.
    fn statement(&self, statement: Node<'t>, depth: u8, walk: &mut Walk<'t>) {
        let mut stack = vec![statement];
        while let Some(node) = stack.pop() {
            match node.kind() {
                // Not run here, or run on some paths only.
                "lambda_expression" | "conditional_expression" => continue,
                "call_expression" => {
                    if let Some(field) = self.emptying_call(node) {
                        walk.out.insert(field);
                    }
                }
                "assignment_expression" => {
                    if let Some(field) = self.emptying_assignment(node) {
                        walk.out.insert(field);
                    }
                }
                _ => {}
            }
            if let Some(field) = self.moved_out(node) {
                walk.out.insert(field);
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        if let Some(helper) = self.helper_called(statement, walk)
            && depth < MAX_HELPER_DEPTH
            && walk.walked.insert(helper.start_byte())
        {
            // A return in the helper ends the helper only: what it emptied before stays so.
            self.block(helper, Some(true), depth + 1, walk);
        }
    }

    /// The owned object that `node` names: `f`, `this->f`, `(f)`.
    fn owned_named(&self, node: Node) -> Option<String> {
        if node.kind() == "parenthesized_expression" {
            return node.named_child(0).and_then(|n| self.owned_named(n));
        }
        match node.kind() {
            "identifier" => Some(self.text(node)),
            "field_expression" => super::this_field(node).map(|f| self.text(f)),
            _ => None,
        }
        .filter(|name| self.owned.contains(name))
        .map(str::to_string)
    }

    /// `f.reset()`, `f.release()` (also as the receiver of `.dec_ref()`).
    fn emptying_call(&self, call: Node) -> Option<String> {
        let function = call.field(Field::Function)?;
        let method = function.field(Field::Field)?;
        let empty_arguments = call
            .field(Field::Arguments)
            .is_some_and(|a| a.named_child_count() == 0);
        (function.kind() == "field_expression"
            && empty_arguments
            && self.k.member_calls_emptying.contains(self.text(method)))
        .then(|| function.field(Field::Argument))
        .flatten()
        .and_then(|receiver| self.owned_named(receiver))
    }

    /// `f = {}`, `f = py::object()`, `f = py::iterator()`, `f = nb::object{}` (see
    /// `empty_when_default`): assigning `None` would still hold a reference.
    fn emptying_assignment(&self, assignment: Node) -> Option<String> {
        let right = assignment.field(Field::Right)?;
        if right.byte_range().len() > MAX_EMPTYING_LEN {
            return None;
        }
        let right: String = self
            .text(right)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let default_of = right
            .strip_suffix("()")
            .or_else(|| right.strip_suffix("{}"));
        let empty =
            right == "{}" || default_of.is_some_and(|ty| self.k.empty_when_default.contains(ty));
        empty
            .then(|| assignment.field(Field::Left))
            .flatten()
            .and_then(|left| self.owned_named(left))
    }

    /// `std::move(f)`, as pybind11's own `func_handle` does (`function kill_f(std::move(f));`):
    /// what it is moved into dies within the same guard. Compared as text because the grammar
    /// may read that declaration as a function's.
    fn moved_out(&self, node: Node) -> Option<String> {
        if !matches!(node.kind(), "call_expression" | "parameter_declaration")
            || node.byte_range().len() > MAX_EMPTYING_LEN
        {
            return None;
        }
        let text: String = self
            .text(node)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let inner = text.strip_prefix("std::move(")?.strip_suffix(')')?;
        let inner = inner.strip_prefix("this->").unwrap_or(inner);
        self.owned.contains(&inner).then(|| inner.to_string())
    }

    /// The helper of the class that `statement` calls with no arguments: `clear();`,
    /// `this->clear();`.
    fn helper_called(&self, statement: Node, walk: &Walk<'t>) -> Option<Node<'t>> {
        let call = statement
            .named_child(0)
            .filter(|c| c.kind() == "call_expression")?;
        if statement.kind() != "expression_statement"
            || call
                .field(Field::Arguments)
                .is_none_or(|a| a.named_child_count() != 0)
        {
            return None;
        }
        let function = call.field(Field::Function)?;
        let name = match function.kind() {
            "identifier" => function,
            "field_expression"
                if function
                    .field(Field::Argument)
                    .is_some_and(|a| a.kind() == "this") =>
            {
                function.field(Field::Field)?
            }
            _ => return None,
        };
        walk.helpers.get(self.text(name)).copied()
    }

    /// The member functions with no parameters defined in the class, by name, with their
    /// bodies.
    fn helpers(&self) -> FxHashMap<String, Node<'t>> {
        let Some(class) = self.class else {
            return FxHashMap::default();
        };
        let mut cursor = class.walk();
        class
            .named_children(&mut cursor)
            .filter(|m| m.kind() == "function_definition")
            .filter_map(|method| {
                let declarator = method
                    .field(Field::Declarator)
                    .filter(|d| d.kind() == "function_declarator")?;
                let parameters = declarator.field(Field::Parameters)?;
                let name = declarator.field(Field::Declarator)?;
                let body = method.field(Field::Body)?;
                (parameters.named_child_count() == 0).then(|| (self.text(name).to_string(), body))
            })
            .collect()
    }
}

/// Whether `statement` may end the function before the statements after it: a `return`, `throw`
/// or `goto` outside any lambda in it.
fn leaves(statement: Node) -> bool {
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "return_statement" | "throw_expression" | "throw_statement" | "goto_statement" => {
                return true;
            }
            "lambda_expression" => continue,
            _ => {}
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    false
}
