package org.dpmo.spark;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

import org.dpmo.Dpmo;
import org.dpmo.DpmoRng;

/**
 * The decision task of {@link DpmoSpark#discoverPartitions}: runs on an executor over its share of the per-item
 * statistics (rows {@code (rep, item, stat)} after the {@code groupBy}, every item whole in one task) and returns
 * the kept items {@code (rep, item)} — the core's {@code dpmo_select_partitions_from_statistics}
 * ({@link Dpmo#selectPartitionsFromStatistics}), which decides every item independently given its statistic,
 * from the ChaCha20 stream HMAC-SHA256(k, "dpmo.spark.decide.v1" ‖ rep ‖ partition) of the repetition and the task.
 * The rows are sorted (rep, item) first, so the decisions are a function of the task's rows and the key whatever
 * order the shuffle delivered them in. Only the released items leave the executors.
 */
final class DecideTask implements MapPartitionsFunction<Row, Row> {
    private static final long serialVersionUID = 1L;
    static final byte[] LABEL = "dpmo.spark.decide.v1".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;
    private final int mechanism;
    private final double epsilon;
    private final double delta;
    private final int maxItems;

    DecideTask(byte[] key, int mechanism, double epsilon, double delta, int maxItems) {
        this.key = key.clone();
        this.mechanism = mechanism;
        this.epsilon = epsilon;
        this.delta = delta;
        this.maxItems = maxItems;
    }

    @Override
    public Iterator<Row> call(Iterator<Row> input) {
        List<Row> rows = BoundTask.rows(input);
        List<Row> out = new ArrayList<>();
        if (rows.isEmpty()) return out.iterator();
        rows.sort((a, b) -> {
            int x = Integer.compare(a.getInt(0), b.getInt(0));
            return x != 0 ? x : BoundTask.UNIT_ORDER.compare(BoundTask.unitKey(a.get(1)), BoundTask.unitKey(b.get(1)));
        });
        int part = TaskContext.getPartitionId();
        for (int s = 0; s < rows.size();) {
            int rep = rows.get(s).getInt(0);
            int e = s;
            while (e < rows.size() && rows.get(e).getInt(0) == rep) e++;
            long[] ids = new long[e - s];
            long[] stats = new long[e - s];
            for (int i = s; i < e; i++) {
                ids[i - s] = i - s;
                stats[i - s] = rows.get(i).getLong(2);
            }
            DpmoRng rng = new DpmoRng(DpmoRng.CHACHA20, BoundTask.taskSeed(key, LABEL, rep, part));
            for (long kept : Dpmo.selectPartitionsFromStatistics(rng, ids, stats, maxItems, epsilon, delta, mechanism,
                    null)) {
                out.add(RowFactory.create(rep, rows.get(s + (int) kept).get(1)));
            }
            s = e;
        }
        return out.iterator();
    }
}
