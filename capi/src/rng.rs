//! The caller-owned generator and the raw samplers.

use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::status::{dpmo_status, status_of};
use dpmo_core::rng::{Generator, GeneratorState};
use dpmo_core::{sample, Error};

/// ChaCha20, cryptographically secure: use it for releases, seeded from a secure source.
pub const DPMO_RNG_CHACHA20: u32 = 0;
/// Xoshiro256++: fast and reproducible, NOT cryptographically secure. For simulation and tests only.
pub const DPMO_RNG_XOSHIRO256PP: u32 = 1;

/// Uniform on the open interval (0, 1).
pub const DPMO_DIST_UNIFORM: u32 = 0;
/// Standard exponential (rate 1).
pub const DPMO_DIST_EXPONENTIAL: u32 = 1;
/// Standard Gumbel (location 0, scale 1).
pub const DPMO_DIST_GUMBEL: u32 = 2;
/// Standard Laplace (location 0, scale 1).
pub const DPMO_DIST_LAPLACE: u32 = 3;

/// A random generator state owned by the caller: 64 bytes, no allocation, no pointers. Initialise it with
/// `dpmo_rng_init`; every call that draws randomness advances it. Copying a state and using both copies
/// repeats randomness, which breaks differential privacy: keep one state per stream.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_rng {
    /// Opaque; do not edit.
    pub opaque: [u64; 8],
}

/// Runs `f` with the live generator; the advanced state is written back only if `f` succeeds.
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
    let state = unsafe { &mut *rng };
    let mut words = GeneratorState { words: state.opaque };
    let mut g = words.load()?;
    let out = f(&mut g)?;
    words.store(&g);
    state.opaque = words.words;
    Ok(out)
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

/// Fills `out[0..count]` with independent draws from `distribution` (`DPMO_DIST_UNIFORM`,
/// `DPMO_DIST_EXPONENTIAL`, `DPMO_DIST_GUMBEL` or `DPMO_DIST_LAPLACE`, all standard). For tests, audits and
/// custom mechanisms.
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
        if distribution > DPMO_DIST_LAPLACE {
            return Err(Error::InvalidArgument);
        }
        check_out(rng)?;
        check_disjoint(&[Region::of(out, count), rng_region(rng)], &[])?;
        // SAFETY: checked disjoint from the generator; validity is the caller's contract.
        let out = unsafe { output(out, count) }?;
        // SAFETY: as above.
        unsafe {
            with_generator(rng, |g| {
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
