//! The buffers every selecting function writes through — the generator, the optional budget, the chosen
//! indices and two scratch slices — checked in one place, with the budget charged in one place.

use crate::budget::{budget_region, dpmo_budget, Charged};
use crate::buffers::{check_disjoint, check_out, output, Region};
use crate::rng::{dpmo_rng, rng_region, with_generator};
use dpmo_core::{Error, MAX_OBJECTIVES};

/// A selecting call's outputs: the generator, the optional budget (null = none), the k chosen indices,
/// and the double and index scratch (either may be null with length 0 when the call needs none).
pub(crate) struct Selection {
    pub(crate) rng: *mut dpmo_rng,
    pub(crate) budget: *mut dpmo_budget,
    pub(crate) out: (*mut usize, usize),
    pub(crate) values: (*mut f64, usize),
    pub(crate) indices: (*mut usize, usize),
}

/// A mutable slice, or an empty one for (any pointer, 0).
///
/// # Safety
/// As for [`output`] when `len` > 0.
unsafe fn optional_output<'a, T>(p: *mut T, len: usize) -> Result<&'a mut [T], Error> {
    if len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: forwarded caller contract.
    unsafe { output(p, len) }
}

impl Selection {
    /// Null and alignment checks of the pointers, before any input is read.
    pub(crate) fn check(&self) -> Result<(), Error> {
        check_out(self.rng)?;
        check_out(self.out.0)?;
        if !self.budget.is_null() {
            check_out(self.budget)?;
        }
        if self.values.1 > 0 {
            check_out(self.values.0)?;
        }
        if self.indices.1 > 0 {
            check_out(self.indices.0)?;
        }
        Ok(())
    }

    /// Checks every buffer disjoint from the inputs (`inputs` and `more`) and from each other, then charges
    /// `epsilon` to the optional budget (refused with nothing written when it is too small) and runs `f`
    /// with the live generator and the output slices (chosen indices, values scratch, index scratch).
    ///
    /// The charge is written before `f` looks at the data and settled afterwards by [`Charged::settle`]:
    /// kept on success and on failures caused by the data, refunded on failures caused by the arguments.
    ///
    /// # Safety
    /// Every pointer valid for its length (the contract of the public functions).
    pub(crate) unsafe fn run(
        self,
        epsilon: f64,
        inputs: &[Region],
        more: &[Region],
        f: impl FnOnce(&mut dpmo_core::Generator, &mut [usize], &mut [f64], &mut [usize]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut all = [Region::EMPTY; 2 * MAX_OBJECTIVES + 8];
        if inputs.len() + more.len() > all.len() {
            return Err(Error::Overflow);
        }
        for (slot, r) in all.iter_mut().zip(inputs.iter().chain(more)) {
            *slot = *r;
        }
        check_disjoint(
            &[
                rng_region(self.rng),
                budget_region(self.budget),
                Region::of(self.out.0, self.out.1),
                Region::of(self.values.0, self.values.1),
                Region::of(self.indices.0, self.indices.1),
            ],
            &all[..inputs.len() + more.len()],
        )?;
        // SAFETY: non-null and aligned when non-empty (`check`), disjoint from every other buffer.
        let (out, values, indices) = unsafe {
            (
                output(self.out.0, self.out.1)?,
                optional_output(self.values.0, self.values.1)?,
                optional_output(self.indices.0, self.indices.1)?,
            )
        };
        // The generator is validated before anything is charged.
        // SAFETY: checked non-null and aligned; validity is the caller's contract.
        dpmo_core::GeneratorState {
            words: unsafe { self.rng.read() }.opaque,
        }
        .load()?;
        // SAFETY: the budget is disjoint from every other buffer.
        let charge = unsafe { Charged::charge(self.budget, epsilon) }?;
        // SAFETY: the generator is disjoint from the slices `f` uses.
        let result = unsafe { with_generator(self.rng, |g| f(g, out, values, indices)) };
        Charged::settle(charge, result)
    }
}
