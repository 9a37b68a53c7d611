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
 * ship {@code dpmo-VERSION.jar} and {@code dpmo-spark-VERSION.jar} with {@code spark-submit --jars}). A selection
 * collects the n aggregated scores (or n × 2 utilities) to the driver — 8 bytes per score in one Java array, so
 * n · m is at most 2<sup>31</sup> − 9 (m = 1 objective, or 2 for {@link #selectMulti}) and in practice bounded by the driver's memory (about 10<sup>7</sup> candidates
 * per gigabyte of driver heap, Spark's collected rows included) — and selects there with the core's exact
 * selector ({@link Dpmo#selectTopK}, {@link Dpmo#selectPrivPareto}, {@link Dpmo#selectPrivAgg}). This is not
 * Python's distributed report-noisy-max: the scores leave the executors.
 *
 * <p><b>What is charged when.</b> Every release runs {@link #checkExecutors} first, then the Spark jobs (the
 * bounding and the aggregation), then the selection on the driver, which charges {@code budget} exactly once, on
 * success. Nothing is charged when the arguments are invalid, when the executors cannot load dpmo, or when a job
 * fails; a refused charge (BUDGET_EXHAUSTED) leaves the budget and the generator untouched.
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
     * Private top-k of the candidates by {@code score} with the core's exact selector at the score's ℓ∞
     * sensitivity: {@link #checkExecutors}, then the n scores are aggregated on the cluster and collected,
     * then {@link Dpmo#selectTopK} on the driver charges {@code budget} ε once (k picks without replacement,
     * ε in all).
     *
     * @param aggregates from {@link Bounding#aggregate()}
     * @param score {@code "count"} or {@code "sum"}
     * @param selector a {@code Dpmo.SELECTOR_*} constant (exact unless the selector needs {@link Dpmo#FLOAT})
     * @param epsilon ε of the whole release
     * @param k the number of picks, 1 ≤ k ≤ n
     * @param budget charged ε on success, or null
     * @param rng the driver's generator (one key drawn), or null for a fresh secure one
     * @return the k candidates, in pick order
     * @throws DpmoException as {@link Dpmo#selectTopK}, and UNSUPPORTED from {@link #checkExecutors}: nothing
     *     charged in either case
     */
    public static List<Object> select(SparkAggregates aggregates, String score, int selector, double epsilon,
            int k, PrivacyBudget budget, DpmoRng rng) {
        if (aggregates == null) throw nullPointer("aggregates is null");
        double sensitivity = aggregates.sensitivity(score);
        int n = aggregates.candidates().size();
        if (k < 1 || k > n) throw invalid("k must be in 1.." + n);
        checkExecutors(aggregates.frame().sparkSession(), 0);
        double[] scores = collect(aggregates.scores(score), new String[] {"score"}, n);
        int[] picks = Dpmo.selectTopK(rng != null ? rng : new DpmoRng(), selector, scores, sensitivity, epsilon, k,
                budget);
        return labels(aggregates, picks);
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
