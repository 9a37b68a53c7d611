package org.dpmo.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;

import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;

import org.dpmo.Dpmo;
import org.dpmo.DpmoException;
import org.dpmo.DpmoRng;
import org.dpmo.PrivacyBudget;

/**
 * dpmo on Spark for Java and Scala: contribution bounding and per-candidate aggregation on the executors,
 * single-objective top-k and multi-objective selection on the driver with the core's exact selectors, and a
 * check that the executors can run dpmo before anything is charged. The JVM twin of Python's
 * {@code dpmo.spark} (same bounding, same sensitivities).
 *
 * <pre>{@code
 * SparkAggregates agg = DpmoSpark.bounding(events).unit("user").candidate("item").value("amount", 0, 100)
 *         .candidates(items).maxCandidates(5).aggregate();
 * PrivacyBudget budget = new PrivacyBudget(1.0);
 * List<Object> top3 = DpmoSpark.select(agg, "count", Dpmo.SELECTOR_EXPONENTIAL, 0.5, 3, budget, null);
 * }</pre>
 *
 * <p><b>Where things run.</b> The bounding runs on the executors (each loads the jar's native library itself:
 * ship {@code dpmo-VERSION.jar} and {@code dpmo-spark-VERSION.jar} with {@code spark-submit --jars}).
 * {@link #select} and {@link #selectScores} run the exact distributed report-noisy-max (the JVM twin of Python's
 * {@code dpmo.distributed}): the scores stay on the executors, which send the driver each partition's k largest
 * scores and then, per round, one pair of numbers per partition; the coins are flipped on the executors from
 * per-task streams of a fresh secret key, and the driver draws only the combine (which partition, for
 * permute-and-flip) from its generator. The output has exactly the law of {@link Dpmo#selectTopK} on the
 * collected scores. {@link #discoverPartitions} decides the items on the executors too (only the released items
 * reach the driver); {@link #selectTopKFromEvents} brings the top k̄ + 1 items to the driver for the peeling.
 *
 * <p><b>When the scores are collected.</b> Only where no distributed form exists: {@link #selectMulti} (Pareto
 * depth and PrivAgg need every candidate's utilities together) and {@link #select} with a selector outside the
 * exact exponential mechanism and permute-and-flip (OR-ed with {@link Dpmo#FLOAT} or {@link Dpmo#ISOCHRONOUS}, or
 * Laplace noise). Those collect the n scores (or n × 2 utilities) to the driver — 8 bytes per score in one Java
 * array, so n · m is at most 2<sup>31</sup> − 9 and in practice bounded by the driver's memory (about
 * 10<sup>7</sup> candidates per gigabyte of driver heap) — and select there with the core's selector.
 *
 * <p><b>What is charged when.</b> Every release checks its arguments, then runs {@link #checkExecutors}: nothing
 * is charged when the arguments are invalid or the executors cannot load dpmo, and a refused charge
 * (BUDGET_EXHAUSTED) leaves the budget and the generator untouched. The distributed selections then charge ε
 * before they read the scores (a frame found not to hold the n candidates is refused with LENGTH_MISMATCH and
 * the charge kept: its shape could depend on the data); {@link #discoverPartitions} charges (ε, δ) before its
 * jobs read the events. Their
 * number of Spark jobs depends on the data (the exponential mechanism's rejection batches), which the charge
 * therefore precedes; a job that fails after the charge keeps it. The collecting selections and
 * {@link #selectTopKFromEvents} charge on the driver once the jobs succeeded.
 */
public final class DpmoSpark {
    /** PrivPareto (Pareto-depth utilities, global Δ = n − 1) for {@link #selectMulti}. */
    public static final int PRIVPARETO = 0;
    /** PrivAgg (weighted sum of the utilities, Δ = Σ|w_i|Δ_i) for {@link #selectMulti}. */
    public static final int PRIVAGG = 1;

    private DpmoSpark() {}

    /**
     * Starts a bounding of {@code events}: see {@link Bounding}.
     *
     * @param events the events (one row per event)
     * @return a builder
     */
    public static Bounding bounding(Dataset<Row> events) {
        return new Bounding(events);
    }

