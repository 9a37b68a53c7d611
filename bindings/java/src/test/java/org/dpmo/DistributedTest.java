package org.dpmo;

import static org.dpmo.DpmoTest.check;
import static org.dpmo.DpmoTest.raises;
import static org.dpmo.DpmoTest.test;

import java.util.Arrays;

/**
 * The pieces of the exact distributed selection ({@link Dpmo#distributedPfPartition},
 * {@link Dpmo#distributedEmPartition}, {@link Dpmo#distributedChooseWeighted}) through JNI: the very draws of
 * Python's {@code dpmo.distributed} steps on the same key (the reference of ffi-tests/test_distributed.c, printed
 * by ffi-tests/distributed_reference.py), argument errors, the public rule for scores, and one key drawn by the
 * driver's choice whatever the weights. Registered into {@link DpmoTest}'s run.
 */
final class DistributedTest {
    private DistributedTest() {}

    static final long[] CANDS = {0, 2, 3, 5, 7, 8, 11, 12};
    static final double[] SCORES = {1.0, 3.0, 2.5, 3.0, -1.0, 0.25, 2.0, -3.5};

    /** {stream, epsilon, excluded mask, heads, pick}. */
    static final double[][] PF = {
        {0, 0.5, 0, 5, 2},
        {0, 2.0, 0, 3, 2},
        {0, 7.0, 2, 1, 5},
        {0, 1.0, 40, 4, 0},
        {1, 0.5, 0, 6, 11},
        {1, 2.0, 0, 4, 11},
        {1, 7.0, 2, 2, 5},
        {1, 1.0, 40, 4, 11},
        {2, 0.5, 0, 6, 5},
        {2, 2.0, 0, 3, 5},
        {2, 7.0, 2, 1, 5},
        {2, 1.0, 40, 2, 11},
        {3, 0.5, 0, 5, 2},
        {3, 2.0, 0, 2, 2},
        {3, 7.0, 2, 1, 5},
        {3, 1.0, 40, 5, 0},
        {4, 0.5, 0, 4, 5},
        {4, 2.0, 0, 3, 5},
        {4, 7.0, 2, 1, 5},
        {4, 1.0, 40, 2, 2},
        {5, 0.5, 0, 4, 5},
        {5, 2.0, 0, 5, 3},
        {5, 7.0, 2, 1, 5},
        {5, 1.0, 40, 3, 3},
        {6, 0.5, 0, 5, 11},
        {6, 2.0, 0, 3, 5},
        {6, 7.0, 2, 1, 5},
        {6, 1.0, 40, 3, 11},
        {7, 0.5, 0, 5, 3},
        {7, 2.0, 0, 4, 2},
        {7, 7.0, 2, 1, 5},
        {7, 1.0, 40, 3, 2},
        {8, 0.5, 0, 4, 2},
        {8, 2.0, 0, 2, 5},
        {8, 7.0, 2, 1, 5},
        {8, 1.0, 40, 3, 3},
        {9, 0.5, 0, 4, 5},
        {9, 2.0, 0, 4, 2},
        {9, 7.0, 2, 1, 5},
        {9, 1.0, 40, 3, 2},
        {10, 0.5, 0, 7, 2},
        {10, 2.0, 0, 3, 3},
        {10, 7.0, 2, 1, 5},
        {10, 1.0, 40, 3, 3},
        {11, 0.5, 0, 7, 2},
        {11, 2.0, 0, 3, 3},
        {11, 7.0, 2, 1, 5},
        {11, 1.0, 40, 3, 3}
    };
    /** {proposal stream, coin stream, batch, epsilon, excluded mask, position, candidate} (total 14). */
    static final double[][] EM = {
        {1000, 2000, 1, 1.0, 0, -1, -1},
        {1000, 2000, 4, 0.5, 0, 3, 3},
        {1000, 2000, 64, 3.0, 10, 3, 3},
        {1000, 2000, 2, 9.0, 0, -1, -1},
        {1001, 2001, 1, 1.0, 0, -1, -1},
        {1001, 2001, 4, 0.5, 0, 2, 0},
        {1001, 2001, 64, 3.0, 10, 13, 3},
        {1001, 2001, 2, 9.0, 0, -1, -1},
        {1002, 2002, 1, 1.0, 0, 0, 3},
        {1002, 2002, 4, 0.5, 0, 0, 3},
        {1002, 2002, 64, 3.0, 10, 1, 3},
        {1002, 2002, 2, 9.0, 0, -1, -1},
        {1003, 2003, 1, 1.0, 0, 0, 3},
        {1003, 2003, 4, 0.5, 0, 0, 3},
        {1003, 2003, 64, 3.0, 10, 0, 3},
        {1003, 2003, 2, 9.0, 0, -1, -1},
        {1004, 2004, 1, 1.0, 0, -1, -1},
        {1004, 2004, 4, 0.5, 0, 3, 7},
        {1004, 2004, 64, 3.0, 10, 13, 3},
        {1004, 2004, 2, 9.0, 0, -1, -1},
        {1005, 2005, 1, 1.0, 0, 0, 0},
        {1005, 2005, 4, 0.5, 0, 1, 2},
        {1005, 2005, 64, 3.0, 10, 22, 11},
        {1005, 2005, 2, 9.0, 0, 1, 2},
        {1006, 2006, 1, 1.0, 0, -1, -1},
        {1006, 2006, 4, 0.5, 0, 1, 0},
        {1006, 2006, 64, 3.0, 10, 10, 3},
        {1006, 2006, 2, 9.0, 0, -1, -1},
        {1007, 2007, 1, 1.0, 0, -1, -1},
        {1007, 2007, 4, 0.5, 0, 2, 0},
        {1007, 2007, 64, 3.0, 10, 11, 11},
        {1007, 2007, 2, 9.0, 0, -1, -1},
        {1008, 2008, 1, 1.0, 0, -1, -1},
        {1008, 2008, 4, 0.5, 0, -1, -1},
        {1008, 2008, 64, 3.0, 10, 30, 3},
        {1008, 2008, 2, 9.0, 0, -1, -1},
        {1009, 2009, 1, 1.0, 0, -1, -1},
        {1009, 2009, 4, 0.5, 0, 2, 2},
        {1009, 2009, 64, 3.0, 10, 18, 11},
        {1009, 2009, 2, 9.0, 0, -1, -1}
    };
    /** Successive choices of the generator of stream 77 of the key, weights {3, 0, 5, 1, 7}. */
    static final int[] CHOOSE = {3, 4, 2, 4, 4, 4, 4, 2, 4, 2, 4, 4, 3, 4, 0, 2, 2, 0, 2, 2, 3, 4, 2, 4, 2, 4, 4, 2, 2, 3, 4, 0, 4, 3, 0, 4, 2, 0, 3, 2};

