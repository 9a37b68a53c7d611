package org.dpmo.spark;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.PriorityQueue;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import org.dpmo.Dpmo;
import org.dpmo.DpmoException;
import org.dpmo.DpmoRng;
import org.dpmo.PrivacyBudget;

/**
 * The exact distributed report-noisy-max on Spark (the JVM twin of Python's {@code dpmo.distributed} over
 * {@code dpmo.spark.select_scores}): top-k by peeling with the exponential mechanism or permute-and-flip, with
 * exactly the law of {@link Dpmo#selectTopK} on the collected scores, while the scores stay on the executors.
 *
 * <ol>
 * <li><b>Pack</b> (one task per partition of the scores): the partition's (candidate, score) pairs, sorted by
 * candidate, as one row; cached for the passes below.</li>
 * <li><b>Charge, then pass 1</b>: ε is charged; each partition reports its size and its k largest scores (the
 * public rule first: NaN is the lowest score, ±∞ ±MAX); the driver checks that the partitions hold the n
 * candidates (LENGTH_MISMATCH otherwise, the charge kept).</li>
 * <li><b>Rounds</b> (k, at ε/k rounded down each, as the core's top-k): s* is the largest score not yet chosen
 * (from pass 1's lists). Permute-and-flip: every partition flips its coins from its own stream
 * ({@link Dpmo#distributedPfPartition}) and reports |H_j| and a uniform element of H_j; the driver picks
 * partition j with probability |H_j| / Σ|H| ({@link Dpmo#distributedChooseWeighted}, one key from its generator)
 * — a uniform element of H. Exponential mechanism: rejection with uniform proposals from one stream every
 * partition derives identically ({@link Dpmo#distributedEmPartition}); the driver keeps the smallest kept
 * position; a batch without one is followed by one twice as large on new streams.</li>
 * </ol>
 *
 * <p><b>On the driver</b> when n ≤ the driver limit ({@link #DRIVER_LIMIT} unless the caller gives another): after
 * the charge, one job collects the (candidate, score) pairs and the same passes run on the driver over them as
 * one partition — the same law (the rounds' law does not depend on how the candidates are partitioned), without
 * a Spark job per round.
 *
 * <p>Streams: ChaCha20 of a fresh 32-byte key from {@link SecureRandom} per release and the stream number
 * (purpose, round, attempt, repetition, partition) of Python's {@code dpmo.distributed.stream_number}; a retried
 * task reuses its stream and gives the same answer.
 */
final class DistributedSelect {
    private DistributedSelect() {}

    /** The driver's choice of a partition from the partitions' heads |H_j| (a test replaces it). */
    interface Chooser {
        int choose(DpmoRng rng, long[] heads);
    }

    /** The exact choice: j with probability heads[j] / Σ heads. */
    static final Chooser EXACT = Dpmo::distributedChooseWeighted;

    static final int PF = 1;
    static final int EM_PROPOSALS = 2;
    static final int EM_COINS = 3;
    static final int MAX_REPETITIONS = 1 << 12;
    static final int FIRST_BATCH = 1024;
    /** Up to this many candidates the passes run on the driver after one collect (16 MiB of scores, as Python's
     * {@code driver_limit}). */
    static final int DRIVER_LIMIT = 1 << 20;
    private static final String INVALID = "the scores frame must hold every candidate index 0..n-1 exactly once";

    /** Python's {@code stream_number}: distinct (purpose, round, attempt, repetition, partition), distinct streams. */
    static long stream(int purpose, int round, int attempt, int repetition, int partition) {
        if (round < 0 || round >= 1 << 16 || attempt < 0 || attempt >= 1 << 8 || repetition < 0
                || repetition >= MAX_REPETITIONS || partition < 0 || partition >= 1 << 24) {
            throw DpmoSpark.invalid("more than 2^16 rounds, 2^12 repetitions or 2^24 partitions");
        }
        return ((long) purpose << 60) | ((long) round << 44) | ((long) attempt << 36) | ((long) repetition << 24)
                | partition;
    }

