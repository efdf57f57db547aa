//! Test a workflow from `cargo test` through `spool test` (docs/testing-workflows.md,
//! docs/sdks.md): its cases run on an in-memory store with a virtual clock, so a 14-day sleep
//! takes no real time.
//!
//! ```no_run
//! use std::time::Duration;
//! use hyperspool::testing::{run_case, Case, Expect, Signal, StepStub};
//!
//! let day = Duration::from_secs(86_400);
//! let result = run_case("trial.sh", &Case {
//!     signals: vec![Signal { at: 15 * day, name: "upgrade".into(), payload: Some("pro".into()) }],
//!     stubs: [("charge", StepStub::stdout("rcpt-1\n"))].into(),
//!     expect: Some(Expect { outputs: [("plan", "pro")].into(), time: Some(15 * day), ..Expect::default() }),
//!     ..Case::default()
//! }).expect("spool test took the case");
//! result.assert_passed(); // panics with the failures, the run, its journal and log
//! ```
//!
//! A case has the keys of a `NAME.test.yaml` case (`spool test` checks them); what is empty or
//! `None` is not sent, so not checked. The CLI is [`Runner::with_cli`]'s, else `$SPOOL_CLI`'s,
//! else `spool` on the `PATH`; [`Runner::fresh_dir`] runs each pass in a new, empty directory.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// One test case. `expect: None` expects the run to succeed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Case {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The workflow is a handler started by each event of this type the case delivers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Approval>,
    /// A step's stubbed result, by step name: it is recorded as given and the step does not run.
    #[serde(skip_serializing_if = "Stubs::is_empty")]
    pub stubs: Stubs,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

/// The workflow started `ticks` times, `every` apart.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Schedule {
    #[serde(serialize_with = "duration_text")]
    pub every: Duration,
    pub ticks: u32,
}

/// A signal sent to the run `at` virtual time after the start; a payload that is not a string is
/// sent as JSON.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Signal {
    #[serde(serialize_with = "duration_text")]
    pub at: Duration,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// An event emitted `at` virtual time after the start.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Event {
    #[serde(serialize_with = "duration_text")]
    pub at: Duration,
    #[serde(rename = "type")]
    pub event_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// A pipeline's gate answered `at` virtual time after the start: `answer` "approve" (the default)
/// or "reject".
#[derive(Debug, Clone, Default, Serialize)]
pub struct Approval {
    #[serde(serialize_with = "duration_text")]
    pub at: Duration,
    pub job: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Value>,
}

/// The results given instead of running a step or sending an http node's request.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stubs {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub steps: BTreeMap<String, StepStub>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub http: BTreeMap<String, HttpStub>,
}

impl Stubs {
    fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.http.is_empty()
    }
}

/// Steps stubbed by name, as `[("charge", StepStub::stdout("ch_1"))].into()` writes them.
impl<const N: usize> From<[(&str, StepStub); N]> for Stubs {
    fn from(steps: [(&str, StepStub); N]) -> Stubs {
        Stubs {
            steps: steps.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            http: BTreeMap::new(),
        }
    }
}

/// A stubbed step: a command's stdout and exit code, or a step function's value.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum StepStub {
    Command { stdout: String, exit: u8 },
    Value { value: Value },
}

impl StepStub {
    /// A command that printed `stdout` and exited 0.
    pub fn stdout(stdout: &str) -> StepStub {
        StepStub::Command {
            stdout: stdout.to_string(),
            exit: 0,
        }
    }

    /// A step function that returned `value`.
    pub fn value(value: Value) -> StepStub {
        StepStub::Value { value }
    }
}

/// An http node's stubbed response.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HttpStub {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

/// Text pairs, as `[("plan", "pro")].into()` writes them (outputs, cells).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Texts(pub BTreeMap<String, String>);

impl<const N: usize> From<[(&str, &str); N]> for Texts {
    fn from(pairs: [(&str, &str); N]) -> Texts {
        Texts(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }
}

impl Texts {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What the case checks; what is empty or `None` is not checked.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Expect {
    /// succeeded, failed, cancelled or waiting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Words the run's error holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Texts::is_empty")]
    pub outputs: Texts,
    /// The steps reached, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<String>>,
    /// Cells: `KEY` of the run, `ENTITY/KEY` of an entity.
    #[serde(skip_serializing_if = "Texts::is_empty")]
    pub state: Texts,
    /// The virtual time from the start until the last run ended.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "some_duration_text"
    )]
    pub time: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// Words the run's log holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// A duration as the CLI reads it, in whole milliseconds.
fn duration_text<S: Serializer>(
    duration: &Duration,
    to: S,
) -> std::result::Result<S::Ok, S::Error> {
    to.serialize_str(&format!("{}ms", duration.as_millis()))
}

fn some_duration_text<S: Serializer>(
    duration: &Option<Duration>,
    to: S,
) -> std::result::Result<S::Ok, S::Error> {
    duration_text(&duration.unwrap_or_default(), to)
}

/// One case's verdict, as `spool test --json` gives it; the run's fields are `None` or empty when
/// the case could not run at all (its failure says why).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub workflow: String,
    pub test_file: Option<String>,
    pub case: String,
    pub passed: bool,
    /// One line per unmet expectation.
    pub failures: Vec<String>,
    pub real_ms: u64,
    pub run_id: Option<String>,
    /// succeeded, failed, cancelled or waiting.
    pub outcome: Option<String>,
    pub error: Option<String>,
    pub awaiting: Option<String>,
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
    #[serde(default)]
    pub steps: Vec<String>,
    #[serde(default)]
    pub state: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub runs: u32,
    /// The virtual time from the start until the last run ended, in milliseconds.
    pub virtual_ms: Option<u64>,
    #[serde(default)]
    pub journal: Vec<JournalEntry>,
    #[serde(default)]
    pub log: String,
}

