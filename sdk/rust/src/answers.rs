use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::errors::{Error, Result, ScriptErrorKind};

/// One line the agent answers with (docs/protocol.md, "Answers").
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Answer {
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) stdout: Option<String>,
    /// The recorded stdout when it is not plain text (a NUL, bytes that are not UTF-8).
    #[serde(default)]
    pub(crate) stdout_base64: Option<String>,
    #[serde(default)]
    pub(crate) stderr: Option<String>,
    #[serde(default)]
    pub(crate) exit_code: Option<i32>,
    /// A step_fn's recorded value; absent and `null` alike mean null.
    #[serde(default)]
    pub(crate) value: Value,
    #[serde(default)]
    pub(crate) position: Option<u64>,
    #[serde(default)]
    pub(crate) idempotency_key: Option<String>,
    /// With "execute" when tracing is on: the step's span (W3C), given to its command as TRACEPARENT.
    #[serde(default)]
    pub(crate) traceparent: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) message: Option<String>,
}

/// The exit code of a wait that timed out.
pub(crate) const EXIT_TIMED_OUT: i32 = 124;
/// The exit code of `state.add` on a key that was taken.
pub(crate) const EXIT_TAKEN: i32 = 3;

impl Answer {
    pub(crate) fn exit_code(&self) -> i32 {
        self.exit_code.unwrap_or(0)
    }

    /// The recorded stdout as it is (a step's or an activity's output keeps its newline), as text:
    /// bytes that are not UTF-8 read as U+FFFD, the same on every pass.
    pub(crate) fn raw_stdout(&self) -> String {
        match &self.stdout_base64 {
            Some(_) => String::from_utf8_lossy(&self.stdout_bytes()).into_owned(),
            None => self.stdout.clone().unwrap_or_default(),
        }
    }

    /// The recorded stdout byte for byte.
    pub(crate) fn stdout_bytes(&self) -> Vec<u8> {
        match &self.stdout_base64 {
            Some(encoded) => crate::artifacts::base64_decode(encoded).unwrap_or_default(),
            None => self.stdout.clone().unwrap_or_default().into_bytes(),
        }
    }

    /// A text answer without the one newline the agent ends it with: `yes`, not `yes\n`.
    pub(crate) fn text(&self) -> String {
        let text = self.stdout.as_deref().unwrap_or("");
        text.strip_suffix('\n').unwrap_or(text).to_string()
    }

    pub(crate) fn into_script_error(self) -> Error {
        Error::Script {
            kind: ScriptErrorKind::parse(self.kind.as_deref().unwrap_or("internal")),
            message: self
                .message
                .unwrap_or_else(|| "the agent refused the call".into()),
            exit_code: self.exit_code.unwrap_or(1),
        }
    }

    /// An `ok` answer whose exit code is not 0 as the failure it records; the agent's own line
    /// about it (which activities failed) goes to stderr, where the CLI would print it.
    pub(crate) fn check(self, name: &str) -> Result<Answer> {
        if self.exit_code() == 0 {
            return Ok(self);
        }
        if let Some(line) = self.stderr.as_deref().filter(|s| !s.is_empty()) {
            eprintln!("{line}");
        }
        Err(Error::StepFailed {
            name: name.to_string(),
            exit_code: self.exit_code(),
            stdout: self.raw_stdout(),
        })
    }

    /// An answer that must have succeeded; anything else is the agent misbehaving.
    pub(crate) fn expect_success(self, what: &str) -> Result<Answer> {
        if self.status == "ok" && self.exit_code() == 0 {
            return Ok(self);
        }
        let detail = self
            .stderr
            .clone()
            .or(self.message.clone())
            .unwrap_or_default();
        Err(Error::internal(format!(
            "{what}: unexpected answer from the agent ({}, exit {}) {detail}",
            self.status,
            self.exit_code()
        )))
    }
}

/// What `agent.info` says the agent supports.
#[derive(Debug)]
pub(crate) struct AgentInfo {
    pub(crate) protocol: u64,
    pub(crate) verbs: Vec<String>,
}

impl AgentInfo {
    /// An agent that does not know `agent.info` (it answers an error) predates protocol 1.
    pub(crate) fn from_answer(answer: &Answer) -> Self {
        #[derive(Deserialize)]
        struct Info {
            #[serde(default)]
            protocol: u64,
            #[serde(default)]
            verbs: Vec<String>,
        }
        let parsed = (answer.status == "ok")
            .then(|| serde_json::from_str::<Info>(answer.stdout.as_deref().unwrap_or("")).ok())
            .flatten();
        match parsed {
            Some(info) => AgentInfo {
                protocol: info.protocol,
                verbs: info.verbs,
            },
            None => AgentInfo {
                protocol: 0,
                verbs: Vec::new(),
            },
        }
    }

    pub(crate) fn describe(&self) -> String {
        if self.protocol == 0 && self.verbs.is_empty() {
            "predates agent.info (protocol 0)".into()
        } else {
            format!("speaks protocol {}", self.protocol)
        }
    }
}

/// A state cell's text as a value: its JSON when it parses as JSON, else the text itself, so a
/// cell set from bash (`spool state set n 5`) reads as the number 5.
pub(crate) fn state_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// How a value is stored in a state cell or an output: a string as it is, anything else as JSON.
pub(crate) fn stored_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `state.list` answers one `key\tvalue` line per cell.
pub(crate) fn state_cells(text: &str) -> BTreeMap<String, Value> {
    text.lines()
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once('\t') {
            Some((key, value)) => (key.to_string(), state_value(value)),
            None => (line.to_string(), Value::String(String::new())),
        })
        .collect()
}