    /** The largest double not above ε/k, so k rounds never spend more than ε (the core's top-k rounding). */
    static double roundEpsilon(double epsilon, int k) {
        double e = epsilon / k;
        BigDecimal total = new BigDecimal(epsilon);
        while (e > 0 && new BigDecimal(e).multiply(BigDecimal.valueOf(k)).compareTo(total) > 0) e = Math.nextDown(e);
        return e;
    }

    /** The public rule of every selection: NaN is the lowest score, ±∞ is ±MAX (a null score is NaN). */
    static double rule(double s) {
        if (Double.isNaN(s)) return -Double.MAX_VALUE;
        return Math.max(-Double.MAX_VALUE, Math.min(Double.MAX_VALUE, s));
    }

    /** True for a selector the distributed selection runs: the exact exponential mechanism (or Gumbel noise) and
     * permute-and-flip (or Exponential noise), without flags. */
    static boolean distributable(int selector) {
        return selector == Dpmo.SELECTOR_EXPONENTIAL || selector == Dpmo.SELECTOR_NOISY_MAX_GUMBEL
                || selector == Dpmo.SELECTOR_PERMUTE_AND_FLIP || selector == Dpmo.SELECTOR_NOISY_MAX_EXPONENTIAL;
    }

    static boolean permuteAndFlip(int selector) {
        return selector == Dpmo.SELECTOR_PERMUTE_AND_FLIP || selector == Dpmo.SELECTOR_NOISY_MAX_EXPONENTIAL;
    }

    /**
     * The selection: {@code repetitions} independent top-k's over one data pass (more than one for tests and
     * simulations only: no budget then), each the k chosen indices in pick order.
     */
    static int[][] select(Dataset<Row> scores, int total, double sensitivity, int selector, double epsilon, int k,
            PrivacyBudget budget, DpmoRng rng, int repetitions, Chooser chooser, int driverLimit) {
        if (scores == null) throw DpmoSpark.nullPointer("scores is null");
        if (!distributable(selector)) {
            throw DpmoSpark.invalid("the distributed selection takes SELECTOR_EXPONENTIAL, SELECTOR_PERMUTE_AND_FLIP or "
                    + "exact Gumbel or Exponential noise, without flags");
        }
        if (total < 1) {
            throw new DpmoException(DpmoException.EMPTY_INPUT, Dpmo.statusMessage(DpmoException.EMPTY_INPUT));
        }
        if (k < 1 || k > total || k >= 1 << 16) throw DpmoSpark.invalid("k must be in 1.." + total);
        if (repetitions < 1 || repetitions > MAX_REPETITIONS) throw DpmoSpark.invalid("repetitions in 1..4096");
        if (repetitions > 1 && budget != null) throw DpmoSpark.invalid("repetitions are for simulations: no budget");
        // Every check of ε, Δ, the selector and the rounding of ε/k, on the driver with no data: the core's own
        // top-k over k zeros (a throwaway generator; nothing charged).
        Dpmo.selectTopK(new DpmoRng(), selector, new double[k], sensitivity, epsilon, k, null);
        double eps = roundEpsilon(epsilon, k);
        DpmoRng g = rng != null ? rng : new DpmoRng();
        DpmoSpark.checkExecutors(scores.sparkSession(), 0);
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Dataset<Row> pairs = scores.select(functions.col("candidate_index").cast("long"),
                functions.col("score").cast("double"));
        boolean onDriver = total <= driverLimit;
        Dataset<Row> packed = onDriver ? null : pairs.mapPartitions(new PackTask(total), Encoders.row(PACKED)).cache();
        try {
            // The charge comes before any read of the scores: the frame's shape is checked by reading it, and a
            // frame built with a filter on private data would make a free refusal an oracle.
            if (budget != null) budget.charge(epsilon);
            Passes passes;
            if (onDriver) {
                List<Row> one = Collections.singletonList(PackTask.pack(0, pairs.collectAsList().iterator(), total));
                passes = task -> results(task.call(one.iterator()));
            } else {
                passes = task -> run(packed, task);
            }
            // Pass 1: sizes and the k largest scores of every partition.
            List<double[]> best = new ArrayList<>();
            long held = 0;
            for (ByteBuffer b : passes.run(new TopTask(k))) {
                long size = b.getLong();
                if (size < 0) throw DpmoSpark.lengthMismatch(INVALID);
                held += size;
                for (int c = b.getInt(); c > 0; c--) best.add(new double[] {b.getDouble(), b.getLong()});
            }
            if (held != total) throw DpmoSpark.lengthMismatch(INVALID + " (they hold " + held + ")");
            best.sort(Comparator.<double[]>comparingDouble(p -> -p[0]).thenComparingDouble(p -> p[1]));
            long[][] chosen = new long[repetitions][0]; // sorted, for the tasks' binary searches
            int[][] out = new int[repetitions][k]; // in pick order
            for (int round = 0; round < k; round++) {
                double[] stars = new double[repetitions];
                for (int r = 0; r < repetitions; r++) stars[r] = star(best, chosen[r]);
                long[] picks = permuteAndFlip(selector)
                        ? pfRound(passes, key, round, stars, chosen, sensitivity, eps, g, chooser)
                        : emRound(passes, key, round, total, stars, chosen, sensitivity, eps);
                for (int r = 0; r < repetitions; r++) {
                    long[] c = Arrays.copyOf(chosen[r], round + 1);
                    c[round] = picks[r];
                    Arrays.sort(c);
                    chosen[r] = c;
                    out[r][round] = (int) picks[r];
                }
            }
            return out;
        } finally {
            if (packed != null) packed.unpersist();
        }
    }

