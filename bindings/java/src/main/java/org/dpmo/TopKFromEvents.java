package org.dpmo;

/**
 * The outcome of {@link Dpmo#discoverTopK} ({@code dpmo_top_k_result}): the selected items in selection order,
 * whether the run stopped at the threshold candidate ⊥, and the (ε, δ) it spent, which is what the budget was
 * charged (pay what you get).
 */
public final class TopKFromEvents {
    private final long[] items;
    private final boolean stopped;
    private final double epsilon;
    private final double delta;

    TopKFromEvents(long[] items, boolean stopped, double epsilon, double delta) {
        this.items = items;
        this.stopped = stopped;
        this.epsilon = epsilon;
        this.delta = delta;
    }

    /**
     * The selected items, best first (at most k).
     *
     * @return a copy of the items
     */
    public long[] items() {
        return items.clone();
    }

    /**
     * True when the run stopped at ⊥ before k items.
     *
     * @return whether ⊥ was selected
     */
    public boolean stopped() {
        return stopped;
    }

    /**
     * The ε spent: ε/k · (items().length + 1) when stopped, ε otherwise.
     *
     * @return the ε charged
     */
    public double epsilon() {
        return epsilon;
    }

    /**
     * The δ spent (the δ of the call).
     *
     * @return the δ charged
     */
    public double delta() {
        return delta;
    }

    @Override
    public String toString() {
        return "TopKFromEvents[items=" + java.util.Arrays.toString(items) + ", stopped=" + stopped + ", epsilon="
                + epsilon + ", delta=" + delta + "]";
    }
}
