//! `hyperspool::testing` against the real `spool test`: `examples/trial.rs` (a stubbed step, a
//! 14-day sleep, a week's wait for a signal) behind a `.sh` that execs it, on the virtual clock.
//!
//! Needs node and the built CLI (`npm run build` in the repository root); without them the test
//! says so and passes without checking anything, except under CI, where it fails.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyperspool::testing::{
    Approval, Case, Event, Expect, HttpStub, Runner, Schedule, Signal, StepStub, Stubs,
};
use serde_json::{json, Value};

mod common;

const DAY: Duration = Duration::from_secs(86_400);

/// A directory removed when the test ends, pass or fail.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The trial's `.sh` in a directory of its own, its test file beside it, and the repository's CLI.
fn trial(what: &str) -> Option<(Runner, PathBuf, TempDir)> {
    let root = common::engine_root_or_skip(what)?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "hyperspool-rust-testing-{}-{stamp}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let workflow = dir.join("trial.sh");
    let binary = common::example_binary("trial");
    std::fs::write(&workflow, format!("exec '{}'\n", binary.display())).expect("trial.sh");
    let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/trial.test.yaml");
    std::fs::copy(cases, dir.join("trial.test.yaml")).expect("trial.test.yaml");
    Some((
        Runner::with_cli(root.join("bin/spool")),
        workflow,
        TempDir(dir),
    ))
}

fn upgrade() -> Case {
    Case {
        name: "upgrades in the third week".into(),
        signals: vec![Signal {
            at: 15 * DAY,
            name: "upgrade".into(),
            payload: Some("pro".into()),
        }],
        stubs: [("charge", StepStub::stdout("rcpt-1\n"))].into(),
        expect: Some(Expect {
            outputs: [("plan", "pro"), ("receipt", "rcpt-1")].into(),
            steps: Some(vec!["charge".into()]),
            time: Some(15 * DAY),
            ..Expect::default()
        }),
        ..Case::default()
    }
}

#[test]
fn the_workflows_own_test_file_passes() {
    let Some((spool, workflow, _dir)) = trial("spool test of the trial's test file") else {
        return;
    };
    let results = spool.run_cases(&workflow, &[]).expect("spool test ran");
    for result in &results {
        result.assert_passed();
    }
    let names: Vec<&str> = results.iter().map(|r| r.case.as_str()).collect();
    assert_eq!(
        names,
        [
            "upgrades in the third week",
            "stays free when no upgrade comes"
        ]
    );
    assert_eq!(results[1].virtual_time(), Some(21 * DAY));
    assert_eq!(results[1].outputs["plan"], "free");
    assert_eq!(results[1].outputs["receipt"], "rcpt-2");
}

#[test]
fn a_case_built_here_passes_and_with_one_expectation_changed_fails_saying_which() {
    let Some((spool, workflow, _dir)) = trial("spool test of cases built in Rust") else {
        return;
    };
    let mut wrong = upgrade();
    wrong.name = "expects enterprise".into();
    if let Some(expect) = wrong.expect.as_mut() {
        expect.outputs = [("plan", "enterprise")].into();
    }
    let results = spool
        .run_cases(&workflow, &[upgrade(), wrong])
        .expect("spool test ran");
    let (passing, failing) = (&results[0], &results[1]);
    passing.assert_passed();
    assert_eq!(passing.outcome.as_deref(), Some("succeeded"));
    assert_eq!(passing.virtual_time(), Some(15 * DAY));
    let calls: Vec<String> = passing
        .journal
        .iter()
        .filter(|e| e.kind == "call")
        .map(|e| format!("{} {}", e.verb, e.name))
        .collect();
    assert_eq!(
        calls,
        [
            "step charge",
            "sleep ",
            "wait.signal upgrade",
            "output.set receipt",
            "output.set plan"
        ]
    );

    let line = r#"expected output plan to be "enterprise", but it was "pro""#;
    assert!(!failing.passed);
    assert_eq!(failing.failures, [line]);
    let panicked =
        std::panic::catch_unwind(|| failing.assert_passed()).expect_err("assert_passed panics");
    let report = panicked
        .downcast_ref::<String>()
        .expect("a formatted message");
    assert!(report.contains(line), "{report}");
    assert!(
        report.contains("wait.signal  upgrade"),
        "the journal is in it:\n{report}"
    );
}

#[test]
fn a_bad_case_is_an_error_with_the_clis_one_line() {
    let Some((spool, workflow, _dir)) = trial("spool test of a bad case") else {
        return;
    };
    let bad = Case {
        expect: Some(Expect {
            outcome: Some("done".into()),
            ..Expect::default()
        }),
        ..Case::default()
    };
    let error = spool
        .run_case(&workflow, &bad)
        .expect_err("the CLI refuses it");
    assert_eq!(error.exit_code, Some(2));
    assert_eq!(
        error.message,
        "spool: --case: case 'case 1': expect.outcome is one of succeeded, failed, cancelled, waiting, not 'done'"
    );
}