    /** Runs one pass over the packed partitions, on the executors or on the driver. */
    interface Passes {
        List<ByteBuffer> run(PassTask task);
    }

    /** The largest score of a candidate not chosen (pass 1's lists hold it: see the class comment). */
    private static double star(List<double[]> best, long[] chosen) {
        for (double[] p : best) {
            if (Arrays.binarySearch(chosen, (long) p[1]) < 0) return p[0];
        }
        throw new IllegalStateException("no candidate left"); // k ≤ n and each partition reports k
    }

    private static long[] pfRound(Passes passes, byte[] key, int round, double[] stars, long[][] excluded,
            double sensitivity, double eps, DpmoRng g, Chooser chooser) {
        List<ByteBuffer> results = passes.run(new PfTask(key, round, stars, excluded, sensitivity, eps));
        long[] picks = new long[stars.length];
        long[][] heads = new long[stars.length][results.size()];
        long[][] elems = new long[stars.length][results.size()];
        for (int j = 0; j < results.size(); j++) {
            ByteBuffer b = results.get(j);
            for (int r = 0; r < stars.length; r++) {
                heads[r][j] = b.getLong();
                elems[r][j] = b.getLong();
            }
        }
        for (int r = 0; r < stars.length; r++) picks[r] = elems[r][chooser.choose(g, heads[r])];
        return picks;
    }

    private static long[] emRound(Passes passes, byte[] key, int round, int total, double[] stars,
            long[][] excluded, double sensitivity, double eps) {
        long[] picks = new long[stars.length];
        Arrays.fill(picks, -1);
        long batch = FIRST_BATCH;
        for (int attempt = 0; attempt < 256; attempt++) {
            List<Integer> active = new ArrayList<>();
            for (int r = 0; r < stars.length; r++) if (picks[r] < 0) active.add(r);
            if (active.isEmpty()) break;
            int[] act = active.stream().mapToInt(Integer::intValue).toArray();
            List<ByteBuffer> results = passes.run(new EmTask(key, round, attempt, act, total, batch, stars, excluded,
                    sensitivity, eps));
            long[] position = new long[act.length];
            Arrays.fill(position, Long.MAX_VALUE);
            for (ByteBuffer b : results) {
                for (int i = 0; i < act.length; i++) {
                    long pos = b.getLong(), cand = b.getLong();
                    if (pos >= 0 && pos < position[i]) {
                        position[i] = pos;
                        picks[act[i]] = cand;
                    }
                }
            }
            batch = Math.min(batch * 2, 1L << 40);
        }
        for (long p : picks) {
            // 256 doubling batches without a kept proposal: probability below exp(-2^200) on any input.
            if (p < 0) throw new IllegalStateException("distributed exponential mechanism: no proposal kept");
        }
        return picks;
    }

