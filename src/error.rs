//! The one error type of the library. Each variant is one C status code (`capi` maps them one to one),
//! so a failure means the same thing from Rust, C, Java and SQL.

use core::fmt;

/// Why a call was refused. Nothing is written to a function's outputs when it returns an `Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// A required pointer was null (C ABI only).
    NullPointer,
    /// There are no candidates (n = 0), or an empty group was asked to choose.
    EmptyInput,
    /// A score, utility or weight is NaN or infinite.
    NonFiniteInput,
    /// ε is not a finite number greater than zero.
    InvalidEpsilon,
    /// A global sensitivity Δ is not a finite number greater than zero.
    InvalidSensitivity,
    /// A local sensitivity value δ(x, t, r) is NaN, negative or infinite (from a table or a callback).
    InvalidSensitivityValue,
    /// Two lengths that must agree do not (for example a table of n × T values).
    LengthMismatch,
    /// A caller-supplied scratch buffer is shorter than the function requires.
    ScratchTooSmall,
    /// An intermediate or output value is not representable as a finite `f64` (for example a dampened
    /// score u/Δ beyond `f64::MAX`), or a size computation overflows.
    Overflow,
    /// The generator state was not initialised by this library or is corrupted.
    InvalidGenerator,
    /// An argument is out of its documented range (an unknown enum value, k > n, T_max = 0, ...).
    InvalidArgument,
    /// An input exceeds a fixed capacity: more than [`crate::MAX_OBJECTIVES`] objectives, a contingency table
    /// beyond 16 × 16, or a generalization hierarchy beyond its documented limits (k, height, lattice size).
    CapacityExceeded,
    /// The privacy budget left is smaller than the ε requested.
    BudgetExhausted,
    /// An output buffer overlaps an input buffer (C ABI only).
    OverlappingBuffers,
    /// The request has no implementation in the arithmetic asked for (report-noisy-max with Laplace noise
    /// in exact arithmetic), or the platform lacks a facility (an operating-system random source).
    Unsupported,
}

impl Error {
    /// Every variant, in status-code order (code = index + 1; 0 is success).
    pub const ALL: [Error; 15] = [
        Error::NullPointer,
        Error::EmptyInput,
        Error::NonFiniteInput,
        Error::InvalidEpsilon,
        Error::InvalidSensitivity,
        Error::InvalidSensitivityValue,
        Error::LengthMismatch,
        Error::ScratchTooSmall,
        Error::Overflow,
        Error::InvalidGenerator,
        Error::InvalidArgument,
        Error::CapacityExceeded,
        Error::BudgetExhausted,
        Error::OverlappingBuffers,
        Error::Unsupported,
    ];

    /// The stable numeric status code of this error (0 is reserved for success).
    pub const fn code(self) -> u32 {
        match self {
            Error::NullPointer => 1,
            Error::EmptyInput => 2,
            Error::NonFiniteInput => 3,
            Error::InvalidEpsilon => 4,
            Error::InvalidSensitivity => 5,
            Error::InvalidSensitivityValue => 6,
            Error::LengthMismatch => 7,
            Error::ScratchTooSmall => 8,
            Error::Overflow => 9,
            Error::InvalidGenerator => 10,
            Error::InvalidArgument => 11,
            Error::CapacityExceeded => 12,
            Error::BudgetExhausted => 13,
            Error::OverlappingBuffers => 14,
            Error::Unsupported => 15,
        }
    }

    /// The sentence of [`message`](Self::message) as a NUL-terminated C string (the C ABI returns it).
    pub const fn message_c(self) -> &'static core::ffi::CStr {
        match self {
            Error::NullPointer => c"A required pointer argument is null.",
            Error::EmptyInput => c"There are no candidates to choose from (n = 0 or an empty group).",
            Error::NonFiniteInput => {
                c"A score, utility or weight is NaN or infinite; every input number must be finite."
            }
            Error::InvalidEpsilon => c"The privacy parameter epsilon must be a finite number greater than zero.",
            Error::InvalidSensitivity => c"The global sensitivity must be a finite number greater than zero.",
            Error::InvalidSensitivityValue => {
                c"A local sensitivity value (from a table or a callback) is NaN, negative or infinite."
            }
            Error::LengthMismatch => c"The lengths of the arguments do not agree with each other.",
            Error::ScratchTooSmall => c"The scratch buffer is smaller than the length this function requires.",
            Error::Overflow => {
                c"A result is too large to represent as a finite double, or a size computation overflowed."
            }
            Error::InvalidGenerator => c"The random generator state is not initialised or is corrupted.",
            Error::InvalidArgument => c"An argument is outside its documented range.",
            Error::CapacityExceeded => c"An input exceeds a fixed capacity of the library (more than 16 objectives, a contingency table larger than 16 x 16, or a generalization hierarchy beyond its documented limits).",
            Error::BudgetExhausted => c"The remaining privacy budget is smaller than the epsilon requested.",
            Error::OverlappingBuffers => c"An output buffer overlaps an input buffer.",
            Error::Unsupported => {
                c"Not supported: this mechanism has no exact implementation (report-noisy-max with Laplace noise: ask for floating-point arithmetic explicitly, or use Gumbel or exponential noise), or the platform lacks the facility asked for."
            }
        }
    }

    /// A readable sentence describing the error, suitable for end users.
    pub fn message(self) -> &'static str {
        // Every message is ASCII, so the conversion cannot fail.
        self.message_c().to_str().unwrap_or("")
    }

    /// The error with the given status code, if any.
    pub fn from_code(code: u32) -> Option<Error> {
        Error::ALL.iter().copied().find(|e| e.code() == code)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_dense_distinct_and_round_trip() {
        for (i, e) in Error::ALL.iter().enumerate() {
            assert_eq!(e.code() as usize, i + 1);
            assert_eq!(Error::from_code(e.code()), Some(*e));
            assert!(e.message().ends_with('.'));
        }
        assert_eq!(Error::from_code(0), None);
        assert_eq!(Error::from_code(99), None);
    }
}
