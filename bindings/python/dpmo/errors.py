"""The exceptions of dpmo: one class per status code of the C ABI, all under :class:`DpmoError`.

Every failure of the library is a :class:`DpmoError` whose ``status`` is the C ABI's status code
(``dpmo_status``), ``status_name`` its C name and ``message`` the C ABI's sentence
(``dpmo_status_message``). The subclasses also derive from the matching built-in exception, so
``except ValueError`` catches bad arguments as usual::

    try:
        dpmo.select_exponential(rng, scores, sensitivity=1.0, epsilon=-1.0)
    except dpmo.InvalidEpsilonError as e:      # also a ValueError
        print(e.status, e.status_name, e.message)

``charged`` tells whether a budget passed to the failing call kept its charge: a selection charges its
budget before it looks at the data. The data never makes a selection fail (a NaN or infinite utility and an
invalid local sensitivity value follow a public rule), so argument errors, which charge nothing, are the
failures you see; an exception inside your own sensitivity callback fails the call and keeps the charge.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "DpmoError",
    "NullPointerError",
    "EmptyInputError",
    "NonFiniteInputError",
    "InvalidEpsilonError",
    "InvalidSensitivityError",
    "InvalidSensitivityValueError",
    "LengthMismatchError",
    "ScratchTooSmallError",
    "DpmoOverflowError",
    "InvalidGeneratorError",
    "InvalidArgumentError",
    "CapacityExceededError",
    "BudgetExhaustedError",
    "OverlappingBuffersError",
    "UnsupportedError",
]


class DpmoError(Exception):
    """A failure reported by dpmo, with the C ABI's status code and message.

    Attributes:
        status: the C ABI status code (1..15; ``dpmo_status``).
        status_name: its C name, such as ``"DPMO_INVALID_EPSILON"``.
        message: the C ABI's sentence for the status (``dpmo_status_message``).
        detail: what the Python binding adds (which argument), or ``None``.
        charged: True when the call's budget kept its charge (a failure caused by the data).
    """

    status: int = 0
    status_name: str = "DPMO_OK"

    def __init__(self, message: str, detail: Optional[str] = None, charged: bool = False) -> None:
        self.message = message
        self.detail = detail
        self.charged = charged
        text = message if detail is None else f"{message} ({detail})"
        super().__init__(text)


class NullPointerError(DpmoError, ValueError):
    """A required argument is missing (``DPMO_NULL_POINTER``; from Python: ``None`` where a value is needed)."""

    status, status_name = 1, "DPMO_NULL_POINTER"


class EmptyInputError(DpmoError, ValueError):
    """There are no candidates (n = 0) or an empty group (``DPMO_EMPTY_INPUT``)."""

    status, status_name = 2, "DPMO_EMPTY_INPUT"


class NonFiniteInputError(DpmoError, ValueError):
    """A score, utility or weight is NaN or infinite (``DPMO_NON_FINITE_INPUT``)."""

    status, status_name = 3, "DPMO_NON_FINITE_INPUT"


class InvalidEpsilonError(DpmoError, ValueError):
    """ε is not a finite number greater than zero (``DPMO_INVALID_EPSILON``)."""

    status, status_name = 4, "DPMO_INVALID_EPSILON"


class InvalidSensitivityError(DpmoError, ValueError):
    """A global sensitivity is not a finite number greater than zero (``DPMO_INVALID_SENSITIVITY``)."""

    status, status_name = 5, "DPMO_INVALID_SENSITIVITY"


class InvalidSensitivityValueError(DpmoError, ValueError):
    """A sensitivity callback raised, or a helper that returns private values met a NaN, negative or infinite
    local sensitivity value (``DPMO_INVALID_SENSITIVITY_VALUE``). Selections never raise it for a value: one
    that is NaN, negative or infinite counts as Δ."""

    status, status_name = 6, "DPMO_INVALID_SENSITIVITY_VALUE"


class LengthMismatchError(DpmoError, ValueError):
    """Lengths or shapes that must agree do not (``DPMO_LENGTH_MISMATCH``)."""

    status, status_name = 7, "DPMO_LENGTH_MISMATCH"


class ScratchTooSmallError(DpmoError, ValueError):
    """A scratch buffer is too small (``DPMO_SCRATCH_TOO_SMALL``; the binding sizes its own scratch, so this
    signals a bug)."""

    status, status_name = 8, "DPMO_SCRATCH_TOO_SMALL"


class DpmoOverflowError(DpmoError, ArithmeticError):
    """A result is not representable, or a size computation overflowed (``DPMO_OVERFLOW``)."""

    status, status_name = 9, "DPMO_OVERFLOW"


class InvalidGeneratorError(DpmoError, RuntimeError):
    """The generator is invalid, or busy in another call (``DPMO_INVALID_GENERATOR``): a generator serves one
    call at a time, so a sensitivity callback or another thread using it during a call is refused."""

    status, status_name = 10, "DPMO_INVALID_GENERATOR"


class InvalidArgumentError(DpmoError, ValueError):
    """An argument is outside its documented range (``DPMO_INVALID_ARGUMENT``)."""

    status, status_name = 11, "DPMO_INVALID_ARGUMENT"


class CapacityExceededError(DpmoError, ValueError):
    """More than 16 objectives, or a contingency table beyond 16 × 16 (``DPMO_CAPACITY_EXCEEDED``)."""

    status, status_name = 12, "DPMO_CAPACITY_EXCEEDED"


class BudgetExhaustedError(DpmoError):
    """The privacy budget left is smaller than the ε requested (``DPMO_BUDGET_EXHAUSTED``)."""

    status, status_name = 13, "DPMO_BUDGET_EXHAUSTED"


class OverlappingBuffersError(DpmoError, ValueError):
    """An output overlaps an input (``DPMO_OVERLAPPING_BUFFERS``; cannot happen from Python)."""

    status, status_name = 14, "DPMO_OVERLAPPING_BUFFERS"


class UnsupportedError(DpmoError, NotImplementedError):
    """No implementation in the arithmetic asked for (report-noisy-max with Laplace noise needs
    ``arithmetic="float"``), or no operating-system random source (``DPMO_UNSUPPORTED``)."""

    status, status_name = 15, "DPMO_UNSUPPORTED"


_BY_STATUS: Dict[int, Type[DpmoError]] = {
    cls.status: cls
    for cls in (
        NullPointerError,
        EmptyInputError,
        NonFiniteInputError,
        InvalidEpsilonError,
        InvalidSensitivityError,
        InvalidSensitivityValueError,
        LengthMismatchError,
        ScratchTooSmallError,
        DpmoOverflowError,
        InvalidGeneratorError,
        InvalidArgumentError,
        CapacityExceededError,
        BudgetExhaustedError,
        OverlappingBuffersError,
        UnsupportedError,
    )
}


def error_class(status: int) -> Type[DpmoError]:
    """The exception class of a C ABI status code (``DpmoError`` for an unknown one)."""
    return _BY_STATUS.get(status, DpmoError)


def _make(status: int, message: str, detail: Optional[str], charged: bool) -> DpmoError:
    # Called by the native module to build the exception it raises.
    return error_class(status)(message, detail, charged)
