//! The processes of the control plane: spawned from one long-lived thread so they die with the
//! test binary, logged to files, stopped gracefully, and reported with the tail of their log.
//!
//! Each child gets `PR_SET_PDEATHSIG(SIGKILL)`: the kernel kills it when the *thread* that
//! forked it exits. Test threads come and go (each `#[tokio::test]` runs on its own), so every
//! fork happens on a dedicated thread that lives as long as the process: the children then die
//! exactly when the test binary does, even when it is killed with SIGKILL.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cleanup;
use super::error::{Error, Result};

/// A job for the forking thread.
type Job = Box<dyn FnOnce() + Send>;

/// The thread every child is forked from; it lives until the process exits.
fn forking_thread() -> &'static mpsc::Sender<Job> {
    static SENDER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (sender, jobs) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("envtest-control-plane".into())
            .spawn(move || {
                for job in jobs {
                    job();
                }
            })
            .expect("spawning the envtest control-plane thread");
        sender
    })
}

/// Spawns `command` from the forking thread, with `PR_SET_PDEATHSIG(SIGKILL)`.
fn spawn_with_parent_death_signal(mut command: Command) -> io::Result<Child> {
    let (reply, answer) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let parent = std::process::id();
        // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
        // functions (prctl, getppid, _exit).
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent died before prctl took effect: nobody would kill this child.
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let _ = reply.send(command.spawn());
    });
    forking_thread()
        .send(job)
        .map_err(|_| io::Error::other("the envtest control-plane thread is gone"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("the envtest control-plane thread is gone"))?
}

/// Free loopback ports, `count` of them, all different (each is bound until all are picked).
pub(crate) fn free_ports(count: usize) -> Result<Vec<u16>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<Vec<_>>>()
        .map_err(|e| Error::io("finding a free port on 127.0.0.1", e))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<io::Result<_>>()
        .map_err(|e| Error::io("finding a free port on 127.0.0.1", e))
}

/// One process of the control plane; it can be stopped and started again with the same
/// command line (same ports, same data).
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) name: &'static str,
    binary: PathBuf,
    args: Vec<OsString>,
    /// Its stdout and stderr, appended across restarts.
    pub(crate) log: PathBuf,
    /// The instance it belongs to, for the clean-up at exit.
    instance: u64,
    child: Option<Child>,
}

impl Process {
    pub(crate) fn new(
        name: &'static str,
        binary: PathBuf,
        args: Vec<OsString>,
        dir: &Path,
        instance: u64,
    ) -> Self {
        Self {
            name,
            binary,
            args,
            log: dir.join(format!("{name}.log")),
            instance,
            child: None,
        }
    }

    /// Starts it (it must not be running).
    pub(crate) fn start(&mut self) -> Result<()> {
        debug_assert!(self.child.is_none(), "{} is running already", self.name);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| Error::io(format!("opening {}", self.log.display()), e))?;
        let err = log
            .try_clone()
            .map_err(|e| Error::io(format!("opening {}", self.log.display()), e))?;
        let mut command = Command::new(&self.binary);
        command
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        let child = spawn_with_parent_death_signal(command)
            .map_err(|e| Error::io(format!("starting {}", self.binary.display()), e))?;
        cleanup::track_pid(self.instance, child.id());
        self.child = Some(child);
        Ok(())
    }

    /// How it exited, if it did.
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Stops it: SIGTERM, then SIGKILL after `grace`. Does nothing if it is not running.
    pub(crate) fn stop(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        if child.try_wait().ok().flatten().is_none() {
            // SAFETY: kill(2) on our own child, which has not been reaped yet.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + grace;
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        cleanup::untrack_pid(self.instance, pid);
    }

    /// The error for a process that exited before it was ready: [`Error::PortInUse`] when its
    /// log says so.
    pub(crate) fn exited_error(&self, status: ExitStatus, port: u16) -> Error {
        let tail = self.log_tail();
        if tail.contains("address already in use") {
            return Error::PortInUse {
                process: self.name,
                port,
                log: self.log.clone(),
                tail,
            };
        }
        Error::Exited {
            process: self.name,
            status: status.to_string(),
            log: self.log.clone(),
            tail,
        }
    }

    /// The error for a process that did not become ready within `timeout`.
    pub(crate) fn not_ready_error(&self, timeout: Duration) -> Error {
        Error::NotReady {
            process: self.name,
            timeout,
            log: self.log.clone(),
            tail: self.log_tail(),
        }
    }

    /// The last lines of its log (at most 20 lines of the last 8 KiB).
    pub(crate) fn log_tail(&self) -> String {
        log_tail(&self.log, 20)
    }
}

/// The last `lines` lines of the file at `path` (read from its last 8 KiB).
fn log_tail(path: &Path, lines: usize) -> String {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|mut file| {
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(8192)))?;
        file.read_to_end(&mut bytes)
    });
    if let Err(error) = read {
        return format!("(cannot read {}: {error})", path.display());
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    let tail = all[all.len().saturating_sub(lines)..].join("\n");
    if tail.is_empty() {
        "(empty)".into()
    } else {
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_outlives_the_short_lived_thread_that_started_it() {
        let dir = tempfile::tempdir().unwrap();
        let args = vec!["30".into()];
        let mut sleeper = Process::new("sleep", "sleep".into(), args, dir.path(), u64::MAX);
        // PDEATHSIG fires when the forking thread exits: were the child forked from this
        // short-lived thread, it would be killed as soon as the thread ends.
        std::thread::scope(|s| s.spawn(|| sleeper.start().unwrap()).join().unwrap());
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            sleeper.exited(),
            None,
            "killed when its starting thread ended"
        );
        sleeper.stop(Duration::from_secs(1));
        assert!(sleeper.child.is_none());
    }

    #[test]
    fn the_tail_of_a_log_is_its_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let tail = log_tail(&path, 3);
        assert_eq!(tail, "line 28\nline 29\nline 30");
        assert!(log_tail(&dir.path().join("none"), 3).starts_with("(cannot read "));
    }

    #[test]
    fn a_process_that_exits_says_why_with_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut etcd = Process::new("etcd", "false".into(), Vec::new(), dir.path(), u64::MAX);
        etcd.start().unwrap();
        let status = loop {
            if let Some(status) = etcd.exited() {
                break status;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        std::fs::write(
            &etcd.log,
            "starting\nlisten tcp 127.0.0.1:2379: bind: address already in use\n",
        )
        .unwrap();
        let error = etcd.exited_error(status, 2379);
        assert!(
            matches!(error, Error::PortInUse { port: 2379, .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("bind: address already in use"),
            "{error}"
        );

        std::fs::write(&etcd.log, "panic: no space left on device\n").unwrap();
        let message = etcd.exited_error(status, 2379).to_string();
        assert!(
            message.starts_with("etcd exited (exit status: 1) before it was ready"),
            "{message}"
        );
        assert!(
            message.ends_with("panic: no space left on device"),
            "{message}"
        );
        let message = etcd.not_ready_error(Duration::from_secs(90)).to_string();
        assert!(message.contains("not ready within 90s"), "{message}");
        assert!(message.contains("start_timeout"), "{message}");
        etcd.stop(Duration::from_secs(1));
    }

    #[test]
    fn free_ports_are_distinct() {
        let ports = free_ports(4).unwrap();
        let mut unique = ports.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{ports:?}");
    }
}
