package org.dpmo.spark;

import java.util.Collections;
import java.util.List;

/**
 * The outcome of {@link DpmoSpark#selectTopKFromEvents}: the selected items (values of the item column) in
 * selection order, whether the run stopped at the threshold candidate ⊥, and the (ε, δ) it spent, which is what
 * the budget was charged (pay what you get).
 */
public final class DiscoveredTopK {
    private final List<Object> items;
    private final boolean stopped;
    private final double epsilon;
    private final double delta;

    DiscoveredTopK(List<Object> items, boolean stopped, double epsilon, double delta) {
        this.items = Collections.unmodifiableList(items);
        this.stopped = stopped;
        this.epsilon = epsilon;
        this.delta = delta;
    }

    /**
     * The selected items, best first (at most k).
     *
     * @return the items (unmodifiable)
     */
    public List<Object> items() {
        return items;
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
     * The ε spent: ε/k · (items().size() + 1) when stopped, ε otherwise.
     *
     * @return the ε charged
     */
    public double epsilon() {
        return epsilon;
    }

    /**
     * The δ spent.
     *
     * @return the δ charged
     */
    public double delta() {
        return delta;
    }

    @Override
    public String toString() {
        return "DiscoveredTopK[items=" + items + ", stopped=" + stopped + ", epsilon=" + epsilon + ", delta="
                + delta + "]";
    }
}