/// One call or result of the run's journal.
#[derive(Debug, Clone, Deserialize)]
pub struct JournalEntry {
    pub position: u32,
    pub kind: String,
    pub verb: String,
    pub name: String,
    pub data: Value,
}

impl CaseResult {
    /// The virtual time from the start until the last run ended.
    pub fn virtual_time(&self) -> Option<Duration> {
        self.virtual_ms.map(Duration::from_millis)
    }

    /// Panics with the case's report when it failed.
    #[track_caller]
    pub fn assert_passed(&self) {
        assert!(self.passed, "{self}");
    }
}

/// What a person reads: the verdict, each failure, how the run ended, its journal and log.
impl fmt::Display for CaseResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed { "PASS" } else { "FAIL" };
        writeln!(f, "{verdict} {} › {}", self.workflow, self.case)?;
        for failure in &self.failures {
            writeln!(f, "  {failure}")?;
        }
        let Some(run) = &self.run_id else {
            return Ok(());
        };
        let outcome = self.outcome.as_deref().unwrap_or("?");
        let waiting = match (outcome, &self.awaiting) {
            ("waiting", Some(what)) => format!(" for {what}"),
            _ => String::new(),
        };
        let error = self
            .error
            .as_ref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        writeln!(
            f,
            "  the run {run} {outcome}{waiting}{error}\n  its journal:"
        )?;
        for e in &self.journal {
            writeln!(
                f,
                "    {:>3} {:<6} {:<12} {} {}",
                e.position + 1,
                e.kind,
                e.verb,
                e.name,
                e.data
            )?;
        }
        let log: Vec<&str> = self.log.trim_end().lines().collect();
        if !log.is_empty() {
            writeln!(f, "  its log:")?;
            for line in &log[log.len().saturating_sub(40)..] {
                writeln!(f, "    {line}")?;
            }
        }
        Ok(())
    }
}

/// `spool test` refusing the case or the workflow (exit code 2, its one line), or failing to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestError {
    /// The CLI's exit code; `None` when it could not be started.
    pub exit_code: Option<i32>,
    pub message: String,
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TestError {}

/// Runs `spool test` with a given CLI.
#[derive(Debug, Clone)]
pub struct Runner {
    cli: PathBuf,
    fresh_dir: bool,
}

impl Runner {
    /// `$SPOOL_CLI`, else `spool` on the `PATH`.
    pub fn from_env() -> Runner {
        Runner::with_cli(
            std::env::var_os("SPOOL_CLI").map_or_else(|| PathBuf::from("spool"), PathBuf::from),
        )
    }

    pub fn with_cli(cli: impl Into<PathBuf>) -> Runner {
        Runner {
            cli: cli.into(),
            fresh_dir: false,
        }
    }

    /// Each pass in a new, empty working directory, as each pass on a cluster is a new pod.
    pub fn fresh_dir(mut self, fresh: bool) -> Runner {
        self.fresh_dir = fresh;
        self
    }

    /// Runs one case built here against the workflow file.
    pub fn run_case(
        &self,
        workflow: impl AsRef<Path>,
        case: &Case,
    ) -> Result<CaseResult, TestError> {
        let mut results = self.run_cases(workflow, std::slice::from_ref(case))?;
        Ok(results.remove(0))
    }

    /// Runs these cases, or with none the workflow's own test file (`trial.sh` →
    /// `trial.test.yaml`; none there: one case that passes when the run succeeds).
    pub fn run_cases(
        &self,
        workflow: impl AsRef<Path>,
        cases: &[Case],
    ) -> Result<Vec<CaseResult>, TestError> {
        let mut command = Command::new(&self.cli);
        command.arg("test").arg(workflow.as_ref()).arg("--json");
        if !cases.is_empty() {
            let text = serde_json::to_string(cases)
                .map_err(|e| refused(None, format!("the cases are not JSON: {e}")))?;
            command.args(["--case", &text]);
        }
        if self.fresh_dir {
            command.arg("--fresh-dir");
        }
        let out = command.output().map_err(|e| {
            let cli = self.cli.display();
            refused(None, format!("cannot run the spool CLI {cli} (set SPOOL_CLI to its path or put spool on the PATH): {e}"))
        })?;
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        match out.status.code() {
            Some(0 | 1) => {}
            // Exit 2 is bad input, one line on stderr; anything else is the CLI failing.
            Some(2) => return Err(refused(Some(2), said)),
            code => return Err(refused(code, format!("spool test exited {code:?}: {said}"))),
        }
        let results: Vec<CaseResult> = serde_json::from_slice(&out.stdout).map_err(|e| {
            let start: String = String::from_utf8_lossy(&out.stdout)
                .chars()
                .take(200)
                .collect();
            refused(
                out.status.code(),
                format!("spool test --json printed what is not its report ({e}): {start}"),
            )
        })?;
        if results.is_empty() {
            return Err(refused(
                out.status.code(),
                "spool test --json reported no case".to_string(),
            ));
        }
        Ok(results)
    }
}

fn refused(exit_code: Option<i32>, message: String) -> TestError {
    TestError { exit_code, message }
}

/// [`Runner::run_case`] with the CLI of [`Runner::from_env`].
pub fn run_case(workflow: impl AsRef<Path>, case: &Case) -> Result<CaseResult, TestError> {
    Runner::from_env().run_case(workflow, case)
}

/// [`Runner::run_cases`] with the CLI of [`Runner::from_env`].
pub fn run_cases(workflow: impl AsRef<Path>, cases: &[Case]) -> Result<Vec<CaseResult>, TestError> {
    Runner::from_env().run_cases(workflow, cases)
}
