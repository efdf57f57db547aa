use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Runs a step's command as the `spool step` verb does: no shell, stdin and stderr inherited,
/// stdout captured, `SPOOL_IDEMPOTENCY_KEY` set. A command that cannot be started is reported the
/// way a shell would (127 not found, 126 not runnable), so it is recorded as a failed step rather
/// than failing the script. With tracing on, `traceparent` names the step's span: as `TRACEPARENT`,
/// a command that traces joins the run's trace (docs/tracing.md).
pub(crate) fn run(argv: &[String], idempotency_key: &str, traceparent: Option<&str>) -> (Vec<u8>, i32) {
    let Some((program, args)) = argv.split_first() else {
        return (Vec::new(), 127);
    };
    let mut command = Command::new(program);
    command.args(args).env("SPOOL_IDEMPOTENCY_KEY", idempotency_key);
    if let Some(traceparent) = traceparent.filter(|t| !t.is_empty()) {
        command.env("TRACEPARENT", traceparent);
    }
    let output = command
        .stdin(Stdio::inherit())
        .stderr(Stdio::inherit())
        .stdout(Stdio::piped())
        .output();
    match output {
        Ok(output) => {
            let code = output
                .status
                .code()
                .or_else(|| output.status.signal().map(|s| 128 + s))
                .unwrap_or(1);
            (output.stdout, code)
        }
        Err(e) => {
            eprintln!("spool: {program}: {e}");
            let code = if e.kind() == ErrorKind::NotFound {
                127
            } else {
                126
            };
            (Vec::new(), code)
        }
    }
}
