//! Caller-owned generator state: a fixed-size, plain-old-data block that C code can embed by value.
//!
//! There is no hidden default seed anywhere: a state exists only through [`GeneratorState::chacha20`] or
//! [`GeneratorState::xoshiro256pp`], each from 32 bytes the caller supplies.
//!
//! * **ChaCha20** (default): a cryptographically secure stream cipher generator. Use it for releases, seeded
//!   from the operating system's secure source.
//! * **Xoshiro256++**: fast and statistically strong but **not cryptographically secure** — its state can be
//!   recovered from outputs. Use it only for reproducible simulation and tests.
//!
//! The state is stored as eight `u64` words so that any bit pattern is harmless: the tag word says which
//! generator it is, and a state that was never initialised by this module is refused with
//! [`Error::InvalidGenerator`] instead of being trusted.

use crate::Error;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng, TryRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const TAG_CHACHA20: u64 = u64::from_le_bytes(*b"dpmoCC20");
const TAG_XOSHIRO: u64 = u64::from_le_bytes(*b"dpmoX256");

// The xoshiro generator is stored bitwise in four words; it must be exactly four words of plain integers.
const _: () = assert!(core::mem::size_of::<Xoshiro256PlusPlus>() == 32);
const _: () = assert!(core::mem::align_of::<Xoshiro256PlusPlus>() <= 8);

/// Which generator a [`GeneratorState`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratorKind {
    /// ChaCha20, cryptographically secure (the default).
    ChaCha20,
    /// Xoshiro256++, for reproducible simulation only: not cryptographically secure.
    Xoshiro256PlusPlus,
}

/// A generator state owned by the caller: 64 bytes, no allocation, no pointers.
///
/// Layout: word 0 is a tag. ChaCha20 keeps its 32-byte key in words 1–4 and its 128-bit word position in
/// words 5–6 (the generator is rebuilt at that position for each call, which costs one block). Xoshiro256++
/// keeps its 256-bit state in words 1–4.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratorState {
    /// Opaque words; do not edit.
    pub words: [u64; 8],
}

/// A live generator, built from a [`GeneratorState`] for the duration of one call.
// ChaCha20 is large, but a Generator lives on the stack for one call only and there is no heap to box it in.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Generator {
    /// ChaCha20 (cryptographically secure).
    ChaCha20(ChaCha20Rng),
    /// Xoshiro256++ (reproducible simulation only).
    Xoshiro256PlusPlus(Xoshiro256PlusPlus),
}

impl TryRng for Generator {
    type Error = core::convert::Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        match self {
            Generator::ChaCha20(g) => g.try_next_u32(),
            Generator::Xoshiro256PlusPlus(g) => g.try_next_u32(),
        }
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        match self {
            Generator::ChaCha20(g) => g.try_next_u64(),
            Generator::Xoshiro256PlusPlus(g) => g.try_next_u64(),
        }
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        match self {
            Generator::ChaCha20(g) => g.try_fill_bytes(dst),
            Generator::Xoshiro256PlusPlus(g) => g.try_fill_bytes(dst),
        }
    }
}

/// The private stream of one call: ChaCha20 keyed by 32 bytes — exactly four words — drawn from the
/// caller's generator `rng`.
///
/// Every public function of the library that takes a generator draws this one key first and samples only
/// from the stream, so the caller's generator advances by four words per call whatever the data. Without
/// it, the number of words a rejection sampler consumes depends on the scores (a coin at gap 0 draws no
/// bit), and an analyst who sees the generator's state after a call — or counts its refills — learns
/// about the data beyond the output. Use it likewise to build your own mechanisms from the samplers of
/// [`crate::sample`] and [`crate::exact`], whose consumption varies.
pub fn call_stream<R: Rng + ?Sized>(rng: &mut R) -> ChaCha20Rng {
    let mut seed = [0u8; 32];
    for chunk in seed.chunks_exact_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    ChaCha20Rng::from_seed(seed)
}

fn seed_words(seed: &[u8; 32]) -> [u64; 4] {
    let mut w = [0u64; 4];
    for (i, chunk) in seed.chunks_exact(8).enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        w[i] = u64::from_le_bytes(b);
    }
    w
}

fn words_seed(w: &[u64]) -> [u8; 32] {
    let mut seed = [0u8; 32];
    for (chunk, word) in seed.chunks_exact_mut(8).zip(w) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    seed
}

impl GeneratorState {
    /// A ChaCha20 generator keyed by the caller's 32 bytes (stream 0, position 0).
    pub fn chacha20(seed: [u8; 32]) -> Self {
        let mut words = [0u64; 8];
        words[0] = TAG_CHACHA20;
        words[1..5].copy_from_slice(&seed_words(&seed));
        GeneratorState { words }
    }

