package org.dpmo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Java binding's test suite, run on the real JVM without any framework (Maven Central is not reachable
 * from CI). Each test is a named body; the last line printed is "N passed, N failed" and the exit status is
 * non-zero when any test failed. Bad input must raise DpmoException with the right status: a JVM crash
 * would end the process and fail the run.
 */
public final class DpmoTest {
    interface Body {
        void run() throws Exception;
    }

    /** A selecting call on the bad data (clean = false) or on the data rewritten by the public rule. */
    interface Sel {
        int[] run(DpmoRng rng, PrivacyBudget budget, boolean clean);
    }

    private static final List<String> NAMES = new ArrayList<>();
    private static final List<Body> BODIES = new ArrayList<>();

    static void test(String name, Body body) {
        NAMES.add(name);
        BODIES.add(body);
    }

    // ------------------------------------------------------------------------------------ assertions

    static void check(boolean cond, String what) {
        if (!cond) throw new AssertionError(what);
    }

    static void close(double expected, double actual, double tol, String what) {
        if (!(Math.abs(expected - actual) <= tol)) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }

    static void closeAll(double[] expected, double[] actual, double tol, String what) {
        check(expected.length == actual.length, what + ": length " + expected.length + " vs " + actual.length);
        for (int i = 0; i < expected.length; i++) close(expected[i], actual[i], tol, what + "[" + i + "]");
    }

    /** The body must throw DpmoException with this status (anything else fails the test). */
    static void raises(int status, Body body) {
        try {
            body.run();
        } catch (DpmoException e) {
            if (e.status() != status) {
                throw new AssertionError("expected status " + status + " (" + Dpmo.statusMessage(status)
                        + "), got " + e.status() + " (" + e.getMessage() + ")");
            }
            if (!e.getMessage().equals(Dpmo.statusMessage(status))) {
                throw new AssertionError("message is not dpmo_status_message: " + e.getMessage());
            }
            return;
        } catch (Throwable t) {
            throw new AssertionError("expected DpmoException " + status + ", got " + t, t);
        }
        throw new AssertionError("expected DpmoException " + status + ", nothing was thrown");
    }

    /** The body must throw DpmoException with one of these statuses. */
    static void raisesOneOf(int[] statuses, Body body) {
        for (int st : statuses) {
            try {
                raises(st, body);
                return;
            } catch (AssertionError e) {
                // try the next one
            }
        }
        throw new AssertionError("expected DpmoException with one of " + Arrays.toString(statuses));
    }

    /** Cells: z < -half, z = -half..half, z > half, of the discrete Laplace with P(z) ∝ q^|z|. */
    static double[] discreteLaplace(double q, int half) {
        double[] p = new double[2 * half + 3];
        double norm = (1 - q) / (1 + q);
        for (int z = -half; z <= half; z++) p[z + half + 1] = norm * Math.pow(q, Math.abs(z));
        double tail = Math.pow(q, half + 1) / (1 + q); // Σ_{z > half} norm q^z
        p[0] = tail;
        p[2 * half + 2] = tail;
        return p;
    }

    static int argmax(double[] v) {
        int b = 0;
        for (int i = 1; i < v.length; i++) if (v[i] > v[b]) b = i;
        return b;
    }

    static double sum(double[] v) {
        double s = 0;
        for (double x : v) s += x;
        return s;
    }

    /** Softmax of c · v, the exponential mechanism's distribution. */
    static double[] softmax(double[] v, double c) {
        double mx = Double.NEGATIVE_INFINITY;
        for (double x : v) mx = Math.max(mx, c * x);
        double[] p = new double[v.length];
        double z = 0;
        for (int i = 0; i < v.length; i++) z += p[i] = Math.exp(c * v[i] - mx);
        for (int i = 0; i < v.length; i++) p[i] /= z;
        return p;
    }

    /**
     * Chi-square goodness of fit at α = 1e-6 (Wilson–Hilferty quantile, z = 4.7534): a correct sampler fails
     * once in a million runs; a wrong distribution with these sample sizes fails for sure.
     */
    static void chiSquare(int[] counts, double[] p, String what) {
        long total = 0;
        for (int c : counts) total += c;
        double stat = 0;
        for (int i = 0; i < p.length; i++) {
            double e = p[i] * total;
            check(e >= 5, what + ": expected count " + e + " too small for the test");
            stat += (counts[i] - e) * (counts[i] - e) / e;
        }
        int df = p.length - 1;
        double a = 2.0 / (9.0 * df);
        double crit = df * Math.pow(1 - a + 4.7534 * Math.sqrt(a), 3);
        check(stat < crit, what + ": chi-square " + stat + " >= " + crit + " (counts " + Arrays.toString(counts)
                + ", probabilities " + Arrays.toString(p) + ")");
    }

    static DpmoRng rng(long seed) {
        return DpmoRng.seeded(DpmoRng.XOSHIRO256PP, seed);
    }

    static void distinct(int[] picks, int n, int k, String what) {
        check(picks.length == k, what + ": " + picks.length + " picks, expected " + k);
        Set<Integer> seen = new HashSet<>();
        for (int p : picks) {
            check(p >= 0 && p < n, what + ": index " + p + " out of range");
            check(seen.add(p), what + ": index " + p + " picked twice");
        }
    }

    // ------------------------------------------------------------------------------------------ data

    static final double[] SCORES = {120, 95, 130, 40};
    static final double[] SMALL = {0.0, 1.0, 2.5, 1.5};
    /** 4 candidates × 2 objectives: A(3,3) dominates all; B(1,2) and C(2,1) dominate D(0,0). */
    static final double[] UTIL = {3, 3, 1, 2, 2, 1, 0, 0};
    static final double[] PS_TEXTBOOK = {0, -1, -1, -3};
    static final int F = Dpmo.FLOAT;
    /** The selectors that run exactly (report-noisy-max with Laplace noise needs FLOAT). */
    static final int[] EXACT_SELECTORS = {0, 1, 3, 4};
    /** Every selector in both arithmetics: the exact ones, and all five in floating point. */
    static final int[] ALL_SELECTORS = {0, 1, 3, 4, 0 | F, 1 | F, 2 | F, 3 | F, 4 | F};

    static Sensitivity ones(int n) {
        double[] v = new double[n];
        Arrays.fill(v, 1.0);
        return Sensitivity.perCandidate(v, 1.0, 16);
    }

    static Sensitivity[] onesFor(int n, int m) {
        Sensitivity[] d = new Sensitivity[m];
        for (int i = 0; i < m; i++) d[i] = ones(n);
        return d;
    }

    // ------------------------------------------------------------------------------------------ tests

