//! `--format concise`: one line per finding, `path:line:col: rule message`, as grep, editors'
//! problem matchers and vim's `errorformat` (`%f:%l:%c: %m`) read it (ruff's `concise`). Paths
//! are as shown elsewhere: relative to the current directory.

use crate::diagnostic::Finding;
use crate::input::one_line;
use crate::model::Program;

pub fn render(program: &Program, findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            let at = super::place(program, f.primary);
            format!(
                "{}:{}:{}: {} {}\n",
                at.path,
                at.line,
                at.column,
                f.rule,
                one_line(&f.message)
            )
        })
        .collect()
}
