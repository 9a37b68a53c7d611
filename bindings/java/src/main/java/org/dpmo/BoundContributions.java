package org.dpmo;

/**
 * The kept (unit, item) contributions of a bounding ({@code dpmo_bound_contributions}), as
 * {@link Dpmo#boundContributions} returns them: one row per kept (unit, item), with the unit's number of kept
 * items |S<sub>u</sub>| and, for a weight grid G &gt; 0, its weighted-Gaussian weight ⌊G/√|S<sub>u</sub>|⌋ on the
 * core's grid. Not a release: the pieces of a distributed discovery, summed per item over the tasks of a
 * bounding that holds every event of a unit in one task (the Spark API does that) and then given to
 * {@link Dpmo#selectPartitionsFromStatistics} or {@link Dpmo#selectTopKFromScores}. Rows are in no meaningful
 * order; the accessors return copies.
 */
public final class BoundContributions {
    private final long[][] columns;
    private final double valueGrid;

    BoundContributions(long[][] columns, double valueGrid) {
        this.columns = columns;
        this.valueGrid = valueGrid;
    }

    /**
     * The number of kept (unit, item) contributions (rows).
     *
     * @return the length of every array
     */
    public int size() {
        return columns[0].length;
    }

    /**
     * The unit of each row.
     *
     * @return one unit per row
     */
    public long[] units() {
        return columns[0].clone();
    }

    /**
     * The item of each row.
     *
     * @return one item per row
     */
    public long[] items() {
        return columns[1].clone();
    }

    /**
     * The kept events on (unit, item), 1 to C.
     *
     * @return one count per row
     */
    public long[] events() {
        return columns[2].clone();
    }

    /**
     * |S<sub>u</sub>|: the number of items the row's unit keeps, 1 to L.
     *
     * @return one count per row
     */
    public long[] unitItems() {
        return columns[3].clone();
    }

    /**
     * The sum of the kept, clamped values on (unit, item), in units of {@link #valueGrid()} (0 without values).
     *
     * @return one sum per row, in grid units
     */
    public long[] sumUnits() {
        return columns[4].clone();
    }

    /**
     * The weighted-Gaussian weight ⌊G/√|S<sub>u</sub>|⌋ of the row's unit for the weight grid G given (0 when G
     * = 0): summed per item, the statistic of {@link Dpmo#PARTITION_WEIGHTED_GAUSSIAN}.
     *
     * @return one weight per row
     */
    public long[] weights() {
        return columns[5].clone();
    }

    /**
     * The value grid g of the sums (1 without values).
     *
     * @return g
     */
    public double valueGrid() {
        return valueGrid;
    }

    @Override
    public String toString() {
        return "BoundContributions[" + size() + " rows, valueGrid=" + valueGrid + "]";
    }
}
