//! The shared protocol vectors (`sdk/testdata/`), each run on a fresh connection against a fake
//! agent on a real unix socket. It lives inside the crate because the connection is per process:
//! each vector needs a client of its own over its own socket, and a suspension hook that unwinds
//! instead of blocking, neither of which is public API.

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::calls::{ActivityOptions, SpawnOptions};
use crate::connection::Client;
use crate::errors::Error;
use crate::fake_agent::{FakeAgent, Suspended};

enum Outcome {
    Returned(Value),
    Failed(Error),
    Suspended,
    Panicked(String),
}

struct Counters {
    function_calls: Cell<usize>,
    body_runs: Cell<bool>,
}

fn vector_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/vectors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_protocol_vector() {
    let mut passed = 0;
    let mut failures = Vec::new();
    for file in vector_files() {
        let text = std::fs::read_to_string(&file).expect("a readable vector file");
        let doc: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let vectors = doc["vectors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no vectors", file.display()));
        for vector in vectors {
            let name = format!(
                "{}: {}",
                file.file_name().unwrap_or_default().to_string_lossy(),
                vector["name"]
            );
            match run_vector(vector) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{name}\n    {e}")),
            }
        }
    }
    println!("{passed} vectors passed");
    assert!(
        failures.is_empty(),
        "{} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(passed > 0, "no vectors found");
}

fn run_vector(vector: &Value) -> Result<(), String> {
    let exchanges: Vec<(Value, Value)> = vector["exchanges"]
        .as_array()
        .ok_or("no exchanges")?
        .iter()
        .map(|x| (x["request"].clone(), x["reply"].clone()))
        .collect();
    let agent = FakeAgent::start(exchanges)?;
    let client = agent.client();
    let counters = Counters {
        function_calls: Cell::new(0),
        body_runs: Cell::new(false),
    };
    let outcome = match catch_unwind(AssertUnwindSafe(|| {
        perform(&client, &vector["call"], &counters)
    })) {
        Ok(Ok(value)) => Outcome::Returned(value),
        Ok(Err(error)) => Outcome::Failed(error),
        Err(payload) if payload.is::<Suspended>() => Outcome::Suspended,
        Err(payload) => Outcome::Panicked(
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        ),
    };
    agent.finish(client)?;
    check_outcome(&vector["outcome"], &outcome, &counters)
}

fn str_field<'a>(call: &'a Value, field: &str) -> &'a str {
    call[field].as_str().unwrap_or_default()
}

fn opt_str<'a>(call: &'a Value, field: &str) -> Option<&'a str> {
    call.get(field).and_then(Value::as_str)
}

fn opt_value(call: &Value, field: &str) -> Option<Value> {
    call.get(field).cloned()
}

fn argv(call: &Value) -> Vec<String> {
    call["argv"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn seconds(value: &Value) -> Option<Duration> {
    value.as_f64().map(Duration::from_secs_f64)
}

fn activity_options(call: &Value) -> ActivityOptions {
    ActivityOptions {
        requires: call["requires"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        retries: call["retries"]
            .as_u64()
            .map_or(0, |n| u32::try_from(n).expect("a small retry count")),
        retry_backoff: seconds(&call["retryBackoffSeconds"]),
        retry_on_exit: call["retryOnExit"].as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_i64)
                .map(|n| i32::try_from(n).expect("an exit code"))
                .collect()
        }),
    }
}

fn unit<T>(result: crate::Result<T>) -> crate::Result<Value> {
    result.map(|_| Value::Null)
}

fn to_value<T: serde::Serialize>(result: crate::Result<T>) -> crate::Result<Value> {
    result.map(|v| serde_json::to_value(v).expect("a JSON value"))
}

