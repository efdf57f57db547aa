//! Durable workflows as ordinary Rust programs.
//!
//! A program started by `spool run`, `spool submit` or a cluster run talks to its agent over the
//! unix socket in `$SPOOL_SOCKET`. Every function here is one durable call: the first pass runs it
//! and the journal records its result; after a crash or a wait the program runs again from the top
//! and each call gives back what was recorded, without running again.
//!
//! ```no_run
//! # fn deploy(_: &str) -> String { String::new() }
//! # fn teardown(_: String) {}
//! # fn main() -> hyperspool::Result<()> {
//! let env: String = hyperspool::step_fn("deploy", || deploy("pr-7"))?;
//! hyperspool::wait_event("pr.closed")?;
//! hyperspool::step_fn("teardown", || teardown(env))?;
//! # Ok(())
//! # }
//! ```
//!
//! # Durable functions
//!
//! [`step_fn`] runs a closure once and records its return value as JSON, and JSON only: what it
//! returns, on the first pass as on every replay, is the value decoded from that JSON. A value
//! JSON cannot hold (a map with non-string keys, say) is refused before anything is recorded, and
//! so is an integer past 2^53: the journal keeps numbers as doubles and a replay would get it back
//! rounded, so return such a value (a 64-bit id) as a string.
//!
//! The closure cannot fail: a real failure should panic, which records nothing, so the step runs
//! again on the next pass. Do not return a `Result` from it. `Result<T, E>` round-trips through
//! JSON, so returning one records `{"Err": …}` as a *successful* result that no replay re-runs.
//! Keep step bodies safe to retry: a crash between the function and its record runs it again.
//!
//! # Failures
//!
//! Every call returns [`Result`], whose [`Error`] is one of three kinds:
//!
//! - [`Error::StepFailed`]: a command exited non-zero. Match on it to branch, or use
//!   [`step_unchecked`].
//! - [`Error::Script`]: the agent refused the call (a reused activity name, a second lock, a
//!   result over the limit, a diverged replay). A bug in the script: let it end the run.
//! - [`Error::AgentUnavailable`]: no agent, or it went away mid-call. The run replays elsewhere;
//!   return it, never retry the call.
//!
//! When a call has to wait (a sleep, a wait, a held lock, an unfinished activity) the agent ends
//! the program's process group. The call then neither returns nor errs: it writes
//! `spool: script suspended awaiting …` to stderr and blocks until the process is ended (after 60 s
//! it exits with 75), so no `match` can carry the program past a wait that has not returned.
//!
//! # State cells
//!
//! The `state_*` functions take the entity last, as an `Option`: `None` is the run's own private
//! cell, `Some("crawler")` the project's cell shared across runs under that entity. A string is
//! stored as it is, any other value as its JSON; reading gives back the JSON value when the text
//! parses as JSON, else the text.
//!
//! # The connection
//!
//! One connection per process, opened at the first call. Only the connect is retried
//! (`SPOOL_CONNECT_ATTEMPTS`, default 5; `SPOOL_CONNECT_BACKOFF_MS`, default 50, doubling): a
//! request once written is never written again. Calls may come from several threads; they are
//! answered in the order they reach the agent, and that order is their identity in the journal.

mod answers;
mod artifacts;
mod calls;
mod command;
mod connection;
mod errors;
mod graphs;
pub mod testing;

#[cfg(test)]
mod client_test;
#[cfg(test)]
mod fake_agent;
#[cfg(test)]
mod vectors_test;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use artifacts::Artifact;
pub use calls::{ActivityOptions, SpawnOptions, StepOutput};
pub use errors::{Error, Result, ScriptErrorKind};

use calls::{argv_strings, encode_value};
use connection::client;

/// Runs `argv` (no shell) once as the durable step `name` and returns its stdout, newline and all.
/// A non-zero exit is [`Error::StepFailed`], on the first pass and on every replay.
///
/// The command inherits stdin and stderr and gets `SPOOL_IDEMPOTENCY_KEY`; one that is not
/// installed exits 127.
pub fn step<I, S>(name: &str, argv: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    client().step(name, argv_strings(argv))
}

