//! Contribution bounding: raw events (unit, item[, value]) → at most L items per unit, at most C events per
//! (unit, item), values clamped and put on a grid.
//!
//! For neighbouring datasets that differ in **all the events of one privacy unit** (a user, a household, a
//! device), a unit with 10⁴ events would otherwise move counts by 10⁴. Per unit, [`bound()`]
//! 1. keeps at most L of its distinct items (`max_items`), a uniformly random subset (Knuth's selection
//!    sampling, Algorithm S: item j of d is kept with probability (L − kept)/(d − j));
//! 2. keeps at most C of its events on each kept item (`max_per_item`), a uniformly random subset (a partial
//!    Fisher–Yates shuffle);
//! 3. clamps each kept value to [lo, hi] (a NaN value counts as 0, then clamped: a public rule, so a NaN
//!    in the data is neither an error nor a signal) and truncates it toward zero onto the grid
//!    g = 2^(⌈log₂ M⌉ − 20), M = max(|lo|, |hi|), so that sums are exact integers of g.
//!
//! Then adding or removing one unit adds or removes at most L (unit, item) contributions, each of at most C
//! events and of a sum of at most C·M in magnitude — and changes nothing else.
//!
//! **Randomness, and why the choices cannot depend on other units.** The choices of a unit are drawn from
//! its own stream: ChaCha20 keyed by 32 bytes drawn once per call (from the call's private stream, itself
//! keyed by four words of the caller's generator: [`crate::rng::call_stream`]), with the unit id as the
//! stream number. A unit's kept subset is therefore a function of the key, its id and its own events
//! only: adding or removing another unit changes nothing about it (the choices of the other units are
//! *identical* on neighbouring datasets, not merely equal in distribution), and the caller's generator
//! advances by exactly four words whatever the data. The events are sorted by (unit, item, value) first, so
//! the result is a function of the multiset of events and the key, not of the order they came in.
//!
//! Memory: the caller's scratch holds one [`Contribution`] (32 bytes) per event; nothing else is used. The
//! work is a sort, O(n log n), and one pass.

use crate::sample::uniform_index;
use crate::Error;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// The most items per unit accepted (L ≤ 2²⁰).
pub const MAX_ITEMS_PER_UNIT: usize = 1 << 20;

/// Bits of precision of a bounded value: values are multiples of g = 2^(⌈log₂ M⌉ − 20).
pub const VALUE_BITS: i32 = 20;

/// The top bit of [`Contribution::tag`], marking an item already selected by a round of DP-SIPS.
pub(crate) const SELECTED: u32 = 1 << 31;

/// One entry of the caller's scratch: an event before bounding, then one kept (unit, item) contribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Contribution {
    /// The privacy unit.
    pub unit: u64,
    /// The item (the partition, the candidate).
    pub item: u64,
    /// The events kept on (unit, item), 1 ≤ events ≤ C.
    pub events: u32,
    /// The number of items the unit keeps (1 ≤ tag ≤ L) once bounded; used by the mechanisms as work space.
    pub tag: u32,
    /// The sum of the kept values on (unit, item), in units of the value grid g (0 without values).
    pub sum: i64,
}

/// Raw events: `units[i]`, `items[i]` and, optionally, `values[i]` describe event i.
#[derive(Clone, Copy, Debug)]
pub struct Events<'a> {
    /// The privacy unit of each event.
    pub units: &'a [u64],
    /// The item of each event.
    pub items: &'a [u64],
    /// The value of each event, or `None` (counts only).
    pub values: Option<&'a [f64]>,
}

/// The contribution bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// L ≥ 1: the most items a unit contributes to.
    pub max_items: usize,
    /// C ≥ 1: the most events a unit contributes to one item.
    pub max_per_item: usize,
    /// (lo, hi): the clamping range of the values (required with values, ignored without).
    pub clamp: Option<(f64, f64)>,
}