/// Makes the vector's call through the client, as the public function of that name would.
fn perform(client: &Client, call: &Value, counters: &Counters) -> crate::Result<Value> {
    let name = str_field(call, "name");
    match str_field(call, "fn") {
        "step" if call["check"] == Value::Bool(false) => {
            to_value(client.step_output(name, argv(call)))
        }
        "step" => to_value(client.step(name, argv(call))),
        "step_fn" => {
            let run = || {
                counters
                    .function_calls
                    .set(counters.function_calls.get() + 1)
            };
            if let Some(message) = opt_str(call, "throws") {
                to_value(client.step_fn(name, || -> Value {
                    run();
                    panic!("{message}")
                }))
            } else if call["returnsNonJson"] == Value::Bool(true) {
                // serde_json refuses a map whose keys are not strings.
                to_value(client.step_fn(name, || {
                    run();
                    HashMap::from([((1, 2), 3)])
                }))
            } else {
                let returns = call["returns"].clone();
                client.step_fn(name, || {
                    run();
                    returns
                })
            }
        }
        "sleep" => unit(client.sleep(seconds(&call["seconds"]).expect("seconds"))),
        "wait_signal" => to_value(client.wait_signal(name, seconds(&call["timeoutSeconds"]))),
        "wait_event" => {
            to_value(client.wait_event(str_field(call, "type"), seconds(&call["timeoutSeconds"])))
        }
        "lock" => unit(client.lock(str_field(call, "group"), || counters.body_runs.set(true))),
        "activity" => to_value(client.activity(name, argv(call), activity_options(call))),
        "activity_submit" => unit(client.activity_submit(name, argv(call), activity_options(call))),
        "activity_collect" => to_value(client.activity_collect(name)),
        "activity_wait_all" => unit(client.activity_wait_all()),
        "emit" => to_value(client.emit(
            str_field(call, "type"),
            opt_value(call, "payload"),
            opt_str(call, "subject"),
        )),
        "spawn" => to_value(client.spawn(
            str_field(call, "kind"),
            str_field(call, "text"),
            SpawnOptions {
                input: opt_value(call, "input"),
                name: None,
            },
        )),
        "state_get" => to_value(client.state_get(str_field(call, "key"), opt_str(call, "entity"))),
        "state_set" => unit(client.state_set(
            str_field(call, "key"),
            call["value"].clone(),
            opt_str(call, "entity"),
        )),
        "state_add" => to_value(client.state_add(
            str_field(call, "key"),
            opt_value(call, "value"),
            opt_str(call, "entity"),
        )),
        "state_delete" => {
            unit(client.state_delete(str_field(call, "key"), opt_str(call, "entity")))
        }
        "state_list" => {
            to_value(client.state_list(opt_str(call, "prefix"), opt_str(call, "entity")))
        }
        "output_set" => unit(client.output_set(str_field(call, "key"), call["value"].clone())),
        "annotate" => unit(client.annotate(str_field(call, "text"))),
        other => panic!("a vector calls {other}, which this test does not know"),
    }
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Returned(v) => format!("returned {v}"),
        Outcome::Failed(e) => format!("failed: {e:?}"),
        Outcome::Suspended => "suspended".into(),
        Outcome::Panicked(m) => format!("panicked: {m}"),
    }
}

fn check_outcome(expected: &Value, outcome: &Outcome, counters: &Counters) -> Result<(), String> {
    let text = |field: &str| str_field(expected, field).to_string();
    let matched = if let Some(value) = expected.get("returns") {
        matches!(outcome, Outcome::Returned(v) if v == value)
    } else if expected["suspends"] == Value::Bool(true) {
        matches!(outcome, Outcome::Suspended)
    } else {
        match (str_field(expected, "raises"), outcome) {
            (
                "StepFailed",
                Outcome::Failed(Error::StepFailed {
                    exit_code, stdout, ..
                }),
            ) => {
                Some(i64::from(*exit_code)) == expected["exitCode"].as_i64()
                    && *stdout == text("stdout")
            }
            ("ScriptError", Outcome::Failed(Error::Script { kind, message, .. })) => {
                kind.as_str() == text("kind") && message.contains(&text("message"))
            }
            ("AgentUnavailable", Outcome::Failed(Error::AgentUnavailable(_))) => true,
            ("function", Outcome::Panicked(message)) => message.contains(&text("message")),
            _ => false,
        }
    };
    if !matched {
        return Err(format!("{}; expected {expected}", describe(outcome)));
    }
    if let Some(n) = expected["functionCalls"].as_u64() {
        let calls = counters.function_calls.get();
        if calls as u64 != n {
            return Err(format!("the function ran {calls} times; expected {n}"));
        }
    }
    if let Some(runs) = expected["bodyRuns"].as_bool() {
        if counters.body_runs.get() != runs {
            return Err(format!(
                "bodyRuns was {}; expected {runs}",
                counters.body_runs.get()
            ));
        }
    }
    Ok(())
}
