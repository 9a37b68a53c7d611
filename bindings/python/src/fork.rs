//! Which process is running: state that `fork(2)` copied into a child (a generator, a budget) must be
//! recognised there, whoever called `fork` (Python's `os.fork`, `multiprocessing` with the fork or
//! forkserver start method, or C code that never tells Python).
//!
//! A [`Process`] is a pair (token, pid). The token is a random nonzero 64-bit value, drawn from the operating
//! system at its first read in a process and kept in one page of memory that
//!
//! * the kernel zeroes in every child (`madvise(MADV_WIPEONFORK)`, Linux ≥ 4.14): a fork made by any code,
//!   even a raw `clone(2)` that bypasses the C library, leaves the child with token 0, so its first read
//!   draws a new one;
//! * a `pthread_atfork` child handler zeroes as well (every fork through the C library, on every Unix,
//!   also where the page cannot be wiped by the kernel).
//!
//! The pid is compared too: it catches a fork that bypasses the C library on a kernel without
//! `MADV_WIPEONFORK`, unless the child has the pid of the process that made the state (pid reuse after
//! that process ended) — the one case not detected, and only on such kernels. Two processes share a token
//! with probability 2⁻⁶⁴ per pair.

use dpmo::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::errors::Failure;

/// The identity of a process: equal in one process, different in its forked children (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process {
    token: u64,
    pid: u32,
}

/// The token's home when no wipe-on-fork page could be mapped (it is zeroed by the atfork handler only).
static FALLBACK: AtomicU64 = AtomicU64::new(0);
static CELL: OnceLock<&'static AtomicU64> = OnceLock::new();

/// Zeroes the token in a child (runs in the child right after `fork`; an atomic store is
/// async-signal-safe).
#[cfg(unix)]
extern "C" fn zero_in_child() {
    if let Some(cell) = CELL.get() {
        cell.store(0, Ordering::SeqCst);
    }
    FALLBACK.store(0, Ordering::SeqCst);
}

/// One anonymous page the kernel zeroes in forked children, or None where the kernel refuses.
#[cfg(target_os = "linux")]
fn wipe_on_fork_page() -> Option<&'static AtomicU64> {
    // SAFETY: an anonymous private mapping of one page, never unmapped once madvise succeeded; a page is
    // aligned far beyond an AtomicU64's alignment and zero-filled, a valid AtomicU64 (0).
    unsafe {
        let size = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE))
            .ok()
            .filter(|&s| s >= 8)?;
        let page = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if page == libc::MAP_FAILED {
            return None;
        }
        if libc::madvise(page, size, libc::MADV_WIPEONFORK) != 0 {
            libc::munmap(page, size);
            return None;
        }
        Some(&*(page as *const AtomicU64))
    }
}

#[cfg(not(target_os = "linux"))]
fn wipe_on_fork_page() -> Option<&'static AtomicU64> {
    None
}

fn cell() -> &'static AtomicU64 {
    CELL.get_or_init(|| {
        #[cfg(unix)]
        // SAFETY: registers a handler that only performs atomic stores on statics.
        unsafe {
            libc::pthread_atfork(None, None, Some(zero_in_child));
        }
        wipe_on_fork_page().unwrap_or(&FALLBACK)
    })
}

/// How forks are detected here (internal, for the tests): `"wipe-on-fork"` when the token lives in a page
/// the kernel zeroes in children, else `"atfork+pid"`.
#[pyo3::pyfunction]
pub fn _fork_detection() -> &'static str {
    if std::ptr::eq(cell(), &FALLBACK) {
        "atfork+pid"
    } else {
        "wipe-on-fork"
    }
}

/// `n` bytes from the operating system's secure random source (getrandom(2) on Linux).
pub fn entropy<const N: usize>() -> Result<[u8; N], Failure> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| {
        Failure::with(
            Error::Unsupported,
            format!("the operating system's random source failed: {e}"),
        )
    })?;
    Ok(b)
}

/// The running process.
pub fn current() -> Result<Process, Failure> {
    let cell = cell();
    let mut token = cell.load(Ordering::SeqCst);
    if token == 0 {
        let mut fresh = 0;
        while fresh == 0 {
            fresh = u64::from_le_bytes(entropy::<8>()?);
        }
        token = match cell.compare_exchange(0, fresh, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => fresh,
            Err(other) => other,
        };
    }
    Ok(Process {
        token,
        pid: std::process::id(),
    })
}