    /**
     * Runs a tiny job of {@code tasks} tasks, each of which loads dpmo's native library on its executor and
     * reports {@link Dpmo#version()}; refuses unless every task succeeds and reports the driver's version. Every
     * release of this class runs it (with the default parallelism) before it charges. It checks the executors
     * its tasks reach: an executor that joins later (dynamic allocation) and cannot load dpmo fails the release
     * in its Spark job, still before the charge.
     *
     * @param spark the session
     * @param tasks the number of tasks (≥ 1), or 0 for the session's default parallelism
     * @throws DpmoException UNSUPPORTED when a task fails (the executors cannot run dpmo) or reports another
     *     version, with the first cause in the message
     */
    public static void checkExecutors(SparkSession spark, int tasks) {
        if (spark == null) throw nullPointer("no Spark session");
        int n = tasks > 0 ? tasks : defaultParallelism(spark);
        String expected = Dpmo.version();
        List<String> seen;
        try {
            seen = spark.range(0, n, 1, n).mapPartitions(new VersionTask(), Encoders.STRING()).collectAsList();
        } catch (Exception | LinkageError e) { // SparkException is checked, but thrown undeclared by Scala
            throw new DpmoException(DpmoException.UNSUPPORTED, Dpmo.statusMessage(DpmoException.UNSUPPORTED)
                    + " (the Spark executors cannot run dpmo " + expected + ": " + summary(e) + ")");
        }
        TreeSet<String> versions = new TreeSet<>(seen);
        if (seen.size() != n || !versions.equals(new TreeSet<>(Collections.singleton(expected)))) {
            throw new DpmoException(DpmoException.UNSUPPORTED, Dpmo.statusMessage(DpmoException.UNSUPPORTED)
                    + " (the Spark executors run dpmo " + versions + ", the driver " + expected + ")");
        }
    }

