//! The C ABI of dpmo. This crate only validates, converts and reports: every number-crunching line lives
//! in the `dpmo` core. It holds the one panic handler of the project (abort), which no input can reach.
//!
//! Conventions for every function:
//! * the return value is a `dpmo_status`; `DPMO_OK` (0) is success;
//! * on any error nothing is written to any output and the generator state is unchanged;
//! * pointers must be valid for the lengths given; null pointers, misaligned pointers, lengths whose byte
//!   size overflows, and outputs overlapping inputs are refused with a status, never dereferenced;
//! * enum-like arguments are `uint32_t` and unknown values give `DPMO_INVALID_ARGUMENT`.
#![no_std]
#![allow(non_camel_case_types)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// cbindgen writes include/dpmo.h in the order of these declarations, so they go from the everyday functions to
// the specialised ones; each is its own group (separated by a blank line) so that rustfmt keeps that order.
// The status and the version,
mod status;

// the generator,
mod rng;

// the budget,
mod budget;

// the single-objective selectors,
mod select;

// local dampening,
mod local;

// PrivPareto, PrivAgg and top-k,
mod multi;

// the applications' utilities and sensitivities,
mod applications;

// candidate discovery over an unknown domain (partition selection, unknown-domain top-k),
mod discover;

// the pieces of the exact distributed selection (partitions on a cluster),
mod distributed;

// private data generalization.
mod generalize;

mod buffers;
mod selection;

pub use applications::*;
pub use budget::*;
pub use discover::*;
pub use distributed::*;
pub use generalize::*;
pub use local::*;
pub use multi::*;
pub use rng::*;
pub use select::*;
pub use status::*;

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    extern "C" {
        fn abort() -> !;
    }
    // SAFETY: libc's abort takes no arguments and never returns. A hosted process (a JVM, a database
    // backend) must die loudly rather than spin forever; no input can reach this line.
    unsafe { abort() }
}