/// The value grid exponent k for the bound M > 0: g = 2^k with M ≤ 2^(k + 20) < 2M.
fn grid_exponent(m: f64) -> i32 {
    let mut k = libm::ilogb(m) + 1 - VALUE_BITS;
    // M ≤ 2^(k + 20) and M > 2^(k + 19), exactly (powers of two are exact).
    while m > libm::ldexp(1.0, k + VALUE_BITS) {
        k += 1;
    }
    while m <= libm::ldexp(1.0, k + VALUE_BITS - 1) {
        k -= 1;
    }
    k
}

/// The value in grid units: NaN → 0, clamped to [lo, hi], truncated toward zero. |result| ≤ 2²⁰.
fn quantise(v: f64, lo: f64, hi: f64, k: i32) -> i64 {
    let v = if v.is_nan() { 0.0 } else { v };
    let c = v.max(lo).min(hi);
    // |c| ≤ 2^(k + 20): the scaled value is at most 2²⁰ in magnitude, and the scaling is exact.
    libm::trunc(libm::ldexp(c, -k)) as i64
}

/// The checked value clamp: (lo, hi, k) with g = 2^k, or k = 0 for M = 0.
pub(crate) fn value_grid(clamp: (f64, f64)) -> Result<(f64, f64, i32), Error> {
    let (lo, hi) = clamp;
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return Err(Error::InvalidArgument);
    }
    let m = lo.abs().max(hi.abs());
    if m == 0.0 {
        return Ok((lo, hi, 0));
    }
    if !(libm::ldexp(1.0, -600)..=libm::ldexp(1.0, 600)).contains(&m) {
        return Err(Error::InvalidArgument);
    }
    Ok((lo, hi, grid_exponent(m)))
}

/// Bounded contributions in the caller's scratch: produced by [`bound()`] only, so every mechanism that takes
/// one knows its bounds hold.
#[derive(Debug)]
pub struct Bounded<'s> {
    pub(crate) entries: &'s mut [Contribution],
    pub(crate) events: usize,
    pub(crate) bounds: Bounds,
    pub(crate) grid_exponent: i32,
}

impl Bounded<'_> {
    /// The number of kept (unit, item) contributions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no contribution was kept (no events).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The kept contributions (in an order the mechanisms may change).
    pub fn contributions(&self) -> &[Contribution] {
        self.entries
    }

    /// The number of events given to [`bound()`].
    pub fn events(&self) -> usize {
        self.events
    }

    /// The bounds applied.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The value grid g = 2^k of the sums (1 without values or with lo = hi = 0).
    pub fn value_grid(&self) -> f64 {
        libm::ldexp(1.0, self.grid_exponent)
    }

    /// The per-item totals, sorted by item: writes one [`ItemTotal`] per distinct item to `out` and
    /// returns their number. Errors: `out` shorter than the number of events given to [`bound()`] (the
    /// public bound on the number of distinct items) → [`Error::LengthMismatch`].
    pub fn totals(&mut self, out: &mut [ItemTotal]) -> Result<usize, Error> {
        if out.len() < self.events {
            return Err(Error::LengthMismatch);
        }
        sort_by_item(self.entries);
        let mut n = 0;
        for run in item_runs(self.entries) {
            let mut t = ItemTotal {
                item: run[0].item,
                units: run.len() as u64,
                events: 0,
                sum: 0,
            };
            for c in run {
                t.events += u64::from(c.events);
                t.sum += c.sum;
            }
            out[n] = t;
            n += 1;
        }
        Ok(n)
    }
}

/// The aggregate of one item over its kept contributions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ItemTotal {
    /// The item.
    pub item: u64,
    /// The distinct units contributing (each at most once): sensitivity 1 per item, L in total.
    pub units: u64,
    /// The kept events: sensitivity C per item, L·C in total.
    pub events: u64,
    /// The sum of the kept values, in units of the value grid: sensitivity C·M/g per item.
    pub sum: i64,
}

/// Sorts contributions by (item, unit).
pub(crate) fn sort_by_item(c: &mut [Contribution]) {
    c.sort_unstable_by_key(|x| (x.item, x.unit));
}

/// Sorts contributions by (unit, item).
pub(crate) fn sort_by_unit(c: &mut [Contribution]) {
    c.sort_unstable_by_key(|x| (x.unit, x.item));
}