    static void register() {
        test("version and status messages", () -> {
            check(Dpmo.version().matches("\\d+\\.\\d+\\.\\d+.*"), "version " + Dpmo.version());
            check(Dpmo.statusMessage(0).equals("Success."), Dpmo.statusMessage(0));
            check(Dpmo.statusMessage(DpmoException.BUDGET_EXHAUSTED).contains("budget"), "budget message");
            check(Dpmo.statusMessage(999).equals("Unknown dpmo status code."), "unknown status");
            check(Dpmo.statusMessage(-1).equals("Unknown dpmo status code."), "negative status");
        });

        // ---------------------------------------------------------------------------- generator

        test("generator: SecureRandom default is ChaCha20 and unpredictable", () -> {
            DpmoRng a = new DpmoRng(), b = new DpmoRng();
            check(a.kind() == DpmoRng.CHACHA20, "default kind");
            check(!Arrays.equals(a.sample(DpmoRng.DIST_UNIFORM, 8), b.sample(DpmoRng.DIST_UNIFORM, 8)),
                    "two secure generators agree");
            check(DpmoRng.secure(DpmoRng.XOSHIRO256PP).kind() == DpmoRng.XOSHIRO256PP, "secure(kind)");
        });

        test("generator: explicit seeds reproduce, both kinds", () -> {
            byte[] seed = new byte[32];
            for (int i = 0; i < 32; i++) seed[i] = (byte) (7 * i + 1);
            for (int kind : new int[] {DpmoRng.CHACHA20, DpmoRng.XOSHIRO256PP}) {
                DpmoRng a = new DpmoRng(kind, seed), b = new DpmoRng(kind, seed);
                for (int dist = 0; dist < 4; dist++) {
                    check(Arrays.equals(a.sample(dist, 100), b.sample(dist, 100)), "kind " + kind + " dist " + dist);
                }
                int[] x = new int[200], y = new int[200];
                for (int i = 0; i < 200; i++) {
                    x[i] = Dpmo.selectExponential(a, SMALL, 1, 1);
                    y[i] = Dpmo.selectExponential(b, SMALL, 1, 1);
                }
                check(Arrays.equals(x, y), "same seed, same selections");
            }
            check(!Arrays.equals(new DpmoRng(seed).sample(0, 8),
                    new DpmoRng(DpmoRng.XOSHIRO256PP, seed).sample(0, 8)), "kinds differ");
            check(!Arrays.equals(rng(1).sample(0, 8), rng(2).sample(0, 8)), "seeds differ");
            check(rng(5).sample(0, 0).length == 0, "zero draws");
        });

        test("generator: samples lie in their support", () -> {
            DpmoRng r = rng(3);
            for (double u : r.sample(DpmoRng.DIST_UNIFORM, 10000)) check(u > 0 && u < 1, "uniform " + u);
            for (double e : r.sample(DpmoRng.DIST_EXPONENTIAL, 10000)) check(e >= 0 && Double.isFinite(e), "exp " + e);
            double mean = sum(r.sample(DpmoRng.DIST_LAPLACE, 100000)) / 100000;
            close(0, mean, 0.03, "Laplace mean");
            mean = sum(r.sample(DpmoRng.DIST_GUMBEL, 100000)) / 100000;
            close(0.5772156649, mean, 0.03, "Gumbel mean (Euler-Mascheroni)");
        });

        test("isochronous: charged epsilon, the same distribution, a fixed consumption of the generator", () -> {
            double unit = Math.scalb(1.0, -40);
            check(Dpmo.isochronousRunEpsilon(Dpmo.SELECTOR_EXPONENTIAL, 1.0, 10, 1) == 1.0 - unit, "run EM");
            check(Dpmo.isochronousRunEpsilon(Dpmo.SELECTOR_PERMUTE_AND_FLIP, 0.5, 10, 2) == 0.25 - 11 * unit,
                    "run P&F");
            raises(DpmoException.UNSUPPORTED,
                    () -> Dpmo.isochronousRunEpsilon(Dpmo.SELECTOR_NOISY_MAX_LAPLACE, 1.0, 10, 1));
            PrivacyBudget b = new PrivacyBudget(1.0);
            Dpmo.select(rng(41), Dpmo.SELECTOR_EXPONENTIAL | Dpmo.ISOCHRONOUS, SMALL, 1, 0.5, b);
            check(b.spent() == 0.5, "charged " + b.spent());
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.select(rng(1),
                    Dpmo.SELECTOR_EXPONENTIAL | Dpmo.ISOCHRONOUS | Dpmo.FLOAT, SMALL, 1, 1, null));
            DpmoRng r = rng(42);
            int[] em = new int[4], pf = new int[4];
            for (int i = 0; i < 20000; i++) {
                em[Dpmo.select(r, Dpmo.SELECTOR_EXPONENTIAL | Dpmo.ISOCHRONOUS, SMALL, 1, 1, null)]++;
                pf[Dpmo.select(r, Dpmo.SELECTOR_PERMUTE_AND_FLIP | Dpmo.ISOCHRONOUS, SMALL, 1, 1, null)]++;
            }
            chiSquare(em, Dpmo.exponentialProbabilities(SMALL, 1, 1), "isochronous exponential mechanism");
            int[] exact = new int[4];
            for (int i = 0; i < 20000; i++) exact[Dpmo.selectPermuteAndFlip(r, SMALL, 1, 1)]++;
            double[] p = new double[4];
            for (int i = 0; i < 4; i++) p[i] = exact[i] / 20000.0;
            check(Math.abs(pf[3] / 20000.0 - p[3]) < 0.03 && Math.abs(pf[2] / 20000.0 - p[2]) < 0.03,
                    "isochronous permute-and-flip against the exact one");
            // Tied counts against tied + 1: the generator advances the same, in every arithmetic.
            double[] tied = new double[100];
            Arrays.fill(tied, 5.0);
            double[] plus = tied.clone();
            plus[17] = 6.0;
            for (int mode : new int[] {0, Dpmo.FLOAT, Dpmo.ISOCHRONOUS}) {
                for (int sel : new int[] {Dpmo.SELECTOR_EXPONENTIAL, Dpmo.SELECTOR_PERMUTE_AND_FLIP,
                        Dpmo.SELECTOR_NOISY_MAX_GUMBEL, Dpmo.SELECTOR_NOISY_MAX_EXPONENTIAL}) {
                    DpmoRng a = rng(7), c = rng(7);
                    Dpmo.select(a, sel | mode, tied, 1, 1, null);
                    Dpmo.select(c, sel | mode, plus, 1, 1, null);
                    check(Arrays.equals(a.sample(DpmoRng.DIST_UNIFORM, 4), c.sample(DpmoRng.DIST_UNIFORM, 4)),
                            "consumption, selector " + sel + ", mode " + mode);
                    a = rng(8);
                    c = rng(8);
                    Dpmo.selectTopK(a, sel | mode, tied, 1, 1, 3, null);
                    Dpmo.selectTopK(c, sel | mode, plus, 1, 1, 3, null);
                    check(Arrays.equals(a.sample(DpmoRng.DIST_UNIFORM, 4), c.sample(DpmoRng.DIST_UNIFORM, 4)),
                            "top-k consumption, selector " + sel + ", mode " + mode);
                }
            }
        });

        test("generator: seeded by the operating system (dpmo_rng_init_os)", () -> {
            DpmoRng a = DpmoRng.fromOs(), b = DpmoRng.fromOs();
            check(a.kind() == DpmoRng.CHACHA20, "kind");
            check(!Arrays.equals(a.sample(DpmoRng.DIST_UNIFORM, 8), b.sample(DpmoRng.DIST_UNIFORM, 8)), "two agree");
            int j = Dpmo.selectExponential(a, SCORES, 1, 1);
            check(j >= 0 && j < 4, "selects");
        });

        test("statistics: discrete Laplace draws match P(z) = (1 - q) / (1 + q) q^|z|, q = exp(-g / scale)", () -> {
            DpmoRng r = rng(4242);
            int draws = 200000, half = 8;
            long[] z = r.sampleDiscreteLaplace(2.0, 1.0, draws);
            check(z.length == draws, "count");
            // cells -half..half and the two tails beyond
            int[] c = new int[2 * half + 3];
            for (long v : z) c[v < -half ? 0 : v > half ? 2 * half + 2 : (int) v + half + 1]++;
            chiSquare(c, discreteLaplace(Math.exp(-1 / 2.0), half), "discrete Laplace, scale 2");
            // granularity scales the same way: scale 1, granularity 0.5 is q = exp(-0.5) too
            long[] z2 = r.sampleDiscreteLaplace(1.0, 0.5, draws);
            int[] c2 = new int[2 * half + 3];
            for (long v : z2) c2[v < -half ? 0 : v > half ? 2 * half + 2 : (int) v + half + 1]++;
            chiSquare(c2, discreteLaplace(Math.exp(-0.5), half), "discrete Laplace, granularity 0.5");
            // the test has power: scale 2.2 is rejected
            boolean rejected;
            try {
                chiSquare(c, discreteLaplace(Math.exp(-1 / 2.2), half), "scale 2.2");
                rejected = false;
            } catch (AssertionError expected) {
                rejected = true;
            }
            check(rejected, "the chi-square test accepted the wrong scale");
            check(r.sampleDiscreteLaplace(1, 1, 0).length == 0, "zero draws");
            raises(DpmoException.INVALID_ARGUMENT, () -> r.sampleDiscreteLaplace(0, 1, 10));
            raises(DpmoException.INVALID_ARGUMENT, () -> r.sampleDiscreteLaplace(1, Double.NaN, 10));
            raises(DpmoException.INVALID_ARGUMENT, () -> r.sampleDiscreteLaplace(1e12, 1, 10));
            raises(DpmoException.INVALID_ARGUMENT, () -> r.sampleDiscreteLaplace(1, 1, -1));
        });

        test("generator: bad seeds and kinds raise", () -> {
            raises(DpmoException.NULL_POINTER, () -> new DpmoRng(null));
            raises(DpmoException.LENGTH_MISMATCH, () -> new DpmoRng(new byte[31]));
            raises(DpmoException.LENGTH_MISMATCH, () -> new DpmoRng(new byte[33]));
            raises(DpmoException.INVALID_ARGUMENT, () -> new DpmoRng(2, new byte[32]));
            raises(DpmoException.INVALID_ARGUMENT, () -> new DpmoRng(-1, new byte[32]));
            raises(DpmoException.INVALID_ARGUMENT, () -> rng(1).sample(4, 10));
            raises(DpmoException.INVALID_ARGUMENT, () -> rng(1).sample(DpmoRng.DIST_UNIFORM, -1));
        });

        // ------------------------------------------------------------------ single objective, global

        test("exponential probabilities are exact", () -> {
            double e = Math.E;
            closeAll(new double[] {1 / (1 + e), e / (1 + e)}, Dpmo.exponentialProbabilities(new double[] {0, 1}, 1, 2),
                    1e-15, "P({0,1}, eps 2)");
            double[] p = Dpmo.exponentialProbabilities(SCORES, 10, 0.5);
            closeAll(softmax(SCORES, 0.5 / 20), p, 1e-14, "softmax");
            close(1, sum(p), 1e-14, "sum");
            // huge scores stay finite (log space)
            double[] q = Dpmo.exponentialProbabilities(new double[] {1e300, -1e300, 1e300}, 1, 1);
            closeAll(new double[] {0.5, 0, 0.5}, q, 1e-15, "extremes");
            closeAll(new double[] {1}, Dpmo.exponentialProbabilities(new double[] {42}, 1, 1), 0, "n = 1");
        });

        test("every selector returns a valid index and finds a clear winner", () -> {
            DpmoRng r = rng(11);
            double[] clear = {0, 0, 100, 0, 0};
            for (int sel : ALL_SELECTORS) {
                for (int i = 0; i < 50; i++) {
                    int j = Dpmo.select(r, sel, SCORES, 1, 0.1, null);
                    check(j >= 0 && j < SCORES.length, "selector " + sel + " index " + j);
                }
                check(Dpmo.select(r, sel, clear, 1, 50, null) == 2, "selector " + sel + " misses the winner");
            }
            check(Dpmo.selectExponential(r, clear, 1, 50) == 2, "exponential");
            check(Dpmo.selectPermuteAndFlip(r, clear, 1, 50) == 2, "permute-and-flip");
            for (int noise : new int[] {1, 2, 0 | F, 1 | F, 2 | F}) {
                check(Dpmo.selectNoisyMax(r, clear, 1, 50, noise) == 2, "noise " + noise);
            }
            check(Dpmo.selectExponential(r, new double[] {5}, 1, 1) == 0, "n = 1");
        });

        test("statistics: exponential mechanism and noisy-max Gumbel match the exact probabilities", () -> {
            double[] p = Dpmo.exponentialProbabilities(SMALL, 1, 1.5);
            DpmoRng r = rng(2024);
            int[] ce = new int[4], cg = new int[4], fe = new int[4], fg = new int[4];
            for (int i = 0; i < 200000; i++) {
                ce[Dpmo.selectExponential(r, SMALL, 1, 1.5)]++;
                cg[Dpmo.selectNoisyMax(r, SMALL, 1, 1.5, Dpmo.NOISE_GUMBEL)]++;
                fe[Dpmo.select(r, Dpmo.SELECTOR_EXPONENTIAL | F, SMALL, 1, 1.5, null)]++;
                fg[Dpmo.selectNoisyMax(r, SMALL, 1, 1.5, Dpmo.NOISE_GUMBEL | F)]++;
            }
            chiSquare(ce, p, "exponential (exact)");
            chiSquare(cg, p, "noisy-max Gumbel (exact)");
            chiSquare(fe, p, "exponential (float)");
            chiSquare(fg, p, "noisy-max Gumbel (float)");
            // the test has power: probabilities at 1.2 epsilon are rejected
            boolean rejected;
            try {
                chiSquare(ce, Dpmo.exponentialProbabilities(SMALL, 1, 1.8), "1.2 eps");
                rejected = false;
            } catch (AssertionError expected) {
                rejected = true;
            }
            check(rejected, "the chi-square test accepted the wrong epsilon");
        });

