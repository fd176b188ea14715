//! The project lock: one writing command at a time in a project folder. The lock is an advisory
//! `flock` on the folder itself (std's `File::lock`), so it leaves no file behind and dies with
//! the process. A second command waits, saying so. Taking the lock also finishes or rolls back
//! what a dead command left (see [`super::transaction::recover`]).

use std::fs::{File, TryLockError};
use std::path::Path;

use anyhow::{Context, Result};

/// Held for the duration of a command; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct ProjectLock {
    _file: File,
}

/// Take the exclusive lock on the project folder `root`, waiting for another command holding it.
pub fn lock(root: &Path) -> Result<ProjectLock> {
    let file = open(root)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            crate::errln!(
                "waiting: another operator-rs command is changing {}; this one starts when it ends",
                root.display()
            );
            file.lock()
                .with_context(|| format!("locking {}", root.display()))?;
        }
        Err(TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", root.display()));
        }
    }
    super::transaction::recover(root)?;
    Ok(ProjectLock { _file: file })
}

#[cfg(unix)]
fn open(root: &Path) -> Result<File> {
    File::open(root).with_context(|| format!("opening the project folder {}", root.display()))
}

/// Windows cannot open a folder as a file: lock a file inside it instead.
#[cfg(not(unix))]
fn open(root: &Path) -> Result<File> {
    let path = root.join(".operator-rs.lock");
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))
}
