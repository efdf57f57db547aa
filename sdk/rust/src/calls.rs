use std::collections::BTreeMap;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::answers::{state_cells, state_value, stored_text, Answer, EXIT_TAKEN, EXIT_TIMED_OUT};
use crate::command;
use crate::connection::Client;
use crate::errors::{Error, Result};

/// A step's result when a non-zero exit is not an error (`step_unchecked`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepOutput {
    /// The command's stdout as text: bytes that are not UTF-8 read as U+FFFD.
    pub stdout: String,
    pub exit_code: i32,
    /// The command's stdout byte for byte, on every pass (recorded as `stdoutBase64` when it is
    /// not plain text).
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// How an activity is placed and retried (`activity_submit_with`, `activity_with`).
///
/// `Default` is what `activity_submit` sends: no requirements, one attempt, a 1 s backoff, and a
/// retry on any non-zero exit when retries are allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityOptions {
    /// Capabilities the agent that runs it must have.
    pub requires: Vec<String>,
    /// How many times to try again after a failed attempt (attempts = retries + 1).
    pub retries: u32,
    /// The wait before the first retry (default 1 s).
    pub retry_backoff: Option<Duration>,
    /// Retry only on these exit codes; `None` retries on any non-zero exit.
    pub retry_on_exit: Option<Vec<i32>>,
}

/// What a child run gets besides its text (`spawn_with`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpawnOptions {
    /// The child's input, which it reads from `$SPOOL_INPUT_FILE`.
    pub input: Option<Value>,
    /// The child's file name; for a script its extension picks the interpreter (`.sh`, `.bash`,
    /// `.py`, `.mjs`, `.js`, `.cjs`). Default `child.sh` or `child.yaml`.
    pub name: Option<String>,
}

/// The interpreter a script's extension picks, as `spool submit` picks it.
fn interpreter_for(file: &str) -> Result<&'static str> {
    let extension = file
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "sh" | "bash" => Ok("bash -eu"),
        "py" => Ok("python3"),
        "mjs" | "js" | "cjs" => Ok("node"),
        _ => Err(Error::usage(format!(
            "cannot tell how to run {file}: its extension picks the interpreter (.sh, .bash, .py, .mjs, .js, .cjs)"
        ))),
    }
}

/// A duration as the whole milliseconds the protocol carries.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn argv_strings<I, S>(argv: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    argv.into_iter().map(|s| s.as_ref().to_string()).collect()
}

/// `{"verb": verb, ...fields}`, leaving out the optional fields that are `None` so the request is
/// the one the `spool` verbs send.
fn request(verb: &str, fields: &[(&str, Option<Value>)]) -> Value {
    let mut map = Map::new();
    map.insert("verb".into(), Value::String(verb.into()));
    for (name, value) in fields {
        if let Some(value) = value {
            map.insert((*name).into(), value.clone());
        }
    }
    Value::Object(map)
}

fn text(s: &str) -> Option<Value> {
    Some(Value::String(s.to_string()))
}

fn opt_text(s: Option<&str>) -> Option<Value> {
    s.map(|s| Value::String(s.to_string()))
}

pub(crate) fn encode_value<V: Serialize + ?Sized>(what: &str, value: &V) -> Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| Error::usage(format!("{what}: the value cannot be written as JSON: {e}")))
}

impl Client {
    /// `step` and `step_unchecked`: the command's recorded stdout and exit code.
    pub(crate) fn step_output(&self, name: &str, argv: Vec<String>) -> Result<StepOutput> {
        if argv.is_empty() {
            return Err(Error::usage(format!(
                "step '{name}' needs a command to run"
            )));
        }
        let answer = self.call(&request("step", &[("name", text(name))]))?;
        if answer.status == "ok" {
            return Ok(StepOutput {
                stdout: answer.raw_stdout(),
                exit_code: answer.exit_code(),
                bytes: answer.stdout_bytes(),
            });
        }
        let (position, key) = execution(&answer)?;
        let (bytes, exit_code) = command::run(&argv, &key, answer.traceparent.as_deref());
        let stdout = String::from_utf8_lossy(&bytes).into_owned();
        let done = if is_plain_text(&bytes) {
            json!({ "verb": "done", "position": position, "stdout": stdout, "exitCode": exit_code })
        } else {
            json!({ "verb": "done", "position": position, "stdoutBase64": crate::artifacts::base64_encode(&bytes), "exitCode": exit_code })
        };
        self.call(&done)?;
        Ok(StepOutput {
            stdout,
            exit_code,
            bytes,
        })
    }

    pub(crate) fn step(&self, name: &str, argv: Vec<String>) -> Result<String> {
        let out = self.step_output(name, argv)?;
        if out.exit_code != 0 {
            return Err(Error::StepFailed {
                name: name.to_string(),
                exit_code: out.exit_code,
                stdout: out.stdout,
            });
        }
        Ok(out.stdout)
    }