/// [`step`], giving back the exit code instead of failing on a non-zero one.
pub fn step_unchecked<I, S>(name: &str, argv: I) -> Result<StepOutput>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    client().step_output(name, argv_strings(argv))
}

/// Runs `f` once as the durable step `name` and records its value as JSON; every replay returns
/// the recorded value without running `f`. See [the crate docs](crate#durable-functions): return
/// `T`, not a `Result`, and let a real failure panic.
///
/// `step` and `step_fn` share names: reaching `name` with either counts toward one sequence.
pub fn step_fn<T, F>(name: &str, f: F) -> Result<T>
where
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> T,
{
    client().step_fn(name, f)
}

/// Waits durably: the run holds no process while it sleeps. Sent as whole milliseconds.
pub fn sleep(duration: Duration) -> Result<()> {
    client().sleep(duration)
}

/// Waits for the signal `name` and returns its payload (without the trailing newline).
pub fn wait_signal(name: &str) -> Result<String> {
    client()
        .wait_signal(name, None)
        .map(Option::unwrap_or_default)
}

/// [`wait_signal`] with a deadline: `None` when it passed first.
pub fn wait_signal_timeout(name: &str, timeout: Duration) -> Result<Option<String>> {
    client().wait_signal(name, Some(timeout))
}

/// Waits for an event of `event_type` and returns its payload (`Value::Null` when it had none).
/// Decode it into a type of your own with `serde_json::from_value`.
pub fn wait_event(event_type: &str) -> Result<Value> {
    client()
        .wait_event(event_type, None)
        .map(Option::unwrap_or_default)
}

/// [`wait_event`] with a deadline: `None` when it passed first.
pub fn wait_event_timeout(event_type: &str, timeout: Duration) -> Result<Option<Value>> {
    client().wait_event(event_type, Some(timeout))
}

/// Takes the project-scoped lease `group`, waiting (with no process) while another run holds it,
/// then runs `body` and returns what it returns. The lease belongs to the run: it stays held after
/// `body` returns and passes on when the run ends, so a second `lock` in one run is refused.
/// `body` may make durable calls.
pub fn lock<T, F: FnOnce() -> T>(group: &str, body: F) -> Result<T> {
    client().lock(group, body)
}

/// Runs `argv` as the activity `name` on an agent that can, waits for it, and returns its stdout.
/// A non-zero exit is [`Error::StepFailed`].
pub fn activity<I, S>(name: &str, argv: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    client().activity(name, argv_strings(argv), ActivityOptions::default())
}

/// [`activity`] with requirements and a retry policy.
pub fn activity_with<I, S>(name: &str, argv: I, options: ActivityOptions) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    client().activity(name, argv_strings(argv), options)
}

/// Starts the activity `name` and returns at once; collect it with [`activity_collect`] or
/// [`activity_wait_all`]. Activity names are unique within a run.
pub fn activity_submit<I, S>(name: &str, argv: I) -> Result<()>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    client().activity_submit(name, argv_strings(argv), ActivityOptions::default())
}

/// [`activity_submit`] with requirements and a retry policy.
pub fn activity_submit_with<I, S>(name: &str, argv: I, options: ActivityOptions) -> Result<()>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    client().activity_submit(name, argv_strings(argv), options)
}

/// Waits for the submitted activity `name` and returns its stdout; a non-zero exit is
/// [`Error::StepFailed`].
pub fn activity_collect(name: &str) -> Result<String> {
    client().activity_collect(name)
}

/// Waits for every activity submitted so far. When any failed it is [`Error::StepFailed`] named
/// `all`, and the agent's line saying which goes to stderr.
pub fn activity_wait_all() -> Result<()> {
    client().activity_wait_all()
}

/// Emits an event and returns its id.
pub fn emit(event_type: &str, payload: Option<Value>, subject: Option<&str>) -> Result<String> {
    client().emit(event_type, payload, subject)
}

/// Starts a child run and returns its id. `kind` is `"script"` (the text runs with bash) or
/// `"pipeline"` (a YAML document; a graph document runs as a graph).
pub fn spawn(kind: &str, text: &str, input: Option<Value>) -> Result<String> {
    client().spawn(kind, text, SpawnOptions { input, name: None })
}

