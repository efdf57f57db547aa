use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::answers::{AgentInfo, Answer};
use crate::errors::{Error, Result};

const NO_SOCKET: &str = "SPOOL_SOCKET is not set: durable calls run inside a script started by \
                         spool run, spool submit or a cluster run";

/// How often to try reaching the agent. Only the connect is retried: a request that was written
/// may have been recorded, so it is never written again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DialOptions {
    pub(crate) attempts: u32,
    pub(crate) backoff: Duration,
}

impl DialOptions {
    /// SPOOL_CONNECT_ATTEMPTS (default 5) and SPOOL_CONNECT_BACKOFF_MS (default 50, doubling); a
    /// variable that is not a whole number keeps the default rather than failing the script.
    pub(crate) fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let number = |name: &str| lookup(name).and_then(|v| v.trim().parse::<u64>().ok());
        DialOptions {
            attempts: number("SPOOL_CONNECT_ATTEMPTS")
                .filter(|n| *n >= 1)
                .map_or(5, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            backoff: Duration::from_millis(number("SPOOL_CONNECT_BACKOFF_MS").unwrap_or(50)),
        }
    }
}

/// What a call does when the agent answers `suspended`. It never returns: the script must not run
/// past a wait that has not returned. Tests put a hook of their own here that unwinds instead.
pub(crate) type SuspendHook = fn(&str) -> !;

/// The agent is ending this process group. Wait for it; if the signal somehow never lands, exit
/// 75 (temporary failure) so the pass ends and the run is tried again rather than hanging.
pub(crate) fn block_until_ended(message: &str) -> ! {
    eprintln!("spool: {message}");
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(75)
}

struct Link {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
}

enum LinkState {
    NotYet,
    Open(Link),
    /// The agent went away during a call. A new connection would reach, at best, a pass that is
    /// being ended, so every later call fails the same way.
    Lost,
}

/// The connection of one process (or of one test) to its agent, opened at the first call.
pub(crate) struct Client {
    socket: Option<PathBuf>,
    dial: DialOptions,
    link: Mutex<LinkState>,
    info: OnceLock<AgentInfo>,
    on_suspend: SuspendHook,
}

impl Client {
    pub(crate) fn new(socket: Option<PathBuf>, dial: DialOptions, on_suspend: SuspendHook) -> Self {
        Client {
            socket,
            dial,
            link: Mutex::new(LinkState::NotYet),
            info: OnceLock::new(),
            on_suspend,
        }
    }

    pub(crate) fn from_env() -> Self {
        let socket = std::env::var_os("SPOOL_SOCKET")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from);
        Client::new(socket, DialOptions::from_env(), block_until_ended)
    }

    /// Sends one request and reads its answer, whatever its status.
    pub(crate) fn exchange(&self, request: &Value) -> Result<Answer> {
        let mut line = serde_json::to_string(request)
            .map_err(|e| Error::internal(format!("the request could not be encoded: {e}")))?;
        line.push('\n');
        let mut state = self.lock_link();
        if let LinkState::NotYet = *state {
            *state = LinkState::Open(self.connect()?);
        }
        let LinkState::Open(link) = &mut *state else {
            return Err(Error::AgentUnavailable(
                "the agent went away during an earlier call".into(),
            ));
        };
        let mut reply = String::new();
        let sent = link
            .stream
            .write_all(line.as_bytes())
            .and_then(|()| link.stream.flush());
        let read = sent.and_then(|()| link.reader.read_line(&mut reply));
        match read {
            Ok(n) if n > 0 && reply.ends_with('\n') => {}
            Ok(_) => {
                *state = LinkState::Lost;
                return Err(Error::AgentUnavailable(
                    "the agent closed the connection during the call".into(),
                ));
            }
            Err(e) => {
                *state = LinkState::Lost;
                return Err(Error::AgentUnavailable(format!(
                    "the agent went away during the call: {e}"
                )));
            }
        }
        drop(state);
        serde_json::from_str(&reply).map_err(|e| {
            Error::internal(format!(
                "the agent sent something that is not an answer ({e}): {}",
                reply.trim_end()
            ))
        })
    }

    /// Sends one request; an `error` answer becomes `Error::Script` and a `suspended` one never
    /// comes back, so what returns is `ok` or `execute`.
    pub(crate) fn call(&self, request: &Value) -> Result<Answer> {
        let answer = self.exchange(request)?;
        match answer.status.as_str() {
            "ok" | "execute" => Ok(answer),
            "error" => Err(answer.into_script_error()),
            "suspended" => {
                (self.on_suspend)(answer.message.as_deref().unwrap_or("script suspended"))
            }
            other => Err(Error::internal(format!(
                "unexpected answer from the agent: {other}"
            ))),
        }
    }

    /// Fails at the call site when the agent does not know `verb` or speaks a protocol older
    /// than 1, so a too-old agent is not sent a request it would misread. Asked once per
    /// connection.
    pub(crate) fn require(&self, what: &str, verb: &str) -> Result<()> {
        let info = match self.info.get() {
            Some(info) => info,
            None => {
                let answer = self.exchange(&serde_json::json!({ "verb": "agent.info" }))?;
                let _ = self.info.set(AgentInfo::from_answer(&answer));
                self.info.get().expect("set just above")
            }
        };
        if info.protocol >= 1 && info.verbs.iter().any(|v| v == verb) {
            return Ok(());
        }
        Err(Error::usage(format!(
            "{what} needs an agent that speaks protocol 1 and knows {verb}; this agent {}: update spool where the agent runs",
            info.describe()
        )))
    }

    fn lock_link(&self) -> MutexGuard<'_, LinkState> {
        // A panic while the lock was held left the state as it was between whole calls, so it
        // can still be used.
        self.link
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connect(&self) -> Result<Link> {
        let Some(path) = &self.socket else {
            return Err(Error::AgentUnavailable(NO_SOCKET.into()));
        };
        let mut backoff = self.dial.backoff;
        let mut attempt = 1;
        loop {
            match UnixStream::connect(path) {
                Ok(stream) => {
                    let reader = stream.try_clone().map(BufReader::new).map_err(|e| {
                        Error::AgentUnavailable(format!(
                            "cannot use the socket {}: {e}",
                            path.display()
                        ))
                    })?;
                    return Ok(Link { stream, reader });
                }
                Err(e) if attempt >= self.dial.attempts => {
                    return Err(Error::AgentUnavailable(format!(
                        "cannot reach the agent at {} ({attempt} attempts): {e}",
                        path.display()
                    )));
                }
                Err(_) => {
                    std::thread::sleep(backoff);
                    backoff = backoff.saturating_mul(2);
                    attempt += 1;
                }
            }
        }
    }
}

/// The process's one client, connected at its first durable call.
pub(crate) fn client() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(Client::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_options_come_from_the_environment_with_defaults() {
        let defaults = DialOptions::from_lookup(|_| None);
        assert_eq!(
            (defaults.attempts, defaults.backoff),
            (5, Duration::from_millis(50))
        );
        let set = DialOptions::from_lookup(|name| {
            Some(
                if name == "SPOOL_CONNECT_ATTEMPTS" {
                    "2"
                } else {
                    "7"
                }
                .to_string(),
            )
        });
        assert_eq!((set.attempts, set.backoff), (2, Duration::from_millis(7)));
        let bad = DialOptions::from_lookup(|name| {
            Some(
                if name == "SPOOL_CONNECT_ATTEMPTS" {
                    "0"
                } else {
                    "soon"
                }
                .to_string(),
            )
        });
        assert_eq!((bad.attempts, bad.backoff), (5, Duration::from_millis(50)));
    }
}