    // ------------------------------------------------------------------------------ the tasks

    static final StructType PACKED = new StructType().add("part", DataTypes.IntegerType, false)
            .add("cands", DataTypes.BinaryType, false).add("scores", DataTypes.BinaryType, false);
    static final StructType RESULT = new StructType().add("part", DataTypes.IntegerType, false)
            .add("result", DataTypes.BinaryType, false);

    /** Runs one pass: {@code task} on every packed partition; the results in partition order. */
    private static List<ByteBuffer> run(Dataset<Row> packed, PassTask task) {
        return results(packed.mapPartitions(task, Encoders.row(RESULT)).collectAsList().iterator());
    }

    /** A pass's result rows (partition, bytes), in partition order. */
    private static List<ByteBuffer> results(Iterator<Row> it) {
        List<Row> rows = BoundTask.rows(it);
        rows.sort(Comparator.comparingInt(r -> r.getInt(0)));
        List<ByteBuffer> out = new ArrayList<>(rows.size());
        for (Row r : rows) out.add(ByteBuffer.wrap((byte[]) r.get(1)));
        return out;
    }

    /** One row per partition: its partition number, candidates (sorted) and scores as raw bytes; an index out of
     * [0, n), null or repeated makes the candidates empty and the size −1 (refused by the driver). */
    static final class PackTask implements MapPartitionsFunction<Row, Row> {
        private static final long serialVersionUID = 1L;
        private final int total;

        PackTask(int total) {
            this.total = total;
        }

        @Override
        public Iterator<Row> call(Iterator<Row> input) {
            return Collections.singletonList(pack(TaskContext.getPartitionId(), input, total)).iterator();
        }

        /** Packs the (candidate, score) rows of partition {@code part} (on an executor, or all of them on the driver
         * as partition 0). */
        static Row pack(int part, Iterator<Row> input, int total) {
            List<Row> rows = BoundTask.rows(input);
            int n = rows.size();
            long[] keys = new long[n];
            boolean bad = false;
            for (int i = 0; i < n; i++) {
                Row r = rows.get(i);
                long c = r.isNullAt(0) ? -1 : r.getLong(0);
                bad |= c < 0 || c >= total;
                keys[i] = (c << 32) | i; // c < 2^31, i < 2^31: sorting the keys sorts by candidate
            }
            ByteBuffer cands = ByteBuffer.allocate(bad ? 8 : 8 * n);
            ByteBuffer scores = ByteBuffer.allocate(bad ? 0 : 8 * n);
            if (bad) {
                cands.putLong(-1);
            } else {
                Arrays.sort(keys);
                for (int i = 0; i < n; i++) {
                    Row r = rows.get((int) (keys[i] & 0xFFFFFFFFL));
                    if (i > 0 && keys[i] >>> 32 == keys[i - 1] >>> 32) bad = true;
                    cands.putLong(keys[i] >>> 32);
                    scores.putDouble(rule(r.isNullAt(1) ? Double.NaN : r.getDouble(1)));
                }
                if (bad) {
                    cands = ByteBuffer.allocate(8).putLong(-1);
                    scores = ByteBuffer.allocate(0);
                }
            }
            return RowFactory.create(part, cands.array(), scores.array());
        }
    }

    /** A pass over the packed partitions: one result (bytes) per partition. */
    abstract static class PassTask implements MapPartitionsFunction<Row, Row> {
        private static final long serialVersionUID = 1L;

        abstract byte[] apply(int part, long[] cands, double[] scores);