/// Every field a Case has, as spool test's case keys.
fn everything() -> Case {
    Case {
        name: "every key".into(),
        input: Some(json!({"customer": "acme"})),
        on: None,
        schedule: Some(Schedule {
            every: Duration::from_secs(300),
            ticks: 2,
        }),
        signals: vec![Signal {
            at: Duration::from_secs(90),
            name: "go".into(),
            payload: Some(json!({"n": 1})),
        }],
        events: vec![Event {
            at: Duration::from_secs(3600),
            event_type: "plan.upgraded".into(),
            key: Some("acme".into()),
            payload: Some("pro".into()),
        }],
        approvals: vec![Approval {
            at: Duration::from_secs(7200),
            job: "ask".into(),
            answer: Some("reject".into()),
            by: Some("ann".into()),
            values: Some(json!({"why": "no"})),
        }],
        stubs: Stubs {
            steps: [
                (
                    "charge".to_string(),
                    StepStub::Command {
                        stdout: "ch_1".into(),
                        exit: 3,
                    },
                ),
                ("price".to_string(), StepStub::value(Value::Null)),
            ]
            .into(),
            http: [(
                "notify".to_string(),
                HttpStub {
                    status: Some(201),
                    headers: [("X-Id".to_string(), "7".to_string())].into(),
                    body: Some(json!({"ok": true})),
                },
            )]
            .into(),
        },
        expect: Some(Expect {
            outcome: Some("failed".into()),
            error: Some("declined".into()),
            outputs: [("plan", "pro")].into(),
            steps: Some(vec!["charge".into()]),
            state: [("tally/total", "3")].into(),
            time: Some(Duration::from_secs(36 * 3600)),
            runs: Some(2),
            log: Some("charged".into()),
        }),
    }
}

/// The wire form: durations in milliseconds, a value stub sends only the value, and what is
/// empty or None is not sent.
#[test]
fn a_case_is_sent_as_spool_tests_keys() {
    let sent = serde_json::to_value(everything()).expect("JSON");
    assert_eq!(
        sent,
        json!({
            "name": "every key",
            "input": {"customer": "acme"},
            "schedule": {"every": "300000ms", "ticks": 2},
            "signals": [{"at": "90000ms", "name": "go", "payload": {"n": 1}}],
            "events": [{"at": "3600000ms", "type": "plan.upgraded", "key": "acme", "payload": "pro"}],
            "approvals": [{"at": "7200000ms", "job": "ask", "answer": "reject", "by": "ann", "values": {"why": "no"}}],
            "stubs": {
                "steps": {"charge": {"stdout": "ch_1", "exit": 3}, "price": {"value": null}},
                "http": {"notify": {"status": 201, "headers": {"X-Id": "7"}, "body": {"ok": true}}}
            },
            "expect": {
                "outcome": "failed", "error": "declined", "outputs": {"plan": "pro"}, "steps": ["charge"],
                "state": {"tally/total": "3"}, "time": "129600000ms", "runs": 2, "log": "charged"
            }
        })
    );
    assert_eq!(
        serde_json::to_value(Case::default()).expect("JSON"),
        json!({})
    );
}

/// spool test takes every key the Case sends (it checks them all before anything runs, and
/// refuses an unknown one with exit 2), and what they say reaches the run: the stub's exit code
/// fails the trial's charge, and the schedule starts it twice, 5m apart.
#[test]
fn spool_test_takes_every_key_a_case_sends() {
    let Some((spool, workflow, _dir)) = trial("spool test of a case with every key") else {
        return;
    };
    let result = spool
        .run_case(&workflow, &everything())
        .expect("spool test took the case");
    assert_eq!(result.runs, 2, "{result}");
    assert_eq!(
        result.virtual_time(),
        Some(Duration::from_secs(300)),
        "{result}"
    );
    assert_eq!(result.error.as_deref(), Some("script exited 3"), "{result}");
    assert!(!result.passed);
    let line = r#"expected the run's error to say "declined", but it was "script exited 3""#;
    assert!(result.failures.iter().any(|f| f == line), "{result}");
}

/// Pass 1 records its working directory; pass 2, after the sleep, says whether it runs in the
/// same one.
#[test]
fn fresh_dir_runs_each_pass_in_a_new_directory() {
    let Some((spool, trial, _dir)) = trial("spool test --fresh-dir") else {
        return;
    };
    let workflow = trial.with_file_name("where.sh");
    let script = "first=$(spool step where -- pwd)\nspool sleep 1d\nspool output set dir \"$([ \"$first\" = \"$(pwd)\" ] && echo same || echo new)\"\n";
    std::fs::write(&workflow, script).expect("where.sh");
    let case = Case {
        expect: Some(Expect {
            outputs: [("dir", "new")].into(),
            ..Expect::default()
        }),
        ..Case::default()
    };
    spool
        .fresh_dir(true)
        .run_case(&workflow, &case)
        .expect("spool test took the case")
        .assert_passed();
}
