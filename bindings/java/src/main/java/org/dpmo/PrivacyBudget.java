package org.dpmo;

/**
 * A privacy budget under sequential (basic) composition ({@code dpmo_budget}): every selection given this
 * budget is charged its epsilon on success, and refused with {@link DpmoException#BUDGET_EXHAUSTED} (nothing
 * else happens: no draw, generator unchanged) when the remaining budget is smaller.
 *
 * <p>No tolerance is applied: ten charges of 0.1 against 1.0 are refused at the tenth (the double 0.1 is
 * slightly above 1/10); charge {@link #remaining()} last, or use dyadic shares such as 0.125. Thread-safe
 * (calls hold this object's monitor).
 */
public final class PrivacyBudget {
    static {
        Dpmo.load();
    }

    /** {total, spent}, read and written only by the JNI shim. */
    private final double[] state = new double[2];

    /**
     * A fresh budget of {@code totalEpsilon}.
     *
     * @throws DpmoException INVALID_EPSILON unless totalEpsilon is finite and &gt; 0
     */
    public PrivacyBudget(double totalEpsilon) {
        init(state, totalEpsilon);
    }

    /** Records a mechanism run outside dpmo with {@code epsilon}. */
    public synchronized void charge(double epsilon) {
        charge(state, epsilon);
    }

    /** The epsilon still available (a lower bound of total - spent, never negative). */
    public synchronized double remaining() {
        return remaining(state);
    }

    /** The total epsilon. */
    public synchronized double total() {
        return state[0];
    }

    /** The epsilon spent so far (an upper bound of the exact sum of the charges). */
    public synchronized double spent() {
        return state[1];
    }

    @Override
    public synchronized String toString() {
        return "PrivacyBudget[total=" + state[0] + ", spent=" + state[1] + "]";
    }

    private static native void init(double[] state, double totalEpsilon);

    private static native void charge(double[] state, double epsilon);

    private static native double remaining(double[] state);
}
