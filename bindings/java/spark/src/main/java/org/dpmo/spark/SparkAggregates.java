package org.dpmo.spark;

import java.util.Collections;
import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;

import org.dpmo.DpmoException;

/**
 * Bounded per-candidate aggregates on the cluster, as {@link Bounding#aggregate()} makes them (the JVM twin of
 * Python's {@code dpmo.spark.SparkAggregates}).
 *
 * <p>{@link #frame()} is a DataFrame {@code (candidate_index long, count long, sum_units long)} with one row for
 * every index 0..n−1 of {@link #candidates()} (0 for a candidate without kept events). Adding or removing all the
 * events of one unit changes each count by at most C and each sum by at most C · max(|lo|, |hi|) (ℓ∞), and all of
 * them together by at most L times that (ℓ1). The frame is lazy: every release recomputes the bounding with the
 * same key and makes the same choices (each task's generator is a function of the key and the task's partition
 * only, and each task sorts its events first); {@code cache()} it when you release several times.
 */
public final class SparkAggregates {
    private final Dataset<Row> frame;
    private final List<Object> candidates;
    private final double grid;
    private final double countSensitivity;
    private final double sumSensitivity;
    private final int maxCandidates;

    SparkAggregates(Dataset<Row> frame, List<Object> candidates, double grid, double countSensitivity,
            double sumSensitivity, int maxCandidates) {
        this.frame = frame;
        this.candidates = Collections.unmodifiableList(candidates);
        this.grid = grid;
        this.countSensitivity = countSensitivity;
        this.sumSensitivity = sumSensitivity;
        this.maxCandidates = maxCandidates;
    }

    /**
     * The aggregates: {@code (candidate_index long, count long, sum_units long)}, one row per candidate.
     *
     * @return the DataFrame (lazy)
     */
    public Dataset<Row> frame() {
        return frame;
    }

    /**
     * The public candidates; index i of {@link #frame()} is element i.
     *
     * @return an unmodifiable list
     */
    public List<Object> candidates() {
        return candidates;
    }

    /**
     * The value grid g: a candidate's sum is {@code sum_units · g} (1 without values).
     *
     * @return g
     */
    public double valueGrid() {
        return grid;
    }

    /**
     * Whether values were aggregated (a value column and bounds were given).
     *
     * @return true with sums
     */
    public boolean hasValues() {
        return !Double.isNaN(sumSensitivity);
    }

    /**
     * The ℓ∞ sensitivity of a score: C for {@code "count"}, C · max(|lo|, |hi|) for {@code "sum"}.
     *
     * @param score {@code "count"} or {@code "sum"}
     * @return the Δ a selection over that score uses
     * @throws DpmoException INVALID_ARGUMENT for another score, or "sum" without values
     */
    public double sensitivity(String score) {
        if ("count".equals(score)) return countSensitivity;
        if ("sum".equals(score) && hasValues()) return sumSensitivity;
        throw DpmoSpark.invalid("score " + score + ": expected \"count\" or \"sum\" (\"sum\" needs values)");
    }

    /**
     * The ℓ1 sensitivity of a score (L times its ℓ∞ sensitivity).
     *
     * @param score {@code "count"} or {@code "sum"}
     * @return L · {@link #sensitivity(String)}
     */
    public double l1Sensitivity(String score) {
        return maxCandidates * sensitivity(score);
    }

    /**
     * A DataFrame {@code (candidate_index long, score double)} of {@code "count"} or {@code "sum"}.
     *
     * @param score {@code "count"} or {@code "sum"}
     * @return the scores (lazy)
     */
    public Dataset<Row> scores(String score) {
        sensitivity(score);
        Column col = "count".equals(score) ? functions.col("count").cast("double")
                : functions.col("sum_units").cast("double").multiply(functions.lit(grid));
        return frame.select(functions.col("candidate_index"), col.alias("score"));
    }

    @Override
    public String toString() {
        return "SparkAggregates[" + candidates.size() + " candidates, count Δ=" + countSensitivity
                + (hasValues() ? ", sum Δ=" + sumSensitivity : "") + "]";
    }
}
