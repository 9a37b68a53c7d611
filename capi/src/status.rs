//! Status codes, their messages, and the library version.

use core::ffi::c_char;
use dpmo_core::Error;

/// The result of every dpmo function. `DPMO_OK` is 0; each other value names one kind of failure, and
/// `dpmo_status_message` turns it into a sentence.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum dpmo_status {
    /// Success.
    DPMO_OK = 0,
    /// A required pointer argument is null.
    DPMO_NULL_POINTER = 1,
    /// There are no candidates (n = 0).
    DPMO_EMPTY_INPUT = 2,
    /// A score, utility or weight is NaN or infinite.
    DPMO_NON_FINITE_INPUT = 3,
    /// epsilon is not a finite number greater than zero.
    DPMO_INVALID_EPSILON = 4,
    /// A global sensitivity is not a finite number greater than zero.
    DPMO_INVALID_SENSITIVITY = 5,
    /// A local sensitivity value (table or callback) is NaN, negative or infinite.
    DPMO_INVALID_SENSITIVITY_VALUE = 6,
    /// Lengths that must agree do not.
    DPMO_LENGTH_MISMATCH = 7,
    /// A scratch buffer is too small.
    DPMO_SCRATCH_TOO_SMALL = 8,
    /// A result is not representable as a finite double, or a size computation overflowed.
    DPMO_OVERFLOW = 9,
    /// The generator state was not initialised by dpmo_rng_init or is corrupted.
    DPMO_INVALID_GENERATOR = 10,
    /// An argument is outside its documented range (unknown enum value, misaligned pointer, ...).
    DPMO_INVALID_ARGUMENT = 11,
    /// An input exceeds a fixed capacity (more than 16 objectives, a contingency table beyond 16 x 16, or a
    /// generalization hierarchy beyond its documented limits).
    DPMO_CAPACITY_EXCEEDED = 12,
    /// The privacy budget left is smaller than the epsilon requested.
    DPMO_BUDGET_EXHAUSTED = 13,
    /// An output buffer overlaps an input buffer.
    DPMO_OVERLAPPING_BUFFERS = 14,
    /// No implementation in the arithmetic asked for (report-noisy-max with Laplace noise needs
    /// `DPMO_FLOAT`), or the platform lacks a facility (no operating-system random source).
    DPMO_UNSUPPORTED = 15,
}

impl From<Error> for dpmo_status {
    fn from(e: Error) -> Self {
        match e {
            Error::NullPointer => dpmo_status::DPMO_NULL_POINTER,
            Error::EmptyInput => dpmo_status::DPMO_EMPTY_INPUT,
            Error::NonFiniteInput => dpmo_status::DPMO_NON_FINITE_INPUT,
            Error::InvalidEpsilon => dpmo_status::DPMO_INVALID_EPSILON,
            Error::InvalidSensitivity => dpmo_status::DPMO_INVALID_SENSITIVITY,
            Error::InvalidSensitivityValue => dpmo_status::DPMO_INVALID_SENSITIVITY_VALUE,
            Error::LengthMismatch => dpmo_status::DPMO_LENGTH_MISMATCH,
            Error::ScratchTooSmall => dpmo_status::DPMO_SCRATCH_TOO_SMALL,
            Error::Overflow => dpmo_status::DPMO_OVERFLOW,
            Error::InvalidGenerator => dpmo_status::DPMO_INVALID_GENERATOR,
            Error::InvalidArgument => dpmo_status::DPMO_INVALID_ARGUMENT,
            Error::CapacityExceeded => dpmo_status::DPMO_CAPACITY_EXCEEDED,
            Error::BudgetExhausted => dpmo_status::DPMO_BUDGET_EXHAUSTED,
            Error::OverlappingBuffers => dpmo_status::DPMO_OVERLAPPING_BUFFERS,
            Error::Unsupported => dpmo_status::DPMO_UNSUPPORTED,
        }
    }
}

/// Maps a `Result` onto a status.
pub(crate) fn status_of(r: Result<(), Error>) -> dpmo_status {
    match r {
        Ok(()) => dpmo_status::DPMO_OK,
        Err(e) => e.into(),
    }
}

// Compile-time check that the C codes are the core's codes.
const _: () = {
    assert!(Error::NullPointer.code() == dpmo_status::DPMO_NULL_POINTER as u32);
    assert!(Error::Unsupported.code() == dpmo_status::DPMO_UNSUPPORTED as u32);
    assert!(Error::ALL.len() == dpmo_status::DPMO_UNSUPPORTED as usize);
};

/// A static, NUL-terminated English sentence describing `status` (a `dpmo_status` value). Unknown values
/// give "Unknown dpmo status code." Never returns null; the string must not be freed.
#[no_mangle]
pub extern "C" fn dpmo_status_message(status: u32) -> *const c_char {
    let s: &'static core::ffi::CStr = match Error::from_code(status) {
        _ if status == 0 => c"Success.",
        Some(e) => e.message_c(),
        None => c"Unknown dpmo status code.",
    };
    s.as_ptr()
}

/// The major version of the C ABI this header describes (semantic versioning: a program built against
/// major version M runs with any library of major version M and a minor version at least as high).
pub const DPMO_VERSION_MAJOR: u32 = 0;
/// The minor version of the header.
pub const DPMO_VERSION_MINOR: u32 = 2;
/// The patch version of the header.
pub const DPMO_VERSION_PATCH: u32 = 0;

/// The decimal value of an ASCII number at the start of `s` from index `i`, and the index after it.
const fn parse(s: &[u8], mut i: usize) -> (u32, usize) {
    let mut v = 0u32;
    while i < s.len() && s[i].is_ascii_digit() {
        v = v * 10 + (s[i] - b'0') as u32;
        i += 1;
    }
    (v, i + 1)
}

// The header's version macros are the crate's version.
const _: () = {
    let v = env!("CARGO_PKG_VERSION").as_bytes();
    let (major, i) = parse(v, 0);
    let (minor, i) = parse(v, i);
    let (patch, _) = parse(v, i);
    assert!(major == DPMO_VERSION_MAJOR && minor == DPMO_VERSION_MINOR && patch == DPMO_VERSION_PATCH);
};

/// The library version, a static NUL-terminated string such as "0.2.0" (compare with the
/// `DPMO_VERSION_*` macros to detect a header/library mismatch).
#[no_mangle]
pub extern "C" fn dpmo_version() -> *const c_char {
    const VERSION: &core::ffi::CStr =
        match core::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(s) => s,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}
