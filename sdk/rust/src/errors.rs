use std::fmt;

/// What a durable call gives back: a value, or one of the three kinds of failure.
pub type Result<T> = std::result::Result<T, Error>;

/// Every failure of a durable call is one of three kinds (docs/sdks.md, "Answers").
///
/// Match on `StepFailed` to branch on a failed command. Let the other two propagate with `?`:
/// `Script` is a bug in the script that replaying will not fix, and `AgentUnavailable` means the
/// run is being replayed elsewhere. A catch-all `Err(_) =>` arm that carries on hides both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A step's or an activity's command ran and exited non-zero. The result is recorded, so
    /// every replay gives back this same failure.
    StepFailed {
        /// The step's or activity's name.
        name: String,
        exit_code: i32,
        stdout: String,
    },
    /// The agent refused the request, or the script asked for something that cannot be recorded:
    /// a reused activity name, a second lock, a bad argument, a result over the size limit, a
    /// replay that diverged from the journal.
    Script {
        kind: ScriptErrorKind,
        message: String,
        exit_code: i32,
    },
    /// No agent to talk to, or it went away during a call. The run is handed to another agent
    /// and the script replays from the top: return, never retry the call.
    AgentUnavailable(String),
}

/// The `kind` of an agent's `error` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScriptErrorKind {
    /// Bad input; nothing was recorded.
    Usage,
    /// The replay reached another call than the journal recorded at that position.
    Determinism,
    /// A result over the size limit for a recorded result.
    Limit,
    /// Anything else the agent could not do (an unknown kind is taken as this one).
    Internal,
}

impl ScriptErrorKind {
    /// The kind as the protocol spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ScriptErrorKind::Usage => "usage",
            ScriptErrorKind::Determinism => "determinism",
            ScriptErrorKind::Limit => "limit",
            ScriptErrorKind::Internal => "internal",
        }
    }

    pub(crate) fn parse(kind: &str) -> Self {
        match kind {
            "usage" => ScriptErrorKind::Usage,
            "determinism" => ScriptErrorKind::Determinism,
            "limit" => ScriptErrorKind::Limit,
            _ => ScriptErrorKind::Internal,
        }
    }
}

impl fmt::Display for ScriptErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The exit code the spool verbs use for bad input.
pub(crate) const EXIT_USAGE: i32 = 2;

impl Error {
    /// A refusal made in this process before anything was sent, worded as the agent words its own.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::Script {
            kind: ScriptErrorKind::Usage,
            message: message.into(),
            exit_code: EXIT_USAGE,
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Error::Script {
            kind: ScriptErrorKind::Internal,
            message: message.into(),
            exit_code: 1,
        }
    }

    /// The exit code a script that stops on this error should end with, as the `spool` verbs
    /// would: the command's own code, the agent's code for a refusal, 69 for no agent.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::StepFailed { exit_code, .. } | Error::Script { exit_code, .. } => *exit_code,
            Error::AgentUnavailable(_) => 69,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::StepFailed {
                name, exit_code, ..
            } => {
                write!(f, "step '{name}' failed: its command exited {exit_code}")
            }
            Error::Script { kind, message, .. } => write!(f, "{message} ({kind} error)"),
            Error::AgentUnavailable(message) => write!(f, "agent unavailable: {message}"),
        }
    }
}

impl std::error::Error for Error {}
