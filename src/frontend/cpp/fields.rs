//! tree-sitter-cpp's field names, looked up once. `Node::child_by_field_name` finds a field's id
//! by comparing the name with the grammar's field names one by one, at every call: 2 % of a cold
//! run, for the walker's many calls.

use std::sync::LazyLock;

use tree_sitter::Node;

macro_rules! fields {
    ($($variant:ident = $name:literal,)*) => {
        /// A field of tree-sitter-cpp's nodes, named as the grammar names it (one is `field`).
        #[derive(Clone, Copy)]
        #[allow(clippy::enum_variant_names)]
        pub(super) enum Field { $($variant,)* }

        const NAMES: &[&str] = &[$($name,)*];
    };
}

fields! {
    Alternative = "alternative",
    Argument = "argument",
    Arguments = "arguments",
    Body = "body",
    Captures = "captures",
    Condition = "condition",
    Consequence = "consequence",
    Declarator = "declarator",
    Field = "field",
    Function = "function",
    Label = "label",
    Left = "left",
    Name = "name",
    Operator = "operator",
    Parameters = "parameters",
    Right = "right",
    Type = "type",
    Value = "value",
}

static IDS: LazyLock<Vec<u16>> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_cpp::LANGUAGE.into();
    NAMES
        .iter()
        .map(|name| {
            language
                .field_id_for_name(name)
                .unwrap_or_else(|| panic!("`{name}` is a field of the pinned tree-sitter-cpp"))
                .get()
        })
        .collect()
});

pub(super) trait FieldChild<'t> {
    /// The child in `field`, as `child_by_field_name` finds it.
    fn field(&self, field: Field) -> Option<Node<'t>>;
}

impl<'t> FieldChild<'t> for Node<'t> {
    fn field(&self, field: Field) -> Option<Node<'t>> {
        self.child_by_field_id(IDS[field as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_the_grammars() {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_cpp::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse("int f(int a) { return a; }", None).unwrap();
        let function = tree.root_node().child(0).unwrap();
        assert_eq!(IDS.len(), NAMES.len());
        for field in [Field::Declarator, Field::Type, Field::Body] {
            assert_eq!(
                function.field(field),
                function.child_by_field_name(NAMES[field as usize])
            );
        }
        assert!(function.field(Field::Body).is_some());
    }
}