/// The runs of equal `key` in `c` (each non-empty).
pub(crate) fn runs_by(
    c: &[Contribution],
    key: impl Fn(&Contribution) -> u64 + Copy,
) -> impl Iterator<Item = &[Contribution]> {
    let mut start = 0;
    core::iter::from_fn(move || {
        if start >= c.len() {
            return None;
        }
        let k = key(&c[start]);
        let mut end = start + 1;
        while end < c.len() && key(&c[end]) == k {
            end += 1;
        }
        let run = &c[start..end];
        start = end;
        Some(run)
    })
}

/// The runs of equal item (contributions sorted by item).
pub(crate) fn item_runs(c: &[Contribution]) -> impl Iterator<Item = &[Contribution]> {
    runs_by(c, |x| x.item)
}

/// The 32-byte key of the per-unit streams: drawn from the call's private stream
/// ([`crate::rng::call_stream`]), which is itself the one key — four words — taken from the caller's
/// generator.
fn draw_key<R: Rng + ?Sized>(rng: &mut R) -> [u8; 32] {
    let mut key = [0u8; 32];
    crate::rng::call_stream(rng).fill_bytes(&mut key);
    key
}

/// Checks the bounds (and the values against them) and returns the value grid.
pub(crate) fn check(events: &Events<'_>, bounds: &Bounds, scratch_len: usize) -> Result<(f64, f64, i32), Error> {
    let n = events.units.len();
    if events.items.len() != n || events.values.is_some_and(|v| v.len() != n) {
        return Err(Error::LengthMismatch);
    }
    if bounds.max_items == 0
        || bounds.max_items > MAX_ITEMS_PER_UNIT
        || bounds.max_per_item == 0
        || bounds.max_per_item > u32::MAX as usize
    {
        return Err(Error::InvalidArgument);
    }
    let grid = match (events.values, bounds.clamp) {
        (Some(_), None) => return Err(Error::InvalidArgument),
        (_, Some(c)) => value_grid(c)?,
        (None, None) => (0.0, 0.0, 0),
    };
    if scratch_len < n {
        return Err(Error::ScratchTooSmall);
    }
    Ok(grid)
}

/// The argument checks of [`bound()`] alone (for callers that must validate everything before charging a
/// budget): the same errors, nothing drawn, nothing read beyond the lengths.
pub fn validate(events: &Events<'_>, bounds: &Bounds, scratch_len: usize) -> Result<(), Error> {
    check(events, bounds, scratch_len).map(|_| ())
}

/// Bounds the contributions of every unit (module documentation) into `scratch` (at least one entry per
/// event) and returns them. Draws exactly one key (four words) from `rng` ([`crate::rng::call_stream`]),
/// after every argument check, whatever the events. No event at all is a dataset like any other (nothing
/// kept), not an error: whether the data is empty must not show as a status.
///
/// Errors (nothing drawn, scratch untouched): `units`, `items` and `values` of different lengths →
/// [`Error::LengthMismatch`]; L or C = 0, L above
/// [`MAX_ITEMS_PER_UNIT`], C above 2³² − 1, values without a clamp, or a clamp (lo, hi) not finite with
/// lo ≤ hi and max(|lo|, |hi|) 0 or within [2⁻⁶⁰⁰, 2⁶⁰⁰] → [`Error::InvalidArgument`]; a scratch shorter
/// than the events → [`Error::ScratchTooSmall`].
pub fn bound<'s, R: Rng + ?Sized>(
    rng: &mut R,
    events: &Events<'_>,
    bounds: &Bounds,
    scratch: &'s mut [Contribution],
) -> Result<Bounded<'s>, Error> {
    let (lo, hi, k) = check(events, bounds, scratch.len())?;
    let n = events.units.len();
    let key = draw_key(rng);
    let ev = &mut scratch[..n];
    for (i, e) in ev.iter_mut().enumerate() {
        *e = Contribution {
            unit: events.units[i],
            item: events.items[i],
            events: 1,
            tag: 0,
            sum: events.values.map_or(0, |v| quantise(v[i], lo, hi, k)),
        };
    }
    ev.sort_unstable_by_key(|x| (x.unit, x.item, x.sum));
    let (l, c) = (bounds.max_items, bounds.max_per_item);
    let mut w = 0; // write position: every kept run writes one entry at or before its own start
    let mut start = 0;
    while start < n {
        let unit = ev[start].unit;
        let mut end = start + 1;
        while end < n && ev[end].unit == unit {
            end += 1;
        }
        let mut g = ChaCha20Rng::from_seed(key);
        g.set_stream(unit);
        let d = runs_by(&ev[start..end], |x| x.item).count();
        let mut needed = l.min(d);
        let unit_start = w;
        let mut rs = start;
        for j in 0..d {
            let item = ev[rs].item;
            let mut re = rs + 1;
            while re < end && ev[re].item == item {
                re += 1;
            }
            // Algorithm S: keep run j with probability needed/(d − j) (all of them when d ≤ L).
            let keep = d <= l || uniform_index(&mut g, d - j) < needed;
            if keep {
                needed -= 1;
                let run = &mut ev[rs..re];
                let take = run.len().min(c);
                if take < run.len() {
                    for i in 0..take {
                        let j = i + uniform_index(&mut g, run.len() - i);
                        run.swap(i, j);
                    }
                }
                let sum: i64 = run[..take].iter().map(|x| x.sum).sum();
                ev[w] = Contribution {
                    unit,
                    item,
                    events: take as u32,
                    tag: 0,
                    sum,
                };
                w += 1;
            }
            rs = re;
        }
        let kept = (w - unit_start) as u32;
        for e in &mut ev[unit_start..w] {
            e.tag = kept;
        }
        start = end;
    }
    Ok(Bounded {
        entries: &mut scratch[..w],
        events: n,
        bounds: *bounds,
        grid_exponent: k,
    })
}

