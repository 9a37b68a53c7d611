package org.dpmo;

/**
 * A local sensitivity δ(x, t, r) for n candidates ({@code dpmo_sensitivity}): every value is clamped to the
 * global sensitivity Δ and forced to Δ for distances t ≥ tMax. Its admissibility (Local Dampening paper,
 * Def. 3.3) is the caller's responsibility: an inadmissible δ voids the privacy guarantee.
 *
 * <p>The values array is used in place, not copied: do not modify it while a call is running. Shapes are
 * checked by the C library at each call (LENGTH_MISMATCH, INVALID_SENSITIVITY). Values are private data and
 * never refused: one that is NaN, negative or infinite counts as Δ, one above Δ as Δ.
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

    /**
     * One value per candidate, constant in t (for t &lt; tMax).
     *
     * @param values n values δ(r) (clamped to Δ; NaN, negative or infinite count as Δ), used in place
     * @param global Δ, the global sensitivity (finite, &gt; 0)
     * @param tMax the saturation distance: δ = Δ for t ≥ tMax
     * @return the sensitivity
     */
    public static Sensitivity perCandidate(double[] values, double global, long tMax) {
        return new Sensitivity(PER_CANDIDATE, values, 0, global, tMax);
    }

    /**
     * A row-major n × columns table: values[r · columns + t] = δ(t, r), and Δ for t ≥ columns.
     *
     * @param values n · columns values (clamped to Δ; NaN, negative or infinite count as Δ), used in place
     * @param columns the number of distances tabulated per candidate
     * @param global Δ, the global sensitivity (finite, &gt; 0)
     * @param tMax the saturation distance: δ = Δ for t ≥ tMax
     * @return the sensitivity
     */
    public static Sensitivity table(double[] values, int columns, double global, long tMax) {
        return new Sensitivity(TABLE, values, columns, global, tMax);
    }

    /**
     * One δ(t) shared by every candidate: values[t], and Δ for t ≥ values.length.
     *
     * @param values δ(0), δ(1), ... (clamped to Δ; NaN, negative or infinite count as Δ), used in place
     * @param global Δ, the global sensitivity (finite, &gt; 0)
     * @param tMax the saturation distance: δ = Δ for t ≥ tMax
     * @return the sensitivity
     */
    public static Sensitivity shared(double[] values, double global, long tMax) {
        return new Sensitivity(SHARED, values, 0, global, tMax);
    }

    /**
     * Any kind, as in the C struct. An unknown kind, a negative size, and the C ABI's callback kind (3, not
     * offered in Java: it would call back into the JVM while arrays are pinned) are refused with
     * INVALID_ARGUMENT at use.
     *
     * @param kind {@link #PER_CANDIDATE}, {@link #TABLE} or {@link #SHARED}
     * @param values the values, used in place
     * @param columns the number of columns ({@link #TABLE} only)
     * @param global Δ, the global sensitivity (finite, &gt; 0)
     * @param tMax the saturation distance: δ = Δ for t ≥ tMax
     * @return the sensitivity
     */
    public static Sensitivity of(int kind, double[] values, int columns, double global, long tMax) {
        return new Sensitivity(kind, values, columns, global, tMax);
    }

    /**
     * The kind of table.
     *
     * @return {@link #PER_CANDIDATE}, {@link #TABLE} or {@link #SHARED} (or what {@link #of} was given)
     */
    public int kind() {
        return kind;
    }

    /**
     * The global sensitivity Δ.
     *
     * @return Δ
     */
    public double global() {
        return global;
    }

    /**
     * The saturation distance.
     *
     * @return tMax: δ = Δ for t ≥ tMax
     */
    public long tMax() {
        return tMax;
    }

    /**
     * The number of columns of a {@link #TABLE}.
     *
     * @return columns (0 for the other kinds)
     */
    public long columns() {
        return columns;
    }
}
