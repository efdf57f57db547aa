//! `hyperspool::testing` against the real `spool test`: `examples/trial.rs` (a stubbed step, a
//! 14-day sleep, a week's wait for a signal) behind a `.sh` that execs it, on the virtual clock.
//!
//! Needs node and the built CLI (`npm run build` in the repository root); without them the test
//! says so and passes without checking anything, except under CI, where it fails.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyperspool::testing::{Case, Expect, Runner, Signal, StepStub};

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