/// ⌊√x⌋ for x < 2¹²⁶, exactly.
pub(crate) fn isqrt(x: u128) -> u128 {
    let mut s = libm::sqrt(x as f64) as u128;
    while s > 0 && s.checked_mul(s).is_none_or(|v| v > x) {
        s -= 1;
    }
    while (s + 1).checked_mul(s + 1).is_some_and(|v| v <= x) {
        s += 1;
    }
    s
}

/// M's grid: the upper bound of the grid value of a clamped value, ⌊M/g⌋ (≤ 2²⁰).
pub(crate) fn grid_units(m: f64, k: i32) -> u64 {
    libm::trunc(libm::ldexp(m, -k)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn the_grid_has_twenty_bits_below_the_bound() {
        for m in [3.0, 4.0, 10.0, 1e-3, 1e100, 1.0, 0.75] {
            let k = grid_exponent(m);
            assert!(
                m <= libm::ldexp(1.0, k + 20) && m > libm::ldexp(1.0, k + 19),
                "{m}: {k}"
            );
        }
        assert_eq!(grid_exponent(3.0), -18);
        assert_eq!(quantise(f64::NAN, 1.0, 2.0, -18), 1 << 18);
        assert_eq!(quantise(-5.0, -1.0, 3.0, -18), -(1 << 18));
        assert_eq!(quantise(f64::INFINITY, -1.0, 3.0, -18), 3 << 18);
        assert_eq!(isqrt(0), 0);
        assert_eq!(isqrt(99), 9);
        assert_eq!(isqrt(100), 10);
        assert_eq!(isqrt((1 << 100) - 1), (1 << 50) - 1);
    }

    fn run(units: &[u64], items: &[u64], values: Option<&[f64]>, b: Bounds, seed: u64) -> Vec<Contribution> {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut scratch = vec![Contribution::default(); units.len()];
        let ev = Events { units, items, values };
        let mut out = bound(&mut rng, &ev, &b, &mut scratch).unwrap().contributions().to_vec();
        out.sort_by_key(|c| (c.unit, c.item));
        out
    }

    #[test]
    fn bounds_hold_and_order_does_not_matter() {
        let units = [5u64, 5, 5, 5, 5, 1, 1, 9, 5, 5];
        let items = [1u64, 2, 3, 4, 1, 7, 7, 7, 1, 2];
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -7.0, f64::NAN, 9.0, 10.0];
        let b = Bounds {
            max_items: 2,
            max_per_item: 2,
            clamp: Some((-1.0, 3.0)),
        };
        let a = run(&units, &items, Some(&values), b, 1);
        // Unit 5 keeps 2 of its 4 items, unit 1 its one item (2 events, clamped: 3 + (−1)), unit 9 one.
        assert_eq!(a.iter().filter(|c| c.unit == 5).count(), 2);
        let one = a.iter().find(|c| c.unit == 1).unwrap();
        assert_eq!((one.events, one.sum, one.tag), (2, 2 << 18, 1));
        let nine = a.iter().find(|c| c.unit == 9).unwrap();
        assert_eq!((nine.events, nine.sum), (1, 0)); // NaN counts as 0
        assert!(a.iter().all(|c| c.events <= 2 && c.tag as usize <= 2));
        // The same multiset in another order, with the same generator: the same result.
        let mut perm: Vec<usize> = (0..units.len()).collect();
        perm.reverse();
        let u2: Vec<u64> = perm.iter().map(|&i| units[i]).collect();
        let i2: Vec<u64> = perm.iter().map(|&i| items[i]).collect();
        let v2: Vec<f64> = perm.iter().map(|&i| values[i]).collect();
        assert_eq!(run(&u2, &i2, Some(&v2), b, 1), a);
        // Another unit's events do not change a unit's choices (same key: same seed).
        let mut u3 = units.to_vec();
        let mut i3 = items.to_vec();
        let mut v3 = values.to_vec();
        u3.extend([3, 3, 3]);
        i3.extend([1, 2, 9]);
        v3.extend([0.0, 0.0, 0.0]);
        let c = run(&u3, &i3, Some(&v3), b, 1);
        let without: Vec<Contribution> = c.iter().copied().filter(|x| x.unit != 3).collect();
        assert_eq!(without, a);
    }

    #[test]
    fn argument_errors_draw_nothing() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(2);
        let before = rng.clone();
        let mut s = vec![Contribution::default(); 4];
        let ok = Bounds {
            max_items: 1,
            max_per_item: 1,
            clamp: None,
        };
        let ev = Events {
            units: &[1, 2],
            items: &[1, 2],
            values: None,
        };
        let bad = |b: Bounds| Bounds { ..b };
        for (e, b, want) in [
            (Events { units: &[1], ..ev }, ok, Error::LengthMismatch),
            (ev, bad(Bounds { max_items: 0, ..ok }), Error::InvalidArgument),
            (ev, bad(Bounds { max_per_item: 0, ..ok }), Error::InvalidArgument),
            (
                ev,
                bad(Bounds {
                    max_items: MAX_ITEMS_PER_UNIT + 1,
                    ..ok
                }),
                Error::InvalidArgument,
            ),
            (
                Events {
                    values: Some(&[1.0, 2.0]),
                    ..ev
                },
                ok,
                Error::InvalidArgument,
            ),
            (
                ev,
                bad(Bounds {
                    clamp: Some((2.0, 1.0)),
                    ..ok
                }),
                Error::InvalidArgument,
            ),
            (
                ev,
                bad(Bounds {
                    clamp: Some((0.0, f64::INFINITY)),
                    ..ok
                }),
                Error::InvalidArgument,
            ),
            (
                ev,
                bad(Bounds {
                    clamp: Some((0.0, 1e300)),
                    ..ok
                }),
                Error::InvalidArgument,
            ),
        ] {
            assert_eq!(bound(&mut rng, &e, &b, &mut s).map(|_| ()), Err(want));
        }
        assert_eq!(
            bound(&mut rng, &ev, &ok, &mut s[..1]).map(|_| ()),
            Err(Error::ScratchTooSmall)
        );
        assert_eq!(rng, before);
        assert_eq!(s, vec![Contribution::default(); 4]);
    }

    #[test]
    fn no_event_is_a_dataset_not_an_error() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let ok = Bounds {
            max_items: 1,
            max_per_item: 1,
            clamp: None,
        };
        let empty = Events {
            units: &[],
            items: &[],
            values: None,
        };
        let b = bound(&mut rng, &empty, &ok, &mut []).unwrap();
        assert!(b.is_empty());
        assert_eq!(b.events(), 0);
    }
}