    pub(crate) fn step_fn<T, F>(&self, name: &str, f: F) -> Result<T>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> T,
    {
        let answer = self.call(&request("step_fn", &[("name", text(name))]))?;
        if answer.status == "ok" {
            return serde_json::from_value(answer.value).map_err(|e| {
                Error::usage(format!("step_fn '{name}': the recorded value does not fit the type the script asks for: {e}"))
            });
        }
        let (position, _) = execution(&answer)?;
        // No lock is held while the function runs, so it may make durable calls of its own; a
        // panic in it unwinds from here with nothing recorded, and the next pass runs it again.
        let returned = f();
        let refused = |e: serde_json::Error| {
            Error::usage(format!(
                "step_fn '{name}' returned a value JSON cannot hold ({e}); nothing was recorded"
            ))
        };
        let value = serde_json::to_value(&returned).map_err(refused)?;
        if let Some(n) = inexact_integer(&value) {
            return Err(Error::usage(format!(
                "step_fn '{name}' returned the integer {n}, which the journal cannot keep exactly (its \
                 numbers are doubles, exact to 2^53); return it as a string. Nothing was recorded"
            )));
        }
        // Decoded before it is recorded, so a type that does not round-trip fails now rather than
        // on every replay, and the first pass returns what replays will.
        let decoded: T = serde_json::from_value(value.clone()).map_err(refused)?;
        self.call(&json!({ "verb": "done", "position": position, "value": value }))?;
        Ok(decoded)
    }

    pub(crate) fn sleep(&self, duration: Duration) -> Result<()> {
        self.call(&json!({ "verb": "sleep", "ms": millis(duration) }))?
            .expect_success("sleep")?;
        Ok(())
    }

    /// `wait.signal` and `wait.event`, with or without a deadline: the answer's text, or `None`
    /// when it timed out.
    fn wait(
        &self,
        verb: &str,
        field: &str,
        what: &str,
        timeout: Option<Duration>,
    ) -> Result<Option<String>> {
        let fn_name = verb.replace('.', "_");
        if timeout.is_some() {
            self.require(&format!("{fn_name} with a timeout"), verb)?;
        }
        let req = request(
            verb,
            &[
                (field, text(what)),
                ("timeoutMs", timeout.map(|t| json!(millis(t)))),
            ],
        );
        let answer = self.call(&req)?;
        if timeout.is_some() && answer.exit_code() == EXIT_TIMED_OUT {
            return Ok(None);
        }
        Ok(Some(
            answer.expect_success(&format!("{fn_name} {what}"))?.text(),
        ))
    }

    pub(crate) fn wait_signal(
        &self,
        name: &str,
        timeout: Option<Duration>,
    ) -> Result<Option<String>> {
        self.wait("wait.signal", "name", name, timeout)
    }

    pub(crate) fn wait_event(
        &self,
        event_type: &str,
        timeout: Option<Duration>,
    ) -> Result<Option<Value>> {
        let payload = self.wait("wait.event", "type", event_type, timeout)?;
        // The agent writes the payload as JSON, and nothing at all for an event without one.
        Ok(payload.map(|p| {
            if p.is_empty() {
                Value::Null
            } else {
                state_value(&p)
            }
        }))
    }

    pub(crate) fn lock<T, F: FnOnce() -> T>(&self, group: &str, body: F) -> Result<T> {
        self.call(&json!({ "verb": "lock", "group": group, "command": false }))?
            .expect_success("lock")?;
        Ok(body())
    }

    fn activity_request(
        verb: &str,
        name: &str,
        argv: Vec<String>,
        options: ActivityOptions,
    ) -> Value {
        json!({
            "verb": verb,
            "name": name,
            "argv": argv,
            "requires": options.requires,
            "attempts": u64::from(options.retries) + 1,
            "backoffMs": options.retry_backoff.map_or(1000, millis),
            "retryOnExit": options.retry_on_exit,
        })
    }

    pub(crate) fn activity(
        &self,
        name: &str,
        argv: Vec<String>,
        options: ActivityOptions,
    ) -> Result<String> {
        let answer = self.call(&Self::activity_request("activity.run", name, argv, options))?;
        Ok(answer.check(name)?.raw_stdout())
    }

    pub(crate) fn activity_submit(
        &self,
        name: &str,
        argv: Vec<String>,
        options: ActivityOptions,
    ) -> Result<()> {
        self.call(&Self::activity_request(
            "activity.submit",
            name,
            argv,
            options,
        ))?
        .expect_success("activity_submit")?;
        Ok(())
    }

    pub(crate) fn activity_collect(&self, name: &str) -> Result<String> {
        let answer = self.call(&json!({ "verb": "activity.wait", "name": name }))?;
        Ok(answer.check(name)?.raw_stdout())
    }

    pub(crate) fn activity_wait_all(&self) -> Result<()> {
        self.require("activity_wait_all", "activity.wait")?;
        self.call(&json!({ "verb": "activity.wait", "all": true }))?
            .check("all")?;
        Ok(())
    }

