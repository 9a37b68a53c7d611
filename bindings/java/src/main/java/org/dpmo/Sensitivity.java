package org.dpmo;

/**
 * A local sensitivity δ(x, t, r) for n candidates ({@code dpmo_sensitivity}): every value is clamped to the
 * global sensitivity Δ and forced to Δ for distances t ≥ tMax. Its admissibility (Local Dampening paper,
 * Def. 3.3) is the caller's responsibility: an inadmissible δ voids the privacy guarantee.
 *
 * <p>The values array is used in place, not copied: do not modify it while a call is running. Shapes and
 * values are checked by the C library at each call (LENGTH_MISMATCH, INVALID_SENSITIVITY,
 * INVALID_SENSITIVITY_VALUE).
 */
public final class Sensitivity {
    /** δ(t, r) = values[r] for every t &lt; tMax (values.length = n). */
    public static final int PER_CANDIDATE = 0;
    /** δ(t, r) = values[r · columns + t] for t &lt; columns, Δ beyond (values.length = n · columns). */
    public static final int TABLE = 1;
    /** δ(t, r) = values[t] for every r, Δ beyond values.length. */
    public static final int SHARED = 2;

    final int kind;
    final double[] values;
    final long columns;
    final double global;
    final long tMax;

    private Sensitivity(int kind, double[] values, long columns, double global, long tMax) {
        this.kind = kind;
        this.values = values;
        this.columns = columns;
        this.global = global;
        this.tMax = tMax;
    }

    /** One value per candidate, constant in t (for t &lt; tMax). */
    public static Sensitivity perCandidate(double[] values, double global, long tMax) {
        return new Sensitivity(PER_CANDIDATE, values, 0, global, tMax);
    }

    /** A row-major n × columns table: values[r · columns + t] = δ(t, r). */
    public static Sensitivity table(double[] values, int columns, double global, long tMax) {
        return new Sensitivity(TABLE, values, columns, global, tMax);
    }

    /** One δ(t) shared by every candidate: values[t]. */
    public static Sensitivity shared(double[] values, double global, long tMax) {
        return new Sensitivity(SHARED, values, 0, global, tMax);
    }

    /**
     * Any kind, as in the C struct. An unknown kind, a negative size, and the C ABI's callback kind (3, not
     * offered in Java: it would call back into the JVM while arrays are pinned) are refused with
     * INVALID_ARGUMENT at use.
     */
    public static Sensitivity of(int kind, double[] values, int columns, double global, long tMax) {
        return new Sensitivity(kind, values, columns, global, tMax);
    }

    public int kind() {
        return kind;
    }

    public double global() {
        return global;
    }

    public long tMax() {
        return tMax;
    }

    public long columns() {
        return columns;
    }
}
