package org.dpmo;

/**
 * The bounded contributions of raw events, per distinct kept item ({@code dpmo_item_total}), as
 * {@link Dpmo#boundEvents} returns them: not a release, but exact aggregates for a mechanism of yours to add
 * noise to with the sensitivities below.
 *
 * <p>Each unit keeps at most L = {@code maxItems} of its distinct items and at most C = {@code maxPerItem}
 * events on each; adding or removing all the events of one unit changes every single {@link #units()} entry
 * by at most 1 (all of them together by at most L), every {@link #events()} entry by at most C (L · C in all)
 * and every {@link #sums()} entry by at most C · max(|lo|, |hi|) (L · C · max(|lo|, |hi|) in all).
 *
 * <p>Row r of every array describes the item {@code items()[r]}; rows are sorted by item as unsigned 64-bit
 * words. The accessors return copies.
 */
public final class BoundedEvents {
    private final long[] items;
    private final long[] units;
    private final long[] events;
    private final long[] sumUnits;
    private final double valueGrid;

    BoundedEvents(long[][] columns, double valueGrid) {
        items = columns[0];
        units = columns[1];
        events = columns[2];
        sumUnits = columns[3];
        this.valueGrid = valueGrid;
    }

    /**
     * The number of distinct kept items (rows).
     *
     * @return the length of every array
     */
    public int size() {
        return items.length;
    }

    /**
     * The kept items, ascending as unsigned 64-bit words.
     *
     * @return one item per row
     */
    public long[] items() {
        return items.clone();
    }

    /**
     * The distinct units with a kept contribution to each item (a unit adds at most 1 to one item, L in all).
     *
     * @return one count per row
     */
    public long[] units() {
        return units.clone();
    }

    /**
     * The kept events on each item (a unit adds at most C to one item, L · C in all).
     *
     * @return one count per row
     */
    public long[] events() {
        return events.clone();
    }

    /**
     * The sum of the kept, clamped values on each item, in units of {@link #valueGrid()} (exact integers); 0
     * without values.
     *
     * @return one sum per row, in grid units
     */
    public long[] sumUnits() {
        return sumUnits.clone();
    }

    /**
     * The sums of the kept, clamped values: {@link #sumUnits()} times {@link #valueGrid()}.
     *
     * @return one sum per row
     */
    public double[] sums() {
        double[] out = new double[sumUnits.length];
        for (int r = 0; r < out.length; r++) out[r] = sumUnits[r] * valueGrid;
        return out;
    }

    /**
     * The value grid g: each kept value was clamped to [lo, hi] and truncated toward zero onto a multiple of g
     * (2<sup>-20</sup> of the power of two at or above max(|lo|, |hi|)); 1 without values.
     *
     * @return g
     */
    public double valueGrid() {
        return valueGrid;
    }

    @Override
    public String toString() {
        return "BoundedEvents[" + items.length + " items, valueGrid=" + valueGrid + "]";
    }
}