        test("statistics: permute-and-flip favours the best at least as much as exponential", () -> {
            DpmoRng r = rng(77);
            int pf = 0, em = 0;
            for (int i = 0; i < 50000; i++) {
                if (Dpmo.selectPermuteAndFlip(r, SMALL, 1, 1.5) == 2) pf++;
                if (Dpmo.selectNoisyMax(r, SMALL, 1, 1.5, Dpmo.NOISE_EXPONENTIAL) == 2) em++;
            }
            double pBest = Dpmo.exponentialProbabilities(SMALL, 1, 1.5)[2];
            check(pf / 50000.0 > pBest, "permute-and-flip " + pf / 50000.0 + " vs exponential " + pBest);
            check(Math.abs(pf - em) / 50000.0 < 0.02, "noisy-max Exponential = permute-and-flip: " + pf + " vs " + em);
        });

        test("top-k: k distinct indices in pick order, permutation at k = n", () -> {
            DpmoRng r = rng(5);
            double[] clear = {0, 300, 100, 200, -50};
            for (int sel : ALL_SELECTORS) {
                distinct(Dpmo.selectTopK(r, sel, SCORES, 1, 1, 2), 4, 2, "selector " + sel);
                distinct(Dpmo.selectTopK(r, sel, SCORES, 1, 1, 4), 4, 4, "permutation " + sel);
                check(Arrays.equals(new int[] {1, 3, 2}, Dpmo.selectTopK(r, sel, clear, 1, 300, 3)),
                        "selector " + sel + " order");
            }
            for (int flags : new int[] {0, F}) {
                distinct(Dpmo.selectTopKGumbel(r, SCORES, 1, 1, 3, flags, null), 4, 3, "gumbel " + flags);
                check(Arrays.equals(new int[] {1, 3, 2}, Dpmo.selectTopKGumbel(r, clear, 1, 300, 3, flags, null)),
                        "gumbel order " + flags);
            }
            check(Arrays.equals(new int[] {0}, Dpmo.selectTopK(r, 0, new double[] {1}, 1, 1, 1)), "n = k = 1");
        });

