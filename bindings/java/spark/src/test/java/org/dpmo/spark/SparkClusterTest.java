package org.dpmo.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import org.dpmo.Dpmo;
import org.dpmo.DpmoException;
import org.dpmo.PrivacyBudget;

/**
 * The JVM Spark API on a standalone cluster, submitted by spark/test/cluster-test.sh with the two jars in --jars.
 * {@code pipeline}: the pipeline end to end on executors that load dpmo from the jar, exact aggregates, exact
 * charges, refusals that charge nothing, and the bounding shown to need whole units per task. {@code broken}:
 * executors that cannot load the native library (-Ddpmo.library=/nonexistent): every release refused, nothing
 * charged. Prints "PASS ..." lines; any failed check exits 1.
 */
public final class SparkClusterTest {
    private static int failures;
    private static final int USERS = 2000;
    private static final int ITEMS = 10;
    /** Item p gets users whose i % 1000 falls in [CUT[p], CUT[p+1]): 400, 250, 150, 100, 50, 25, 15, 7, 3, 0. */
    private static final int[] CUT = {0, 400, 650, 800, 900, 950, 975, 990, 997, 1000, 1000};

    private SparkClusterTest() {}

    static void check(boolean ok, String what) {
        if (ok) {
            System.out.println("PASS " + what);
        } else {
            System.out.println("FAIL " + what);
            failures++;
        }
    }

    static int primary(int i) {
        int r = i % 1000;
        for (int p = 0; p < ITEMS; p++) if (r < CUT[p + 1]) return p;
        return ITEMS - 1;
    }

