package org.dpmo;

/**
 * A dpmo call failed: {@link #status()} is the {@code dpmo_status} code of the C library and the message is
 * its {@code dpmo_status_message} sentence. On any failure nothing was written and the generator state is
 * unchanged, and a privacy budget given to the call is unchanged too. Selections never fail because of the
 * private data (NaN, ±∞ and invalid local sensitivity values follow a public rule, see {@link Dpmo}), so no
 * status depends on it; {@link #NON_FINITE_INPUT} remains for public arguments (PrivAgg weights) and for helpers
 * that return private values ({@link Dpmo#paretoScores}).
 */
public final class DpmoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A required argument (array, generator, sensitivity) is null. */
    public static final int NULL_POINTER = 1;
    /** There are no candidates (n = 0). */
    public static final int EMPTY_INPUT = 2;
    /** A score, utility or weight is NaN or infinite. */
    public static final int NON_FINITE_INPUT = 3;
    /** epsilon is not a finite number greater than zero. */
    public static final int INVALID_EPSILON = 4;
    /** A global sensitivity is not a finite number greater than zero. */
    public static final int INVALID_SENSITIVITY = 5;
    /** A local sensitivity value is NaN, negative or infinite. */
    public static final int INVALID_SENSITIVITY_VALUE = 6;
    /** Lengths that must agree do not. */
    public static final int LENGTH_MISMATCH = 7;
    /** A scratch buffer is too small (cannot happen through this binding). */
    public static final int SCRATCH_TOO_SMALL = 8;
    /** A result is not representable as a finite double, or a size computation overflowed. */
    public static final int OVERFLOW = 9;
    /** The generator state is not initialised or corrupted. */
    public static final int INVALID_GENERATOR = 10;
    /** An argument is outside its documented range (unknown selector, k = 0, k &gt; n, negative count...). */
    public static final int INVALID_ARGUMENT = 11;
    /** More than 16 objectives. */
    public static final int CAPACITY_EXCEEDED = 12;
    /** The privacy budget left is smaller than the epsilon requested. */
    public static final int BUDGET_EXHAUSTED = 13;
    /** An output buffer overlaps an input buffer (cannot happen through this binding). */
    public static final int OVERLAPPING_BUFFERS = 14;
    /**
     * Not available in the arithmetic asked for (report-noisy-max with Laplace noise without
     * {@link Dpmo#FLOAT}), or on this platform (no operating-system random source for
     * {@link DpmoRng#fromOs()}).
     */
    public static final int UNSUPPORTED = 15;

    /** The {@code dpmo_status} code. */
    private final int status;

    /**
     * Called by the JNI shim.
     *
     * @param status the {@code dpmo_status} code
     * @param message its {@code dpmo_status_message} sentence
     */
    public DpmoException(int status, String message) {
        super(message);
        this.status = status;
    }

    /**
     * The {@code dpmo_status} code.
     *
     * @return one of the constants of this class
     */
    public int status() {
        return status;
    }

    @Override
    public String toString() {
        return "DpmoException[" + status + "]: " + getMessage();
    }
}
