//! Nothing outlives the test binary: the folder of each control plane, and its processes.
//!
//! - A control plane's folder is `$TMPDIR/operator-rs-envtest/<pid>-<instance>`.
//! - At exit (`atexit`, which runs when the test harness exits, passing or failing), every
//!   process still running is killed and every folder removed: the shared control plane lives
//!   in a `static`, which is never dropped.
//! - A binary killed outright (SIGKILL, OOM) runs no handler: its children die through
//!   `PR_SET_PDEATHSIG` (see `process`), and its folder is removed by the next start, which
//!   removes every folder whose process is gone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

use super::error::{Error, Result};

/// What one control plane leaves behind until it stops.
#[derive(Debug, Default)]
struct Live {
    dir: Option<PathBuf>,
    pids: Vec<u32>,
}

/// Every control plane of this process that has not stopped, by instance number.
static LIVE: Mutex<Option<HashMap<u64, Live>>> = Mutex::new(None);

fn with_live<T>(f: impl FnOnce(&mut HashMap<u64, Live>) -> T) -> T {
    let mut live = LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f(live.get_or_insert_with(HashMap::new))
}

/// The folder every control plane's folder is made in.
pub(crate) fn root() -> PathBuf {
    std::env::temp_dir().join("operator-rs-envtest")
}

/// Creates the folder of a new control plane, numbered `instance`, after removing the
/// leftovers of killed runs; it is removed at exit unless [`forget`] removed it before.
pub(crate) fn instance_dir(instance: u64) -> Result<PathBuf> {
    install_exit_handler();
    let root = root();
    remove_leftovers(&root);
    std::fs::create_dir_all(&root)
        .map_err(|e| Error::io(format!("creating {}", root.display()), e))?;
    // Unique among live processes (the pid) and within this one (the instance). A folder of
    // that name is a leftover of a dead process that had this pid: removed.
    let dir = root.join(format!("{}-{instance}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    with_live(|live| live.entry(instance).or_default().dir = Some(dir.clone()));
    Ok(dir)
}

/// A new instance number.
pub(crate) fn next_instance() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Records that `pid` runs for `instance`.
pub(crate) fn track_pid(instance: u64, pid: u32) {
    with_live(|live| live.entry(instance).or_default().pids.push(pid));
}

/// Records that `pid` was stopped and reaped.
pub(crate) fn untrack_pid(instance: u64, pid: u32) {
    with_live(|live| {
        if let Some(entry) = live.get_mut(&instance) {
            entry.pids.retain(|p| *p != pid);
        }
    });
}

/// Removes the folder of `instance` (its processes are stopped) and forgets it.
pub(crate) fn forget(instance: u64) {
    if let Some(Live { dir: Some(dir), .. }) = with_live(|live| live.remove(&instance)) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Removes every folder under `root` whose process (the `<pid>` of `<pid>-<instance>`) is gone.
pub(crate) fn remove_leftovers(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = (name.to_str())
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn install_exit_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a plain `extern "C" fn` with no captured state.
        unsafe { libc::atexit(at_exit) };
    });
}

/// Kills what still runs and removes every folder. Runs at exit, possibly while another
/// thread holds the registry: then it leaves the rest to PDEATHSIG and the next start.
extern "C" fn at_exit() {
    let Ok(mut guard) = LIVE.try_lock() else {
        return;
    };
    for (_, live) in guard.take().unwrap_or_default() {
        for pid in live.pids {
            // SAFETY: kill(2) and waitpid(2) on children of this process, which nothing
            // else reaps any more (the process is exiting).
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
                libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
            }
        }
        if let Some(dir) = live.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_of_dead_processes_are_removed_and_live_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        // A pid above the kernel's maximum (4194304) never exists.
        let dead = root.path().join("4194305-abc");
        let alive = root.path().join(format!("{}-abc", std::process::id()));
        let unrelated = root.path().join("notes");
        for dir in [&dead, &alive, &unrelated] {
            std::fs::create_dir_all(dir.join("etcd")).unwrap();
        }
        remove_leftovers(root.path());
        assert!(!dead.exists(), "the folder of a dead process was kept");
        assert!(
            alive.exists(),
            "the folder of a running process was removed"
        );
        assert!(
            unrelated.exists(),
            "a folder envtest did not make was removed"
        );
    }
}