        @Override
        public Iterator<Row> call(Iterator<Row> input) {
            List<Row> out = new ArrayList<>();
            while (input.hasNext()) {
                Row r = input.next();
                ByteBuffer c = ByteBuffer.wrap((byte[]) r.get(1));
                ByteBuffer s = ByteBuffer.wrap((byte[]) r.get(2));
                long[] cands = new long[c.remaining() / 8];
                double[] scores = new double[s.remaining() / 8];
                c.asLongBuffer().get(cands);
                s.asDoubleBuffer().get(scores);
                out.add(RowFactory.create(r.getInt(0), apply(r.getInt(0), cands, scores)));
            }
            return out.iterator();
        }
    }

    /** Pass 1: the size (−1 for a partition refused by the pack) and the k largest (score, candidate). */
    static final class TopTask extends PassTask {
        private static final long serialVersionUID = 1L;
        private final int k;

        TopTask(int k) {
            this.k = k;
        }

        @Override
        byte[] apply(int part, long[] cands, double[] scores) {
            if (cands.length != scores.length) return ByteBuffer.allocate(12).putLong(-1).putInt(0).array();
            // A min-heap of the k best by (score desc, candidate asc): its head is the worst kept.
            PriorityQueue<Integer> heap = new PriorityQueue<>(Math.max(1, Math.min(k, cands.length)),
                    (a, b) -> scores[a] != scores[b] ? Double.compare(scores[a], scores[b]) : Long.compare(cands[b],
                            cands[a]));
            for (int i = 0; i < cands.length; i++) {
                heap.add(i);
                if (heap.size() > k) heap.poll();
            }
            ByteBuffer b = ByteBuffer.allocate(12 + 16 * heap.size()).putLong(cands.length).putInt(heap.size());
            for (int i : heap) b.putDouble(scores[i]).putLong(cands[i]);
            return b.array();
        }
    }

    /** One round of permute-and-flip: per repetition, (|H_j|, element or −1). */
    static final class PfTask extends PassTask {
        private static final long serialVersionUID = 1L;
        private final byte[] key;
        private final int round;
        private final double[] stars;
        private final long[][] excluded;
        private final double sensitivity;
        private final double eps;

        PfTask(byte[] key, int round, double[] stars, long[][] excluded, double sensitivity, double eps) {
            this.key = key.clone();
            this.round = round;
            this.stars = stars;
            this.excluded = excluded;
            this.sensitivity = sensitivity;
            this.eps = eps;
        }

        @Override
        byte[] apply(int part, long[] cands, double[] scores) {
            ByteBuffer b = ByteBuffer.allocate(16 * stars.length);
            for (int r = 0; r < stars.length; r++) {
                long[] hp = Dpmo.distributedPfPartition(key, stream(PF, round, 0, r, part), cands, scores, stars[r],
                        sensitivity, eps, excluded[r]);
                b.putLong(hp[0]).putLong(hp[1]);
            }
            return b.array();
        }
    }

    /** One batch of the exponential mechanism: per active repetition, the first kept (position, candidate). */
    static final class EmTask extends PassTask {
        private static final long serialVersionUID = 1L;
        private final byte[] key;
        private final int round;
        private final int attempt;
        private final int[] active;
        private final int total;
        private final long batch;
        private final double[] stars;
        private final long[][] excluded;
        private final double sensitivity;
        private final double eps;

        EmTask(byte[] key, int round, int attempt, int[] active, int total, long batch, double[] stars,
                long[][] excluded, double sensitivity, double eps) {
            this.key = key.clone();
            this.round = round;
            this.attempt = attempt;
            this.active = active;
            this.total = total;
            this.batch = batch;
            this.stars = stars;
            this.excluded = excluded;
            this.sensitivity = sensitivity;
            this.eps = eps;
        }

        @Override
        byte[] apply(int part, long[] cands, double[] scores) {
            ByteBuffer b = ByteBuffer.allocate(16 * active.length);
            for (int r : active) {
                long[] pc = Dpmo.distributedEmPartition(key, stream(EM_PROPOSALS, round, attempt, r, 0xFFFFFF),
                        stream(EM_COINS, round, attempt, r, part), total, batch, cands, scores, stars[r], sensitivity,
                        eps, excluded[r]);
                b.putLong(pc[0]).putLong(pc[1]);
            }
            return b.array();
        }
    }
}
