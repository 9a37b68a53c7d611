package org.dpmo;

import static org.dpmo.DpmoTest.check;
import static org.dpmo.DpmoTest.raises;
import static org.dpmo.DpmoTest.test;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.TreeMap;

import javax.crypto.Cipher;
import javax.crypto.spec.ChaCha20ParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The pieces of a distributed discovery ({@link Dpmo#boundContributions}, {@link Dpmo#partitionWeightGrid},
 * {@link Dpmo#selectPartitionsFromStatistics}, {@link Dpmo#selectTopKFromScores}): composed as the Spark API
 * composes them they give the very outputs of the C ABI's one-process forms ({@link Dpmo#discoverPartitions},
 * {@link Dpmo#discoverTopK}) from the same seed; argument errors draw and charge nothing. Registered into
 * {@link DpmoTest}'s run.
 *
 * <p>The one-process forms draw one key K (four words) from the caller's generator and run from the ChaCha20
 * stream keyed by K; with a ChaCha20 generator seeded by X, K is the first 32 bytes of ChaCha20's keystream for
 * the key X (block 0, nonce 0: the same in the IETF variant the JDK implements), so a generator seeded by K,
 * given to the pieces in turn, makes the one-process form's draws.
 */
final class DiscoveryPiecesTest {
    private DiscoveryPiecesTest() {}

    static byte[] seed(int s) {
        byte[] x = new byte[32];
        for (int i = 0; i < 32; i++) x[i] = (byte) (s * 31 + i);
        return x;
    }

    /** The generator of the one-process form's private stream for a ChaCha20 generator seeded by x. */
    static DpmoRng stream(byte[] x) {
        try {
            Cipher c = Cipher.getInstance("ChaCha20");
            c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(x, "ChaCha20"), new ChaCha20ParameterSpec(new byte[12], 0));
            return new DpmoRng(DpmoRng.CHACHA20, c.doFinal(new byte[32]));
        } catch (java.security.GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    /** 100 units: each has item 7 (twice), item 100 + u % 5, and unit 0 alone the item 99999; values. */
    static Object[] events() {
        long[] u = new long[301], i = new long[301];
        double[] v = new double[301];
        int n = 0;
        for (int x = 0; x < 100; x++) {
            u[n] = 1000 + x; i[n] = 7; v[n++] = 1.0;
            u[n] = 1000 + x; i[n] = 100 + x % 5; v[n++] = 2.0;
            u[n] = 1000 + x; i[n] = 7; v[n++] = 50.0;
        }
        u[n] = 1000; i[n] = 99999; v[n] = 1e9;
        return new Object[] {u, i, v};
    }

    /** Per item (a TreeMap by unsigned item): the sum of `what` over the rows. */
    static TreeMap<Long, Long> perItem(BoundContributions b, long[] what) {
        TreeMap<Long, Long> m = new TreeMap<>(Long::compareUnsigned);
        long[] items = b.items();
        for (int r = 0; r < items.length; r++) m.merge(items[r], what == null ? 1L : Math.max(0L, what[r]), Long::sum);
        return m;
    }

    static long[] keys(TreeMap<Long, Long> m, boolean reversed) {
        long[] out = m.keySet().stream().mapToLong(Long::longValue).toArray();
        if (reversed) for (int a = 0, z = out.length - 1; a < z; a++, z--) { long t = out[a]; out[a] = out[z]; out[z] = t; }
        return out;
    }

    static void register() {
        test("discovery pieces: partition selection from statistics = discoverPartitions, draw for draw", () -> {
            Object[] ev = events();
            long[] u = (long[]) ev[0], i = (long[]) ev[1];
            int differs = 0;
            for (int mech = Dpmo.PARTITION_TRUNCATED_GEOMETRIC; mech <= Dpmo.PARTITION_WEIGHTED_GAUSSIAN; mech++) {
                long g = Dpmo.partitionWeightGrid(mech, 1, 0.3, 0.2, 2);
                check(mech == Dpmo.PARTITION_WEIGHTED_GAUSSIAN ? g > 0 : g == 0, "grid " + g);
                for (int s = 0; s < 30; s++) {
                    long[] one = Dpmo.discoverPartitions(new DpmoRng(DpmoRng.CHACHA20, seed(s)), u, i, 2, 0.3, 0.2,
                            mech, 1, null);
                    DpmoRng two = stream(seed(s));
                    BoundContributions b = Dpmo.boundContributions(two, u, i, null, 2, 1, 0, 0, g);
                    TreeMap<Long, Long> st = perItem(b, mech == Dpmo.PARTITION_WEIGHTED_GAUSSIAN ? b.weights() : null);
                    // Given in descending order: the method sorts (the same draws whatever order they came in).
                    long[] items = keys(st, true);
                    long[] stats = Arrays.stream(items).map(st::get).toArray();
                    long[] pieces = Dpmo.selectPartitionsFromStatistics(two, items, stats, 2, 0.3, 0.2, mech, null);
                    check(Arrays.equals(one, pieces), "mechanism " + mech + " seed " + s + ": "
                            + Arrays.toString(one) + " vs " + Arrays.toString(pieces));
                    if (one.length != 6) differs++;
                }
            }
            check(differs > 0, "the decisions never varied: a vacuous comparison");
        });

        test("discovery pieces: top-k from scores = discoverTopK, draw for draw (every score)", () -> {
            Object[] ev = events();
            long[] u = (long[]) ev[0], i = (long[]) ev[1];
            double[] v = (double[]) ev[2];
            int differs = 0;
            for (int score = Dpmo.SCORE_UNITS; score <= Dpmo.SCORE_SUM; score++) {
                double[] vals = score == Dpmo.SCORE_SUM ? v : null;
                double hi = score == Dpmo.SCORE_SUM ? 10.0 : 0.0;
                for (int s = 0; s < 30; s++) {
                    TopKFromEvents one = Dpmo.discoverTopK(new DpmoRng(DpmoRng.CHACHA20, seed(100 + s)), u, i, vals,
                            score, 3, 4, 2, 2, 0.0, hi, 0.6, 0.1, null);
                    DpmoRng two = stream(seed(100 + s));
                    BoundContributions b = Dpmo.boundContributions(two, u, i, vals, 2, 2, 0.0, hi, 0);
                    TreeMap<Long, Long> sc = perItem(b, score == Dpmo.SCORE_UNITS ? null
                            : score == Dpmo.SCORE_EVENTS ? b.events() : b.sumUnits());
                    long[] items = keys(sc, true);
                    BigInteger[] scores = Arrays.stream(items).mapToObj(x -> BigInteger.valueOf(sc.get(x)))
                            .toArray(BigInteger[]::new);
                    TopKFromEvents pieces = Dpmo.selectTopKFromScores(two, items, scores, score, 3, 4, 2, 2, 0.0, hi,
                            0.6, 0.1, null);
                    check(Arrays.equals(one.items(), pieces.items()) && one.stopped() == pieces.stopped()
                            && one.epsilon() == pieces.epsilon() && one.delta() == pieces.delta(),
                            "score " + score + " seed " + s + ": " + one + " vs " + pieces);
                    if (one.items().length != 3 || one.items()[0] != 7) differs++;
                }
            }
            check(differs > 0, "the outputs never varied: a vacuous comparison");
        });

        test("discovery pieces: rows, weights, and errors that draw and charge nothing", () -> {
            Object[] ev = events();
            long[] u = (long[]) ev[0], i = (long[]) ev[1];
            BoundContributions b = Dpmo.boundContributions(DpmoTest.rng(3), u, i, null, 2, 1, 0, 0, 1024);
            check(b.size() == 200, "rows " + b.size());
            for (int r = 0; r < b.size(); r++) {
                check(b.unitItems()[r] == 2 && b.weights()[r] == 724 && b.events()[r] == 1, "row " + r);
            }
            long[] items = {1, 2, -1}; // -1 is 2^64 - 1: the largest item, unsigned
            long[] stats = {50, 60, 70};
            BigInteger[] scores = {BigInteger.valueOf(50), BigInteger.valueOf(60), BigInteger.valueOf(70)};
            PrivacyBudget budget = new PrivacyBudget(10.0, 1e-3);
            DpmoRng r = DpmoTest.rng(5);
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectPartitionsFromStatistics(r, items, stats, 2, 1.0,
                    1e-6, Dpmo.PARTITION_SIPS, budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPartitionsFromStatistics(r, longs(1, 1), longs(1, 1),
                    2, 1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN, budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPartitionsFromStatistics(r, items, longs(1, 0, 1),
                    2, 1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN, budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPartitionsFromStatistics(r, items, longs(1, -1, 1),
                    2, 1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN, budget));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.selectPartitionsFromStatistics(r, items, longs(1, 1), 2,
                    1.0, 1e-6, Dpmo.PARTITION_GAUSSIAN, budget));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectPartitionsFromStatistics(r, items, stats, 2, 0.0,
                    1e-6, Dpmo.PARTITION_GAUSSIAN, budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.partitionWeightGrid(Dpmo.PARTITION_GAUSSIAN, 2, 1.0,
                    1e-6, 2));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKFromScores(r, longs(1, 1),
                    new BigInteger[] {BigInteger.ONE, BigInteger.ONE}, Dpmo.SCORE_UNITS, 1, 2, 2, 1, 0, 0, 1.0, 1e-6,
                    budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKFromScores(r, longs(1),
                    new BigInteger[] {BigInteger.ONE.shiftLeft(120)}, Dpmo.SCORE_UNITS, 1, 2, 2, 1, 0, 0, 1.0, 1e-6,
                    budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKFromScores(r, longs(1),
                    new BigInteger[] {BigInteger.valueOf(-1)}, Dpmo.SCORE_UNITS, 1, 2, 2, 1, 0, 0, 1.0, 1e-6, budget));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKFromScores(r, items, scores, Dpmo.SCORE_SUM,
                    1, 2, 2, 1, 0, 0, 1.0, 1e-6, budget)); // a sum without a clamp
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKFromScores(r, items, scores,
                    Dpmo.SCORE_UNITS, 3, 2, 2, 1, 0, 0, 1.0, 1e-6, budget)); // k > k̄
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectTopKFromScores(r, items,
                    new BigInteger[] {null, null, null}, Dpmo.SCORE_UNITS, 1, 2, 2, 1, 0, 0, 1.0, 1e-6, budget));
            DiscoveryTest.unchanged(budget, r, 5);
            // A refused charge draws nothing either.
            PrivacyBudget small = new PrivacyBudget(0.5, 1e-3);
            DpmoRng r2 = DpmoTest.rng(6);
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectPartitionsFromStatistics(r2, items, stats, 2, 1.0,
                    1e-6, Dpmo.PARTITION_GAUSSIAN, small));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectTopKFromScores(r2, items, scores,
                    Dpmo.SCORE_UNITS, 1, 2, 2, 1, 0, 0, 1.0, 1e-6, small));
            DiscoveryTest.unchanged(small, r2, 6);
            // Charges: (ε, δ) for partitions; pay what you get for the top-k.
            long[] kept = Dpmo.selectPartitionsFromStatistics(r, items, stats, 2, 1.0, 1e-6,
                    Dpmo.PARTITION_GAUSSIAN, budget);
            check(Arrays.equals(kept, items), Arrays.toString(kept)); // sorted unsigned: 1, 2, 2^64 - 1
            check(budget.spent() == 1.0 && budget.deltaSpent() == 1e-6, budget.toString());
            PrivacyBudget b2 = new PrivacyBudget(10.0, 1e-3);
            TopKFromEvents t = Dpmo.selectTopKFromScores(r, items, scores, Dpmo.SCORE_UNITS, 2, 2, 2, 1, 0, 0, 1.0,
                    1e-6, b2);
            check(b2.spent() == t.epsilon() && b2.deltaSpent() == 1e-6 && t.epsilon() <= 1.0, t + " " + b2);
        });
    }

    static long[] longs(long... v) {
        return v;
    }
}