        test("statistics: Gumbel top-2 (exact peeling and float one-shot) equals sequential exponential top-2", () -> {
            DpmoRng r = rng(99);
            int[][] a = new int[4][4], b = new int[4][4], f = new int[4][4];
            for (int i = 0; i < 60000; i++) {
                int[] x = Dpmo.selectTopKGumbel(r, SMALL, 1, 3, 2, null);
                int[] y = Dpmo.selectTopK(r, Dpmo.SELECTOR_EXPONENTIAL, SMALL, 1, 3, 2, null);
                int[] z = Dpmo.selectTopKGumbel(r, SMALL, 1, 3, 2, F, null);
                a[x[0]][x[1]]++;
                b[y[0]][y[1]]++;
                f[z[0]][z[1]]++;
            }
            // exact ordered-pair distribution: first at eps/2, second among the rest at eps/2
            double[] p1 = softmax(SMALL, 0.75);
            List<Double> pairs = new ArrayList<>();
            int[] ca = new int[12], cb = new int[12], cf = new int[12];
            int cell = 0;
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 4; j++) {
                    if (i == j) continue;
                    double z = 0;
                    for (int l = 0; l < 4; l++) if (l != i) z += Math.exp(0.75 * SMALL[l]);
                    pairs.add(p1[i] * Math.exp(0.75 * SMALL[j]) / z);
                    ca[cell] = a[i][j];
                    cb[cell] = b[i][j];
                    cf[cell] = f[i][j];
                    cell++;
                }
            }
            double[] p = pairs.stream().mapToDouble(Double::doubleValue).toArray();
            chiSquare(ca, p, "gumbel top-2 (exact)");
            chiSquare(cb, p, "sequential top-2");
            chiSquare(cf, p, "gumbel top-2 (float one-shot)");
        });

        // ------------------------------------------------------------------ local dampening

        test("local dampening: delta = Delta reduces to the exponential mechanism", () -> {
            for (int d : new int[] {Dpmo.DAMPENING_PLAIN, Dpmo.DAMPENING_SHIFTED}) {
                closeAll(Dpmo.exponentialProbabilities(SMALL, 1, 1.3),
                        Dpmo.localDampeningProbabilities(SMALL, ones(4), d, 1.3), 1e-12, "dampening " + d);
            }
        });

        test("local dampening: per-candidate, table and shared delta; dampened scores", () -> {
            double[] u = {10, 9, 3, 1};
            Sensitivity pc = Sensitivity.perCandidate(new double[] {0.5, 0.5, 1, 1}, 2, 8);
            double[] tab = new double[4 * 3];
            for (int r = 0; r < 4; r++) for (int t = 0; t < 3; t++) tab[r * 3 + t] = Math.min(2, 0.5 + 0.5 * t);
            Sensitivity table = Sensitivity.table(tab, 3, 2, 8);
            Sensitivity shared = Sensitivity.shared(new double[] {0.5, 1, 1.5}, 2, 8);
            for (Sensitivity s : new Sensitivity[] {pc, table, shared}) {
                for (int d : new int[] {Dpmo.DAMPENING_PLAIN, Dpmo.DAMPENING_SHIFTED}) {
                    double[] ds = Dpmo.dampen(u, s, d);
                    check(ds.length == 4, "dampened length");
                    check(ds[0] > ds[1] && ds[1] > ds[2] && ds[2] > ds[3], "order kept " + Arrays.toString(ds));
                    double[] p = Dpmo.localDampeningProbabilities(u, s, d, 1);
                    close(1, sum(p), 1e-12, "sum");
                    closeAll(Dpmo.exponentialProbabilities(ds, 1, 1), p, 1e-12, "P = EM on dampened scores");
                }
            }
            // the shared table equal to the per-candidate constant gives the same result
            closeAll(Dpmo.dampen(u, Sensitivity.perCandidate(new double[] {1, 1, 1, 1}, 2, 8), Dpmo.DAMPENING_PLAIN),
                    Dpmo.dampen(u, Sensitivity.shared(new double[] {1, 1, 1, 1, 1, 1, 1, 1}, 2, 8), Dpmo.DAMPENING_PLAIN),
                    1e-12, "shared = per-candidate");
            // (null, 0) is an empty shared table: delta = Delta everywhere
            closeAll(Dpmo.dampen(u, Sensitivity.perCandidate(new double[] {2, 2, 2, 2}, 2, 8), Dpmo.DAMPENING_PLAIN),
                    Dpmo.dampen(u, Sensitivity.shared(null, 2, 8), Dpmo.DAMPENING_PLAIN), 1e-12, "empty shared");
        });

        test("local dampening: every selector, and top-k", () -> {
            DpmoRng r = rng(8);
            double[] u = {0, 0, 100, 0};
            for (int d = 0; d <= 1; d++) {
                for (int sel : ALL_SELECTORS) {
                    check(Dpmo.selectLocalDampening(r, u, ones(4), d, sel, 60) == 2, "winner d " + d + " sel " + sel);
                    int j = Dpmo.selectLocalDampening(r, SCORES, ones(4), d, sel, 0.5);
                    check(j >= 0 && j < 4, "index");
                    distinct(Dpmo.selectLocalDampeningTopK(r, SCORES, ones(4), d, sel, 1, 3, null), 4, 3, "top-k");
                }
            }
        });

        test("statistics: shifted local dampening + exponential matches its probabilities", () -> {
            double[] u = {10, 9, 8, 5};
            Sensitivity s = Sensitivity.perCandidate(new double[] {1, 2, 1, 3}, 4, 8);
            double[] p = Dpmo.localDampeningProbabilities(u, s, Dpmo.DAMPENING_SHIFTED, 1);
            DpmoRng r = rng(31);
            int[] c = new int[4];
            for (int i = 0; i < 100000; i++) {
                c[Dpmo.selectLocalDampening(r, u, s, Dpmo.DAMPENING_SHIFTED, Dpmo.SELECTOR_EXPONENTIAL, 1)]++;
            }
            chiSquare(c, p, "shifted local dampening");
        });

        // ------------------------------------------------------------------ multi-objective

        test("Pareto scores, both dominance relations", () -> {
            closeAll(PS_TEXTBOOK, Dpmo.paretoScores(UTIL, 2, Dpmo.DOMINANCE_TEXTBOOK), 0, "textbook");
            double[] ties = {1, 1, 1, 1, 0, 0};
            closeAll(new double[] {0, 0, -2}, Dpmo.paretoScores(ties, 2, Dpmo.DOMINANCE_TEXTBOOK), 0, "ties textbook");
            closeAll(new double[] {-1, -1, -2}, Dpmo.paretoScores(ties, 2, Dpmo.DOMINANCE_WEAK), 0, "ties weak");
            double[][] rows = {{3, 3}, {1, 2}, {2, 1}, {0, 0}};
            check(Arrays.equals(UTIL, Dpmo.rowMajor(rows)), "rowMajor");
        });

        test("PrivPareto: global probabilities are exact; selections valid", () -> {
            double eps = 1.7;
            closeAll(softmax(PS_TEXTBOOK, eps / (2 * 3)),
                    Dpmo.privParetoProbabilities(UTIL, 2, Dpmo.DOMINANCE_TEXTBOOK, null, 0, 0, eps), 1e-14, "global");
            DpmoRng r = rng(12);
            for (int sel : ALL_SELECTORS) {
                distinct(Dpmo.selectPrivPareto(r, UTIL, 2, Dpmo.DOMINANCE_TEXTBOOK, sel, 1, 2, null), 4, 2, "k = 2");
                distinct(Dpmo.selectPrivPareto(r, UTIL, 2, Dpmo.DOMINANCE_WEAK, sel, 1, 4, null), 4, 4, "k = n");
                check(Dpmo.selectPrivPareto(r, UTIL, 2, 0, sel, 500, 1, null)[0] == 0, "dominant candidate");
            }
        });

        test("PrivPareto: local (plain and shifted), top-k, statistics", () -> {
            Sensitivity[] d = onesFor(4, 2);
            DpmoRng r = rng(13);
            for (int damp = 0; damp <= 1; damp++) {
                double[] p = Dpmo.privParetoProbabilities(UTIL, 2, 0, d, 8, damp, 2);
                closeAll(p, Dpmo.privParetoProbabilities(UTIL, 2, 0, d, 0, damp, 2), 1e-15,
                        "automatic saturation (maxDistance 0) = a cap that never binds");
                close(1, sum(p), 1e-12, "sum");
                check(argmax(p) == 0, "dominant candidate most likely");
                for (int sel : ALL_SELECTORS) {
                    distinct(Dpmo.selectPrivPareto(r, UTIL, 2, 0, d, 8, damp, sel, 2, 3, null), 4, 3, "local k = 3");
                }
            }
            double[] p = Dpmo.privParetoProbabilities(UTIL, 2, 0, d, 0, Dpmo.DAMPENING_SHIFTED, 2);
            int[] c = new int[4];
            for (int i = 0; i < 100000; i++) {
                c[Dpmo.selectPrivPareto(r, UTIL, 2, 0, d, 0, Dpmo.DAMPENING_SHIFTED, Dpmo.SELECTOR_EXPONENTIAL, 2, 1,
                        null)[0]]++;
            }
            chiSquare(c, p, "local PrivPareto");
        });

        test("PrivAgg: global probabilities are exact; local; selections valid", () -> {
            double[] w = {0.5, 0.25}, g = {1, 2};
            double deltaAgg = 0.5 * 1 + 0.25 * 2;
            double[] agg = new double[4];
            for (int r = 0; r < 4; r++) agg[r] = w[0] * UTIL[2 * r] + w[1] * UTIL[2 * r + 1];
            closeAll(softmax(agg, 1.1 / (2 * deltaAgg)), Dpmo.privAggProbabilities(UTIL, 2, w, g, null, 0, 0, 1.1),
                    1e-14, "global");
            // negative weights are allowed: Delta_agg uses |w|
            double[] wn = {-1, 1};
            double[] aggn = new double[4];
            for (int r = 0; r < 4; r++) aggn[r] = -UTIL[2 * r] + UTIL[2 * r + 1];
            closeAll(softmax(aggn, 1.0 / (2 * 2)), Dpmo.privAggProbabilities(UTIL, 2, wn, new double[] {1, 1}, null, 0,
                    0, 1), 1e-14, "negative weight");
            Sensitivity[] d = onesFor(4, 2);
            DpmoRng r = rng(14);
            for (int damp = 0; damp <= 1; damp++) {
                double[] p = Dpmo.privAggProbabilities(UTIL, 2, w, null, d, 8, damp, 1);
                close(1, sum(p), 1e-12, "local sum");
                closeAll(p, Dpmo.privAggProbabilities(UTIL, 2, w, null, d, 0, damp, 1), 1e-15, "maxDistance 0");
                check(argmax(p) == 0, "best aggregate most likely");
                for (int sel : ALL_SELECTORS) {
                    distinct(Dpmo.selectPrivAgg(r, UTIL, 2, w, null, d, 8, damp, sel, 1, 2, null), 4, 2, "local");
                    distinct(Dpmo.selectPrivAgg(r, UTIL, 2, w, g, sel, 1, 4, null), 4, 4, "global k = n");
                }
            }
            int[] c = new int[4];
            double[] p = Dpmo.privAggProbabilities(UTIL, 2, w, g, null, 0, 0, 2);
            for (int i = 0; i < 100000; i++) c[Dpmo.selectPrivAgg(r, UTIL, 2, w, g, 0, 2, 1, null)[0]]++;
            chiSquare(c, p, "global PrivAgg");
        });

        // ------------------------------------------------------------------ budget

        test("privacy budget: charges, exhaustion; argument errors are free, private data never fails", () -> {
            PrivacyBudget b = new PrivacyBudget(1.0);
            close(1.0, b.remaining(), 0, "fresh");
            DpmoRng r = rng(21), twin = rng(21);
            Dpmo.selectExponential(r, SCORES, 1, 0.25, b);
            Dpmo.selectExponential(twin, SCORES, 1, 0.25);
            close(0.75, b.remaining(), 1e-15, "after 0.25");
            Dpmo.selectTopK(r, Dpmo.SELECTOR_PERMUTE_AND_FLIP, SCORES, 1, 0.125, 2, b);
            Dpmo.selectTopK(twin, Dpmo.SELECTOR_PERMUTE_AND_FLIP, SCORES, 1, 0.125, 2);
            close(0.625, b.remaining(), 1e-15, "after top-k");
            // failures caused by the arguments charge nothing
            raises(DpmoException.INVALID_SENSITIVITY, () -> Dpmo.selectExponential(r, SCORES, 0, 0.25, b));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectPermuteAndFlip(r, SCORES, 1, -0.25, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectNoisyMax(r, SCORES, 1, 0.25, Dpmo.NOISE_LAPLACE, b));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopK(r, 9, SCORES, 1, 0.25, 2, b));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopK(r, 0, SCORES, 1, 0.25, 5, b));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, 7, 0.25, 1, b));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1}, null, 0, 0.25, 1, b));
            close(0.625, b.remaining(), 1e-15, "argument errors spend nothing");
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectPermuteAndFlip(r, SCORES, 1, 0.75, b));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, 0, 0.75, 1, b));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1, 1},
                    new double[] {1, 1}, 0, 0.75, 1, b));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectLocalDampening(r, SCORES, ones(4), 0, 0, 0.75, b));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectLocalDampeningTopK(r, SCORES, ones(4), 0, 0, 0.75, 2, b));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectTopKGumbel(r, SCORES, 1, 0.75, 2, b));
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectNoisyMax(r, SCORES, 1, 0.75, 1, b));
            // a refused call does not look at the data: a NaN is refused for the budget, not charged
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectExponential(r, new double[] {Double.NaN}, 1, 0.75, b));
            close(0.625, b.remaining(), 1e-15, "refusals spend nothing");
            // the generator did not move either: r and its twin still agree
            check(Arrays.equals(r.sample(0, 16), twin.sample(0, 16)), "generator advanced by a refused call");
            // private data never makes a call fail (issue 20.4): a NaN is the lowest score by the public rule, and
            // the call is charged and draws from the generator exactly as on the data where it is -MAX
            int j = Dpmo.selectExponential(r, new double[] {1, Double.NaN}, 1, 0.125, b);
            check(j == Dpmo.selectExponential(twin, new double[] {1, -Double.MAX_VALUE}, 1, 0.125), "NaN is -MAX");
            close(0.5, b.remaining(), 1e-15, "a NaN in the data is charged like any selection");
            check(Arrays.equals(r.sample(0, 16), twin.sample(0, 16)), "a NaN changed the generator's consumption");
            Dpmo.selectPrivPareto(r, UTIL, 2, 0, 0, 0.25, 2, b);
            Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1, 1}, new double[] {1, 1}, 0, 0.125, 1, b);
            Dpmo.selectLocalDampening(r, SCORES, ones(4), 1, 1, 0.125, b);
            close(0, b.remaining(), 1e-15, "spent exactly");
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.selectExponential(r, SCORES, 1, 1e-9, b));
            PrivacyBudget c = new PrivacyBudget(1.0);
            c.charge(0.5);
            close(0.5, c.spent(), 0, "spent");
            close(1.0, c.total(), 0, "total");
            raises(DpmoException.BUDGET_EXHAUSTED, () -> c.charge(0.75));
            raises(DpmoException.INVALID_EPSILON, () -> c.charge(0));
            raises(DpmoException.INVALID_EPSILON, () -> c.charge(Double.NaN));
            raises(DpmoException.INVALID_EPSILON, () -> c.charge(-1));
            c.charge(c.remaining());
            close(0, c.remaining(), 0, "charging remaining succeeds");
            raises(DpmoException.INVALID_EPSILON, () -> new PrivacyBudget(0));
            raises(DpmoException.INVALID_EPSILON, () -> new PrivacyBudget(-1));
            raises(DpmoException.INVALID_EPSILON, () -> new PrivacyBudget(Double.NaN));
            raises(DpmoException.INVALID_EPSILON, () -> new PrivacyBudget(Double.POSITIVE_INFINITY));
        });

        test("no free probing: every selecting method succeeds on NaN/±∞ utilities and bad δ values, charged ε,"
                + " by the public rule (attack: free probing)", () -> {
            // Issue 20.4: a status that depends on the private data would let an analyst probe it at a negligible ε
            // (6 calls at ε = 5e-324 located the NaN record among 40). Private values now follow a public rule
            // instead: a NaN utility is the lowest score (-MAX), ±∞ is ±MAX, and a δ value that is NaN, negative or
            // infinite counts as Δ (values above Δ clamp to Δ). Every call below must succeed, be charged its ε,
            // and return what the same seed returns on the data rewritten by that rule, leaving the generator in
            // the same state (so neither the output, the status nor the randomness consumed can tell them apart).
            final double mx = Double.MAX_VALUE, nan = Double.NaN, inf = Double.POSITIVE_INFINITY;
            // +∞ would win every single pick whatever the rule for NaN: it is tested in the top-k calls only
            final double[] badScores = {1, nan, 3, -inf, 2, 2.5}, ruleScores = {1, -mx, 3, -mx, 2, 2.5};
            final double[] badTop = {1, nan, inf, -inf, 2, 2.5}, ruleTop = {1, -mx, mx, -mx, 2, 2.5};
            // n = 5 candidates × m = 2 objectives
            final double[] badUtil = {3, 3, 1, nan, 2, 1, -inf, 0, inf, 1}, ruleUtil = {3, 3, 1, -mx, 2, 1, -mx, 0, mx, 1};
            final double[] badVals = {1, nan, -1, inf, 5, 0.5}, ruleVals = {1, 1, 1, 1, 1, 0.5};
            final double[] badTable = {1, 0, nan, 0.5, -1, 1, inf, 0, 0, 0, 0.5, -0.0};
            final double[] ruleTable = {1, 0, 1, 0.5, 1, 1, 1, 0, 0, 0, 0.5, 0};
            final double[] badShared = {0, nan, 0.5, -2, inf}, ruleShared = {0, 1, 0.5, 1, 1};
            List<String> names = new ArrayList<>();
            List<Sel> calls = new ArrayList<>();
            final int iso = Dpmo.ISOCHRONOUS;
            int[] selectors = {0, 1, 3, 4, 0 | F, 1 | F, 2 | F, 3 | F, 4 | F, 0 | iso, 1 | iso, 3 | iso, 4 | iso};
            for (int sel : selectors) {
                names.add("select " + sel);
                calls.add((r, b, clean) -> new int[] {Dpmo.select(r, sel, clean ? ruleScores : badScores, 1, 0.5, b)});
                names.add("top-3 " + sel);
                calls.add((r, b, clean) -> Dpmo.selectTopK(r, sel, clean ? ruleTop : badTop, 1, 0.5, 3, b));
            }
            names.add("exponential");
            calls.add((r, b, clean) -> new int[] {Dpmo.selectExponential(r, clean ? ruleScores : badScores, 1, 0.5, b)});
            names.add("permute-and-flip");
            calls.add((r, b, clean) -> new int[] {Dpmo.selectPermuteAndFlip(r, clean ? ruleScores : badScores, 1, 0.5, b)});
            names.add("noisy-max exponential");
            calls.add((r, b, clean) -> new int[] {Dpmo.selectNoisyMax(r, clean ? ruleScores : badScores, 1, 0.5,
                    Dpmo.NOISE_EXPONENTIAL, b)});
            names.add("noisy-max Laplace | FLOAT");
            calls.add((r, b, clean) -> new int[] {Dpmo.selectNoisyMax(r, clean ? ruleScores : badScores, 1, 0.5,
                    Dpmo.NOISE_LAPLACE | F, b)});
            for (int flags : new int[] {0, F, iso}) {
                names.add("one-shot Gumbel top-3 " + flags);
                calls.add((r, b, clean) -> Dpmo.selectTopKGumbel(r, clean ? ruleTop : badTop, 1, 0.5, 3, flags, b));
            }
            for (int kind = 0; kind < 3; kind++) {
                final Sensitivity badDelta = kind == 0 ? Sensitivity.perCandidate(badVals, 1, 8)
                        : kind == 1 ? Sensitivity.table(badTable, 2, 1, 8) : Sensitivity.shared(badShared, 1, 8);
                final Sensitivity ruleDelta = kind == 0 ? Sensitivity.perCandidate(ruleVals, 1, 8)
                        : kind == 1 ? Sensitivity.table(ruleTable, 2, 1, 8) : Sensitivity.shared(ruleShared, 1, 8);
                for (int damp = 0; damp <= 1; damp++) {
                    for (int sel : new int[] {0, 1 | F, 0 | iso}) {
                        final int d = damp;
                        names.add("local dampening, δ kind " + kind + ", dampening " + damp + ", selector " + sel);
                        calls.add((r, b, clean) -> new int[] {Dpmo.selectLocalDampening(r,
                                clean ? ruleScores : badScores, clean ? ruleDelta : badDelta, d, sel, 0.5, b)});
                        names.add("local dampening top-2, δ kind " + kind + ", dampening " + damp + ", selector " + sel);
                        calls.add((r, b, clean) -> Dpmo.selectLocalDampeningTopK(r,
                                clean ? ruleScores : badScores, clean ? ruleDelta : badDelta, d, sel, 0.5, 2, b));
                    }
                }
            }
            // multi-objective: 5 candidates, 2 objectives; objective 1's δ holds the bad values
            final Sensitivity[] badDeltas = {Sensitivity.perCandidate(new double[] {1, nan, -1, inf, 7}, 1, 8),
                    Sensitivity.perCandidate(new double[] {1, 1, 0.5, 1, 1}, 1, 8)};
            final Sensitivity[] ruleDeltas = {Sensitivity.perCandidate(new double[] {1, 1, 1, 1, 1}, 1, 8),
                    Sensitivity.perCandidate(new double[] {1, 1, 0.5, 1, 1}, 1, 8)};
            final double[] w = {1, 2}, g = {1, 1};
            for (int sel : new int[] {0, 1 | F}) {
                for (int dom = 0; dom <= 1; dom++) {
                    final int dm = dom;
                    names.add("PrivPareto global, dominance " + dom + ", selector " + sel);
                    calls.add((r, b, clean) -> Dpmo.selectPrivPareto(r, clean ? ruleUtil : badUtil, 2, dm, sel, 0.5, 2, b));
                    for (int damp = 0; damp <= 1; damp++) {
                        final int d = damp;
                        names.add("PrivPareto local, dominance " + dom + ", dampening " + damp + ", selector " + sel);
                        calls.add((r, b, clean) -> Dpmo.selectPrivPareto(r, clean ? ruleUtil : badUtil, 2, dm,
                                clean ? ruleDeltas : badDeltas, 0, d, sel, 0.5, 2, b));
                    }
                }
            }
            for (int sel : new int[] {0, 1 | F, 0 | iso, 1 | iso}) {
                names.add("PrivAgg global, selector " + sel);
                calls.add((r, b, clean) -> Dpmo.selectPrivAgg(r, clean ? ruleUtil : badUtil, 2, w, g, sel, 0.5, 2, b));
                for (int damp = 0; damp <= 1; damp++) {
                    final int d = damp;
                    names.add("PrivAgg local, dampening " + damp + ", selector " + sel);
                    calls.add((r, b, clean) -> Dpmo.selectPrivAgg(r, clean ? ruleUtil : badUtil, 2, w, null,
                            clean ? ruleDeltas : badDeltas, 0, d, sel, 0.5, 2, b));
                }
            }
            List<String> wrong = new ArrayList<>();
            for (int i = 0; i < calls.size(); i++) {
                DpmoRng r = rng(300 + i), twin = rng(300 + i);
                PrivacyBudget b = new PrivacyBudget(1.0);
                int[] got;
                try {
                    got = calls.get(i).run(r, b, false);
                } catch (DpmoException e) {
                    wrong.add(names.get(i) + ": raised " + e.getMessage());
                    continue;
                }
                int[] want = calls.get(i).run(twin, null, true);
                int n = names.get(i).startsWith("Priv") ? 5 : 6;
                distinct(got, n, got.length, names.get(i));
                if (b.spent() != 0.5) wrong.add(names.get(i) + ": spent " + b.spent());
                if (!Arrays.equals(got, want)) {
                    wrong.add(names.get(i) + ": " + Arrays.toString(got) + " vs the rule's " + Arrays.toString(want));
                }
                if (!Arrays.equals(r.sample(0, 8), twin.sample(0, 8))) wrong.add(names.get(i) + ": consumption");
            }
            check(wrong.isEmpty(), wrong.size() + " of " + calls.size() + " calls broke the rule: " + wrong);
            // argument errors are still raised before any data is read, and charge nothing
            DpmoRng r = rng(22);
            PrivacyBudget b = new PrivacyBudget(1.0);
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectExponential(r, badScores, 1, 0, b));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectTopKGumbel(r, badScores, 1, 0, 2, b));
            raises(DpmoException.INVALID_EPSILON,
                    () -> Dpmo.selectLocalDampening(r, badScores, Sensitivity.perCandidate(badVals, 1, 8), 1, 0, 0, b));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectPrivPareto(r, badUtil, 2, 0, 0, 0, 1, b));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectPrivAgg(r, badUtil, 2, w, g, 0, 0, 1, b));
            // a PrivAgg weight is a public parameter: NaN is an argument error, free
            raises(DpmoException.NON_FINITE_INPUT,
                    () -> Dpmo.selectPrivAgg(r, badUtil, 2, new double[] {1, nan}, g, 0, 0.5, 1, b));
            close(0, b.spent(), 0, "argument errors spend nothing");
        });

        test("Laplace noise needs FLOAT: UNSUPPORTED everywhere else, nothing charged, nothing drawn", () -> {
            DpmoRng r = rng(23), twin = rng(23);
            PrivacyBudget b = new PrivacyBudget(1.0);
            int lap = Dpmo.SELECTOR_NOISY_MAX_LAPLACE;
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectNoisyMax(r, SCORES, 1, 0.5, Dpmo.NOISE_LAPLACE, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.select(r, lap, SCORES, 1, 0.5, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectTopK(r, lap, SCORES, 1, 0.5, 2, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectLocalDampening(r, SCORES, ones(4), 0, lap, 0.5, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectLocalDampeningTopK(r, SCORES, ones(4), 0, lap, 0.5, 2, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, lap, 0.5, 1, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, onesFor(4, 2), 0, 0, lap, 0.5, 1, b));
            raises(DpmoException.UNSUPPORTED, () -> Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1, 1},
                    new double[] {1, 1}, lap, 0.5, 1, b));
            close(0, b.spent(), 0, "UNSUPPORTED charged the budget");
            check(Arrays.equals(r.sample(0, 16), twin.sample(0, 16)), "UNSUPPORTED moved the generator");
            int j = Dpmo.selectNoisyMax(r, SCORES, 1, 0.5, Dpmo.NOISE_LAPLACE | F, b);
            check(j >= 0 && j < 4, "Laplace | FLOAT runs");
            close(0.5, b.spent(), 0, "and is charged");
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKGumbel(r, SCORES, 1, 0.5, 2, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKGumbel(r, SCORES, 1, 0.5, 2, F | 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.select(r, 5 | F, SCORES, 1, 0.5, null));
        });

        test("advanced composition", () -> {
            double e = Dpmo.advancedComposition(0.01, 100, 1e-6);
            check(e > 0 && e < 100 * 0.01 * 3, "value " + e);
            check(e >= 0.01 * Math.sqrt(2 * 100 * Math.log(1e6)), "at least the DRV leading term");
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.advancedComposition(0, 10, 1e-6));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.advancedComposition(0.1, 0, 1e-6));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.advancedComposition(0.1, -5, 1e-6));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.advancedComposition(0.1, 10, 1.5));
        });

        // ------------------------------------------------------------------ bad input: never a crash

        test("bad input: single-objective selectors", () -> {
            DpmoRng r = rng(40);
            for (int sel : ALL_SELECTORS) {
                final int s = sel;
                raises(DpmoException.NULL_POINTER, () -> Dpmo.select(r, s, null, 1, 1, null));
                raises(DpmoException.NULL_POINTER, () -> Dpmo.select(null, s, SCORES, 1, 1, null));
                raises(DpmoException.EMPTY_INPUT, () -> Dpmo.select(r, s, new double[0], 1, 1, null));
                // private scores are never refused (issue 20.4): NaN is the lowest score, -∞ is -MAX
                check(Dpmo.select(r, s, new double[] {Double.NaN, 1}, 1, 1000, null) == 1, "NaN lowest, " + s);
                check(Dpmo.select(r, s, new double[] {Double.NEGATIVE_INFINITY, 1}, 1, 1000, null) == 1, "-inf, " + s);
                check(Dpmo.select(r, s, new double[] {1, Double.POSITIVE_INFINITY}, 1, 1000, null) == 1, "+inf, " + s);
                for (double eps : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
                    raises(DpmoException.INVALID_EPSILON, () -> Dpmo.select(r, s, SCORES, 1, eps, null));
                }
                for (double sens : new double[] {0, -2, Double.NaN, Double.POSITIVE_INFINITY}) {
                    raises(DpmoException.INVALID_SENSITIVITY, () -> Dpmo.select(r, s, SCORES, sens, 1, null));
                }
            }
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectNoisyMax(r, SCORES, 1, 1, 3));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectNoisyMax(r, SCORES, 1, 1, -1));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.select(r, 5, SCORES, 1, 1, null));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.exponentialProbabilities(null, 1, 1));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.exponentialProbabilities(new double[0], 1, 1));
            // the probabilities follow the same public rule as the selectors
            closeAll(Dpmo.exponentialProbabilities(new double[] {2, -Double.MAX_VALUE, 1, Double.MAX_VALUE}, 1, 1),
                    Dpmo.exponentialProbabilities(new double[] {2, Double.NaN, 1, Double.POSITIVE_INFINITY}, 1, 1), 0,
                    "probabilities: NaN is -MAX, +inf is MAX");
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.exponentialProbabilities(SCORES, 1, 0));
            raises(DpmoException.INVALID_SENSITIVITY, () -> Dpmo.exponentialProbabilities(SCORES, -1, 1));
        });

        test("bad input: top-k", () -> {
            DpmoRng r = rng(41);
            for (int k : new int[] {0, -1, 5, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
                raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopK(r, 0, SCORES, 1, 1, k));
                raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopKGumbel(r, SCORES, 1, 1, k, null));
                raises(DpmoException.INVALID_ARGUMENT,
                        () -> Dpmo.selectLocalDampeningTopK(r, SCORES, ones(4), 0, 0, 1, k, null));
                raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectTopK(r, 0, new double[0], 1, 1, k));
            }
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectTopK(r, 9, SCORES, 1, 1, 2));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectTopK(r, 0, null, 1, 1, 2));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectTopK(null, 0, SCORES, 1, 1, 2));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectTopKGumbel(null, SCORES, 1, 1, 2, null));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectTopKGumbel(r, new double[0], 1, 1, 1, null));
            // private scores are never refused: the NaN candidate is the lowest, picked last
            check(Dpmo.selectTopK(r, 1, new double[] {1, Double.NaN}, 1, 1000, 2)[1] == 1, "NaN picked last");
            distinct(Dpmo.selectTopKGumbel(r, new double[] {Double.NaN}, 1, 1, 1, null), 1, 1, "NaN alone");
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectTopK(r, 0, SCORES, 1, -1, 2));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectTopKGumbel(r, SCORES, 1, Double.NaN, 2, null));
            raises(DpmoException.INVALID_SENSITIVITY, () -> Dpmo.selectTopK(r, 0, SCORES, 0, 1, 2));
            raises(DpmoException.INVALID_SENSITIVITY, () -> Dpmo.selectTopKGumbel(r, SCORES, -1, 1, 2, null));
        });

        test("bad input: local dampening and sensitivity specs", () -> {
            DpmoRng r = rng(42);
            Sensitivity ok = ones(4);
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectLocalDampening(r, SCORES, null, 0, 0, 1));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectLocalDampening(r, null, ok, 0, 0, 1));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectLocalDampening(null, SCORES, ok, 0, 0, 1));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.dampen(SCORES, null, 0));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.localDampeningProbabilities(SCORES, null, 0, 1));
            raises(DpmoException.NULL_POINTER,
                    () -> Dpmo.dampen(SCORES, Sensitivity.perCandidate(null, 1, 4), 0));
            Sensitivity none = Sensitivity.perCandidate(new double[0], 1, 4);
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectLocalDampening(r, new double[0], none, 0, 0, 1));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.dampen(new double[0], none, 0));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.localDampeningProbabilities(new double[0], none, 0, 1));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectLocalDampening(r, new double[0],
                    Sensitivity.shared(null, 1, 4), 0, 0, 1));
            // an empty group with a δ of 4 values: the C ABI reports EMPTY_INPUT for top-k and the
            // multi-objective functions but LENGTH_MISMATCH for the single local-dampening ones; either is clean
            raisesOneOf(new int[] {DpmoException.EMPTY_INPUT, DpmoException.LENGTH_MISMATCH},
                    () -> Dpmo.selectLocalDampening(r, new double[0], ok, 0, 0, 1));
            raisesOneOf(new int[] {DpmoException.EMPTY_INPUT, DpmoException.LENGTH_MISMATCH},
                    () -> Dpmo.dampen(new double[0], ok, 0));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectLocalDampeningTopK(r, new double[0], ok, 0, 0, 1, 1, null));
            // private utilities are never refused (issue 20.4): NaN is the lowest, ±∞ is ±MAX, and dampening clamps
            // utilities to ±2^60 Δ, so no data overflows (u = ±1e300 at Δ = 1e-10 used to raise OVERFLOW)
            distinct(new int[] {Dpmo.selectLocalDampening(r, new double[] {1, 2, Double.NaN, 3}, ok, 0, 0, 1)}, 4, 1, "NaN");
            closeAll(Dpmo.localDampeningProbabilities(new double[] {1, 2, Double.MAX_VALUE, 3}, ok, 0, 1),
                    Dpmo.localDampeningProbabilities(new double[] {1, 2, Double.POSITIVE_INFINITY, 3}, ok, 0, 1), 0,
                    "+inf is MAX");
            double limit = Math.scalb(1.0, 60);
            Sensitivity tiny = Sensitivity.perCandidate(new double[] {1, 1, 1, 1}, 1e-10, 4);
            for (int damp = 0; damp <= 1; damp++) {
                double[] dd = Dpmo.dampen(new double[] {1e300, -1e300, Double.NaN, Double.NEGATIVE_INFINITY}, tiny, damp);
                closeAll(new double[] {limit, -limit, -limit, -limit}, dd, limit * 1e-15, "clamped to ±2^60 Δ, " + damp);
                distinct(new int[] {Dpmo.selectLocalDampening(r, new double[] {1e300, -1e300, 0, 1}, tiny, damp, 0, 1)},
                        4, 1, "huge utilities select");
            }
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectLocalDampening(r, SCORES, ok, 0, 0, 0));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.localDampeningProbabilities(SCORES, ok, 0, -3));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectLocalDampening(r, SCORES, ok, 2, 0, 1));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectLocalDampening(r, SCORES, ok, 0, 5, 1));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.dampen(SCORES, ok, -1));
            // spec errors
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.dampen(SCORES, Sensitivity.perCandidate(new double[] {1, 1, 1}, 1, 4), 0));
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.dampen(SCORES, Sensitivity.table(new double[7], 2, 1, 4), 0));
            raises(DpmoException.INVALID_SENSITIVITY,
                    () -> Dpmo.dampen(SCORES, Sensitivity.perCandidate(new double[] {1, 1, 1, 1}, 0, 4), 0));
            raises(DpmoException.INVALID_SENSITIVITY,
                    () -> Dpmo.dampen(SCORES, Sensitivity.perCandidate(new double[] {1, 1, 1, 1}, Double.NaN, 4), 0));
            raises(DpmoException.INVALID_ARGUMENT,
                    () -> Dpmo.dampen(SCORES, Sensitivity.perCandidate(new double[] {1, 1, 1, 1}, 1, 0), 0));
            raises(DpmoException.INVALID_ARGUMENT,
                    () -> Dpmo.dampen(SCORES, Sensitivity.perCandidate(new double[] {1, 1, 1, 1}, 1, -1), 0));
            raises(DpmoException.INVALID_ARGUMENT,
                    () -> Dpmo.dampen(SCORES, Sensitivity.of(3, new double[] {1, 1, 1, 1}, 0, 1, 4), 0));
            raises(DpmoException.INVALID_ARGUMENT,
                    () -> Dpmo.dampen(SCORES, Sensitivity.of(9, new double[] {1, 1, 1, 1}, 0, 1, 4), 0));
            raises(DpmoException.INVALID_ARGUMENT,
                    () -> Dpmo.dampen(SCORES, Sensitivity.of(1, new double[] {1, 1, 1, 1}, -1, 1, 4), 0));
        });

        test("δ values by the public rule: NaN, negative, infinite and above-Δ values count as Δ (every source,"
                + " plain and shifted)", () -> {
            // δ values are private data: never a status. Each bad value must give exactly the dampened scores and
            // probabilities of Δ in its place, for per-candidate, table and shared sensitivities.
            DpmoRng r = rng(45);
            List<String> wrong = new ArrayList<>();
            for (int damp = 0; damp <= 1; damp++) {
                for (double bad : new double[] {Double.NaN, -1, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 3}) {
                    double[] ruleV = {0.5, 1, 1, 1}, badV = {0.5, bad, bad, bad};
                    double[] ruleT = {0.5, 0.25, 1, 0.5, 0.5, 1, 0, 0}, badT = {0.5, 0.25, bad, 0.5, 0.5, bad, 0, 0};
                    double[] ruleS = {0.5, 1, 0.25}, badS = {0.5, bad, 0.25};
                    Sensitivity[][] pairs = {
                        {Sensitivity.perCandidate(ruleV, 1, 4), Sensitivity.perCandidate(badV, 1, 4)},
                        {Sensitivity.table(ruleT, 2, 1, 4), Sensitivity.table(badT, 2, 1, 4)},
                        {Sensitivity.shared(ruleS, 1, 4), Sensitivity.shared(badS, 1, 4)}};
                    String[] kinds = {"per-candidate", "table", "shared"};
                    for (int kind = 0; kind < 3; kind++) {
                        String what = kinds[kind] + " δ " + bad + (damp == 0 ? ", plain" : ", shifted");
                        double[] want = Dpmo.dampen(SCORES, pairs[kind][0], damp);
                        double[] got = Dpmo.dampen(SCORES, pairs[kind][1], damp);
                        if (!Arrays.equals(want, got)) {
                            wrong.add(what + ": " + Arrays.toString(got) + " instead of " + Arrays.toString(want));
                        }
                        if (!Arrays.equals(Dpmo.localDampeningProbabilities(SCORES, pairs[kind][0], damp, 1),
                                Dpmo.localDampeningProbabilities(SCORES, pairs[kind][1], damp, 1))) {
                            wrong.add(what + ": probabilities");
                        }
                        distinct(new int[] {Dpmo.selectLocalDampening(r, SCORES, pairs[kind][1], damp, 0, 1)}, 4, 1, what);
                    }
                    // the comparison has power: reading the bad values as 0 or as 0.5 would give other scores
                    double[] want = Dpmo.dampen(SCORES, Sensitivity.perCandidate(ruleV, 1, 4), damp);
                    check(!Arrays.equals(want, Dpmo.dampen(SCORES, Sensitivity.perCandidate(new double[] {0.5, 0.5, 0.5,
                            0.5}, 1, 4), damp)) && !Arrays.equals(want, Dpmo.dampen(SCORES, Sensitivity.perCandidate(
                            new double[] {0.5, 0, 0, 0}, 1, 4), damp)), "δ 0.5 or 0 would be told apart from Δ");
                }
            }
            check(wrong.isEmpty(), wrong.size() + " departures from the public rule: " + wrong);
        });

        test("bad input: PrivPareto", () -> {
            DpmoRng r = rng(43);
            Sensitivity[] d = onesFor(4, 2);
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectPrivPareto(r, null, 2, 0, 0, 1, 1, null));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectPrivPareto(null, UTIL, 2, 0, 0, 1, 1, null));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectPrivPareto(r, new double[0], 2, 0, 0, 1, 1, null));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.privParetoProbabilities(new double[0], 2, 0, null, 0, 0, 1));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.selectPrivPareto(r, new double[7], 2, 0, 0, 1, 1, null));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.paretoScores(new double[7], 2, 0));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 0, 0, 0, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, -2, 0, 0, 1, 1, null));
            raises(DpmoException.CAPACITY_EXCEEDED, () -> Dpmo.selectPrivPareto(r, new double[17 * 2], 17, 0, 0, 1, 1, null));
            raises(DpmoException.CAPACITY_EXCEEDED, () -> Dpmo.paretoScores(new double[17], 17, 0));
            // private utilities are never refused by a release (issue 20.4): NaN is the lowest value
            distinct(Dpmo.selectPrivPareto(r, new double[] {1, 2, Double.NaN, 1}, 2, 0, 0, 1, 2, null), 2, 2, "NaN");
            closeAll(Dpmo.privParetoProbabilities(new double[] {1, 2, -Double.MAX_VALUE, 1, 0, 0}, 2, 0, null, 0, 0, 1),
                    Dpmo.privParetoProbabilities(new double[] {1, 2, Double.NaN, 1, 0, 0}, 2, 0, null, 0, 0, 1), 0,
                    "PrivPareto probabilities: NaN is -MAX");
            // the Pareto scores are a private intermediate, not a release: they still validate
            raises(DpmoException.NON_FINITE_INPUT, () -> Dpmo.paretoScores(new double[] {Double.NaN, 1}, 2, 0));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, 0, 0, 1, null));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.privParetoProbabilities(UTIL, 2, 0, null, 0, 0, Double.NaN));
            for (int k : new int[] {0, -3, 5}) {
                raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, 0, 1, k, null));
            }
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 2, 0, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, 7, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.paretoScores(UTIL, 2, 5));
            // local: specs
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, onesFor(4, 1), 8, 0, 0, 1, 1, null));
            raises(DpmoException.NULL_POINTER,
                    () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, new Sensitivity[] {ones(4), null}, 8, 0, 0, 1, 1, null));
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, new Sensitivity[] {ones(4), ones(3)}, 8, 0, 0, 1, 1, null));
            // a NaN δ value counts as Δ
            closeAll(Dpmo.privParetoProbabilities(UTIL, 2, 0, new Sensitivity[] {ones(4),
                    Sensitivity.perCandidate(new double[] {0.5, 0.5, 1, 0.5}, 1, 8)}, 8, 0, 1),
                    Dpmo.privParetoProbabilities(UTIL, 2, 0, new Sensitivity[] {ones(4),
                    Sensitivity.perCandidate(new double[] {0.5, 0.5, Double.NaN, 0.5}, 1, 8)}, 8, 0, 1), 0,
                    "PrivPareto: NaN δ is Δ");
            distinct(Dpmo.selectPrivPareto(r, UTIL, 2, 0, d, 0, 0, 0, 1, 1, null), 4, 1, "maxDistance 0 is automatic");
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, d, -1, 0, 0, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(r, UTIL, 2, 0, d, 8, 3, 0, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.privParetoProbabilities(UTIL, 2, 0, d, 8, 3, 1));
        });

        test("bad input: PrivAgg", () -> {
            DpmoRng r = rng(44);
            double[] w = {1, 1}, g = {1, 1};
            Sensitivity[] d = onesFor(4, 2);
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectPrivAgg(r, null, 2, w, g, 0, 1, 1, null));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectPrivAgg(r, UTIL, 2, null, g, 0, 1, 1, null));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, null, 0, 1, 1, null));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.selectPrivAgg(null, UTIL, 2, w, g, 0, 1, 1, null));
            raises(DpmoException.EMPTY_INPUT, () -> Dpmo.selectPrivAgg(r, new double[0], 2, w, g, 0, 1, 1, null));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1}, g, 0, 1, 1, null));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, new double[3], 0, 1, 1, null));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.privAggProbabilities(new double[5], 2, w, g, null, 0, 0, 1));
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, null, onesFor(4, 3), 8, 0, 0, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivAgg(r, UTIL, 0, w, g, 0, 1, 1, null));
            raises(DpmoException.CAPACITY_EXCEEDED,
                    () -> Dpmo.selectPrivAgg(r, new double[18], 18, new double[18], new double[18], 0, 1, 1, null));
            raises(DpmoException.NON_FINITE_INPUT,
                    () -> Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1, Double.NaN}, g, 0, 1, 1, null));
            // a utility is private: NaN is the lowest value, never a status (a weight is public: refused above)
            distinct(Dpmo.selectPrivAgg(r, new double[] {1, 1, Double.NaN, 0}, 2, w, g, 0, 1, 2, null), 2, 2, "NaN");
            closeAll(Dpmo.privAggProbabilities(new double[] {1, 1, -Double.MAX_VALUE, 0}, 2, w, g, null, 0, 0, 1),
                    Dpmo.privAggProbabilities(new double[] {1, 1, Double.NaN, 0}, 2, w, g, null, 0, 0, 1), 0,
                    "PrivAgg probabilities: NaN is -MAX");
            raises(DpmoException.INVALID_SENSITIVITY,
                    () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, new double[] {1, 0}, 0, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT,
                    () -> Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {0, 0}, g, 0, 1, 1, null));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, g, 0, -1, 1, null));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.privAggProbabilities(UTIL, 2, w, g, null, 0, 0, 0));
            for (int k : new int[] {0, -1, 5}) {
                raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, g, 0, 1, k, null));
            }
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, g, 6, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, null, d, -1, 0, 0, 1, 1, null));
            distinct(Dpmo.selectPrivAgg(r, UTIL, 2, w, null, d, 0, 0, 0, 1, 1, null), 4, 1, "maxDistance 0 is automatic");
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivAgg(r, UTIL, 2, w, null, d, 8, 9, 0, 1, 1, null));
            // a negative δ value counts as Δ
            closeAll(Dpmo.privAggProbabilities(UTIL, 2, w, null, new Sensitivity[] {ones(4),
                    Sensitivity.perCandidate(new double[] {0.5, 1, 0.5, 0.5}, 1, 8)}, 8, 0, 1),
                    Dpmo.privAggProbabilities(UTIL, 2, w, null, new Sensitivity[] {ones(4),
                    Sensitivity.perCandidate(new double[] {0.5, -1, 0.5, 0.5}, 1, 8)}, 8, 0, 1), 0,
                    "PrivAgg: negative δ is Δ");
        });

        test("bad arguments leave the generator untouched", () -> {
            DpmoRng a = rng(50), b = rng(50);
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectExponential(a, new double[] {Double.NaN}, 1, 0));
            raises(DpmoException.INVALID_EPSILON, () -> Dpmo.selectTopK(a, 1, SCORES, 1, 0, 2));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectPrivPareto(a, UTIL, 2, 0, 9, 1, 1, null));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.selectLocalDampening(a, SCORES,
                    Sensitivity.perCandidate(new double[] {1, 1, 1, Double.NaN}, 1, 4), 0, 7, 1));
            check(Arrays.equals(a.sample(0, 32), b.sample(0, 32)), "state changed by failing calls");
        });

        test("many failing calls leak nothing and never crash", () -> {
            DpmoRng r = rng(60);
            Runtime rt = Runtime.getRuntime();
            for (int i = 0; i < 200000; i++) {
                try {
                    switch (i % 4) {
                        case 0:
                            Dpmo.selectTopK(r, 0, new double[] {1, Double.NaN, 3}, 1, 1, 4);
                            break;
                        case 1:
                            Dpmo.selectPrivPareto(r, UTIL, 2, 0, onesFor(4, 2), 8, 0, 0, -1, 1, null);
                            break;
                        case 2:
                            Dpmo.selectPrivAgg(r, UTIL, 2, new double[] {1, 1}, null, onesFor(4, 2), 0, 7, 0, 1, 1, null);
                            break;
                        default:
                            Dpmo.selectLocalDampeningTopK(r, SCORES, ones(4), 0, 1, Double.NaN, 2, null);
                    }
                    throw new AssertionError("no exception at " + i);
                } catch (DpmoException expected) {
                    // fine
                }
            }
            check(rt.totalMemory() > 0, "alive");
        });

        // ------------------------------------------------------------------ scale and threads

        test("large inputs: a million scores", () -> {
            int n = 1_000_000;
            double[] s = new double[n];
            for (int i = 0; i < n; i++) s[i] = (i * 7919L) % 1000;
            s[123456] = 5000;
            DpmoRng r = rng(70);
            check(Dpmo.selectExponential(r, s, 1, 10) == 123456, "exponential");
            check(Dpmo.selectPermuteAndFlip(r, s, 1, 10) == 123456, "permute-and-flip");
            check(Dpmo.selectTopKGumbel(r, s, 1, 100, 1, null)[0] == 123456, "gumbel top-1");
            double[] p = Dpmo.exponentialProbabilities(s, 1, 0.001);
            close(1, sum(p), 1e-9, "sum");
            int[] top = Dpmo.selectTopK(r, Dpmo.SELECTOR_EXPONENTIAL, s, 1, 1, 10, null);
            distinct(top, n, 10, "top-10");
            check(Dpmo.selectLocalDampening(r, s, Sensitivity.shared(new double[] {1}, 1, 1), 0, 1, 10) == 123456,
                    "local dampening");
        });

        test("threads: a caller's own synchronized block on the budget or generator cannot deadlock a call", () -> {
            // Issue 11: the shim used to take the generator's monitor, then the budget's. A caller holding the
            // budget's monitor (synchronized (budget) { select(rng, ..., budget); }) then waited for the generator
            // while a plain call held the generator and waited for the budget: both threads stuck, after a few
            // thousand calls. Taking the budget first would only move the problem to a caller holding the
            // generator's monitor. Every kind of caller-held monitor runs here at once against plain calls.
            DpmoRng r = DpmoRng.seeded(DpmoRng.XOSHIRO256PP, 71);
            PrivacyBudget b = new PrivacyBudget(1.0);
            double eps = 0x1p-20; // dyadic: 5 threads x 20,000 charges are exact, well under the total
            int iterations = 20_000;
            runWatched("lock order", iterations, 60,
                    () -> {
                        synchronized (b) {
                            Dpmo.selectExponential(r, SCORES, 1, eps, b);
                        }
                    },
                    () -> {
                        synchronized (r) {
                            Dpmo.selectPermuteAndFlip(r, SCORES, 1, eps, b);
                        }
                    },
                    () -> Dpmo.selectExponential(r, SCORES, 1, eps, b),
                    () -> {
                        Dpmo.selectTopK(r, Dpmo.SELECTOR_EXPONENTIAL, SCORES, 1, eps, 2, b);
                        synchronized (b) {
                            r.sample(DpmoRng.DIST_UNIFORM, 1);
                        }
                    },
                    () -> {
                        synchronized (r) {
                            b.charge(eps);
                            b.remaining();
                        }
                    });
            close(5.0 * iterations * eps, b.spent(), 0, "every call charged exactly once");
        });

        test("watchdog: a real monitor deadlock is reported, not waited for", () -> {
            // The checker of the lock-order test, shown to catch a deadlock: two threads take two monitors in
            // opposite orders, each waiting (latch) until the other holds its first one. They stay stuck (daemons).
            Object a = new Object(), b = new Object();
            java.util.concurrent.CountDownLatch both = new java.util.concurrent.CountDownLatch(2);
            try {
                runWatched("inverted", 1, 60,
                        () -> {
                            synchronized (a) {
                                both.countDown();
                                both.await();
                                synchronized (b) {
                                    check(false, "unreachable");
                                }
                            }
                        },
                        () -> {
                            synchronized (b) {
                                both.countDown();
                                both.await();
                                synchronized (a) {
                                    check(false, "unreachable");
                                }
                            }
                        });
            } catch (AssertionError e) {
                check(e.getMessage().startsWith("inverted: deadlock after 0 calls:"), "reported as " + e.getMessage());
                return;
            }
            throw new AssertionError("the watchdog did not report the deadlock");
        });

        test("threads: one shared generator and budget, serialised", () -> {
            DpmoRng r = new DpmoRng();
            PrivacyBudget b = new PrivacyBudget(1.0);
            AtomicInteger charged = new AtomicInteger(), refused = new AtomicInteger();
            List<Throwable> errors = new ArrayList<>();
            Thread[] ts = new Thread[8];
            for (int t = 0; t < ts.length; t++) {
                ts[t] = new Thread(() -> {
                    try {
                        for (int i = 0; i < 20000; i++) {
                            int j = Dpmo.selectPermuteAndFlip(r, SCORES, 1, 0.5);
                            if (j < 0 || j >= 4) throw new AssertionError("index " + j);
                        }
                        for (int i = 0; i < 4; i++) {
                            try {
                                Dpmo.selectExponential(r, SCORES, 1, 0.0625, b);
                                charged.incrementAndGet();
                            } catch (DpmoException e) {
                                if (e.status() != DpmoException.BUDGET_EXHAUSTED) throw e;
                                refused.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        synchronized (errors) {
                            errors.add(e);
                        }
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) t.join();
            check(errors.isEmpty(), "thread errors: " + errors);
            check(charged.get() == 16 && refused.get() == 16, "charged " + charged + ", refused " + refused);
            close(0, b.remaining(), 0, "budget spent exactly");
        });
    }

    /**
     * Runs {@code bodies} on one thread each, {@code iterations} times, and waits for them under a watchdog:
     * the run fails (instead of hanging) as soon as the JVM reports any of these threads deadlocked on
     * monitors, or when no thread completed an iteration for {@code stallSeconds} (a hang the JVM's detector
     * cannot see). The threads are daemons, so a failed run does not keep the JVM alive.
     */
    static void runWatched(String what, int iterations, long stallSeconds, Body... bodies) throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        AtomicInteger progress = new AtomicInteger();
        List<Throwable> errors = new ArrayList<>();
        Thread[] ts = new Thread[bodies.length];
        Set<Long> ids = new HashSet<>();
        for (int t = 0; t < ts.length; t++) {
            Body body = bodies[t];
            ts[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < iterations; i++) {
                        body.run();
                        progress.incrementAndGet();
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            }, what + "-" + t);
            ts[t].setDaemon(true);
            ids.add(ts[t].getId());
        }
        for (Thread t : ts) t.start();
        int last = -1;
        long lastChange = System.nanoTime();
        for (Thread t : ts) {
            while (t.isAlive()) {
                t.join(50);
                long[] dead = mx.findDeadlockedThreads();
                if (dead != null) {
                    StringBuilder sb = new StringBuilder();
                    for (java.lang.management.ThreadInfo info : mx.getThreadInfo(dead)) {
                        if (info != null && ids.contains(info.getThreadId())) {
                            sb.append("\n         ").append(info.getThreadName()).append(" waits for ")
                                    .append(info.getLockName()).append(" held by ").append(info.getLockOwnerName());
                        }
                    }
                    if (sb.length() > 0) {
                        throw new AssertionError(what + ": deadlock after " + progress.get() + " calls:" + sb);
                    }
                }
                int now = progress.get();
                if (now != last) {
                    last = now;
                    lastChange = System.nanoTime();
                } else if (System.nanoTime() - lastChange > stallSeconds * 1_000_000_000L) {
                    throw new AssertionError(what + ": no progress for " + stallSeconds + " s after " + now + " calls");
                }
            }
        }
        check(errors.isEmpty(), what + ": thread errors: " + errors);
    }

    public static void main(String[] args) {
        register();
        DiscoveryTest.register();
        DiscoveryPiecesTest.register();
        DistributedTest.register();
        int passed = 0, failed = 0;
        System.out.println("dpmo " + Dpmo.version() + " Java binding tests (" + System.getProperty("java.vm.name") + " "
                + System.getProperty("java.version") + ")");
        for (int i = 0; i < BODIES.size(); i++) {
            long t0 = System.nanoTime();
            try {
                BODIES.get(i).run();
                passed++;
                System.out.printf("ok   %-78s %6.0f ms%n", NAMES.get(i), (System.nanoTime() - t0) / 1e6);
            } catch (Throwable t) {
                failed++;
                System.out.println("FAIL " + NAMES.get(i) + ": " + t);
                for (StackTraceElement e : t.getStackTrace()) {
                    if (e.getClassName().startsWith("org.dpmo")) System.out.println("       at " + e);
                }
            }
        }
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
