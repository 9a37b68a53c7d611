//! Arguments: the enum-like strings, counts, and numpy arrays (borrowed without a copy when they are
//! C-contiguous float64, copied otherwise).

use crate::errors::err_with;
use dpmo::select::{Arithmetic, Noise, Selector};
use dpmo::{Dampening, Dominance, Error};
use numpy::{AllowTypeChange, PyArrayLike1, PyArrayLike2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use std::borrow::Cow;

/// A 1-D float64 array-like (lists, other dtypes and strided arrays are converted).
pub type Floats1<'py> = PyArrayLike1<'py, f64, AllowTypeChange>;
/// A 2-D float64 array-like.
pub type Floats2<'py> = PyArrayLike2<'py, f64, AllowTypeChange>;
/// A 1-D int64 array-like.
pub type Ints1<'py> = PyArrayLike1<'py, i64, AllowTypeChange>;
/// A 2-D int64 array-like.
pub type Ints2<'py> = PyArrayLike2<'py, i64, AllowTypeChange>;

/// The elements of a 1-D array in order, borrowed when contiguous.
pub fn slice1<'a, T: numpy::Element + Copy>(a: &'a PyReadonlyArray1<'_, T>) -> Cow<'a, [T]> {
    match a.as_slice() {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(a.as_array().iter().copied().collect()),
    }
}

/// The elements of a 2-D array in row-major order with its shape (rows, columns), borrowed when
/// C-contiguous.
pub fn slice2<'a, T: numpy::Element + Copy>(a: &'a PyReadonlyArray2<'_, T>) -> (Cow<'a, [T]>, usize, usize) {
    let shape = a.shape();
    let (rows, cols) = (shape[0], shape[1]);
    if a.is_c_contiguous() {
        if let Ok(s) = a.as_slice() {
            return (Cow::Borrowed(s), rows, cols);
        }
    }
    (Cow::Owned(a.as_array().iter().copied().collect()), rows, cols)
}

/// A non-negative count or index argument.
pub fn count_arg(name: &str, v: i64) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| err_with(Error::InvalidArgument, format!("{name} = {v} must be >= 0")))
}

/// Non-negative int64 values as u64 (counts of a contingency table, hits and misses).
pub fn counts(name: &str, v: &[i64]) -> PyResult<Vec<u64>> {
    v.iter()
        .map(|&x| u64::try_from(x))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| err_with(Error::InvalidArgument, format!("{name}: counts must be >= 0")))
}

pub fn arithmetic(a: &str) -> PyResult<Arithmetic> {
    match a {
        "exact" => Ok(Arithmetic::Exact),
        "float" => Ok(Arithmetic::Float),
        "isochronous" => Ok(Arithmetic::Isochronous),
        _ => Err(err_with(
            Error::InvalidArgument,
            format!("arithmetic {a:?}: expected 'exact' (the default), 'isochronous' or 'float'"),
        )),
    }
}

pub const SELECTORS: &str =
    "'exponential', 'permute_and_flip', 'noisy_max_gumbel', 'noisy_max_exponential' or 'noisy_max_laplace'";

/// A selector name with its arithmetic; Laplace noise in exact arithmetic is `UnsupportedError`.
pub fn selector(s: &str, a: &str) -> PyResult<(Selector, Arithmetic)> {
    let arith = arithmetic(a)?;
    let sel = match s {
        "exponential" => Selector::Exponential,
        "permute_and_flip" => Selector::PermuteAndFlip,
        "noisy_max_laplace" => Selector::NoisyMax(Noise::Laplace),
        "noisy_max_gumbel" => Selector::NoisyMax(Noise::Gumbel),
        "noisy_max_exponential" => Selector::NoisyMax(Noise::Exponential),
        _ => {
            return Err(err_with(
                Error::InvalidArgument,
                format!("selector {s:?}: expected {SELECTORS}"),
            ))
        }
    };
    supported(sel, arith)?;
    Ok((sel, arith))
}

pub fn noise(s: &str, a: &str) -> PyResult<(Selector, Arithmetic)> {
    let arith = arithmetic(a)?;
    let sel = match s {
        "laplace" => Selector::NoisyMax(Noise::Laplace),
        "gumbel" => Selector::NoisyMax(Noise::Gumbel),
        "exponential" => Selector::NoisyMax(Noise::Exponential),
        _ => {
            return Err(err_with(
                Error::InvalidArgument,
                format!("noise {s:?}: expected 'gumbel', 'exponential' or 'laplace'"),
            ))
        }
    };
    supported(sel, arith)?;
    Ok((sel, arith))
}

fn supported(s: Selector, a: Arithmetic) -> PyResult<()> {
    if a != Arithmetic::Float && s == Selector::NoisyMax(Noise::Laplace) {
        return Err(err_with(
            Error::Unsupported,
            "Laplace noise runs in floating point only: pass arithmetic='float'",
        ));
    }
    Ok(())
}

pub fn dampening(d: &str) -> PyResult<Dampening> {
    match d {
        "plain" => Ok(Dampening::Plain),
        "shifted" => Ok(Dampening::Shifted),
        _ => Err(err_with(
            Error::InvalidArgument,
            format!("dampening {d:?}: expected 'plain' or 'shifted'"),
        )),
    }
}

pub fn dominance(d: &str) -> PyResult<Dominance> {
    match d {
        "textbook" => Ok(Dominance::Textbook),
        "weak" => Ok(Dominance::Weak),
        _ => Err(err_with(
            Error::InvalidArgument,
            format!("dominance {d:?}: expected 'textbook' or 'weak'"),
        )),
    }
}

pub fn neighbours(n: &str) -> PyResult<dpmo::sensitivity::rates::RateNeighbours> {
    use dpmo::sensitivity::rates::RateNeighbours;
    match n {
        "add_remove" => Ok(RateNeighbours::AddRemove),
        "substitution" => Ok(RateNeighbours::Substitution),
        _ => Err(err_with(
            Error::InvalidArgument,
            format!("neighbours {n:?}: expected 'add_remove' or 'substitution'"),
        )),
    }
}
