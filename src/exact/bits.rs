//! Uniform random bits, buffered from 64-bit words.
//!
//! The exact samplers decide almost every coin with one or two bits, so they take bits one at a time from
//! a buffered word instead of spending a whole 64-bit draw per decision. A word is consumed from its most
//! significant bit down, which keeps scripted tapes in the tests readable: the word `0b1000…` gives the bits
//! 1, 0, 0, ….

use rand_core::Rng;

/// A buffered stream of independent fair bits from `R`. Unused buffered bits are discarded when the
/// stream is dropped (the generator never rewinds, so no randomness is ever reused).
pub struct Bits<'a, R: Rng + ?Sized> {
    rng: &'a mut R,
    word: u64,
    left: u32,
}

impl<'a, R: Rng + ?Sized> Bits<'a, R> {
    /// A bit stream over `rng`, starting with an empty buffer.
    pub fn new(rng: &'a mut R) -> Self {
        Bits { rng, word: 0, left: 0 }
    }

    /// One fair bit.
    #[inline]
    pub fn bit(&mut self) -> bool {
        if self.left == 0 {
            self.word = self.rng.next_u64();
            self.left = 64;
        }
        self.left -= 1;
        (self.word >> self.left) & 1 == 1
    }

    /// The underlying generator, for draws that need whole words (uniform indices).
    #[inline]
    pub fn rng(&mut self) -> &mut R {
        self.rng
    }
}
