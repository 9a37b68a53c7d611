package org.dpmo.spark;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

import org.dpmo.BoundContributions;
import org.dpmo.Dpmo;
import org.dpmo.DpmoRng;

/**
 * The bounding task of the unknown-domain pipeline: runs on an executor over every event of its units (rows
 * {@code (unit, item[, value])}) and returns one row {@code (rep, item, events, unit_items, sum, weight)} per kept
 * (unit, item) and repetition — the core's {@code dpmo_bound_contributions} ({@link Dpmo#boundContributions}) of
 * the task's events, from the ChaCha20 stream HMAC-SHA256(k, "dpmo.spark.discover.v1" ‖ rep ‖ partition) of the
 * repetition and the task. (More than one repetition: independent boundings for tests and simulations.)
 */
final class DiscoverTask implements MapPartitionsFunction<Row, Row> {
    private static final long serialVersionUID = 1L;
    static final byte[] LABEL = "dpmo.spark.discover.v1".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;
    private final int l;
    private final int c;
    private final double lo;
    private final double hi;
    private final boolean hasValues;
    private final long weightGrid;
    private final int repetitions;

    DiscoverTask(byte[] key, int l, int c, double lo, double hi, boolean hasValues, long weightGrid,
            int repetitions) {
        this.key = key.clone();
        this.l = l;
        this.c = c;
        this.lo = lo;
        this.hi = hi;
        this.hasValues = hasValues;
        this.weightGrid = weightGrid;
        this.repetitions = repetitions;
    }

    @Override
    public Iterator<Row> call(Iterator<Row> input) {
        List<Row> rows = BoundTask.rows(input);
        List<Row> out = new ArrayList<>();
        if (rows.isEmpty()) return out.iterator();
        int n = rows.size();
        // Units and items as codes in a canonical order: every choice is then a function of the task's multiset
        // of events and the key, whatever order the shuffle delivered them in (a retried task chooses the same).
        TreeMap<Object, Long> units = new TreeMap<>(BoundTask.UNIT_ORDER);
        TreeMap<Object, Long> items = new TreeMap<>(BoundTask.UNIT_ORDER);
        for (Row r : rows) {
            units.put(BoundTask.unitKey(r.get(0)), 0L);
            items.put(BoundTask.unitKey(r.get(1)), 0L);
        }
        number(units);
        number(items);
        Object[] labels = new Object[items.size()];
        for (Row r : rows) labels[items.get(BoundTask.unitKey(r.get(1))).intValue()] = r.get(1);
        long[] unit = new long[n];
        long[] item = new long[n];
        double[] val = new double[n];
        for (int i = 0; i < n; i++) {
            Row r = rows.get(i);
            unit[i] = units.get(BoundTask.unitKey(r.get(0)));
            item[i] = items.get(BoundTask.unitKey(r.get(1)));
            val[i] = hasValues && !r.isNullAt(2) ? r.getDouble(2) : (hasValues ? Double.NaN : 0.0);
        }
        BoundTask.Sorted e = BoundTask.canonical(unit, item, hasValues ? val : null);
        int part = TaskContext.getPartitionId();
        for (int rep = 0; rep < repetitions; rep++) {
            DpmoRng rng = new DpmoRng(DpmoRng.CHACHA20, BoundTask.taskSeed(key, LABEL, rep, part));
            BoundContributions b = Dpmo.boundContributions(rng, e.units(), e.items(), e.values(), l, c, lo, hi,
                    weightGrid);
            long[] kItems = b.items();
            long[] kEvents = b.events();
            long[] kTags = b.unitItems();
            long[] kSums = b.sumUnits();
            long[] kWeights = b.weights();
            for (int r = 0; r < kItems.length; r++) {
                out.add(RowFactory.create(rep, labels[(int) kItems[r]], kEvents[r], kTags[r], kSums[r], kWeights[r]));
            }
        }
        return out.iterator();
    }
    private static void number(TreeMap<Object, Long> codes) {
        long next = 0;
        for (Map.Entry<Object, Long> e : codes.entrySet()) e.setValue(next++);
    }
}