    pub(crate) fn emit(
        &self,
        event_type: &str,
        payload: Option<Value>,
        subject: Option<&str>,
    ) -> Result<String> {
        let req = request(
            "event.emit",
            &[
                ("type", text(event_type)),
                ("subject", opt_text(subject)),
                ("payload", payload),
            ],
        );
        Ok(self.call(&req)?.expect_success("emit")?.text())
    }

    pub(crate) fn spawn(&self, kind: &str, script: &str, options: SpawnOptions) -> Result<String> {
        let (default_name, interpreter) = match kind {
            "script" => ("child.sh", None),
            "pipeline" => ("child.yaml", Some("pipeline")),
            other => {
                return Err(Error::usage(format!(
                    "spawn takes 'script' or 'pipeline', not '{other}'"
                )))
            }
        };
        let workflow = options.name.unwrap_or_else(|| default_name.to_string());
        let interpreter = match interpreter {
            Some(pipeline) => pipeline,
            None => interpreter_for(&workflow)?,
        };
        let req = request(
            "spawn",
            &[
                ("workflow", text(&workflow)),
                ("script", text(script)),
                ("interpreter", text(interpreter)),
                ("input", options.input),
            ],
        );
        Ok(self.call(&req)?.expect_success("spawn")?.text())
    }

    pub(crate) fn state_get(&self, key: &str, entity: Option<&str>) -> Result<Option<Value>> {
        let req = request(
            "state.get",
            &[("key", text(key)), ("entity", opt_text(entity))],
        );
        let cell = self.call(&req)?.expect_success("state_get")?.text();
        // The agent answers an absent cell and an empty one alike.
        Ok((!cell.is_empty()).then(|| state_value(&cell)))
    }

    pub(crate) fn state_set(&self, key: &str, value: Value, entity: Option<&str>) -> Result<()> {
        let req = request(
            "state.set",
            &[
                ("key", text(key)),
                ("value", text(&stored_text(&value))),
                ("entity", opt_text(entity)),
            ],
        );
        self.call(&req)?.expect_success("state_set")?;
        Ok(())
    }

    pub(crate) fn state_add(
        &self,
        key: &str,
        value: Option<Value>,
        entity: Option<&str>,
    ) -> Result<bool> {
        self.require("state_add", "state.add")?;
        let value = value.map(|v| Value::String(stored_text(&v)));
        let req = request(
            "state.add",
            &[
                ("key", text(key)),
                ("value", value),
                ("entity", opt_text(entity)),
            ],
        );
        let answer = self.call(&req)?;
        if answer.exit_code() == EXIT_TAKEN {
            return Ok(false);
        }
        answer.expect_success("state_add")?;
        Ok(true)
    }

    pub(crate) fn state_delete(&self, key: &str, entity: Option<&str>) -> Result<()> {
        let req = request(
            "state.delete",
            &[("key", text(key)), ("entity", opt_text(entity))],
        );
        self.call(&req)?.expect_success("state_delete")?;
        Ok(())
    }

    pub(crate) fn state_list(
        &self,
        prefix: Option<&str>,
        entity: Option<&str>,
    ) -> Result<BTreeMap<String, Value>> {
        let req = request(
            "state.list",
            &[("prefix", opt_text(prefix)), ("entity", opt_text(entity))],
        );
        Ok(state_cells(
            &self.call(&req)?.expect_success("state_list")?.raw_stdout(),
        ))
    }

    pub(crate) fn output_set(&self, key: &str, value: Value) -> Result<()> {
        let req = json!({ "verb": "output.set", "key": key, "value": stored_text(&value) });
        self.call(&req)?.expect_success("output_set")?;
        Ok(())
    }

    pub(crate) fn annotate(&self, note: &str) -> Result<()> {
        self.call(&json!({ "verb": "annotate", "text": note }))?
            .expect_success("annotate")?;
        Ok(())
    }
}

/// The largest integer a double holds exactly; the engine keeps JSON numbers as doubles.
const MAX_EXACT_INTEGER: u64 = (1 << 53) - 1;

/// An integer in `value` that a replay would get back rounded, so that the first pass and the
/// replays would see different values.
fn inexact_integer(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => {
            let too_big = n
                .as_u64()
                .map(|u| u > MAX_EXACT_INTEGER)
                .or_else(|| n.as_i64().map(|i| i.unsigned_abs() > MAX_EXACT_INTEGER));
            too_big.unwrap_or(false).then(|| n.to_string())
        }
        Value::Array(items) => items.iter().find_map(inexact_integer),
        Value::Object(fields) => fields.values().find_map(inexact_integer),
        _ => None,
    }
}

/// The position and idempotency key of an `execute` answer.
fn execution(answer: &Answer) -> Result<(u64, String)> {
    match (answer.status.as_str(), answer.position) {
        ("execute", Some(position)) => {
            Ok((position, answer.idempotency_key.clone().unwrap_or_default()))
        }
        _ => Err(Error::internal(format!(
            "unexpected answer from the agent: {} without a position",
            answer.status
        ))),
    }
}

/// Whether output travels as text: UTF-8 with no NUL (as src/common/output-bytes.ts's isPlainText);
/// other output travels as `stdoutBase64`.
fn is_plain_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}
