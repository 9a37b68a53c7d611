//! The caller-owned generator and the raw samplers.

use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::select::arithmetic_of;
use crate::status::{dpmo_status, status_of};
use dpmo_core::rng::{Generator, GeneratorState};
use dpmo_core::select::Arithmetic;
use dpmo_core::{sample, Error};

/// ChaCha20, cryptographically secure: use it for releases, seeded from a secure source.
pub const DPMO_RNG_CHACHA20: u32 = 0;
/// Xoshiro256++: fast and reproducible, NOT cryptographically secure. For simulation and tests only.
pub const DPMO_RNG_XOSHIRO256PP: u32 = 1;

// The continuous distributions below are for tests, audits and simulation, drawn by `dpmo_sample` only with
// `DPMO_FLOAT`. None of them is safe for adding noise to a released value: a double-precision Laplace draw
// added to f(x) leaks f(x) through the pattern of representable results (Mironov, CCS 2012). Use
// dpmo_sample_discrete_laplace for released values.

/// Uniform on the open interval (0, 1).
pub const DPMO_DIST_UNIFORM: u32 = 0;
/// Standard exponential (rate 1).
pub const DPMO_DIST_EXPONENTIAL: u32 = 1;
/// Standard Gumbel (location 0, scale 1).
pub const DPMO_DIST_GUMBEL: u32 = 2;
/// Standard Laplace (location 0, scale 1), in floating point: NOT for adding to released values (see
/// `dpmo_sample_discrete_laplace`).
pub const DPMO_DIST_LAPLACE: u32 = 3;

/// A random generator state owned by the caller: 64 bytes, no allocation, no pointers. Initialise it with
/// `dpmo_rng_init`; every call that draws randomness advances it. Copying a state and using both copies
/// repeats randomness, which breaks differential privacy: keep one state per stream.
/// `fork()` copies every state too: a child must re-initialise its generators (`dpmo_rng_init_os`) before drawing.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_rng {
    /// Opaque; do not edit.
    pub opaque: [u64; 8],
}

/// The tag of a state in use by a running call: any other call on it is refused with
/// `DPMO_INVALID_GENERATOR` (the core does not know this tag), so a callback that re-enters the library with
/// the same generator can never draw the uniforms the running call is about to use.
const BUSY: u64 = u64::from_le_bytes(*b"dpmoBUSY");

/// Runs `f` with the live generator. While `f` runs, the caller's state is marked busy; afterwards the
/// advanced state is written back if `f` succeeded, and the state as it was is restored if it failed.
///
/// No Rust reference to the caller's state is held while `f` runs (a re-entrant call reads it through its
/// own pointer): the state is read and written through the raw pointer only.
///
/// # Safety
/// `rng` must be null or point to a valid `dpmo_rng` not aliased by any slice `f` uses (checked by the
/// callers with `check_disjoint`).
pub(crate) unsafe fn with_generator<T>(
    rng: *mut dpmo_rng,
    f: impl FnOnce(&mut Generator) -> Result<T, Error>,
) -> Result<T, Error> {
    check_out(rng)?;
    // SAFETY: non-null and aligned (checked); validity is the caller's contract.
    let saved = unsafe { rng.read() };
    let mut g = GeneratorState { words: saved.opaque }.load()?;
    let mut busy = saved;
    busy.opaque[0] = BUSY;
    // SAFETY: as above.
    unsafe { rng.write(busy) };
    let out = f(&mut g);
    let after = match out {
        Ok(_) => {
            let mut state = GeneratorState { words: saved.opaque };
            state.store(&g);
            dpmo_rng { opaque: state.words }
        }
        Err(_) => saved,
    };
    // SAFETY: as above.
    unsafe { rng.write(after) };
    out
}

pub(crate) fn rng_region(rng: *const dpmo_rng) -> Region {
    Region::of(rng, 1)
}

/// Initialises `rng` as generator `kind` (`DPMO_RNG_CHACHA20` or `DPMO_RNG_XOSHIRO256PP`) from the 32 bytes
/// at `seed`. There is no default seed: take it from a secure source (getrandom(2), /dev/urandom,
/// SecureRandom) unless you want a reproducible simulation.
///
/// # Safety
/// `rng` must point to writable memory for one `dpmo_rng`; `seed` to 32 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn dpmo_rng_init(rng: *mut dpmo_rng, kind: u32, seed: *const u8) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        // SAFETY: the caller promises 32 readable bytes at `seed`.
        let seed_bytes = unsafe { input(seed, 32) }?;
        check_disjoint(&[rng_region(rng)], &[Region::of(seed, 32)])?;
        let mut s = [0u8; 32];
        s.copy_from_slice(seed_bytes);
        let state = match kind {
            DPMO_RNG_CHACHA20 => GeneratorState::chacha20(s),
            DPMO_RNG_XOSHIRO256PP => GeneratorState::xoshiro256pp(s),
            _ => return Err(Error::InvalidArgument),
        };
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { rng.write(dpmo_rng { opaque: state.words }) };
        Ok(())
    })())
}

/// Initialises `rng` as a ChaCha20 generator keyed by 32 bytes from the operating system's secure source:
/// getrandom(2) on Linux and Android. Elsewhere it returns `DPMO_UNSUPPORTED` (seed with `dpmo_rng_init`
/// from your platform's secure source instead). On failure nothing is written.
///
/// # Safety
/// `rng` must point to writable memory for one `dpmo_rng`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_rng_init_os(rng: *mut dpmo_rng) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        let seed = os_seed()?;
        let state = GeneratorState::chacha20(seed);
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { rng.write(dpmo_rng { opaque: state.words }) };
        Ok(())
    })())
}

