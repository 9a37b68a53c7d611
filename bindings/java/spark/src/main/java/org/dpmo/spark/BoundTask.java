package org.dpmo.spark;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

import org.dpmo.BoundedEvents;
import org.dpmo.Dpmo;
import org.dpmo.DpmoRng;

/**
 * The bounding task: runs on an executor over every event of its units (rows {@code (unit, candidate_index[,
 * value])}), returns one row {@code (candidate_index, count, sum_units)} per candidate with a kept event.
 */
final class BoundTask implements MapPartitionsFunction<Row, Row> {
    private static final long serialVersionUID = 1L;
    private static final byte[] LABEL = "dpmo.spark.bound.v1".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;
    private final int l;
    private final int c;
    private final double lo;
    private final double hi;
    private final boolean hasValues;

    BoundTask(byte[] key, int l, int c, double lo, double hi, boolean hasValues) {
        this.key = key.clone();
        this.l = l;
        this.c = c;
        this.lo = lo;
        this.hi = hi;
        this.hasValues = hasValues;
    }

    /** The task's 32-byte ChaCha20 seed: HMAC-SHA256(key, LABEL ‖ partition), a function of the key and the
     * partition only (never of the data). */
    static byte[] taskSeed(byte[] key, int partition) {
        return taskSeed(key, LABEL, partition);
    }

    /** HMAC-SHA256(key, label ‖ partition): the seed of one task of the job named by label. */
    static byte[] taskSeed(byte[] key, byte[] label, int partition) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(label);
            mac.update(ByteBuffer.allocate(4).putInt(partition).array());
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /** A task's input rows, all read (every task of the package reads its partition whole). */
    static List<Row> rows(Iterator<Row> input) {
        List<Row> rows = new ArrayList<>();
        input.forEachRemaining(rows::add);
        return rows;
    }

    @Override
    public Iterator<Row> call(Iterator<Row> input) {
        List<Row> rows = rows(input);
        List<Row> out = new ArrayList<>();
        if (rows.isEmpty()) return out.iterator();
        BoundedEvents b = bound(rows, TaskContext.getPartitionId());
        long[] items = b.items();
        long[] counts = b.events();
        long[] sums = b.sumUnits();
        for (int r = 0; r < items.length; r++) out.add(RowFactory.create(items[r], counts[r], sums[r]));
        return out.iterator();
    }

    /** Units as codes 0..u−1 in a canonical order (equal codes exactly for equal values: Spark's grouping, nulls
     * one unit), the events sorted by (unit, candidate, value), then the core's bounding. */
    BoundedEvents bound(List<Row> rows, int partition) {
        int n = rows.size();
        TreeMap<Object, Long> codes = new TreeMap<>(UNIT_ORDER);
        for (Row r : rows) codes.put(unitKey(r.get(0)), 0L);
        long next = 0;
        for (java.util.Map.Entry<Object, Long> e : codes.entrySet()) e.setValue(next++);
        long[] unit = new long[n];
        long[] cand = new long[n];
        double[] val = new double[n];
        for (int i = 0; i < n; i++) {
            Row r = rows.get(i);
            unit[i] = codes.get(unitKey(r.get(0)));
            cand[i] = r.getLong(1);
            val[i] = hasValues && !r.isNullAt(2) ? r.getDouble(2) : (hasValues ? Double.NaN : 0.0);
        }
        Sorted e = canonical(unit, cand, hasValues ? val : null);
        DpmoRng rng = new DpmoRng(DpmoRng.CHACHA20, taskSeed(key, partition));
        return Dpmo.boundEvents(rng, e.units(), e.items(), e.values(), l, c, lo, hi);
    }

    /** Events in the canonical order. */
    record Sorted(long[] units, long[] items, double[] values) {}

    /**
     * The events sorted by (unit, item, value) — units and items as codes numbered in a canonical order of their
     * values — so that every choice of a bounding task is a function of the task's multiset of events and the key,
     * whatever order the shuffle delivered them in (a retried task chooses the same). The one sort of
     * {@link BoundTask} and {@link DiscoverTask}.
     *
     * @param unit the unit codes
     * @param item the item (or candidate) codes
     * @param val the values, or null without values
     * @return the sorted copies (values null without values)
     */
    static Sorted canonical(long[] unit, long[] item, double[] val) {
        int n = unit.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> {
            int x = Long.compare(unit[a], unit[b]);
            if (x != 0) return x;
            x = Long.compare(item[a], item[b]);
            return x != 0 || val == null ? x : Double.compare(val[a], val[b]);
        });
        long[] units = new long[n];
        long[] items = new long[n];
        double[] values = val != null ? new double[n] : null;
        for (int i = 0; i < n; i++) {
            units[i] = unit[order[i]];
            items[i] = item[order[i]];
            if (val != null) values[i] = val[order[i]];
        }
        return new Sorted(units, items, values);
    }

    /** HMAC-SHA256(key, label ‖ repetition ‖ partition): the seed of one repetition of one task. */
    static byte[] taskSeed(byte[] key, byte[] label, int repetition, int partition) {
        byte[] l = ByteBuffer.allocate(label.length + 4).put(label).putInt(repetition).array();
        return taskSeed(key, l, partition);
    }

    /** A unit value as a comparable key: null, a long (integer columns), a String, or a binary as a ByteBuffer. */
    static Object unitKey(Object v) {
        if (v == null) return NULL;
        if (v instanceof Number) return ((Number) v).longValue();
        if (v instanceof byte[]) return ByteBuffer.wrap((byte[]) v);
        return v;
    }

    private static final Object NULL = new Object();

    /** A total order on the keys of one column (all of one kind, and the null key first). */
    static final Comparator<Object> UNIT_ORDER = (a, b) -> {
        if (a == b) return 0;
        if (a == NULL) return -1;
        if (b == NULL) return 1;
        if (a instanceof Long) return Long.compare((Long) a, (Long) b);
        if (a instanceof ByteBuffer) return ((ByteBuffer) a).compareTo((ByteBuffer) b);
        return ((String) a).compareTo((String) b);
    };
}