/// [`spawn`] with a file name for the child, whose extension picks a script's interpreter.
pub fn spawn_with(kind: &str, text: &str, options: SpawnOptions) -> Result<String> {
    client().spawn(kind, text, options)
}

/// Runs one graph node kind (`"http"`, `"script"`, `"call"`, `"approval"`, `"wait"`, `"sleep"`;
/// docs/graphs.md) as durable calls of this run and returns its output, as `spool call-node` does:
/// an http node's is `{status, headers, body}`. Any value in `config` may be `{"$expr": "…"}` over
/// `input` and `node`; `node.idempotency_key` is this call's, the same on every replay. A replay
/// answers from the journal and sends nothing. `name` is the node's id (default: its type). A
/// failed node is [`Error::StepFailed`] (its line goes to stderr); a config the kind does not take,
/// [`Error::Script`] (usage), with nothing recorded.
pub fn call_node(
    node_type: &str,
    config: serde_json::Map<String, Value>,
    name: Option<&str>,
) -> Result<Value> {
    client().call_node(node_type, config, name)
}

/// Runs the graph document at `path` (a `.json` or `.yaml` file whose top level has `nodes`) as a
/// child run, waits for it holding no process, and returns its outputs, as `spool call-graph`
/// does: each output's JSON value, or its text when it is not JSON. The file is read now; a
/// replayed call needs none, a new one whose file cannot be read is refused. A failed graph is
/// [`Error::StepFailed`] named `path`.
pub fn call_graph(
    path: impl AsRef<std::path::Path>,
    input: Option<Value>,
) -> Result<BTreeMap<String, Value>> {
    client().call_graph(path.as_ref(), input)
}

/// Reads a state cell: `None` when it is absent (or empty). See [state cells](crate#state-cells).
pub fn state_get(key: &str, entity: Option<&str>) -> Result<Option<Value>> {
    client().state_get(key, entity)
}

/// Writes a state cell: a string as it is, any other value as its JSON.
pub fn state_set<V: Serialize + ?Sized>(key: &str, value: &V, entity: Option<&str>) -> Result<()> {
    client().state_set(key, encode_value("state_set", value)?, entity)
}

/// Adds a state cell if the key is free: `true` if this call added it, `false` if it was taken.
pub fn state_add(key: &str, value: Option<Value>, entity: Option<&str>) -> Result<bool> {
    client().state_add(key, value, entity)
}

/// Deletes a state cell.
pub fn state_delete(key: &str, entity: Option<&str>) -> Result<()> {
    client().state_delete(key, entity)
}

/// Every state cell whose key starts with `prefix`, key → value (read as [`state_get`] reads).
pub fn state_list(prefix: Option<&str>, entity: Option<&str>) -> Result<BTreeMap<String, Value>> {
    client().state_list(prefix, entity)
}

/// Sets one of the run's outputs: a string as it is, any other value as its JSON.
pub fn output_set<V: Serialize + ?Sized>(key: &str, value: &V) -> Result<()> {
    client().output_set(key, encode_value("output_set", value)?)
}

/// Adds a note to the run's record.
pub fn annotate(text: &str) -> Result<()> {
    client().annotate(text)
}

/// Stores the file at `path` as this run's artifact `name` (docs/artifacts.md). Recorded: on a
/// replay the agent answers from the journal and the file is neither read nor sent.
pub fn artifact_put(
    name: &str,
    path: impl AsRef<std::path::Path>,
    content_type: Option<&str>,
) -> Result<()> {
    client().artifact_put(name, path.as_ref(), content_type)
}

/// Writes the artifact `name` (of this run, or of `run` in the same project) to `dest` (default:
/// the last part of the name, in the working directory) and returns that path. The file appears
/// only once whole, its size and sha256 checked.
pub fn artifact_get(
    name: &str,
    dest: Option<&std::path::Path>,
    run: Option<&str>,
) -> Result<std::path::PathBuf> {
    client().artifact_get(name, dest, run)
}

/// This run's artifacts (or `run`'s), in the order they were put.
pub fn artifact_list(run: Option<&str>) -> Result<Vec<Artifact>> {
    client().artifact_list(run)
}
