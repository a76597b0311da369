//! What a rule reports, independent of how it is rendered.

use serde::{Deserialize, Serialize};

use crate::model::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One hop of the path that leads to a finding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Step {
    pub span: Span,
    /// The function the hop is in (for a binding: its Python name).
    pub function: String,
    pub note: String,
    /// The hop is a call whose target was guessed (see `CallGraph::guessed`).
    pub guessed: bool,
}

/// Whether a path follows a guessed call.
pub fn follows_guess(steps: &[Step]) -> bool {
    steps.iter().any(|s| s.guessed)
}

/// How many guessed calls a path follows.
pub fn guesses(steps: &[Step]) -> usize {
    steps.iter().filter(|s| s.guessed).count()
}

/// A path through the program: for a deadlock, what one thread does.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Flow {
    /// "thread 1", or empty for the single path of a finding.
    pub title: String,
    /// From the binding to where the flow ends.
    pub steps: Vec<Step>,
}

/// How sure a finding is: whether every call on its paths was resolved, or one was guessed.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// A path follows a call matched by name on a receiver of unknown type, or a virtual call
    /// into one of several overrides: it may not exist at run time.
    Low,
    /// Every call on the paths was resolved by name and scope or by the receiver's type.
    High,
}

/// Kept by the cache of whole runs, which stores the rule apart (by its id).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    #[serde(skip)]
    pub rule: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The root cause: where the fix goes.
    pub primary: Span,
    pub primary_label: String,
    /// The function that contains the primary location.
    pub function: String,
    /// The paths that lead to the finding: one, or one per thread of a deadlock.
    pub flows: Vec<Flow>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Finding {
    pub fn confidence(&self) -> Confidence {
        match self.flows.iter().any(|f| follows_guess(&f.steps)) {
            true => Confidence::Low,
            false => Confidence::High,
        }
    }

    /// Every location the finding shows: the primary one, then each step of each flow.
    pub fn spans(&self) -> impl Iterator<Item = Span> + '_ {
        std::iter::once(self.primary).chain(
            self.flows
                .iter()
                .flat_map(|f| f.steps.iter().map(|s| s.span)),
        )
    }

    /// [`Finding::spans`], to move them.
    pub fn spans_mut(&mut self) -> impl Iterator<Item = &mut Span> {
        std::iter::once(&mut self.primary).chain(
            self.flows
                .iter_mut()
                .flat_map(|f| f.steps.iter_mut().map(|s| &mut s.span)),
        )
    }
}