    /// A Xoshiro256++ generator seeded by the caller's 32 bytes (an all-zero seed is mapped to a fixed
    /// non-zero state by `rand_xoshiro`). **Not cryptographically secure.**
    pub fn xoshiro256pp(seed: [u8; 32]) -> Self {
        let mut state = GeneratorState { words: [0u64; 8] };
        state.words[0] = TAG_XOSHIRO;
        state.store(&Generator::Xoshiro256PlusPlus(Xoshiro256PlusPlus::from_seed(seed)));
        state
    }

    /// The kind of generator, or [`Error::InvalidGenerator`] for a state this module did not create.
    pub fn kind(&self) -> Result<GeneratorKind, Error> {
        match self.words[0] {
            TAG_CHACHA20 => Ok(GeneratorKind::ChaCha20),
            // An all-zero xoshiro state would output zeros forever; it is unreachable from a valid state.
            TAG_XOSHIRO if self.words[1..5].iter().any(|&w| w != 0) => Ok(GeneratorKind::Xoshiro256PlusPlus),
            _ => Err(Error::InvalidGenerator),
        }
    }

    /// Rebuilds the live generator.
    pub fn load(&self) -> Result<Generator, Error> {
        match self.kind()? {
            GeneratorKind::ChaCha20 => {
                let mut g = ChaCha20Rng::from_seed(words_seed(&self.words[1..5]));
                g.set_word_pos(u128::from(self.words[5]) | (u128::from(self.words[6]) << 64));
                Ok(Generator::ChaCha20(g))
            }
            GeneratorKind::Xoshiro256PlusPlus => {
                // SAFETY: words[1..5] are 32 initialised bytes; Xoshiro256PlusPlus is exactly four u64
                // (asserted above), for which every bit pattern is valid. read_unaligned copies them out.
                let g = unsafe { core::ptr::read_unaligned(self.words[1..5].as_ptr().cast::<Xoshiro256PlusPlus>()) };
                Ok(Generator::Xoshiro256PlusPlus(g))
            }
        }
    }

    /// Saves a live generator back into this state.
    pub fn store(&mut self, g: &Generator) {
        match g {
            Generator::ChaCha20(c) => {
                self.words[0] = TAG_CHACHA20;
                self.words[1..5].copy_from_slice(&seed_words(&c.get_seed()));
                let pos = c.get_word_pos();
                self.words[5] = pos as u64;
                self.words[6] = (pos >> 64) as u64;
                self.words[7] = 0;
            }
            Generator::Xoshiro256PlusPlus(x) => {
                self.words[0] = TAG_XOSHIRO;
                // SAFETY: words[1..5] has room for 32 bytes; write_unaligned copies the four u64 of state.
                unsafe {
                    core::ptr::write_unaligned(self.words[1..5].as_mut_ptr().cast::<Xoshiro256PlusPlus>(), x.clone())
                }
                self.words[5..8].fill(0);
            }
        }
    }

    /// Runs `f` with the live generator and saves the advanced state afterwards, so that successive calls
    /// never reuse randomness.
    pub fn with<T>(&mut self, f: impl FnOnce(&mut Generator) -> T) -> Result<T, Error> {
        let mut g = self.load()?;
        let out = f(&mut g);
        self.store(&g);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_advance() {
        for mut s in [GeneratorState::chacha20([7; 32]), GeneratorState::xoshiro256pp([7; 32])] {
            let a = s.with(|g| g.next_u64()).unwrap();
            let b = s.with(|g| g.next_u64()).unwrap();
            assert_ne!(a, b, "state must advance between calls");
            let mut g = s.load().unwrap();
            let c = g.next_u64();
            let d = s.with(|g| g.next_u64()).unwrap();
            assert_eq!(c, d, "load must resume exactly where the last call stopped");
        }
    }

    #[test]
    fn chacha_matches_a_fresh_generator() {
        let mut s = GeneratorState::chacha20([3; 32]);
        let mut reference = ChaCha20Rng::from_seed([3; 32]);
        for _ in 0..100 {
            let x = s.with(|g| g.next_u32()).unwrap();
            assert_eq!(x, reference.next_u32());
        }
    }

    #[test]
    fn rejects_foreign_states() {
        assert_eq!(GeneratorState { words: [0; 8] }.kind(), Err(Error::InvalidGenerator));
        let mut zero_x = GeneratorState { words: [0; 8] };
        zero_x.words[0] = TAG_XOSHIRO;
        assert_eq!(zero_x.load().err(), Some(Error::InvalidGenerator));
        assert_eq!(
            GeneratorState::xoshiro256pp([0; 32]).kind(),
            Ok(GeneratorKind::Xoshiro256PlusPlus)
        );
    }
}