    /** The task of {@link #checkExecutors}: loads the native library (Dpmo's class initializer) on the executor. */
    static final class VersionTask implements MapPartitionsFunction<Long, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public Iterator<String> call(Iterator<Long> input) {
            input.forEachRemaining(x -> { });
            return Collections.singletonList(Dpmo.version()).iterator();
        }
    }

    /**
     * Private top-k of the candidates by {@code score} at the score's ℓ∞ sensitivity, k picks without replacement
     * at ε/k each (ε in all), with the law of {@link Dpmo#selectTopK} on the collected scores. For the exact
     * exponential mechanism and permute-and-flip ({@link Dpmo#SELECTOR_EXPONENTIAL},
     * {@link Dpmo#SELECTOR_PERMUTE_AND_FLIP}, {@link Dpmo#SELECTOR_NOISY_MAX_GUMBEL},
     * {@link Dpmo#SELECTOR_NOISY_MAX_EXPONENTIAL}) it is {@link #selectScores}: the distributed selection, scores
     * on the executors (up to 2<sup>20</sup> candidates: collected after the charge and selected on the driver, the
     * same law). Any other selector (with {@link Dpmo#FLOAT} or {@link Dpmo#ISOCHRONOUS}, or Laplace noise)
     * collects the n scores and runs {@link Dpmo#selectTopK} on the driver, which charges ε on success.
     *
     * @param aggregates from {@link Bounding#aggregate()}
     * @param score {@code "count"} or {@code "sum"}
     * @param selector a {@code Dpmo.SELECTOR_*} constant (exact unless the selector needs {@link Dpmo#FLOAT})
     * @param epsilon ε of the whole release
     * @param k the number of picks, 1 ≤ k ≤ n
     * @param budget charged ε (see the class comment for when), or null
     * @param rng the driver's generator (one key drawn per choice), or null for a fresh secure one
     * @return the k candidates, in pick order
     * @throws DpmoException as {@link #selectScores} or {@link Dpmo#selectTopK}: nothing charged
     */
    public static List<Object> select(SparkAggregates aggregates, String score, int selector, double epsilon,
            int k, PrivacyBudget budget, DpmoRng rng) {
        if (aggregates == null) throw nullPointer("aggregates is null");
        double sensitivity = aggregates.sensitivity(score);
        int n = aggregates.candidates().size();
        if (k < 1 || k > n) throw invalid("k must be in 1.." + n);
        if (DistributedSelect.distributable(selector)) {
            int[] picks = selectScores(aggregates.scores(score), n, sensitivity, selector, epsilon, k, budget, rng);
            return labels(aggregates, picks);
        }
        checkExecutors(aggregates.frame().sparkSession(), 0);
        double[] scores = collect(aggregates.scores(score), new String[] {"score"}, n);
        int[] picks = Dpmo.selectTopK(rng != null ? rng : new DpmoRng(), selector, scores, sensitivity, epsilon, k,
                budget);
        return labels(aggregates, picks);
    }

    /**
     * The exact distributed report-noisy-max over a DataFrame {@code scores} (columns {@code candidate_index}, an
     * integer, and {@code score}, a number; each index 0..total−1 exactly once, spread over any partitions): k
     * picks without replacement at ε/k each (rounded down, so k rounds never spend more than ε), with exactly the
     * law of {@link Dpmo#selectTopK} with the same selector on the collected scores (the JVM twin of Python's
     * {@code dpmo.spark.select_scores}). A NaN or null score is the lowest score and ±∞ is ±MAX, never an error.
     *
     * <p>Permute-and-flip: every partition flips its candidates' coins from a stream of its own and reports the
     * number of successes |H_j| and a uniform one; the driver picks partition j with probability |H_j| / Σ|H|
     * exactly. Exponential mechanism: rejection sampling with uniform proposals from a stream every partition
     * derives identically, the coins of the proposals flipped where they live, the smallest kept position wins.
     * The coins are the core's: γ = ε (⌊s* / g⌋ − ⌊s / g⌋) / 2N with g = Δ/N, an exact rational. Spark jobs: one
     * for the k largest scores of every partition, then one per round (permute-and-flip) or one per rejection
     * batch (about n / Σ exp(−γ) proposals per round, in batches of 1024, 2048, …). Up to 2<sup>20</sup>
     * candidates the same passes run on the driver over the collected scores, as one partition: one Spark job
     * (see the overload with a driver limit).
     *
     * <p>Charging: the arguments and {@link #checkExecutors} are checked first, nothing charged on a refusal; then
     * ε is charged, before any row of {@code scores} is read; then the frame's shape (Σ of the partitions' sizes =
     * n, every index in [0, n) and once per partition) is checked, LENGTH_MISMATCH keeping the charge — the shape
     * is known only by reading the frame, and a frame built with a filter on private data would make a free
     * refusal an oracle (as in Python). A job that fails after the charge keeps it too. Not detected: an index held by two
     * partitions while another is missing (the selection then runs over the list as given: still ε-DP when every
     * entry has sensitivity Δ, since labelling two entries alike is post-processing, but not the law of the
     * intended list).
     *
     * @param scores the scores frame
     * @param total n
     * @param sensitivity Δ, the ℓ∞ sensitivity of the scores (finite, &gt; 0)
     * @param selector {@link Dpmo#SELECTOR_EXPONENTIAL}, {@link Dpmo#SELECTOR_PERMUTE_AND_FLIP},
     *     {@link Dpmo#SELECTOR_NOISY_MAX_GUMBEL} or {@link Dpmo#SELECTOR_NOISY_MAX_EXPONENTIAL}, without flags
     * @param epsilon ε of the whole release
     * @param k the number of picks, 1 ≤ k ≤ n
     * @param budget charged ε, or null
     * @param rng the driver's generator (one key per permute-and-flip round), or null for a fresh secure one
     * @return the k candidate indices, in pick order
     * @throws DpmoException INVALID_ARGUMENT (selector, k), INVALID_EPSILON, INVALID_SENSITIVITY, EMPTY_INPUT
     *     (n = 0), UNSUPPORTED (executors that cannot run dpmo), BUDGET_EXHAUSTED: nothing charged; LENGTH_MISMATCH
     *     (the frame does not hold the n candidates): charged
     */
    public static int[] selectScores(Dataset<Row> scores, int total, double sensitivity, int selector,
            double epsilon, int k, PrivacyBudget budget, DpmoRng rng) {
        return selectScores(scores, total, sensitivity, selector, epsilon, k, budget, rng, DistributedSelect.DRIVER_LIMIT);
    }

    /**
     * {@link #selectScores(Dataset, int, double, int, double, int, PrivacyBudget, DpmoRng)} with the driver limit
     * given: up to {@code driverLimit} candidates (default 2<sup>20</sup>, 16 MiB of scores) the selection runs on
     * the driver after the charge, over the collected scores (one Spark job instead of one per round; the same
     * law); 0 keeps every pass on the executors.
     *
     * @param scores the scores frame
     * @param total n
     * @param sensitivity Δ
     * @param selector as the other overload
     * @param epsilon ε of the whole release
     * @param k the number of picks
     * @param budget charged ε, or null
     * @param rng the driver's generator, or null
     * @param driverLimit the most candidates selected on the driver (≥ 0)
     * @return the k candidate indices, in pick order
     * @throws DpmoException as the other overload; INVALID_ARGUMENT for a negative limit (nothing charged)
     */
    public static int[] selectScores(Dataset<Row> scores, int total, double sensitivity, int selector,
            double epsilon, int k, PrivacyBudget budget, DpmoRng rng, int driverLimit) {
        if (driverLimit < 0) throw invalid("driverLimit must be at least 0");
        return DistributedSelect.select(scores, total, sensitivity, selector, epsilon, k, budget, rng, 1,
                DistributedSelect.EXACT, driverLimit)[0];
    }

    /**
     * Multi-objective selection over (count, sum): {@link #checkExecutors}, then the n × 2 utilities are
     * aggregated on the cluster and collected, then PrivPareto ({@link Dpmo#selectPrivPareto}, textbook
     * dominance, global Δ = n − 1) or PrivAgg ({@link Dpmo#selectPrivAgg} with the globals (C, C · max(|lo|,
     * |hi|)) of the bounding) on the driver charges {@code budget} ε once.
     *
     * @param aggregates from {@link Bounding#aggregate()}, with values
     * @param mechanism {@link #PRIVPARETO} or {@link #PRIVAGG}
     * @param weights PrivAgg's two weights (count, sum); ignored for PrivPareto
     * @param selector a {@code Dpmo.SELECTOR_*} constant
     * @param epsilon ε of the whole release
     * @param k the number of picks
     * @param budget charged ε on success, or null
     * @param rng the driver's generator, or null for a fresh secure one
     * @return the k candidates, in pick order
     * @throws DpmoException as the core's selection, INVALID_ARGUMENT without values or for an unknown
     *     mechanism, NULL_POINTER for PrivAgg without weights, UNSUPPORTED from {@link #checkExecutors}
     */
    public static List<Object> selectMulti(SparkAggregates aggregates, int mechanism, double[] weights,
            int selector, double epsilon, int k, PrivacyBudget budget, DpmoRng rng) {
        if (aggregates == null) throw nullPointer("aggregates is null");
        if (!aggregates.hasValues()) throw invalid("multi-objective selection needs values (count and sum)");
        if (mechanism != PRIVPARETO && mechanism != PRIVAGG) throw invalid("mechanism: PRIVPARETO or PRIVAGG");
        if (mechanism == PRIVAGG && weights == null) throw nullPointer("PrivAgg needs weights");
        int n = aggregates.candidates().size();
        if (k < 1 || k > n) throw invalid("k must be in 1.." + n);
        checkExecutors(aggregates.frame().sparkSession(), 0);
        Dataset<Row> frame = aggregates.frame().select(functions.col("candidate_index"),
                functions.col("count").cast("double").alias("count"),
                functions.col("sum_units").cast("double").multiply(functions.lit(aggregates.valueGrid()))
                        .alias("sum"));
        double[] u = collect(frame, new String[] {"count", "sum"}, n);
        DpmoRng g = rng != null ? rng : new DpmoRng();
        int[] picks = mechanism == PRIVPARETO
                ? Dpmo.selectPrivPareto(g, u, 2, Dpmo.DOMINANCE_TEXTBOOK, selector, epsilon, k, budget)
                : Dpmo.selectPrivAgg(g, u, 2, weights,
                        new double[] {aggregates.sensitivity("count"), aggregates.sensitivity("sum")}, selector,
                        epsilon, k, budget);
        return labels(aggregates, picks);
    }

    // ------------------------------------------------------------ the unknown domain: no candidate list

    /** How the events meet in tasks: every event of a unit in one task (a test replaces it to show that a unit
     * split over tasks breaks the law). */
    interface Partitioner {
        Dataset<Row> apply(Dataset<Row> events, int partitions);
    }

    /** Spark's hash partitioning on the unit. */
    static final Partitioner BY_UNIT = (ev, parts) -> ev.repartition(parts, functions.col("unit"));

    /** The events with columns (unit, item[, value]) of the item's non-null rows, partitioned by {@code by}. */
    private static Dataset<Row> byUnit(Dataset<Row> events, String unit, String item, String value, int partitions,
            Partitioner by) {
        List<org.apache.spark.sql.Column> cols = new ArrayList<>();
        cols.add(functions.col(unit).alias("unit"));
        cols.add(functions.col(item).alias("item"));
        if (value != null) cols.add(functions.col(value).cast("double").alias("value"));
        Dataset<Row> ev = events.select(cols.toArray(new org.apache.spark.sql.Column[0]))
                .where(functions.col("item").isNotNull());
        int parts = partitions > 0 ? partitions : defaultParallelism(events.sparkSession());
        return by.apply(ev, parts);
    }

    /** Checks the unit and item columns (exact equality) and returns the item column's type. */
    private static DataType discoveryColumns(Dataset<Row> events, String unit, String item, String value) {
        if (events == null) throw nullPointer("events is null");
        if (unit == null || item == null) throw nullPointer("the unit and item columns are required");
        StructType schema = events.schema();
        DataType ut = columnType(schema, unit);
        DataType it = columnType(schema, item);
        checkExactType(ut, unit, "unit");
        checkExactType(it, item, "item");
        if (value != null) columnType(schema, value);
        return it;
    }

    /** The kept (unit, item) rows of the bounding on the executors, per repetition: (rep, item, events,
     * unit_items, sum, weight). */
    private static Dataset<Row> bounded(Dataset<Row> events, String unit, String item, String value, DataType itype,
            int l, int c, double lo, double hi, long weightGrid, int partitions, int repetitions, Partitioner by) {
        StructType out = new StructType().add("rep", "int", false).add("item", itype, false)
                .add("events", "long", false).add("unit_items", "long", false).add("sum", "long", false)
                .add("weight", "long", false);
        DiscoverTask task = new DiscoverTask(freshKey(), l, c, lo, hi, value != null, weightGrid, repetitions);
        return byUnit(events, unit, item, value, partitions, by).mapPartitions(task, Encoders.row(out));
    }

    /** A fresh secret 32-byte key from {@link java.security.SecureRandom}, never a function of the data. */
    static byte[] freshKey() {
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        return key;
    }

    private static boolean integerType(DataType t) {
        return t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType;
    }

    /** Spark's order of item values: integers as unsigned 64-bit words (the core's tie order), strings by their
     * UTF-8 bytes and binary by its bytes, unsigned (Spark's UTF8_BINARY and binary orders). */
    static int compareItems(Object a, Object b) {
        if (a instanceof Number) return Long.compareUnsigned(((Number) a).longValue(), ((Number) b).longValue());
        byte[] x = a instanceof String ? ((String) a).getBytes(java.nio.charset.StandardCharsets.UTF_8) : (byte[]) a;
        byte[] y = b instanceof String ? ((String) b).getBytes(java.nio.charset.StandardCharsets.UTF_8) : (byte[]) b;
        return java.util.Arrays.compareUnsigned(x, y);
    }

    /** The collected item values as the core's 64-bit ids, in Spark's order: an integer is its own 64-bit
     * pattern, a string or binary its rank among the collected values. */
    private static long[] ids(List<Object> labels, boolean integer) {
        long[] out = new long[labels.size()];
        if (integer) {
            for (int i = 0; i < out.length; i++) out[i] = ((Number) labels.get(i)).longValue();
            return out;
        }
        Integer[] order = new Integer[out.length];
        for (int i = 0; i < out.length; i++) order[i] = i;
        java.util.Arrays.sort(order, (a, b) -> compareItems(labels.get(a), labels.get(b)));
        for (int r = 0; r < out.length; r++) out[order[r]] = r;
        return out;
    }

    private static List<Object> labelsOf(long[] picked, long[] ids, List<Object> labels) {
        java.util.Map<Long, Object> back = new java.util.HashMap<>();
        for (int i = 0; i < ids.length; i++) back.put(ids[i], labels.get(i));
        List<Object> out = new ArrayList<>(picked.length);
        for (long p : picked) out.add(back.get(p));
        return out;
    }

    /**
     * Private partition selection on Spark with no candidate list: the items of {@code events} (columns
     * {@code unit} and {@code item}) to release — the law of {@link Dpmo#discoverPartitions(DpmoRng, long[],
     * long[], int, double, double, int, int, PrivacyBudget)} on the collected events (the JVM twin of Python's
     * {@code dpmo.spark.discover_partitions}).
     *
     * <ul>
     * <li><b>Bounding on the executors.</b> The events are repartitioned by unit (every event of a unit in one
     * task); each task sorts its events and bounds them with the core's {@link Dpmo#boundContributions} (at most
     * L = {@code maxItems} items per unit, a uniformly random subset) from its own ChaCha20 stream
     * HMAC-SHA256(k, "dpmo.spark.discover.v1" ‖ 0 ‖ partition) of a fresh secret k; each kept (unit, item) row
     * carries |S<sub>u</sub>| and, for the weighted Gaussian, its weight ⌊G/√|S<sub>u</sub>|⌋.</li>
     * <li><b>Decisions on the executors.</b> A {@code groupBy(item)} gives each item with a kept contribution its
     * statistic (distinct units, or the sum of the weights), every item whole in one task of that shuffle; each
     * task decides its items with the core's exact sampler and plan ({@link Dpmo#selectPartitionsFromStatistics})
     * from its own ChaCha20 stream HMAC-SHA256(k, "dpmo.spark.decide.v1" ‖ 0 ‖ partition), and only the released
     * items reach the driver. The decisions are independent given the statistics, as in the one-process form, so
     * the released set has its law (checked by χ² on a standalone cluster).</li>
     * </ul>
     *
     * <p>Order of the checks and the charge: the arguments (nothing charged), {@link #checkExecutors} (nothing
     * charged if the executors cannot run dpmo), then (ε, δ) is charged to {@code budget} (BUDGET_EXHAUSTED:
     * nothing charged, no job run), then the Spark jobs; a job that fails after the charge keeps it (as Python's
     * {@code discover_partitions}). DP-SIPS is refused (UNSUPPORTED): its later rounds
     * re-weight every unit by the items found before, one more shuffle of all the contributions per round.
     * Null items are dropped (a null is no item); null units are one unit.
     *
     * @param events the events (one row per event)
     * @param unit the privacy-unit column (integer, UTF8_BINARY string or binary)
     * @param item the item column (integer, UTF8_BINARY string or binary)
     * @param maxItems L, 1 ≤ L ≤ {@link Dpmo#DISCOVER_MAX_ITEMS}
     * @param epsilon ε (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param mechanism {@link Dpmo#PARTITION_TRUNCATED_GEOMETRIC}, {@link Dpmo#PARTITION_LAPLACE},
     *     {@link Dpmo#PARTITION_GAUSSIAN} or {@link Dpmo#PARTITION_WEIGHTED_GAUSSIAN}
     * @param budget charged (ε, δ) before the jobs (an (ε, δ) budget), or null
     * @param rng unused: the decisions draw from per-task streams of a fresh key (kept for compatibility)
     * @param partitions the number of bounding tasks, or 0 for the session's default parallelism
     * @return the released items (values of the item column), in Spark's order of the column (integers as
     *     unsigned 64-bit words)
     * @throws DpmoException INVALID_EPSILON, INVALID_ARGUMENT, NULL_POINTER, UNSUPPORTED (DP-SIPS, or executors
     *     that cannot run dpmo), BUDGET_EXHAUSTED: nothing charged in every case
     */
    public static List<Object> discoverPartitions(Dataset<Row> events, String unit, String item, int maxItems,
            double epsilon, double delta, int mechanism, PrivacyBudget budget, DpmoRng rng, int partitions) {
        if (mechanism == Dpmo.PARTITION_SIPS) {
            throw new DpmoException(DpmoException.UNSUPPORTED, Dpmo.statusMessage(DpmoException.UNSUPPORTED)
                    + " (DP-SIPS is not available on Spark: each round re-weights every unit by the items found "
                    + "before, one more shuffle of all the contributions per round; use PARTITION_WEIGHTED_GAUSSIAN, or "
                    + "Dpmo.discoverPartitions on the collected events)");
        }
        return discoverPartitions(events, unit, item, maxItems, epsilon, delta, mechanism, budget, partitions, 1,
                BY_UNIT).get(0);
    }

    /** {@link #discoverPartitions}, with {@code repetitions} independent releases over one pass (for tests and
     * simulations: no budget then) and the events partitioned by {@code by}. */
    static List<List<Object>> discoverPartitions(Dataset<Row> events, String unit, String item, int maxItems,
            double epsilon, double delta, int mechanism, PrivacyBudget budget, int partitions, int repetitions,
            Partitioner by) {
        DataType itype = discoveryColumns(events, unit, item, null);
        if (partitions < 0) throw invalid("partitions must be >= 1 (or 0 for the default)");
        if (repetitions < 1 || repetitions > DistributedSelect.MAX_REPETITIONS) {
            throw invalid("repetitions in 1..4096");
        }
        if (repetitions > 1 && budget != null) throw invalid("repetitions are for simulations: no budget");
        long grid = Dpmo.partitionWeightGrid(mechanism, 1, epsilon, delta, maxItems); // every check of the plan
        checkExecutors(events.sparkSession(), 0);
        if (budget != null) budget.charge(epsilon, delta);
        Dataset<Row> kept = bounded(events, unit, item, null, itype, maxItems, 1, 0.0, 0.0,
                mechanism == Dpmo.PARTITION_WEIGHTED_GAUSSIAN ? grid : 0, partitions, repetitions, by);
        org.apache.spark.sql.Column stat = mechanism == Dpmo.PARTITION_WEIGHTED_GAUSSIAN
                ? functions.sum("weight") : functions.count(functions.lit(1));
        StructType released = new StructType().add("rep", "int", false).add("item", itype, false);
        List<Row> rows = kept.groupBy("rep", "item").agg(stat.cast("long").alias("stat"))
                .mapPartitions(new DecideTask(freshKey(), mechanism, epsilon, delta, maxItems),
                        Encoders.row(released))
                .collectAsList();
        List<List<Object>> out = new ArrayList<>();
        for (int r = 0; r < repetitions; r++) out.add(new ArrayList<>());
        for (Row r : rows) out.get(r.getInt(0)).add(r.get(1));
        for (List<Object> o : out) o.sort(DpmoSpark::compareItems);
        return out;
    }

    /**
     * Durfee &amp; Rogers' unknown-domain top-k on Spark with no candidate list: the law of
     * {@link Dpmo#discoverTopK(DpmoRng, long[], long[], double[], int, int, int, int, int, double, double, double,
     * double, PrivacyBudget)} on the collected events (the JVM twin of Python's
     * {@code dpmo.spark.select_top_k_from_events}).
     *
     * <ul>
     * <li><b>Bounding on the executors</b>, as {@link #discoverPartitions} (L = {@code maxItems}, C =
     * {@code maxPerItem}, values clamped to [lo, hi] onto the core's grid).</li>
     * <li><b>Scores on the cluster:</b> a {@code groupBy(item)} gives each item with a kept contribution its
     * score (distinct units, kept events, or the sum of max(0, kept sum) in grid units, as {@code decimal(38,0)}
     * so no sum wraps); the top k̄ + 1 in the core's order — score descending, ties by item (integers as unsigned
     * 64-bit words, strings and binary by their bytes) — come to the driver ({@code orderBy(...).limit(k̄ + 1)}).
     * </li>
     * <li><b>Peeling on the driver:</b> the core's ⊥ and exact peeling ({@link Dpmo#selectTopKFromScores}) with
     * {@code rng} (one key drawn), which charges {@code budget} (ε, δ) and refunds it to (ε/k · (ℓ + 1), δ) when
     * it stopped at ⊥ after ℓ &lt; k items (pay what you get), before returning.</li>
     * </ul>
     *
     * <p>Nothing is charged when the arguments are invalid, the executors cannot run dpmo, the budget is too
     * small, or a job fails.
     *
     * @param events the events (one row per event)
     * @param unit the privacy-unit column
     * @param item the item column (integer, UTF8_BINARY string or binary)
     * @param value the value column (cast to double; null and NaN count as 0), or null without values
     * @param score {@link Dpmo#SCORE_UNITS}, {@link Dpmo#SCORE_EVENTS} or {@link Dpmo#SCORE_SUM} (needs values)
     * @param k how many items at most, 1 ≤ k ≤ k̄
     * @param kBar k̄, how many of the top items compete
     * @param maxItems L
     * @param maxPerItem C ≥ 1
     * @param lo the lower clamp of the values (0 ≤ lo ≤ hi for {@link Dpmo#SCORE_SUM}; 0 without values)
     * @param hi the upper clamp of the values (0 without values)
     * @param epsilon ε of the whole selection
     * @param delta δ
     * @param budget charged (ε, δ), then what the run spent; or null
     * @param rng the driver's generator (one key drawn), or null for a fresh secure one
     * @param partitions the number of bounding tasks, or 0 for the session's default parallelism
     * @return the items in selection order, whether ⊥ stopped the run, and the (ε, δ) spent
     * @throws DpmoException as {@link Dpmo#selectTopKFromScores}, and UNSUPPORTED from {@link #checkExecutors}:
     *     nothing charged
     */
    public static DiscoveredTopK selectTopKFromEvents(Dataset<Row> events, String unit, String item, String value,
            int score, int k, int kBar, int maxItems, int maxPerItem, double lo, double hi, double epsilon,
            double delta, PrivacyBudget budget, DpmoRng rng, int partitions) {
        DataType itype = discoveryColumns(events, unit, item, value);
        if (partitions < 0) throw invalid("partitions must be >= 1 (or 0 for the default)");
        if (score == Dpmo.SCORE_SUM && value == null) throw invalid("SCORE_SUM needs a value column");
        if (value == null && (lo != 0.0 || hi != 0.0)) throw invalid("lo and hi are 0 without a value column");
        if (k < 1 || kBar < k || kBar == Integer.MAX_VALUE) throw invalid("k must be in 1..kBar, kBar < 2^31 - 1");
        // Every check of the plan and the bounds on the driver: no item, nothing drawn, nothing charged.
        DpmoRng g = rng != null ? rng : new DpmoRng();
        Dpmo.boundContributions(new DpmoRng(), new long[0], new long[0], value != null ? new double[0] : null,
                maxItems, maxPerItem, lo, hi, 0);
        Dpmo.selectTopKFromScores(new DpmoRng(), new long[0], new java.math.BigInteger[0], score, k, kBar, maxItems,
                maxPerItem, lo, hi, epsilon, delta, null);
        checkExecutors(events.sparkSession(), 0);
        Dataset<Row> kept = bounded(events, unit, item, value, itype, maxItems, maxPerItem, lo, hi, 0, partitions, 1,
                BY_UNIT);
        org.apache.spark.sql.Column s;
        if (score == Dpmo.SCORE_UNITS) {
            s = functions.count(functions.lit(1)).cast("decimal(38,0)");
        } else if (score == Dpmo.SCORE_EVENTS) {
            s = functions.sum(functions.col("events").cast("decimal(38,0)"));
        } else {
            s = functions.sum(functions.greatest(functions.col("sum"), functions.lit(0L)).cast("decimal(38,0)"));
        }
        boolean integer = integerType(itype);
        org.apache.spark.sql.Column[] order = integer
                ? new org.apache.spark.sql.Column[] {functions.col("score").desc(),
                        functions.col("item").lt(0).asc(), functions.col("item").asc()}
                : new org.apache.spark.sql.Column[] {functions.col("score").desc(), functions.col("item").asc()};
        List<Row> rows = kept.groupBy("item").agg(s.alias("score")).orderBy(order).limit(kBar + 1).collectAsList();
        List<Object> labels = new ArrayList<>(rows.size());
        java.math.BigInteger[] scores = new java.math.BigInteger[rows.size()];
        for (int i = 0; i < scores.length; i++) {
            labels.add(rows.get(i).get(0));
            scores[i] = rows.get(i).getDecimal(1).toBigIntegerExact();
        }
        long[] ids = ids(labels, integer);
        org.dpmo.TopKFromEvents r = Dpmo.selectTopKFromScores(g, ids, scores, score, k, kBar, maxItems, maxPerItem,
                lo, hi, epsilon, delta, budget);
        return new DiscoveredTopK(labelsOf(r.items(), ids, labels), r.stopped(), r.epsilon(), r.delta());
    }

    /** The columns of {@code frame} (candidate_index, columns...) on the driver, row-major, row r = index r;
     * every index 0..n−1 exactly once. */
    static double[] collect(Dataset<Row> frame, String[] columns, int n) {
        List<Row> rows = frame.collectAsList();
        int m = columns.length;
        double[] out = new double[Math.multiplyExact(n, m)];
        boolean[] seen = new boolean[n];
        if (rows.size() != n) throw lengthMismatch("the aggregates hold " + rows.size() + " rows, not " + n);
        for (Row r : rows) {
            long i = r.getLong(r.fieldIndex("candidate_index"));
            if (i < 0 || i >= n || seen[(int) i]) throw lengthMismatch("candidate index " + i + " out of place");
            seen[(int) i] = true;
            for (int j = 0; j < m; j++) out[(int) i * m + j] = r.getDouble(r.fieldIndex(columns[j]));
        }
        return out;
    }

    private static List<Object> labels(SparkAggregates aggregates, int[] picks) {
        List<Object> out = new ArrayList<>(picks.length);
        for (int i : picks) out.add(aggregates.candidates().get(i));
        return out;
    }

    static int defaultParallelism(SparkSession spark) {
        return Math.max(1, spark.sparkContext().defaultParallelism());
    }

    static DataType columnType(StructType schema, String column) {
        for (String name : schema.fieldNames()) {
            if (name.equals(column)) return schema.apply(column).dataType();
        }
        throw invalid("no column " + column + " in " + schema.simpleString());
    }

    /** Refuses a unit or candidate column whose equality in Spark is not exact equality of values. */
    static void checkExactType(DataType t, String name, String role) {
        if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType
                || t instanceof BinaryType) {
            return;
        }
        if (t instanceof StringType) {
            if (((StringType) t).isUTF8BinaryCollation()) return;
            throw invalid("the " + role + " column " + name + " has type " + t.sql() + ": Spark groups values that "
                    + "collation calls equal (such as 'ann' and 'Ann') as one " + role + ", the bounding would count "
                    + "each spelling as a " + role + " of its own; map the column to one canonical value per " + role
                    + " with the UTF8_BINARY collation (for example lower(...))");
        }
        throw invalid("the " + role + " column " + name + " has type " + t.simpleString() + ": a " + role
                + " must be an integer, a string (UTF8_BINARY collation) or binary, whose equality is exact; cast "
                + "the column");
    }

    /** A candidate as a value of the candidate column's type (integers converted when they fit exactly). */
    static Object asColumnValue(Object label, DataType t, String column) {
        if (label == null) throw invalid("the candidate list holds null (a null candidate matches no event)");
        if (t instanceof StringType) {
            if (label instanceof String) return label;
        } else if (label instanceof Long || label instanceof Integer || label instanceof Short
                || label instanceof Byte) {
            long v = ((Number) label).longValue();
            if (t instanceof LongType) return v;
            if (t instanceof IntegerType && v == (int) v) return (int) v;
            if (t instanceof ShortType && v == (short) v) return (short) v;
            if (t instanceof ByteType && v == (byte) v) return (byte) v;
        }
        throw invalid("candidate " + label + " (" + label.getClass().getSimpleName() + ") is not a value of the "
                + "column " + column + " (" + t.simpleString() + "); binary candidates are not supported");
    }

    static scala.collection.immutable.Seq<String> seq(String... names) {
        return scala.jdk.javaapi.CollectionConverters.asScala(java.util.Arrays.asList(names)).toSeq();
    }

    static DpmoException invalid(String detail) {
        return new DpmoException(DpmoException.INVALID_ARGUMENT,
                Dpmo.statusMessage(DpmoException.INVALID_ARGUMENT) + " (" + detail + ")");
    }

    static DpmoException nullPointer(String detail) {
        return new DpmoException(DpmoException.NULL_POINTER,
                Dpmo.statusMessage(DpmoException.NULL_POINTER) + " (" + detail + ")");
    }

    static DpmoException lengthMismatch(String detail) {
        return new DpmoException(DpmoException.LENGTH_MISMATCH,
                Dpmo.statusMessage(DpmoException.LENGTH_MISMATCH) + " (" + detail + ")");
    }

    /** What the executors reported: the failed task's exception in a Spark job failure ("most recent failure:
     * Lost task ... (executor N): CLASS: MESSAGE"), else the innermost cause; its first line, short. */
    static String summary(Throwable e) {
        String top = String.valueOf(e.getMessage());
        int at = top.indexOf("most recent failure:");
        String line;
        if (at >= 0 && top.indexOf("): ", at) >= 0) {
            line = top.substring(top.indexOf("): ", at) + 3);
        } else {
            Throwable t = e;
            while (t.getCause() != null && t.getCause() != t) t = t.getCause();
            line = t.getClass().getName() + ": " + t.getMessage();
        }
        line = line.split("\n", 2)[0];
        return line.length() > 400 ? line.substring(0, 400) : line;
    }
}
