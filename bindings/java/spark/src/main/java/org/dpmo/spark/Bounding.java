package org.dpmo.spark;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import org.dpmo.Dpmo;
import org.dpmo.DpmoRng;

/**
 * Contribution bounding and per-candidate aggregation of a DataFrame of events against a public candidate list
 * (the JVM twin of Python's {@code dpmo.spark.bound_and_aggregate}). Made by {@link DpmoSpark#bounding}; set the
 * columns, the candidates and L, then {@link #aggregate()}.
 *
 * <ol>
 * <li>Events on candidates outside the list are dropped (a broadcast join giving each event its candidate's
 * index); events with a null candidate too.</li>
 * <li>The events are repartitioned by unit ({@link #partitions(int)} tasks): every event of a unit meets in one
 * task. Each task sorts its events (unit, candidate, value) and bounds them with the core's
 * {@code dpmo_bound_events} ({@link Dpmo#boundEvents}): at most L candidates per unit, at most C events per
 * (unit, candidate), values clamped to [lo, hi] onto the core's grid. The task's generator is ChaCha20 keyed by
 * HMAC-SHA256(k, "dpmo.spark.bound.v1" ‖ partition) of a fresh 32-byte secret k from {@link SecureRandom} drawn on
 * the driver at {@link #aggregate()}: never a function of the data, and the same for a retried task, which thus
 * makes the same choices.</li>
 * <li>A {@code groupBy} sums the tasks' partial counts and sums (exact integers), and a join with the range
 * 0..n−1 gives every candidate a row.</li>
 * </ol>
 *
 * <p>The unit column must be an integer, a string with the binary collation (UTF8_BINARY) or binary: a unit
 * column whose equality in Spark differs from the exact bytes (a case-insensitive collation) could make one
 * person several units to the bounding. The same holds for the candidate column. Null units are one unit, as in
 * Spark's grouping.
 *
 * <p>The secret key travels to the executors inside the task closure: on a shared cluster enable Spark's RPC
 * authentication and encryption ({@code spark.authenticate}, {@code spark.network.crypto.enabled}).
 */
public final class Bounding {
    private final Dataset<Row> events;
    private String unit;
    private String candidate;
    private String value;
    private double lo;
    private double hi;
    private List<?> candidates;
    private int maxCandidates;
    private int maxPerCandidate = 1;
    private int partitions;

    Bounding(Dataset<Row> events) {
        if (events == null) throw DpmoSpark.nullPointer("events is null");
        this.events = events;
    }

    /**
     * The privacy-unit column (integer, UTF8_BINARY string or binary).
     *
     * @param column the column name
     * @return this
     */
    public Bounding unit(String column) {
        this.unit = column;
        return this;
    }

    /**
     * The candidate column (integer, UTF8_BINARY string or binary), whose values are matched against
     * {@link #candidates(List)}.
     *
     * @param column the column name
     * @return this
     */
    public Bounding candidate(String column) {
        this.candidate = column;
        return this;
    }

    /**
     * A value column (cast to double; null and NaN count as 0), clamped to [lo, hi], for the "sum" score.
     *
     * @param column the column name
     * @param lo the lower clamp (finite, lo ≤ hi)
     * @param hi the upper clamp (finite)
     * @return this
     */
    public Bounding value(String column, double lo, double hi) {
        this.value = column;
        this.lo = lo;
        this.hi = hi;
        return this;
    }

    /**
     * The public candidate list (distinct, non-empty, of the candidate column's Java type: Long, Integer, Short,
     * Byte or String). Index i of the aggregates is element i.
     *
     * @param list the candidates
     * @return this
     */
    public Bounding candidates(List<?> list) {
        this.candidates = list;
        return this;
    }

    /**
     * L: the most candidates one unit contributes to (≥ 1; required).
     *
     * @param l L
     * @return this
     */
    public Bounding maxCandidates(int l) {
        this.maxCandidates = l;
        return this;
    }

    /**
     * C: the most events of one unit counted on one candidate (≥ 1; default 1).
     *
     * @param c C
     * @return this
     */
    public Bounding maxPerCandidate(int c) {
        this.maxPerCandidate = c;
        return this;
    }

    /**
     * The number of bounding tasks (default: the session's default parallelism).
     *
     * @param n ≥ 1
     * @return this
     */
    public Bounding partitions(int n) {
        this.partitions = n;
        return this;
    }