    /** Events (user string, item long, amount double): each user one event on its primary item, and users with
     * an even id one more on the next item; amounts x.5 in [0, 100], exact on the grid of [0, 100]. */
    static Dataset<Row> smallEvents(SparkSession spark) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < USERS; i++) {
            int p = primary(i);
            rows.add(RowFactory.create("u" + i, (long) p, (i % 7) * 10.0 + 0.5));
            if (i % 2 == 0) rows.add(RowFactory.create("u" + i, (long) ((p + 1) % ITEMS), (i % 5) * 20.0 + 0.5));
        }
        StructType schema = new StructType().add("user", DataTypes.StringType).add("item", DataTypes.LongType)
                .add("amount", DataTypes.DoubleType);
        return spark.createDataFrame(rows, schema).repartition(3);
    }

    /** Every user: 3 events on each of 4 distinct items (12 events), so bounding at L = 2, C = 1 keeps exactly 2. */
    static Dataset<Row> heavyEvents(SparkSession spark) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < USERS; i++) {
            for (int j = 0; j < 4; j++) {
                for (int e = 0; e < 3; e++) rows.add(RowFactory.create((long) i, (long) ((i + j) % ITEMS)));
            }
        }
        StructType schema = new StructType().add("user", DataTypes.LongType).add("item", DataTypes.LongType);
        return spark.createDataFrame(rows, schema).repartition(4);
    }

    static List<Object> items() {
        List<Object> out = new ArrayList<>();
        for (long p = 0; p < ITEMS; p++) out.add(p);
        return out;
    }

    static int status(Runnable r) {
        try {
            r.run();
            return 0;
        } catch (DpmoException e) {
            return e.status();
        }
    }

    static DpmoException error(Supplier<?> s) {
        try {
            s.get();
            return null;
        } catch (DpmoException e) {
            return e;
        }
    }

    static long total(Dataset<Row> frame) {
        return frame.agg(functions.sum("count")).first().getLong(0);
    }

    static void pipeline(SparkSession spark) {
        DpmoSpark.checkExecutors(spark, 4);
        check(true, "checkExecutors: 4 tasks loaded dpmo " + Dpmo.version() + " from the jar on the executors");
        Dataset<Row> events = smallEvents(spark);
        SparkAggregates agg = DpmoSpark.bounding(events).unit("user").candidate("item").value("amount", 0, 100)
                .candidates(items()).maxCandidates(2).partitions(4).aggregate();
        agg.frame().cache();
        // No event is dropped here (at most 2 items and 1 event per item per user): the aggregates are exact.
        Map<Long, long[]> got = new HashMap<>();
        for (Row r : agg.frame().collectAsList()) {
            got.put(r.getLong(0), new long[] {r.getLong(1), r.getLong(2)});
        }
        Map<Long, double[]> want = new HashMap<>();
        for (Row r : events.groupBy("item").agg(functions.count("*"), functions.sum("amount")).collectAsList()) {
            want.put(r.getLong(0), new double[] {r.getLong(1), r.getDouble(2)});
        }
        boolean exact = got.size() == ITEMS;
        for (long p = 0; p < ITEMS; p++) {
            double[] w = want.getOrDefault(p, new double[] {0, 0});
            long[] g = got.get(p);
            exact &= g != null && g[0] == (long) w[0] && g[1] * agg.valueGrid() == w[1];
        }
        check(exact, "bounding + aggregation on the cluster equal a plain groupBy count and sum, every item");
        check(agg.sensitivity("count") == 1.0 && agg.sensitivity("sum") == 100.0 && agg.l1Sensitivity("sum") == 200.0,
                "sensitivities: count C = 1, sum C * max(|lo|, |hi|) = 100, l1 L * 100 = 200");

        // Units bounded whole: 4 items x 3 events per user at L = 2, C = 1 keep exactly 2 events per user.
        SparkAggregates heavy = DpmoSpark.bounding(heavyEvents(spark)).unit("user").candidate("item")
                .candidates(items()).maxCandidates(2).partitions(4).aggregate();
        check(total(heavy.frame()) == 2L * USERS, "L = 2, C = 1: exactly 2 kept events per user (" + 2 * USERS + ")");
        SparkAggregates heavy2 = DpmoSpark.bounding(heavyEvents(spark)).unit("user").candidate("item")
                .candidates(items()).maxCandidates(3).maxPerCandidate(2).partitions(3).aggregate();
        check(total(heavy2.frame()) == 6L * USERS, "L = 3, C = 2: exactly 6 kept events per user");
        // The broken variant: the same task without the repartitioning by unit (round robin) splits units over
        // tasks, and the check above catches it.
        Dataset<Row> split = heavyEvents(spark).select(functions.col("user").alias("unit"),
                functions.col("item").alias("candidate_index")).repartition(4);
        StructType out = new StructType().add("candidate_index", DataTypes.LongType).add("count", DataTypes.LongType)
                .add("sum_units", DataTypes.LongType);
        long brokenTotal = split.mapPartitions(new BoundTask(new byte[32], 2, 1, 0, 0, false), Encoders.row(out))
                .agg(functions.sum("count")).first().getLong(0);
        check(brokenTotal > 2L * USERS, "broken variant (units split over tasks) keeps " + brokenTotal + " > "
                + 2 * USERS + " events: caught");
        // Recomputation makes the same choices (same key, same tasks): the frame is not cached here.
        List<Row> once = heavy.frame().orderBy("candidate_index").collectAsList();
        List<Row> twice = heavy.frame().orderBy("candidate_index").collectAsList();
        check(once.equals(twice), "a recomputed bounding makes the same choices");

        PrivacyBudget budget = new PrivacyBudget(2.0);
        List<Object> top3 = DpmoSpark.select(agg, "count", Dpmo.SELECTOR_EXPONENTIAL, 0.5, 3, budget, null);
        check(new HashSet<>(top3).size() == 3 && new HashSet<>(Arrays.asList(0L, 1L, 2L, 3L, 4L, 5L))
                .containsAll(top3), "select count top 3 = " + top3 + " (within the 6 largest counts)");
        check(budget.spent() == 0.5, "charged 0.5 once for the top 3");
        List<Object> best = DpmoSpark.select(agg, "sum", Dpmo.SELECTOR_PERMUTE_AND_FLIP, 0.5, 1, budget, null);
        check(best.size() == 1 && budget.spent() == 1.0, "select sum best = " + best + ", charged 0.5 more");
        List<Object> multi = DpmoSpark.selectMulti(agg, DpmoSpark.PRIVPARETO, null, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 2,
                budget, null);
        check(new HashSet<>(multi).size() == 2 && budget.spent() == 1.25, "PrivPareto top 2 = " + multi
                + ", charged 0.25");
        List<Object> agg2 = DpmoSpark.selectMulti(agg, DpmoSpark.PRIVAGG, new double[] {1.0, 0.5},
                Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1, budget, null);
        check(agg2.size() == 1 && budget.spent() == 1.5, "PrivAgg best = " + agg2 + ", charged 0.25: 1.5 in all");

        // Refusals charge nothing.
        check(status(() -> DpmoSpark.select(agg, "count", Dpmo.SELECTOR_EXPONENTIAL, 1.0, 1, budget, null))
                == DpmoException.BUDGET_EXHAUSTED && budget.spent() == 1.5, "over budget: BUDGET_EXHAUSTED, nothing charged");
        check(status(() -> DpmoSpark.select(agg, "count", Dpmo.SELECTOR_EXPONENTIAL, 0.1, 0, budget, null))
                == DpmoException.INVALID_ARGUMENT && budget.spent() == 1.5, "k = 0: INVALID_ARGUMENT, nothing charged");
        check(status(() -> DpmoSpark.select(agg, "count", Dpmo.SELECTOR_EXPONENTIAL, Double.NaN, 1, budget, null))
                == DpmoException.INVALID_EPSILON && budget.spent() == 1.5, "epsilon NaN: INVALID_EPSILON, nothing charged");
        check(status(() -> DpmoSpark.select(heavy, "sum", Dpmo.SELECTOR_EXPONENTIAL, 0.1, 1, budget, null))
                == DpmoException.INVALID_ARGUMENT && budget.spent() == 1.5, "sum without values: INVALID_ARGUMENT");
        check(status(() -> DpmoSpark.selectMulti(agg, DpmoSpark.PRIVAGG, null, Dpmo.SELECTOR_EXPONENTIAL, 0.1, 1,
                budget, null)) == DpmoException.NULL_POINTER && budget.spent() == 1.5, "PrivAgg without weights: NULL_POINTER");
        check(budget.spent() == 1.5, "spent exactly 1.5 after the refusals");

        // Unit columns whose equality is not exact are refused before any job.
        Dataset<Row> lcase = events.withColumn("user", functions.collate(functions.col("user"), "UTF8_LCASE"));
        DpmoException e = error(() -> DpmoSpark.bounding(lcase).unit("user").candidate("item").candidates(items())
                .maxCandidates(1).aggregate());
        check(e != null && e.status() == DpmoException.INVALID_ARGUMENT && e.getMessage().contains("UTF8_LCASE"),
                "a UTF8_LCASE unit column is refused: " + (e == null ? "accepted" : e.getMessage()));
        DpmoException d = error(() -> DpmoSpark.bounding(events).unit("amount").candidate("item").candidates(items())
                .maxCandidates(1).aggregate());
        check(d != null && d.status() == DpmoException.INVALID_ARGUMENT, "a double unit column is refused");
        check(status(() -> DpmoSpark.bounding(events).unit("user").candidate("item").candidates(Arrays.asList(1L, 1L))
                .maxCandidates(1).aggregate()) == DpmoException.INVALID_ARGUMENT, "duplicate candidates are refused");
        check(status(() -> DpmoSpark.bounding(events).unit("user").candidate("item").value("amount", 5, 1)
                .candidates(items()).maxCandidates(1).aggregate()) == DpmoException.INVALID_ARGUMENT,
                "bounds lo > hi are refused");
    }

    /** The small events plus one user alone on item 999 (the lonely item, never to be released). */
    static Dataset<Row> discoveryEvents(SparkSession spark) {
        StructType schema = new StructType().add("user", DataTypes.StringType).add("item", DataTypes.LongType)
                .add("amount", DataTypes.DoubleType);
        Dataset<Row> lonely = spark.createDataFrame(
                Arrays.asList(RowFactory.create("lonely", 999L, 100.0), RowFactory.create("lonely", 999L, 100.0)),
                schema);
        return smallEvents(spark).union(lonely);
    }

    /** The unknown-domain pipeline: no candidate list; popular items found, the lonely item never released,
     * exact charges, refusals charge nothing. */
    static void discovery(SparkSession spark) {
        Dataset<Row> events = discoveryEvents(spark);
        events.cache();
        List<Object> popular = Arrays.asList(0L, 1L, 2L); // 400, 250 and 150 primary users (and more)
        for (int mech : new int[] {Dpmo.PARTITION_GAUSSIAN, Dpmo.PARTITION_WEIGHTED_GAUSSIAN,
                Dpmo.PARTITION_TRUNCATED_GEOMETRIC, Dpmo.PARTITION_LAPLACE}) {
            PrivacyBudget b = new PrivacyBudget(2.0, 1e-5);
            List<Object> found = DpmoSpark.discoverPartitions(events, "user", "item", 2, 1.0, 1e-6, mech, b, null, 4);
            check(found.containsAll(popular) && !found.contains(999L) && b.spent() == 1.0 && b.deltaSpent() == 1e-6,
                    "discoverPartitions (mechanism " + mech + ") found " + found + ", not 999; charged (1, 1e-6)");
        }
        PrivacyBudget b = new PrivacyBudget(2.0, 1e-5);
        check(status(() -> DpmoSpark.discoverPartitions(events, "user", "item", 2, 1.0, 1e-6, Dpmo.PARTITION_SIPS, b,
                null, 4)) == DpmoException.UNSUPPORTED && b.spent() == 0.0, "DP-SIPS refused, nothing charged");
        check(status(() -> DpmoSpark.discoverPartitions(events, "user", "item", 0, 1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN,
                b, null, 4)) == DpmoException.INVALID_ARGUMENT && b.spent() == 0.0, "L = 0 refused, nothing charged");
        check(status(() -> DpmoSpark.discoverPartitions(events, "user", "item", 2, 1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN,
                new PrivacyBudget(1.0), null, 4)) == DpmoException.BUDGET_EXHAUSTED,
                "a pure-ε budget refuses the (ε, δ) charge");
        PrivacyBudget small = new PrivacyBudget(0.5, 1e-5);
        check(status(() -> DpmoSpark.discoverPartitions(events, "user", "item", 2, 1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN,
                small, null, 4)) == DpmoException.BUDGET_EXHAUSTED && small.spent() == 0.0,
                "too little budget: refused before the jobs, nothing charged");
        // Strings as items: released by value, in Spark's (UTF-8 byte) order.
        Dataset<Row> named = events.withColumn("name", functions.concat(functions.lit("i"),
                functions.col("item").cast("string")));
        List<Object> names = DpmoSpark.discoverPartitions(named, "user", "name", 2, 1.0, 1e-6,
                Dpmo.PARTITION_GAUSSIAN, null, null, 4);
        check(names.containsAll(Arrays.asList("i0", "i1", "i2")) && !names.contains("i999"),
                "discoverPartitions over a string item column: " + names);
        int lonelyTop = 0;
        for (int score : new int[] {Dpmo.SCORE_UNITS, Dpmo.SCORE_EVENTS, Dpmo.SCORE_SUM}) {
            PrivacyBudget t = new PrivacyBudget(2.0, 1e-5);
            DiscoveredTopK r = DpmoSpark.selectTopKFromEvents(events, "user", "item",
                    score == Dpmo.SCORE_SUM ? "amount" : null, score, 3, 5, 2, 1, 0.0,
                    score == Dpmo.SCORE_SUM ? 100.0 : 0.0, 1.0, 1e-6, t, null, 4);
            lonelyTop += r.items().contains(999L) ? 1 : 0;
            // Users per item: 1 has 250 + 200 (the even users of 0), 0 has 400 + 5: the two most popular.
            check(!r.items().isEmpty() && Arrays.asList(0L, 1L).contains(r.items().get(0))
                    && Arrays.asList(0L, 1L, 2L, 3L).containsAll(r.items()) && t.spent() == r.epsilon()
                    && r.epsilon() <= 1.0 && t.deltaSpent() == 1e-6,
                    "selectTopKFromEvents (score " + score + ") = " + r + ", charged what it spent");
        }
        check(lonelyTop == 0, "the lonely item is never among the top-k");
        DiscoveredTopK s = DpmoSpark.selectTopKFromEvents(named, "user", "name", null, Dpmo.SCORE_UNITS, 2, 3, 2, 1,
                0.0, 0.0, 2.0, 1e-6, null, null, 4);
        check(!s.items().isEmpty() && Arrays.asList("i0", "i1", "i2").containsAll(s.items()),
                "top-k over a string item column: " + s);
        PrivacyBudget t = new PrivacyBudget(2.0, 1e-5);
        check(status(() -> DpmoSpark.selectTopKFromEvents(events, "user", "item", null, Dpmo.SCORE_SUM, 1, 2, 2, 1,
                0.0, 0.0, 1.0, 1e-6, t, null, 4)) == DpmoException.INVALID_ARGUMENT
                && status(() -> DpmoSpark.selectTopKFromEvents(events, "user", "item", null, Dpmo.SCORE_UNITS, 3, 2, 2,
                        1, 0.0, 0.0, 1.0, 1e-6, t, null, 4)) == DpmoException.INVALID_ARGUMENT
                && status(() -> DpmoSpark.selectTopKFromEvents(events, "user", "item", null, Dpmo.SCORE_UNITS, 1, 2, 2,
                        1, 0.0, 0.0, 1.0, 0.0, t, null, 4)) == DpmoException.INVALID_ARGUMENT
                && t.spent() == 0.0 && t.deltaSpent() == 0.0, "top-k refusals (sum without values, k > kBar, δ = 0) "
                + "charge nothing");
    }

    // ------------------------------------------------------------------ laws: Spark against one process

    /** Wilson–Hilferty's χ² quantile at α = 10⁻⁶ (z = 4.7534) for df degrees of freedom. */
    static double critical(int df) {
        double a = 2.0 / (9.0 * df);
        return df * Math.pow(1 - a + 4.7534 * Math.sqrt(a), 3);
    }

    /** Pearson's two-sample χ² (2 × K table) of two samples of outcomes: {statistic, its α = 10⁻⁶ critical
     * value}; outcomes expected below 5 in either sample are pooled into one cell. */
    static double[] homogeneity(Map<String, Integer> a, Map<String, Integer> b) {
        java.util.TreeSet<String> keys = new java.util.TreeSet<>(a.keySet());
        keys.addAll(b.keySet());
        double na = a.values().stream().mapToInt(Integer::intValue).sum();
        double nb = b.values().stream().mapToInt(Integer::intValue).sum();
        double n = na + nb;
        List<double[]> cells = new ArrayList<>();
        double[] rare = {0, 0};
        for (String k : keys) {
            double x = a.getOrDefault(k, 0), y = b.getOrDefault(k, 0);
            if (Math.min((x + y) * na, (x + y) * nb) / n < 5) {
                rare[0] += x;
                rare[1] += y;
            } else {
                cells.add(new double[] {x, y});
            }
        }
        if (rare[0] + rare[1] > 0) cells.add(rare);
        double stat = 0;
        for (double[] c : cells) {
            double t = c[0] + c[1], ea = t * na / n, eb = t * nb / n;
            stat += (c[0] - ea) * (c[0] - ea) / ea + (c[1] - eb) * (c[1] - eb) / eb;
        }
        return new double[] {stat, cells.size() < 2 ? Double.POSITIVE_INFINITY : critical(cells.size() - 1)};
    }

    static Map<String, Integer> tally(List<String> outcomes) {
        Map<String, Integer> m = new HashMap<>();
        for (String o : outcomes) m.merge(o, 1, Integer::sum);
        return m;
    }

    static final int DRAWS = 4000;
    /** Partition 0 holds candidates 0..3 (scores 3, 3, 3, 2), partition 1 holds 4..7 (3, 0, 1, −1): the two
     * partitions' |H_j| differ, so a partition chosen uniformly instead of ∝ |H_j| shows. */
    static final double[] SCORES = {3, 3, 3, 2, 3, 0, 1, -1};

    /** The scores as a frame (candidate_index, score) over `parts` contiguous partitions (spark.range). */
    static Dataset<Row> scoresFrame(SparkSession spark, double[] scores, int parts) {
        StringBuilder arr = new StringBuilder("array(");
        for (int i = 0; i < scores.length; i++) {
            String v = Double.isFinite(scores[i]) ? String.valueOf(scores[i]) : "'" + scores[i] + "'";
            arr.append(i > 0 ? ", " : "").append("cast(" + v + " as double)");
        }
        arr.append(")[cast(id as int)]");
        return spark.range(0, scores.length, 1, parts).select(functions.col("id").alias("candidate_index"),
                functions.expr(arr.toString()).alias("score"));
    }

    static List<String> sparkDraws(Dataset<Row> frame, int selector, double eps, int k,
            DistributedSelect.Chooser chooser, int driverLimit) {
        List<String> out = new ArrayList<>();
        for (int[] p : DistributedSelect.select(frame, SCORES.length, 1.0, selector, eps, k, null, null, DRAWS,
                chooser, driverLimit)) {
            out.add(Arrays.toString(p));
        }
        return out;
    }

    static List<String> localDraws(int selector, double eps, int k) {
        org.dpmo.DpmoRng g = org.dpmo.DpmoRng.seeded(org.dpmo.DpmoRng.XOSHIRO256PP, 42 + selector * 10 + k);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < DRAWS; i++) out.add(Arrays.toString(Dpmo.selectTopK(g, selector, SCORES, 1.0, eps, k)));
        return out;
    }

    /** The distributed selection against the one-process law, its broken variant, charges and refusals. */
    static void distributed(SparkSession spark) {
        Dataset<Row> frame = scoresFrame(spark, SCORES, 2).cache();
        String[] names = {"EM", "PF"};
        for (int limit : new int[] {0, DistributedSelect.DRIVER_LIMIT}) {
            for (int k : new int[] {1, 2}) {
                double eps = k == 1 ? 1.5 : 2.0;
                for (int selector : new int[] {Dpmo.SELECTOR_EXPONENTIAL, Dpmo.SELECTOR_PERMUTE_AND_FLIP}) {
                    double[] t = homogeneity(tally(sparkDraws(frame, selector, eps, k, DistributedSelect.EXACT, limit)),
                            tally(localDraws(selector, eps, k)));
                    check(t[0] < t[1], String.format("%s %s top-%d has the law of Dpmo.selectTopK (%d draws each: chi2 "
                            + "%.1f < %.1f at alpha 1e-6)", limit == 0 ? "distributed (2 partitions)" : "on the driver",
                            names[selector], k, DRAWS, t[0], t[1]));
                }
            }
        }
        // The broken variant: the partition chosen uniformly (among those with a head) instead of ∝ |H_j|.
        DistributedSelect.Chooser uniform = (g, heads) -> {
            long[] w = new long[heads.length];
            for (int j = 0; j < w.length; j++) w[j] = heads[j] > 0 ? 1 : 0;
            return Dpmo.distributedChooseWeighted(g, w);
        };
        double[] t = homogeneity(tally(sparkDraws(frame, Dpmo.SELECTOR_PERMUTE_AND_FLIP, 1.5, 1, uniform, 0)),
                tally(localDraws(Dpmo.SELECTOR_PERMUTE_AND_FLIP, 1.5, 1)));
        check(t[0] > t[1], String.format("broken variant (partition chosen uniformly, not by |H_j|) caught: chi2 %.1f "
                + "> %.1f", t[0], t[1]));

        // Charges: exactly ε once on success; argument refusals and a refused charge charge nothing; a frame that
        // does not hold the n candidates is found by reading it, after the charge, which it keeps (its shape could
        // depend on the data: a free refusal would be an oracle).
        PrivacyBudget b = new PrivacyBudget(2.0);
        int[] one = DpmoSpark.selectScores(frame, SCORES.length, 1.0, Dpmo.SELECTOR_PERMUTE_AND_FLIP, 0.5, 2, b, null);
        check(one.length == 2 && one[0] != one[1] && b.spent() == 0.5, "selectScores top 2 = " + Arrays.toString(one)
                + ", charged 0.5");
        check(status(() -> DpmoSpark.selectScores(frame, SCORES.length + 1, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1, b,
                null, 0)) == DpmoException.LENGTH_MISMATCH && b.spent() == 0.75,
                "a frame without every index, on the executors: LENGTH_MISMATCH, the 0.25 charged before the read kept");
        PrivacyBudget d = new PrivacyBudget(1.0);
        check(status(() -> DpmoSpark.selectScores(frame, SCORES.length + 1, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1, d,
                null)) == DpmoException.LENGTH_MISMATCH && d.spent() == 0.25,
                "a frame without every index, on the driver: LENGTH_MISMATCH, the charge kept");
        check(status(() -> DpmoSpark.selectScores(frame, SCORES.length, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1, d,
                null, -1)) == DpmoException.INVALID_ARGUMENT && d.spent() == 0.25, "a negative driver limit: refused, free");
        Dataset<Row> beyond = frame.union(frame.where("candidate_index = 3")
                .selectExpr("candidate_index + 100 as candidate_index", "score"));
        check(status(() -> DpmoSpark.selectScores(beyond, SCORES.length + 1, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1, b,
                null)) == DpmoException.LENGTH_MISMATCH && b.spent() == 1.0,
                "an index out of range: LENGTH_MISMATCH, the charge kept");
        check(status(() -> DpmoSpark.selectScores(frame, SCORES.length, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 1.1, 1, b,
                null)) == DpmoException.BUDGET_EXHAUSTED && b.spent() == 1.0, "over budget: nothing charged");
        check(status(() -> DpmoSpark.selectScores(frame, SCORES.length, 0.0, Dpmo.SELECTOR_EXPONENTIAL, 0.1, 1, b,
                null)) == DpmoException.INVALID_SENSITIVITY
                && status(() -> DpmoSpark.selectScores(frame, SCORES.length, 1.0, Dpmo.SELECTOR_EXPONENTIAL | Dpmo.FLOAT,
                        0.1, 1, b, null)) == DpmoException.INVALID_ARGUMENT
                && status(() -> DpmoSpark.selectScores(frame, SCORES.length, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 0.1, 9, b,
                        null)) == DpmoException.INVALID_ARGUMENT && b.spent() == 1.0,
                "Δ = 0, a FLOAT selector, k > n: refused, nothing charged");
        // NaN and infinite scores are the public rule, never an error: a NaN is never picked over a finite 1000.
        Dataset<Row> nan = scoresFrame(spark, new double[] {Double.NaN, 1000, Double.NaN, Double.NEGATIVE_INFINITY}, 2);
        int[] n1 = DpmoSpark.selectScores(nan, 4, 1.0, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1, b, null);
        int[] n2 = DpmoSpark.selectScores(nan, 4, 1.0, Dpmo.SELECTOR_PERMUTE_AND_FLIP, 0.25, 1, b, null);
        check(n1[0] == 1 && n2[0] == 1 && b.spent() == 1.5, "NaN and -inf scores: no error, the 1000 chosen, charged");
        frame.unpersist();
    }

    /** A small world: 9 units over items 1..4 and −7 (a negative id, last as an unsigned word), some with more
     * items than L = 2, so the bounding's choices matter; two events per (unit, item). Python's test world. */
    static final long[][] WORLD = {{1, 2, 3}, {1, 2}, {1, 3, 4, -7}, {1}, {2, 3}, {2, -7}, {1, 2, 3, 4}, {4}, {3, -7}};

    static long[][] worldEvents() {
        List<long[]> ev = new ArrayList<>();
        for (int u = 0; u < WORLD.length; u++) {
            for (long i : WORLD[u]) {
                ev.add(new long[] {u, i});
                ev.add(new long[] {u, i});
            }
        }
        long[] us = new long[ev.size()], is = new long[ev.size()];
        for (int e = 0; e < us.length; e++) {
            us[e] = ev.get(e)[0];
            is[e] = ev.get(e)[1];
        }
        return new long[][] {us, is};
    }

    static final int SETS = 3000;

    static Map<String, Integer> sparkSets(Dataset<Row> frame, int l, double eps, double delta, int mech,
            DpmoSpark.Partitioner by) {
        List<String> out = new ArrayList<>();
        for (List<Object> set : DpmoSpark.discoverPartitions(frame, "user", "item", l, eps, delta, mech, null, 4, SETS,
                by)) {
            out.add(set.toString());
        }
        return tally(out);
    }

    static Map<String, Integer> localSets(int l, double eps, double delta, int mech) {
        long[][] ev = worldEvents();
        org.dpmo.DpmoRng g = org.dpmo.DpmoRng.seeded(org.dpmo.DpmoRng.XOSHIRO256PP, 99 + mech);
        List<String> out = new ArrayList<>();
        for (int r = 0; r < SETS; r++) {
            List<Object> set = new ArrayList<>();
            for (long x : Dpmo.discoverPartitions(g, ev[0], ev[1], l, eps, delta, mech, 1, null)) set.add(x);
            set.sort(DpmoSpark::compareItems);
            out.add(set.toString());
        }
        return tally(out);
    }

    /** Partition selection on the cluster (decisions on the executors) against Dpmo.discoverPartitions. */
    static void discoveryLaw(SparkSession spark) {
        long[][] ev = worldEvents();
        List<Row> rows = new ArrayList<>();
        for (int e = 0; e < ev[0].length; e++) rows.add(RowFactory.create(ev[0][e], ev[1][e]));
        StructType schema = new StructType().add("user", DataTypes.LongType).add("item", DataTypes.LongType);
        Dataset<Row> frame = spark.createDataFrame(rows, schema).repartition(3).cache();
        int[] mechs = {Dpmo.PARTITION_TRUNCATED_GEOMETRIC, Dpmo.PARTITION_LAPLACE, Dpmo.PARTITION_GAUSSIAN,
                Dpmo.PARTITION_WEIGHTED_GAUSSIAN};
        double[] eps = {6.0, 4.0, 4.0, 4.0};
        for (int m = 0; m < mechs.length; m++) {
            Map<String, Integer> ref = localSets(2, eps[m], 0.2, mechs[m]);
            long real = ref.values().stream().filter(v -> v > 0.05 * SETS).count();
            double[] t = homogeneity(sparkSets(frame, 2, eps[m], 0.2, mechs[m], DpmoSpark.BY_UNIT), ref);
            check(real >= 2 && t[0] < t[1], String.format("discoverPartitions (mechanism %d) on the cluster has the law "
                    + "of Dpmo.discoverPartitions (%d released sets each, %d with > 5%%: chi2 %.1f < %.1f)", mechs[m],
                    SETS, real, t[0], t[1]));
        }
        // The broken variant: events partitioned by (unit, item), so a unit's items spread over tasks and each task
        // bounds (and weighs) its share of the unit.
        DpmoSpark.Partitioner split = (e, parts) -> e.repartition(parts, functions.col("unit"), functions.col("item"));
        double[] t = homogeneity(sparkSets(frame, 1, 4.0, 0.2, Dpmo.PARTITION_WEIGHTED_GAUSSIAN, split),
                localSets(1, 4.0, 0.2, Dpmo.PARTITION_WEIGHTED_GAUSSIAN));
        check(t[0] > t[1], String.format("broken variant (a unit split over tasks) caught: chi2 %.1f > %.1f", t[0],
                t[1]));
        frame.unpersist();
    }

    static void broken(SparkSession spark) {
        DpmoException e = error(() -> {
            DpmoSpark.checkExecutors(spark, 2);
            return null;
        });
        check(e != null && e.status() == DpmoException.UNSUPPORTED && e.getMessage().contains("cannot run dpmo")
                && e.getMessage().contains("dpmo.library"), "checkExecutors refuses: "
                + (e == null ? "passed" : e.getMessage()));
        SparkAggregates agg = DpmoSpark.bounding(smallEvents(spark)).unit("user").candidate("item")
                .value("amount", 0, 100).candidates(items()).maxCandidates(2).partitions(2).aggregate();
        PrivacyBudget budget = new PrivacyBudget(1.0);
        check(status(() -> DpmoSpark.select(agg, "count", Dpmo.SELECTOR_EXPONENTIAL, 0.5, 1, budget, null))
                == DpmoException.UNSUPPORTED && budget.spent() == 0.0, "select refused, nothing charged");
        check(status(() -> DpmoSpark.selectMulti(agg, DpmoSpark.PRIVPARETO, null, Dpmo.SELECTOR_EXPONENTIAL, 0.5, 1,
                budget, null)) == DpmoException.UNSUPPORTED && budget.spent() == 0.0, "selectMulti refused, nothing charged");
        PrivacyBudget approx = new PrivacyBudget(2.0, 1e-5);
        check(status(() -> DpmoSpark.discoverPartitions(discoveryEvents(spark), "user", "item", 2, 1.0, 1e-6,
                Dpmo.PARTITION_GAUSSIAN, approx, null, 2)) == DpmoException.UNSUPPORTED && approx.spent() == 0.0
                && approx.deltaSpent() == 0.0, "discoverPartitions refused, nothing charged");
        check(status(() -> DpmoSpark.selectTopKFromEvents(discoveryEvents(spark), "user", "item", null,
                Dpmo.SCORE_UNITS, 2, 3, 2, 1, 0.0, 0.0, 1.0, 1e-6, approx, null, 2)) == DpmoException.UNSUPPORTED
                && approx.spent() == 0.0, "selectTopKFromEvents refused, nothing charged");
    }

    public static void main(String[] args) {
        long t0 = System.nanoTime();
        SparkSession spark = SparkSession.builder().appName("dpmo-spark-" + args[0]).getOrCreate();
        try {
            if ("pipeline".equals(args[0])) {
                pipeline(spark);
                discovery(spark);
                distributed(spark);
                discoveryLaw(spark);
            } else if ("broken".equals(args[0])) {
                broken(spark);
            } else {
                throw new IllegalArgumentException(args[0]);
            }
        } finally {
            spark.stop();
        }
        System.out.printf("RESULT %s: %d failures, %.1f s%n", args[0], failures, (System.nanoTime() - t0) / 1e9);
        System.exit(failures == 0 ? 0 : 1);
    }
}