    static byte[] key() {
        byte[] k = new byte[32];
        for (int i = 0; i < 32; i++) k[i] = (byte) i;
        return k;
    }

    static long[] excluded(int mask) {
        return java.util.stream.IntStream.range(0, 8).filter(i -> (mask >> i & 1) != 0).mapToLong(i -> CANDS[i])
                .toArray();
    }

    static void register() {
        test("distributed: the partition steps make Python's draws from the same key", () -> {
            for (double[] r : PF) {
                long[] got = Dpmo.distributedPfPartition(key(), (long) r[0], CANDS, SCORES, 3.0, 1.0, r[1],
                        excluded((int) r[2]));
                check(got[0] == (long) r[3] && got[1] == (long) r[4], "pf " + Arrays.toString(r) + ": "
                        + Arrays.toString(got));
            }
            for (double[] r : EM) {
                long[] got = Dpmo.distributedEmPartition(key(), (long) r[0], (long) r[1], 14, (long) r[2], CANDS, SCORES,
                        3.0, 1.0, r[3], excluded((int) r[4]));
                check(got[0] == (long) r[5] && got[1] == (long) r[6], "em " + Arrays.toString(r) + ": "
                        + Arrays.toString(got));
            }
        });
        test("distributed: errors, the public rule, one key per weighted choice", () -> {
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.distributedPfPartition(new byte[31], 0, CANDS, SCORES,
                    3.0, 1.0, 1.0, null));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.distributedPfPartition(null, 0, CANDS, SCORES, 3.0, 1.0,
                    1.0, null));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.distributedPfPartition(key(), 0, CANDS, new double[2],
                    3.0, 1.0, 1.0, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.distributedPfPartition(key(), 0, new long[] {2, 1},
                    new double[2], 3.0, 1.0, 1.0, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.distributedPfPartition(key(), 0, CANDS, SCORES, 2.0,
                    1.0, 1.0, null));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.distributedPfPartition(key(), 0, CANDS, SCORES, 3.0,
                    1.0, 0.0, null));
            raises(DpmoException.NON_FINITE_INPUT, () -> Dpmo.distributedEmPartition(key(), 0, 1, 14, 4, CANDS,
                    SCORES, Double.NaN, 1.0, 1.0, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.distributedEmPartition(key(), 0, 1, 12, 4, CANDS,
                    SCORES, 3.0, 1.0, 1.0, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.distributedEmPartition(key(), 0, 1, 14, -1, CANDS,
                    SCORES, 3.0, 1.0, 1.0, null));
            double[] bad = {0.0, Double.NaN, 1.0, Double.NEGATIVE_INFINITY};
            double[] rule = {0.0, -Double.MAX_VALUE, 1.0, -Double.MAX_VALUE};
            long[] c = {0, 1, 2, 3};
            for (long s = 0; s < 10; s++) {
                check(Arrays.equals(Dpmo.distributedPfPartition(key(), s, c, bad, 1.0, 1.0, 0.5, null),
                        Dpmo.distributedPfPartition(key(), s, c, rule, 1.0, 1.0, 0.5, null)), "pf: NaN is -MAX");
                check(Arrays.equals(Dpmo.distributedEmPartition(key(), s, s + 9, 4, 8, c, bad, 1.0, 1.0, 0.5, null),
                        Dpmo.distributedEmPartition(key(), s, s + 9, 4, 8, c, rule, 1.0, 1.0, 0.5, null)),
                        "em: NaN is -MAX");
            }
            DpmoRng a = DpmoRng.seeded(DpmoRng.CHACHA20, 5), b = DpmoRng.seeded(DpmoRng.CHACHA20, 5);
            check(Dpmo.distributedChooseWeighted(a, new long[] {1}) == 0, "one weight");
            int j = Dpmo.distributedChooseWeighted(b, new long[] {1000, 0, 3});
            check(j == 0 || j == 2, "never a zero weight");
            check(Arrays.equals(a.sampleDiscreteLaplace(1.0, 1.0, 4),
                    b.sampleDiscreteLaplace(1.0, 1.0, 4)), "one key whatever the weights");
            DpmoRng g = DpmoRng.seeded(DpmoRng.CHACHA20, 6), h = DpmoRng.seeded(DpmoRng.CHACHA20, 6);
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.distributedChooseWeighted(g, new long[] {0, 0}));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.distributedChooseWeighted(g, new long[] {-1, 2}));
            raises(DpmoException.OVERFLOW, () -> Dpmo.distributedChooseWeighted(g, new long[] {Long.MAX_VALUE,
                    Long.MAX_VALUE, 2}));
            check(Arrays.equals(g.sampleDiscreteLaplace(1.0, 1.0, 4),
                    h.sampleDiscreteLaplace(1.0, 1.0, 4)), "errors draw nothing");
        });
    }
}