    /**
     * Checks the arguments and returns the aggregates (lazy: no job runs here, nothing is charged).
     *
     * @return the bounded per-candidate aggregates
     * @throws org.dpmo.DpmoException NULL_POINTER for a missing column or candidate list, INVALID_ARGUMENT for
     *     an unknown column, a column type the bounding cannot tell apart exactly, duplicate or ill-typed
     *     candidates, L or C &lt; 1, or bad bounds
     */
    public SparkAggregates aggregate() {
        if (unit == null || candidate == null || candidates == null) {
            throw DpmoSpark.nullPointer("unit(...), candidate(...) and candidates(...) are required");
        }
        if (maxCandidates < 1 || maxCandidates > Dpmo.DISCOVER_MAX_ITEMS || maxPerCandidate < 1) {
            throw DpmoSpark.invalid("maxCandidates must be in 1.." + Dpmo.DISCOVER_MAX_ITEMS
                    + " and maxPerCandidate >= 1");
        }
        if (partitions < 0) throw DpmoSpark.invalid("partitions must be >= 1");
        StructType schema = events.schema();
        DataType unitType = DpmoSpark.columnType(schema, unit);
        DataType candType = DpmoSpark.columnType(schema, candidate);
        DpmoSpark.checkExactType(unitType, unit, "unit");
        DpmoSpark.checkExactType(candType, candidate, "candidate");
        if (value != null) DpmoSpark.columnType(schema, value);
        if (candidates.isEmpty()) throw DpmoSpark.invalid("the candidate list is empty");
        // The bounds and the grid, checked by the core on the driver (an empty call: no data, nothing charged).
        boolean hasValues = value != null;
        double grid = Dpmo.boundEvents(new DpmoRng(), new long[0], new long[0], hasValues ? new double[0] : null,
                maxCandidates, maxPerCandidate, hasValues ? lo : 0.0, hasValues ? hi : 0.0).valueGrid();
        if (!hasValues) grid = 1.0;
        List<Object> labels = new ArrayList<>(candidates.size());
        Set<Object> seen = new HashSet<>();
        List<Row> lookup = new ArrayList<>(candidates.size());
        for (int i = 0; i < candidates.size(); i++) {
            Object label = DpmoSpark.asColumnValue(candidates.get(i), candType, candidate);
            if (!seen.add(label)) throw DpmoSpark.invalid("the candidate list has duplicates: " + label);
            labels.add(candidates.get(i));
            lookup.add(RowFactory.create(label, (long) i));
        }
        SparkSession spark = events.sparkSession();
        StructType lookupSchema = new StructType().add("label", candType, false)
                .add("candidate_index", DataTypes.LongType, false);
        Dataset<Row> table = spark.createDataFrame(lookup, lookupSchema);
        List<Column> cols = new ArrayList<>();
        cols.add(functions.col(unit).alias("unit"));
        cols.add(functions.col(candidate).alias("label"));
        if (hasValues) cols.add(functions.col(value).cast("double").alias("value"));
        Dataset<Row> ev = events.select(cols.toArray(new Column[0]))
                .join(functions.broadcast(table), "label");
        // The task's columns, by name: (unit, candidate_index[, value]).
        ev = hasValues ? ev.select("unit", "candidate_index", "value") : ev.select("unit", "candidate_index");
        int parts = partitions > 0 ? partitions : DpmoSpark.defaultParallelism(spark);
        ev = ev.repartition(parts, functions.col("unit"));
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        StructType out = new StructType().add("candidate_index", DataTypes.LongType, false)
                .add("count", DataTypes.LongType, false).add("sum_units", DataTypes.LongType, false);
        BoundTask task = new BoundTask(key, maxCandidates, maxPerCandidate, hasValues ? lo : 0.0,
                hasValues ? hi : 0.0, hasValues);
        Dataset<Row> bounded = ev.mapPartitions(task, Encoders.row(out));
        Dataset<Row> agg = bounded.groupBy("candidate_index")
                .agg(functions.sum("count").alias("count"), functions.sum("sum_units").alias("sum_units"));
        Dataset<Row> full = spark.range(candidates.size()).withColumnRenamed("id", "candidate_index")
                .join(agg, DpmoSpark.seq("candidate_index"), "left")
                .na().fill(0L, new String[] {"count", "sum_units"});
        double m = Math.max(Math.abs(lo), Math.abs(hi));
        double c = maxPerCandidate;
        return new SparkAggregates(full, labels, grid, c, hasValues ? c * m : Double.NaN, maxCandidates);
    }

}
