//! What the vectors do not show: the connection's life, capabilities asked once, and step_fn's
//! JSON round trip with Rust types.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::calls::SpawnOptions;
use crate::connection::{Client, DialOptions};
use crate::errors::{Error, ScriptErrorKind};
use crate::fake_agent::{suspend_by_unwinding, FakeAgent};

fn ok() -> Value {
    json!({ "status": "ok", "exitCode": 0 })
}

fn execute(position: u64) -> Value {
    json!({ "status": "execute", "position": position, "idempotencyKey": "spool-k" })
}

#[test]
fn without_spool_socket_every_call_is_agent_unavailable() {
    let client = Client::new(None, DialOptions::from_env(), suspend_by_unwinding);
    match client.annotate("x") {
        Err(Error::AgentUnavailable(message)) => {
            assert!(message.contains("SPOOL_SOCKET is not set"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_the_connect_is_retried_with_a_doubling_backoff() {
    let path = std::env::temp_dir().join(format!(
        "hyperspool-rust-nobody-{}.sock",
        std::process::id()
    ));
    let dial = DialOptions {
        attempts: 3,
        backoff: Duration::from_millis(20),
    };
    let client = Client::new(Some(path), dial, suspend_by_unwinding);
    let started = Instant::now();
    match client.annotate("x") {
        Err(Error::AgentUnavailable(message)) => {
            assert!(message.contains("3 attempts"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() >= Duration::from_millis(60),
        "waited 20 + 40 ms between the tries"
    );
}

#[test]
fn a_dropped_socket_fails_this_call_and_every_later_one_without_reconnecting() {
    let agent = FakeAgent::start(vec![(
        json!({ "verb": "annotate", "text": "a" }),
        Value::Null,
    )])
    .unwrap();
    let client = agent.client();
    assert!(matches!(
        client.annotate("a"),
        Err(Error::AgentUnavailable(_))
    ));
    assert!(matches!(
        client.annotate("b"),
        Err(Error::AgentUnavailable(_))
    ));
    agent.finish(client).unwrap();
}

#[test]
fn agent_info_is_asked_once_per_connection() {
    let info = json!({ "status": "ok", "stdout": "{\"protocol\":2,\"verbs\":[\"wait.signal\",\"state.add\",\"activity.wait\"]}\n" });
    let agent = FakeAgent::start(vec![
        (json!({ "verb": "agent.info" }), info),
        (
            json!({ "verb": "wait.signal", "name": "go", "timeoutMs": 250 }),
            json!({ "status": "ok", "exitCode": 124 }),
        ),
        (json!({ "verb": "state.add", "key": "k" }), ok()),
        (json!({ "verb": "activity.wait", "all": true }), ok()),
    ])
    .unwrap();
    let client = agent.client();
    assert_eq!(
        client.wait_signal("go", Some(Duration::from_millis(250))),
        Ok(None)
    );
    assert_eq!(client.state_add("k", None, None), Ok(true));
    assert_eq!(client.activity_wait_all(), Ok(()));
    agent.finish(client).unwrap();
}

#[test]
fn step_fn_returns_what_json_gives_back_on_the_first_pass_too() {
    let agent = FakeAgent::start(vec![
        (json!({ "verb": "step_fn", "name": "pair" }), execute(0)),
        (
            json!({ "verb": "done", "position": 0, "value": [1, "a"] }),
            ok(),
        ),
    ])
    .unwrap();
    let client = agent.client();
    let pair: (i32, String) = client.step_fn("pair", || (1, "a".to_string())).unwrap();
    assert_eq!(pair, (1, "a".to_string()));
    agent.finish(client).unwrap();
}

#[test]
fn a_recorded_value_that_does_not_fit_the_type_is_a_script_error() {
    let agent = FakeAgent::start(vec![(
        json!({ "verb": "step_fn", "name": "n" }),
        json!({ "status": "ok", "value": "seven", "exitCode": 0, "replayed": true }),
    )])
    .unwrap();
    let client = agent.client();
    match client.step_fn("n", || 7_u32) {
        Err(Error::Script {
            kind: ScriptErrorKind::Usage,
            message,
            ..
        }) => assert!(message.contains("step_fn 'n'"), "{message}"),
        other => panic!("{other:?}"),
    }
    agent.finish(client).unwrap();
}

#[test]
fn a_lock_body_can_make_durable_calls() {
    let agent = FakeAgent::start(vec![
        (
            json!({ "verb": "lock", "group": "tally", "command": false }),
            ok(),
        ),
        (
            json!({ "verb": "state.get", "key": "total", "entity": "tally" }),
            json!({ "status": "ok", "stdout": "41\n" }),
        ),
        (
            json!({ "verb": "state.set", "key": "total", "value": "42", "entity": "tally" }),
            ok(),
        ),
    ])
    .unwrap();
    let client = agent.client();
    let result = client.lock("tally", || {
        let n = client
            .state_get("total", Some("tally"))?
            .and_then(|v| v.as_i64())
            .unwrap_or(0);
        client.state_set("total", json!(n + 1), Some("tally"))
    });
    assert_eq!(result, Ok(Ok(())));
    agent.finish(client).unwrap();
}

#[test]
fn a_failing_step_reports_its_name_and_exit_code() {
    let agent = FakeAgent::start(vec![
        (json!({ "verb": "step", "name": "build" }), execute(0)),
        (
            json!({ "verb": "done", "position": 0, "stdout": "half\n", "exitCode": 2 }),
            json!({ "status": "ok", "exitCode": 2 }),
        ),
    ])
    .unwrap();
    let client = agent.client();
    let error = client
        .step(
            "build",
            vec!["sh".into(), "-c".into(), "echo half; exit 2".into()],
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "step 'build' failed: its command exited 2"
    );
    assert_eq!(error.exit_code(), 2);
    agent.finish(client).unwrap();
}

#[test]
fn an_integer_the_journal_would_round_is_refused_before_it_is_recorded() {
    let agent = FakeAgent::start(vec![(
        json!({ "verb": "step_fn", "name": "id" }),
        execute(0),
    )])
    .unwrap();
    let client = agent.client();
    match client.step_fn("id", || vec![1_u64, 1_796_312_994_560_784_123]) {
        Err(Error::Script {
            kind: ScriptErrorKind::Usage,
            message,
            ..
        }) => {
            assert!(
                message.contains("step_fn 'id' returned the integer 1796312994560784123"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    agent.finish(client).unwrap();
}

#[test]
fn a_spawned_script_named_by_its_extension_runs_with_that_interpreter() {
    let agent = FakeAgent::start(vec![(
        json!({ "verb": "spawn", "workflow": "child.py", "script": "print(1)\n", "interpreter": "python3" }),
        json!({ "status": "ok", "stdout": "dev:default:run-1\n", "exitCode": 0 }),
    )])
    .unwrap();
    let client = agent.client();
    let named = SpawnOptions {
        name: Some("child.py".into()),
        ..SpawnOptions::default()
    };
    assert_eq!(
        client.spawn("script", "print(1)\n", named),
        Ok("dev:default:run-1".to_string())
    );
    let unknown = SpawnOptions {
        name: Some("child.rb".into()),
        ..SpawnOptions::default()
    };
    assert!(matches!(
        client.spawn("script", "", unknown),
        Err(Error::Script {
            kind: ScriptErrorKind::Usage,
            ..
        })
    ));
    agent.finish(client).unwrap();
}

/// Issue 28, bug 4: output that is not plain text is recorded as stdoutBase64 and comes back byte
/// for byte on a replay (it was recorded lossily, with U+FFFD).
#[test]
fn output_that_is_not_plain_text_is_recorded_and_replayed_byte_for_byte() {
    let agent = FakeAgent::start(vec![
        (json!({ "verb": "step", "name": "latin" }), execute(0)),
        (
            json!({ "verb": "done", "position": 0, "stdoutBase64": "Y2Fm6Q==", "exitCode": 0 }),
            ok(),
        ),
        (
            json!({ "verb": "step", "name": "nul" }),
            json!({ "status": "ok", "exitCode": 0, "stdoutBase64": "eAB5Cg==", "replayed": true }),
        ),
    ])
    .unwrap();
    let client = agent.client();
    let first = client
        .step_output("latin", vec!["printf".into(), "caf\\351".into()])
        .unwrap();
    assert_eq!(
        (first.bytes.as_slice(), first.stdout.as_str()),
        (&b"caf\xe9"[..], "caf\u{fffd}")
    );
    let replayed = client.step_output("nul", vec!["false".into()]).unwrap();
    assert_eq!(
        (replayed.bytes.as_slice(), replayed.stdout.as_str()),
        (&b"x\0y\n"[..], "x\0y\n")
    );
    agent.finish(client).unwrap();
}