/// 32 bytes from getrandom(2), retried a few times on interruption.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn os_seed() -> Result<[u8; 32], Error> {
    extern "C" {
        fn getrandom(buf: *mut core::ffi::c_void, buflen: usize, flags: core::ffi::c_uint) -> isize;
    }
    let mut seed = [0u8; 32];
    let mut filled = 0usize;
    for _ in 0..8 {
        // SAFETY: the pointer and length describe the unfilled tail of `seed`.
        let got = unsafe { getrandom(seed[filled..].as_mut_ptr().cast(), seed.len() - filled, 0) };
        if got > 0 {
            filled += got as usize;
            if filled == seed.len() {
                return Ok(seed);
            }
        }
    }
    Err(Error::Unsupported)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn os_seed() -> Result<[u8; 32], Error> {
    Err(Error::Unsupported)
}

/// Fills `out[0..count]` with independent draws from `distribution` (`DPMO_DIST_UNIFORM`,
/// `DPMO_DIST_EXPONENTIAL`, `DPMO_DIST_GUMBEL` or `DPMO_DIST_LAPLACE`, all standard, OR-ed with the
/// required `DPMO_FLOAT`), in floating point. For tests, audits and simulation only: these draws are **not**
/// for adding noise to a value you release (floating-point noise leaks the value, Mironov 2012); use
/// `dpmo_sample_discrete_laplace` for that. As everywhere in this ABI, floating-point randomness is opt-in:
/// without `DPMO_FLOAT` the call is refused with `DPMO_UNSUPPORTED`, before any other check, and draws
/// nothing.
///
/// Errors: an unknown distribution or flag → `DPMO_INVALID_ARGUMENT`; `DPMO_FLOAT` missing →
/// `DPMO_UNSUPPORTED`; an invalid generator; a null, misaligned or overlapping `out`; a count not
/// representable in bytes → `DPMO_OVERFLOW`.
///
/// # Safety
/// `rng` must point to an initialised `dpmo_rng`; `out` to `count` writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_sample(
    rng: *mut dpmo_rng,
    distribution: u32,
    out: *mut f64,
    count: usize,
) -> dpmo_status {
    status_of((|| {
        let (distribution, arithmetic) = arithmetic_of(distribution)?;
        if distribution > DPMO_DIST_LAPLACE {
            return Err(Error::InvalidArgument);
        }
        if arithmetic != Arithmetic::Float {
            return Err(Error::Unsupported);
        }
        check_out(rng)?;
        check_disjoint(&[Region::of(out, count), rng_region(rng)], &[])?;
        // SAFETY: checked disjoint from the generator; validity is the caller's contract.
        let out = unsafe { output(out, count) }?;
        if out.is_empty() {
            return Ok(()); // count 0 is public: nothing drawn
        }
        // SAFETY: as above.
        unsafe {
            with_generator(rng, |g| {
                // One key from the caller's generator, whatever `count` and the draws (see rng::call_stream).
                let g = &mut dpmo_core::rng::call_stream(g);
                for o in out.iter_mut() {
                    *o = match distribution {
                        DPMO_DIST_UNIFORM => sample::uniform_open01(g),
                        DPMO_DIST_EXPONENTIAL => sample::exponential(g),
                        DPMO_DIST_GUMBEL => sample::gumbel(g),
                        _ => sample::laplace(g),
                    };
                }
                Ok(())
            })
        }
    })())
}

/// Fills `out[0..count]` with independent exact draws of the discrete Laplace distribution
/// P(Z = z) ∝ exp(−|z| · granularity / scale) on the integers (Canonne, Kamath & Steinke 2020,
/// Algorithm 2): the noise for releasing a value. To release f(x) with sensitivity Δ under ε-DP, round f(x)
/// to a multiple of `granularity` (or use an integer count and granularity 1), take scale = Δ / ε, and
/// release f(x) + granularity · Z. Every coin is exact (no floating point), so the released values are
/// immune to the floating-point attack on the Laplace mechanism (Mironov 2012). A draw whose magnitude
/// exceeds 2^63 − 1 is redrawn, an event of probability below 2 exp(−2^30).
///
/// Errors: `scale` or `granularity` not finite and > 0, or scale / granularity outside [2^-64, 2^32] →
/// `DPMO_INVALID_ARGUMENT`; an invalid generator; a null, misaligned or overlapping `out`.
///
/// # Safety
/// `rng` must point to an initialised `dpmo_rng`; `out` to `count` writable int64_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_sample_discrete_laplace(
    rng: *mut dpmo_rng,
    scale: f64,
    granularity: f64,
    out: *mut i64,
    count: usize,
) -> dpmo_status {
    status_of((|| {
        let rate = dpmo_core::exact::discrete::LaplaceRate::new(scale, granularity)?;
        check_out(rng)?;
        check_disjoint(&[Region::of(out, count), rng_region(rng)], &[])?;
        // SAFETY: checked disjoint from the generator; validity is the caller's contract.
        let out = unsafe { output(out, count) }?;
        if out.is_empty() {
            return Ok(()); // count 0 is public: nothing drawn
        }
        // SAFETY: as above.
        unsafe {
            with_generator(rng, |g| {
                // One key from the caller's generator: how many words the exact sampler reads depends on the
                // noise drawn, which an observer of the generator must not learn (see rng::call_stream).
                let g = &mut dpmo_core::rng::call_stream(g);
                for o in out.iter_mut() {
                    *o = dpmo_core::exact::discrete::discrete_laplace(g, &rate);
                }
                Ok(())
            })
        }
    })())
}
