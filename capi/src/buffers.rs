//! Turning C pointers into Rust slices, refusing what would be undefined behaviour: null, misaligned,
//! byte sizes beyond `isize::MAX`, and outputs that overlap inputs (a `&mut` slice aliasing a `&` slice).

use core::mem::{align_of, size_of};
use dpmo_core::Error;

/// A byte range of caller memory, for overlap checks. Empty ranges overlap nothing. A range whose byte
/// size or end does not fit in the address space is remembered as such and refused with
/// [`Error::Overflow`] before any overlap is considered.
#[derive(Clone, Copy)]
pub(crate) struct Region {
    start: usize,
    bytes: usize,
    overflows: bool,
}

impl Region {
    pub(crate) const EMPTY: Region = Region {
        start: 0,
        bytes: 0,
        overflows: false,
    };

    pub(crate) fn of<T>(p: *const T, len: usize) -> Region {
        let start = p as usize;
        match len.checked_mul(size_of::<T>()) {
            Some(bytes) if bytes <= isize::MAX as usize && start.checked_add(bytes).is_some() => Region {
                start,
                bytes,
                overflows: false,
            },
            _ => Region {
                start,
                bytes: 0,
                overflows: true,
            },
        }
    }

    fn overlaps(self, other: Region) -> bool {
        self.bytes != 0
            && other.bytes != 0
            && self.start < other.start + other.bytes
            && other.start < self.start + self.bytes
    }
}

/// Refuses a region too large for the address space ([`Error::Overflow`]), then any output that overlaps an
/// input or another output ([`Error::OverlappingBuffers`]).
pub(crate) fn check_disjoint(outputs: &[Region], inputs: &[Region]) -> Result<(), Error> {
    if outputs.iter().chain(inputs).any(|r| r.overflows) {
        return Err(Error::Overflow);
    }
    for (i, o) in outputs.iter().enumerate() {
        if inputs.iter().any(|r| o.overlaps(*r)) || outputs[i + 1..].iter().any(|r| o.overlaps(*r)) {
            return Err(Error::OverlappingBuffers);
        }
    }
    Ok(())
}

fn check_pointer<T>(p: *const T, len: usize) -> Result<(), Error> {
    if p.is_null() {
        return Err(Error::NullPointer);
    }
    if !(p as usize).is_multiple_of(align_of::<T>()) {
        return Err(Error::InvalidArgument);
    }
    match len.checked_mul(size_of::<T>()) {
        Some(b) if b <= isize::MAX as usize && (p as usize).checked_add(b).is_some() => Ok(()),
        _ => Err(Error::Overflow),
    }
}

/// A shared slice of `len` elements at `p`.
///
/// # Safety
/// `p` must point to `len` initialised elements that stay valid and unmodified for `'a`.
pub(crate) unsafe fn input<'a, T>(p: *const T, len: usize) -> Result<&'a [T], Error> {
    check_pointer(p, len)?;
    // SAFETY: non-null, aligned, size within isize::MAX (checked); validity is the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// A mutable slice of `len` elements at `p`.
///
/// # Safety
/// `p` must point to `len` writable elements, valid for `'a`, not overlapping any other slice in use
/// (callers check that with [`check_disjoint`] first).
pub(crate) unsafe fn output<'a, T>(p: *mut T, len: usize) -> Result<&'a mut [T], Error> {
    check_pointer(p, len)?;
    // SAFETY: as in `input`, plus exclusivity checked by the caller through `check_disjoint`.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// Checks that a pointer to a single output value can be written.
pub(crate) fn check_out<T>(p: *mut T) -> Result<(), Error> {
    check_pointer(p, 1)
}
