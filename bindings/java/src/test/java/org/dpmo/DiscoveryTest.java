package org.dpmo;

import static org.dpmo.DpmoTest.check;
import static org.dpmo.DpmoTest.chiSquare;
import static org.dpmo.DpmoTest.close;
import static org.dpmo.DpmoTest.raises;
import static org.dpmo.DpmoTest.rng;
import static org.dpmo.DpmoTest.test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * (ε, δ) budgets, contribution bounding, partition selection and the unknown-domain top-k from Java (issue 23),
 * mirroring bindings/python/tests/test_discovery.py and test_bounding.py, plus the same outputs as the C ABI
 * from the same seed (src/test/c/discover_reference.c). Registered into {@link DpmoTest}'s run.
 */
final class DiscoveryTest {
    private DiscoveryTest() {}

    /** Every unit visits one of three popular items (1, 2, 3) and one item nobody else has (1000 + u). */
    static long[][] events(int nUnits) {
        long[] u = new long[2 * nUnits], i = new long[2 * nUnits];
        for (int x = 0; x < nUnits; x++) {
            u[2 * x] = x;
            u[2 * x + 1] = x;
            i[2 * x] = 1 + x % 3;
            i[2 * x + 1] = 1000 + x;
        }
        return new long[][] {u, i};
    }

    /** The events without those for which keep is false. */
    static long[][] filter(long[][] ev, java.util.function.IntPredicate keep) {
        int n = 0;
        for (int j = 0; j < ev[0].length; j++) if (keep.test(j)) n++;
        long[] u = new long[n], i = new long[n];
        int w = 0;
        for (int j = 0; j < ev[0].length; j++) {
            if (keep.test(j)) {
                u[w] = ev[0][j];
                i[w++] = ev[1][j];
            }
        }
        return new long[][] {u, i};
    }

    interface Call {
        void run(DpmoRng r, long[] units, long[] items);
    }

    /** The caller's generator, seen through its next draws after `call` ran on `ev`. */
    static double[] stateAfter(Call call, long[][] ev) {
        DpmoRng r = rng(7);
        call.run(r, ev[0], ev[1]);
        return r.sample(DpmoRng.DIST_UNIFORM, 4);
    }

    /** Nothing charged, and the generator seeded with `seed` has not moved. */
    static void unchanged(PrivacyBudget b, DpmoRng r, long seed) {
        check(b.spent() == 0.0 && b.deltaSpent() == 0.0, "charged: " + b);
        check(Arrays.equals(r.sample(DpmoRng.DIST_UNIFORM, 2), rng(seed).sample(DpmoRng.DIST_UNIFORM, 2)),
                "the generator moved");
    }

    static long[] longs(long... v) {
        return v;
    }

    /** Must match discover_reference.c's make_events(). */
    static Object[] referenceEvents() {
        long[] u = new long[2400], i = new long[2400];
        double[] v = new double[2400];
        int n = 0;
        for (int x = 0; x < 600; x++) {
            long unit = (x % 2 == 1 ? Long.MIN_VALUE : 0L) + 17L * x;
            long tz = Long.numberOfTrailingZeros(x + 1);
            u[n] = unit;
            i[n] = tz;
            v[n++] = (x % 5) - 1.5;
            u[n] = unit;
            i[n] = Long.MIN_VALUE + x % 3;
            v[n++] = 0.25 * (x % 9);
            u[n] = unit;
            i[n] = tz;
            v[n++] = 7.0;
            u[n] = unit;
            i[n] = 1000 + x;
            v[n++] = 1.0;
        }
        return new Object[] {u, i, v};
    }

    static String hex(double d) {
        return Double.toHexString(d);
    }

    static String parseHexLine(String line) {
        // C's %a writes "0x1.8p+1", Java's Double.toHexString "0x1.8p1": normalise the C line's doubles.
        StringBuilder sb = new StringBuilder();
        for (String tok : line.trim().split(" ")) {
            if (sb.length() > 0) sb.append(' ');
            sb.append(tok.startsWith("0x") || tok.startsWith("-0x") ? hex(Double.parseDouble(tok)) : tok);
        }
        return sb.toString();
    }

    static void register() {
        // ------------------------------------------------------------------------------- (ε, δ) budgets

        test("budget (eps, delta): the deltas add up, a refused charge changes nothing", () -> {
            PrivacyBudget b = new PrivacyBudget(1.0, 1e-6);
            check(b.total() == 1.0 && b.deltaTotal() == 1e-6 && b.deltaSpent() == 0.0 && b.remainingDelta() == 1e-6,
                    b.toString());
            b.charge(0.25, 5e-7);
            check(b.spent() == 0.25 && b.deltaSpent() == 5e-7, b.toString());
            raises(DpmoException.BUDGET_EXHAUSTED, () -> b.charge(0.25, 6e-7)); // 1.1e-6 > 1e-6
            check(b.spent() == 0.25 && b.deltaSpent() == 5e-7, "a refused charge changed " + b);
            b.charge(0.25); // a pure-ε charge spends no δ
            check(b.spent() == 0.5 && b.deltaSpent() == 5e-7, b.toString());
            check(b.toString().contains("delta=1.0E-6") && b.toString().contains("deltaSpent=5.0E-7"), b.toString());
            raises(DpmoException.INVALID_ARGUMENT, () -> b.charge(0.1, -1e-9));
            raises(DpmoException.INVALID_ARGUMENT, () -> b.charge(0.1, 1.0));
            raises(DpmoException.INVALID_ARGUMENT, () -> b.charge(0.1, Double.NaN));
            raises(DpmoException.INVALID_EPSILON, () -> b.charge(0.0, 1e-9));
            check(b.spent() == 0.5 && b.deltaSpent() == 5e-7, "a refused charge changed " + b);
            // A selection (pure ε) charged to an (ε, δ) budget keeps its δ: the shim carries all four fields.
            Dpmo.selectExponential(rng(1), DpmoTest.SMALL, 1, 0.25, b);
            check(b.spent() == 0.75 && b.deltaSpent() == 5e-7 && b.deltaTotal() == 1e-6, b.toString());
            // Charging exactly what is left succeeds, and then nothing is left.
            double e = b.remaining(), d = b.remainingDelta();
            check(d > 0 && d <= 1e-6 - 5e-7, "remaining delta " + d);
            b.charge(e, d);
            check(b.remaining() == 0.0 && b.spent() <= 1.0 && b.deltaSpent() <= 1e-6, b.toString());
            raises(DpmoException.INVALID_ARGUMENT, () -> new PrivacyBudget(1.0, 1.0));
            raises(DpmoException.INVALID_ARGUMENT, () -> new PrivacyBudget(1.0, -0.1));
            raises(DpmoException.INVALID_ARGUMENT, () -> new PrivacyBudget(1.0, Double.NaN));
            raises(DpmoException.INVALID_EPSILON, () -> new PrivacyBudget(0.0, 0.1));
        });

        test("budget (eps, delta): a pure-eps budget is unchanged and refuses any delta", () -> {
            for (PrivacyBudget pure : new PrivacyBudget[] {new PrivacyBudget(1.0), new PrivacyBudget(1.0, 0.0)}) {
                check(pure.deltaTotal() == 0.0 && pure.remainingDelta() == 0.0, pure.toString());
                check(pure.toString().equals("PrivacyBudget[total=1.0, spent=0.0]"), pure.toString());
                raises(DpmoException.BUDGET_EXHAUSTED, () -> pure.charge(0.5, 1e-9));
                check(pure.spent() == 0.0, "a refused charge changed " + pure);
                pure.charge(0.5);
                pure.charge(0.25, 0.0);
                check(pure.spent() == 0.75 && pure.deltaSpent() == 0.0, pure.toString());
            }
        });

        // ------------------------------------------------------------------------- partition selection

        test("partitions: every mechanism finds the popular items and never a lonely one; charged (eps, delta)", () -> {
            long[][] ev = events(3000);
            int[][] mechanisms = {{Dpmo.PARTITION_TRUNCATED_GEOMETRIC, 1}, {Dpmo.PARTITION_LAPLACE, 1},
                {Dpmo.PARTITION_GAUSSIAN, 1}, {Dpmo.PARTITION_WEIGHTED_GAUSSIAN, 1}, {Dpmo.PARTITION_SIPS, 3}};
            for (int[] m : mechanisms) {
                for (long seed = 0; seed < 3; seed++) {
                    PrivacyBudget b = new PrivacyBudget(2.0, 1e-5);
                    long[] found = Dpmo.discoverPartitions(rng(seed), ev[0], ev[1], 2, 1.0, 1e-6, m[0], m[1], b);
                    // 1,000 units on each popular item; one on each of the 3,000 others (a unit's item reveals it).
                    check(Arrays.equals(found, longs(1, 2, 3)), "mechanism " + m[0] + ": " + Arrays.toString(found));
                    check(b.spent() == 1.0 && b.deltaSpent() == 1e-6, b.toString());
                }
            }
            // The default mechanism (weighted Gaussian) and a secure generator.
            PrivacyBudget b = new PrivacyBudget(1.0, 1e-6);
            check(Arrays.equals(Dpmo.discoverPartitions(new DpmoRng(), ev[0], ev[1], 2, 1.0, 1e-6, b), longs(1, 2, 3)),
                    "default mechanism");
            check(b.remaining() == 0.0 && b.remainingDelta() == 0.0, b.toString());
        });

        test("partitions and top-k: no event is an empty dataset, not an error (still charged)", () -> {
            PrivacyBudget b = new PrivacyBudget(2.0, 1e-5);
            long[] none = new long[0];
            check(Dpmo.discoverPartitions(new DpmoRng(), none, none, 1, 1.0, 1e-6, b).length == 0, "released");
            TopKFromEvents r = Dpmo.discoverTopK(new DpmoRng(), none, none, 3, 3, 1, 0.5, 1e-6, b);
            check(r.items().length == 0 && r.stopped(), r.toString());
            // Pay what you get: ⊥ won the first round, which costs ε/k.
            close(0.5 / 3, r.epsilon(), 1e-15, "epsilon spent");
            close(1.0 + 0.5 / 3, b.spent(), 1e-15, "budget spent");
            check(b.deltaSpent() == 2e-6, b.toString());
            check(Dpmo.boundEvents(new DpmoRng(), none, none, 1, 1).size() == 0, "bounded totals of nothing");
        });

        // ---------------------------------------------------------------------------- unknown-domain top-k

        test("top-k: pays for what comes out", () -> {
            long[][] ev = events(3000);
            for (long seed = 0; seed < 3; seed++) {
                PrivacyBudget b = new PrivacyBudget(1.0, 1e-6);
                TopKFromEvents r = Dpmo.discoverTopK(rng(seed), ev[0], ev[1], 10, 20, 2, 1.0, 1e-6, b);
                long[] items = r.items();
                check(r.stopped() && items.length >= 1 && items.length <= 3, r.toString());
                for (long x : items) check(x >= 1 && x <= 3, "item " + x);
                close(0.1 * (items.length + 1), r.epsilon(), 1e-15, "epsilon spent");
                check(r.delta() == 1e-6, r.toString());
                check(b.spent() == r.epsilon() && b.deltaSpent() == 1e-6, "the budget is charged what the run spent");
            }
        });

        test("top-k: by sum with NaN values (a public rule, never an error)", () -> {
            long[][] ev = events(3000);
            double[] values = new double[ev[0].length];
            for (int j = 0; j < values.length; j++) values[j] = j % 2 == 0 ? 1 + (j / 2) % 7 : Double.NaN;
            TopKFromEvents r = Dpmo.discoverTopK(rng(5), ev[0], ev[1], values, Dpmo.SCORE_SUM, 3, 5, 2, 1, 0.0, 10.0,
                    3.0, 1e-6, null);
            check(r.items().length >= 1, r.toString());
            for (long x : r.items()) check(x >= 1 && x <= 3, "item " + x);
            TopKFromEvents e = Dpmo.discoverTopK(rng(6), ev[0], ev[1], null, Dpmo.SCORE_EVENTS, 5, 8, 3, 2, 0.0, 0.0,
                    1.0, 1e-6, null);
            for (long x : e.items()) check(x >= 1 && x <= 3, "item " + x);
        });

        test("top-k: exact probabilities (k = 1: the exponential mechanism with the threshold candidate)", () -> {
            // Item 10 has 3 units, 20 has 2, 30 has 1; L = 1, k̄ = 2, ε = 1, δ = 1/4. ⊥ sits at h₃ + Δ∞ +
            // ⌈Δ∞ ln(min(L, k̄)/δ)/ε₀⌉ = 1 + 1 + ⌈ln 4⌉ = 4, and P ∝ exp(ε₀ h): e³, e², e⁴.
            long[] u = {1, 2, 3, 4, 5, 6}, i = {10, 10, 10, 20, 20, 30};
            DpmoRng r = rng(11);
            int[] counts = new int[3];
            int draws = 20000;
            for (int t = 0; t < draws; t++) {
                TopKFromEvents o = Dpmo.discoverTopK(r, u, i, 1, 2, 1, 1.0, 0.25, null);
                long[] it = o.items();
                check(o.epsilon() == 1.0 && o.delta() == 0.25, o.toString());
                counts[o.stopped() ? 2 : it[0] == 10 ? 0 : 1]++;
                check(o.stopped() ? it.length == 0 : it.length == 1 && (it[0] == 10 || it[0] == 20), o.toString());
            }
            double[] p = DpmoTest.softmax(new double[] {3, 2, 4}, 1.0);
            chiSquare(counts, p, "unknown-domain top-1");
            // The checker catches a ⊥ placed without the ceiling (at 3 + ln 4 − 1 ... = 2 + ln 4): a broken variant.
            double[] broken = DpmoTest.softmax(new double[] {3, 2, 2 + Math.log(4)}, 1.0);
            boolean caught = false;
            try {
                chiSquare(counts, broken, "broken threshold candidate");
            } catch (AssertionError e) {
                caught = true;
            }
            check(caught, "the chi-square test did not reject a threshold candidate without the ceiling");
        });

        // ------------------------------------------------------------------------------ contribution bounding

        test("bounding: exact totals when nothing is dropped, sorted by item as unsigned words", () -> {
            // 100 units: each has the heavy item 7 twice (values 1 and 50), item 100 + u % 5 (value 2); unit 0
            // alone has item 2^63 (value 1e9).
            List<long[]> rows = new ArrayList<>();
            List<Double> vals = new ArrayList<>();
            for (long x = 0; x < 100; x++) {
                rows.add(longs(1000 + x, 7));
                vals.add(1.0);
                rows.add(longs(1000 + x, 100 + x % 5));
                vals.add(2.0);
                rows.add(longs(1000 + x, 7));
                vals.add(50.0);
            }
            rows.add(longs(1000, Long.MIN_VALUE));
            vals.add(1e9);
            long[] u = new long[rows.size()], i = new long[rows.size()];
            double[] v = new double[rows.size()];
            for (int j = 0; j < u.length; j++) {
                u[j] = rows.get(j)[0];
                i[j] = rows.get(j)[1];
                v[j] = vals.get(j);
            }
            BoundedEvents t = Dpmo.boundEvents(rng(3), u, i, v, 8, 8, 0.0, 10.0);
            check(t.size() == 7, t.toString());
            check(t.valueGrid() == 0x1p-16, "grid " + t.valueGrid()); // 10 <= 2^4: grid 2^(4 - 20)
            check(Arrays.equals(t.items(), longs(7, 100, 101, 102, 103, 104, Long.MIN_VALUE)),
                    Arrays.toString(t.items()));
            check(t.units()[0] == 100 && t.events()[0] == 200, "heavy item");
            check(t.sums()[0] == 100 * (1.0 + 10.0), "50 clamped to 10: " + t.sums()[0]);
            check(t.sums()[6] == 10.0 && t.sumUnits()[6] == 10 * 65536, "the lonely item's value clamped");
            for (int r = 1; r < 6; r++) check(t.units()[r] == 20 && t.events()[r] == 20, "item " + t.items()[r]);
            // L = 1, C = 1, no values: one unit, one event in all; grid 1.
            BoundedEvents one = Dpmo.boundEvents(rng(3), u, i, 1, 1);
            check(DpmoTest.sum(toDoubles(one.units())) == 100 && DpmoTest.sum(toDoubles(one.events())) == 100,
                    "one item per unit");
            check(one.valueGrid() == 1.0 && DpmoTest.sum(one.sums()) == 0.0, "no values");
            // NaN counts as 0, then clamped: [1, 2] gives 1.
            BoundedEvents nan = Dpmo.boundEvents(rng(3), longs(1), longs(0), new double[] {Double.NaN}, 1, 1, 1.0, 2.0);
            check(nan.sums()[0] == 1.0, "NaN value: " + nan.sums()[0]);
        });

        test("bounding: one unit with 10,000 events moves the totals by at most L and L C", () -> {
            java.util.Random rs = new java.util.Random(1);
            int n = 3000;
            long[] u = new long[n], i = new long[n];
            double[] v = new double[n];
            for (int j = 0; j < n; j++) {
                u[j] = rs.nextInt(200);
                i[j] = rs.nextInt(20);
                v[j] = 5 + 8 * rs.nextGaussian();
            }
            long[] au = new long[n + 10000], ai = new long[n + 10000];
            double[] av = new double[n + 10000];
            System.arraycopy(u, 0, au, 0, n);
            System.arraycopy(i, 0, ai, 0, n);
            System.arraycopy(v, 0, av, 0, n);
            for (int j = n; j < n + 10000; j++) {
                au[j] = -5; // sorts first as a signed id, last as an unsigned one
                ai[j] = j % 2 == 0 ? rs.nextInt(20) : 3;
                av[j] = 1e6 * rs.nextGaussian();
            }
            double lo = -2.0, hi = 10.0;
            for (int[] lc : new int[][] {{1, 1}, {3, 1}, {2, 4}}) {
                int l = lc[0], c = lc[1];
                for (long seed = 100; seed < 105; seed++) {
                    BoundedEvents without = Dpmo.boundEvents(rng(seed), u, i, v, l, c, lo, hi);
                    BoundedEvents with = Dpmo.boundEvents(rng(seed), au, ai, av, l, c, lo, hi);
                    check(Arrays.equals(without.items(), with.items()), "items");
                    long du = 0, de = 0;
                    double ds = 0;
                    for (int r = 0; r < with.size(); r++) {
                        long dUnits = with.units()[r] - without.units()[r];
                        long dEvents = with.events()[r] - without.events()[r];
                        double dSum = Math.abs(with.sums()[r] - without.sums()[r]);
                        check(dUnits >= 0 && dUnits <= 1 && dEvents >= 0 && dEvents <= c, "L " + l + " C " + c);
                        check(dSum <= c * 10.0, "sum moved by " + dSum);
                        du += dUnits;
                        de += dEvents;
                        ds += dSum;
                    }
                    check(du == l && de >= 1 && de <= (long) l * c && ds <= l * c * 10.0,
                            "moved " + du + " units, " + de + " events, " + ds);
                }
            }
        });

        test("bounding: choices are uniform (exact probabilities), a wrong distribution is caught", () -> {
            // One unit with 5 items, L = 2: each of the 10 pairs is kept with probability 1/10.
            DpmoRng r = rng(3);
            int[] pairs = new int[10];
            for (int t = 0; t < 5000; t++) {
                long[] kept = Dpmo.boundEvents(r, new long[5], longs(0, 1, 2, 3, 4), 2, 1).items();
                check(kept.length == 2 && kept[0] < kept[1], Arrays.toString(kept));
                int a = (int) kept[0], b = (int) kept[1];
                pairs[a * (9 - a) / 2 + b - a - 1]++; // the pair's rank among (0,1), (0,2), ..., (3,4)
            }
            double[] tenth = new double[10];
            Arrays.fill(tenth, 0.1);
            chiSquare(pairs, tenth, "pairs of items kept");
            // C = 1 of 4 events with values 0..3 on one item: each value kept with probability 1/4.
            int[] vals = new int[4];
            for (int t = 0; t < 4000; t++) {
                BoundedEvents b = Dpmo.boundEvents(r, new long[4], new long[4], new double[] {0, 1, 2, 3}, 1, 1, 0, 3);
                vals[(int) b.sums()[0]]++;
            }
            chiSquare(vals, new double[] {0.25, 0.25, 0.25, 0.25}, "event kept");
            boolean caught = false;
            try {
                chiSquare(vals, new double[] {0.4, 0.2, 0.2, 0.2}, "broken");
            } catch (AssertionError e) {
                caught = true;
            }
            check(caught, "the chi-square test did not reject a wrong distribution");
        });

        // ----------------------------------------------------------------------- what the generator shows

        test("generator: one key per call, the same on neighbouring event sets", () -> {
            // The attack: read the generator after a release to learn the data beyond the output. Removing one
            // unit (17, on the popular item 3), every event, or all but the lonely items must leave the caller's
            // generator in the same state: that of one key drawn, as one exact selection draws it.
            long[][] ev = events(300);
            long[][] without17 = filter(ev, j -> ev[0][j] != 17);
            long[][] empty = {new long[0], new long[0]};
            long[][] lonely = filter(ev, j -> ev[1][j] >= 1000);
            double[] oneKey = stateAfter((r, u, i) -> Dpmo.selectExponential(r, DpmoTest.SMALL, 1, 1), ev);
            double[] noCall = stateAfter((r, u, i) -> { }, ev);
            check(!Arrays.equals(oneKey, noCall), "the probe does not see consumption");
            Call[] calls = {
                (r, u, i) -> Dpmo.discoverPartitions(r, u, i, 2, 1.0, 1e-6, Dpmo.PARTITION_SIPS, 3, null),
                (r, u, i) -> Dpmo.discoverPartitions(r, u, i, 1, 1.0, 1e-6, Dpmo.PARTITION_TRUNCATED_GEOMETRIC, 1,
                        null),
                (r, u, i) -> Dpmo.discoverPartitions(r, u, i, 2, 1.0, 1e-6, Dpmo.PARTITION_LAPLACE, 1, null),
                (r, u, i) -> Dpmo.discoverTopK(r, u, i, 3, 10, 2, 1.0, 1e-6, null),
                (r, u, i) -> Dpmo.discoverTopK(r, u, i, null, Dpmo.SCORE_EVENTS, 5, 8, 3, 2, 0, 0, 1.0, 1e-6, null),
                (r, u, i) -> Dpmo.boundEvents(r, u, i, 2, 1),
            };
            for (int c = 0; c < calls.length; c++) {
                for (long[][] data : new long[][][] {ev, without17, empty, lonely}) {
                    check(Arrays.equals(stateAfter(calls[c], data), oneKey), "call " + c + ": not one key");
                }
            }
        });

        // ------------------------------------------------------- argument errors: nothing charged, nothing drawn

        test("partitions: argument errors charge nothing and draw nothing", () -> {
            long[][] ev = events(50);
            long[] u = ev[0], i = ev[1];
            PrivacyBudget b = new PrivacyBudget(5.0, 1e-3);
            int G = Dpmo.PARTITION_GAUSSIAN, S = Dpmo.PARTITION_SIPS;
            Object[][] cases = { // status, L, ε, δ, mechanism, rounds
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1e-6, 5, 1},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1e-6, -1, 1},
                {DpmoException.INVALID_EPSILON, 2, 0.0, 1e-6, G, 1},
                {DpmoException.INVALID_EPSILON, 2, Double.NaN, 1e-6, G, 1},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 0.0, G, 1},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1.0, G, 1},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 0x1p-301, G, 1},
                {DpmoException.INVALID_ARGUMENT, 0, 1.0, 1e-6, G, 1},
                {DpmoException.INVALID_ARGUMENT, -1, 1.0, 1e-6, G, 1},
                {DpmoException.INVALID_ARGUMENT, Dpmo.DISCOVER_MAX_ITEMS + 1, 1.0, 1e-6, G, 1},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1e-6, S, 9},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1e-6, S, 0},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1e-6, G, 2},
                {DpmoException.INVALID_ARGUMENT, 2, 1.0, 1e-6, G, 0},
                {DpmoException.INVALID_ARGUMENT, 2, 1e-12, 1e-6, Dpmo.PARTITION_LAPLACE, 1},
            };
            for (Object[] c : cases) {
                DpmoRng r = rng(1);
                raises((Integer) c[0], () -> Dpmo.discoverPartitions(r, u, i, (Integer) c[1], (Double) c[2],
                        (Double) c[3], (Integer) c[4], (Integer) c[5], b));
                unchanged(b, r, 1);
            }
            DpmoRng r = rng(1);
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.discoverPartitions(r, Arrays.copyOf(u, u.length - 1), i, 2, 1.0, 1e-6, b));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.discoverPartitions(r, null, i, 2, 1.0, 1e-6, b));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.discoverPartitions(r, u, null, 2, 1.0, 1e-6, b));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.discoverPartitions(null, u, i, 2, 1.0, 1e-6, b));
            unchanged(b, r, 1);
        });

        test("top-k: argument errors charge nothing and draw nothing", () -> {
            long[][] ev = events(50);
            long[] u = ev[0], i = ev[1];
            double[] ones = new double[u.length];
            Arrays.fill(ones, 1.0);
            PrivacyBudget b = new PrivacyBudget(5.0, 1e-3);
            int U = Dpmo.SCORE_UNITS, SUM = Dpmo.SCORE_SUM;
            Object[][] cases = { // status, values, score, k, k̄, L, C, lo, hi, ε, δ
                {DpmoException.INVALID_ARGUMENT, null, U, 0, 10, 2, 1, 0.0, 0.0, 1.0, 1e-6},
                {DpmoException.INVALID_ARGUMENT, null, U, 11, 10, 2, 1, 0.0, 0.0, 1.0, 1e-6}, // k > k̄
                {DpmoException.INVALID_ARGUMENT, null, U, -1, 10, 2, 1, 0.0, 0.0, 1.0, 1e-6},
                {DpmoException.INVALID_ARGUMENT, null, U, 3, -10, 2, 1, 0.0, 0.0, 1.0, 1e-6},
                {DpmoException.INVALID_ARGUMENT, null, 3, 3, 10, 2, 1, 0.0, 0.0, 1.0, 1e-6}, // unknown score
                {DpmoException.INVALID_ARGUMENT, null, SUM, 3, 10, 2, 1, 0.0, 0.0, 1.0, 1e-6}, // no values
                {DpmoException.INVALID_ARGUMENT, ones, SUM, 3, 10, 2, 1, -1.0, 1.0, 1.0, 1e-6}, // lo < 0
                {DpmoException.INVALID_ARGUMENT, null, U, 3, 10, 2, 1, 0.0, 1.0, 1.0, 1e-6}, // a clamp, no values
                {DpmoException.INVALID_EPSILON, null, U, 3, 10, 2, 1, 0.0, 0.0, -1.0, 1e-6},
                {DpmoException.INVALID_ARGUMENT, null, U, 3, 10, 2, 1, 0.0, 0.0, 1.0, 0.0},
                {DpmoException.INVALID_ARGUMENT, null, U, 3, 10, 2, 0, 0.0, 0.0, 1.0, 1e-6}, // C = 0
                {DpmoException.INVALID_ARGUMENT, null, U, 3, 10, 0, 1, 0.0, 0.0, 1.0, 1e-6}, // L = 0
            };
            for (Object[] c : cases) {
                DpmoRng r = rng(2);
                raises((Integer) c[0], () -> Dpmo.discoverTopK(r, u, i, (double[]) c[1], (Integer) c[2],
                        (Integer) c[3], (Integer) c[4], (Integer) c[5], (Integer) c[6], (Double) c[7], (Double) c[8],
                        (Double) c[9], (Double) c[10], b));
                unchanged(b, r, 2);
            }
            DpmoRng r = rng(2);
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.discoverTopK(r, u, i, new double[3], Dpmo.SCORE_SUM, 3,
                    10, 2, 1, 0.0, 1.0, 1.0, 1e-6, b));
            raises(DpmoException.LENGTH_MISMATCH,
                    () -> Dpmo.discoverTopK(r, u, Arrays.copyOf(i, 3), 3, 10, 2, 1.0, 1e-6, b));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.discoverTopK(r, u, null, 3, 10, 2, 1.0, 1e-6, b));
            unchanged(b, r, 2);
        });

        test("bounding: argument errors draw nothing", () -> {
            long[] u = {1, 2, 3}, i = {4, 5, 6};
            double[] v = {1, 2, 3};
            DpmoRng r = rng(4);
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.boundEvents(r, u, i, v, 0, 1, 0, 1));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.boundEvents(r, u, i, v, 1, 0, 0, 1));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.boundEvents(r, u, i, v, -1, 1, 0, 1));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.boundEvents(r, u, i, v, 1, 1, 2, 1)); // lo > hi
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.boundEvents(r, u, i, v, 1, 1, 0, Double.NaN));
            raises(DpmoException.INVALID_ARGUMENT, () -> Dpmo.boundEvents(r, u, i, null, 1, 1, 0, 1));
            raises(DpmoException.LENGTH_MISMATCH, () -> Dpmo.boundEvents(r, u, i, new double[2], 1, 1, 0, 1));
            raises(DpmoException.NULL_POINTER, () -> Dpmo.boundEvents(r, null, i, 1, 1));
            unchanged(new PrivacyBudget(1.0), r, 4);
        });

        test("partitions and top-k: a pure-eps or exhausted budget refuses, and nothing happens", () -> {
            long[][] ev = events(50);
            PrivacyBudget pure = new PrivacyBudget(5.0);
            DpmoRng r = rng(3);
            raises(DpmoException.BUDGET_EXHAUSTED, () -> Dpmo.discoverPartitions(r, ev[0], ev[1], 2, 1.0, 1e-6, pure));
            raises(DpmoException.BUDGET_EXHAUSTED,
                    () -> Dpmo.discoverTopK(r, ev[0], ev[1], 2, 2, 2, 1.0, 1e-6, pure));
            unchanged(pure, r, 3);
            // The whole (ε, δ) is charged up front: too little left refuses, even if the run could stop early.
            PrivacyBudget small = new PrivacyBudget(1.0, 1e-3);
            DpmoRng r2 = rng(3);
            raises(DpmoException.BUDGET_EXHAUSTED,
                    () -> Dpmo.discoverTopK(r2, ev[0], ev[1], 2, 10, 2, 2.0, 1e-6, small));
            unchanged(small, r2, 3);
            PrivacyBudget fewDelta = new PrivacyBudget(5.0, 1e-7);
            DpmoRng r3 = rng(3);
            raises(DpmoException.BUDGET_EXHAUSTED,
                    () -> Dpmo.discoverPartitions(r3, ev[0], ev[1], 2, 1.0, 1e-6, fewDelta));
            unchanged(fewDelta, r3, 3);
        });

        // ------------------------------------------------------------------------------- against the C ABI

        test("discovery: the same seed gives the C ABI's outputs (src/test/c/discover_reference.c)", () -> {
            String path = System.getProperty("dpmo.test.discoverReference");
            check(path != null, "run with -Ddpmo.test.discoverReference=<output of discover_reference> (make unit-tests)");
            List<String> expected = new ArrayList<>();
            for (String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
                expected.add(parseHexLine(line));
            }
            Object[] evs = referenceEvents();
            long[] u = (long[]) evs[0], i = (long[]) evs[1];
            double[] v = (double[]) evs[2];
            byte[] seed = new byte[32];
            for (int j = 0; j < 32; j++) seed[j] = (byte) j;
            DpmoRng r = new DpmoRng(seed);
            PrivacyBudget b = new PrivacyBudget(100.0, 0.01);
            List<String> mine = new ArrayList<>();
            BoundedEvents t = Dpmo.boundEvents(r, u, i, v, 2, 1, -1.0, 3.0);
            StringBuilder sb = new StringBuilder("bound " + hex(t.valueGrid()));
            for (int row = 0; row < t.size(); row++) {
                sb.append(' ').append(Long.toUnsignedString(t.items()[row])).append(' ').append(t.units()[row])
                        .append(' ').append(t.events()[row]).append(' ').append(t.sumUnits()[row]);
            }
            mine.add(sb.toString());
            for (int m = 0; m <= Dpmo.PARTITION_SIPS; m++) {
                long[] found = Dpmo.discoverPartitions(r, u, i, 2, 1.0, 1e-6, m, m == Dpmo.PARTITION_SIPS ? 3 : 1, b);
                sb = new StringBuilder("partitions " + m);
                for (long x : found) sb.append(' ').append(Long.toUnsignedString(x));
                mine.add(sb.toString());
            }
            Object[][] runs = { // score, k, k̄, L, C, values, lo, hi, ε (as the C program)
                {Dpmo.SCORE_UNITS, 3, 5, 2, 1, false, 0.0, 0.0, 4.0},
                {Dpmo.SCORE_EVENTS, 4, 6, 3, 2, false, 0.0, 0.0, 6.0},
                {Dpmo.SCORE_SUM, 4, 8, 2, 2, true, 0.0, 4.0, 5.0},
                {Dpmo.SCORE_UNITS, 6, 10, 1, 1, false, 0.0, 0.0, 1.0},
            };
            for (int j = 0; j < runs.length; j++) {
                Object[] c = runs[j];
                TopKFromEvents o = Dpmo.discoverTopK(r, u, i, (Boolean) c[5] ? v : null, (Integer) c[0],
                        (Integer) c[1], (Integer) c[2], (Integer) c[3], (Integer) c[4], (Double) c[6], (Double) c[7],
                        (Double) c[8], 1e-6, b);
                sb = new StringBuilder("topk " + j + " " + (o.stopped() ? 1 : 0) + " " + hex(o.epsilon()) + " "
                        + hex(o.delta()));
                for (long x : o.items()) sb.append(' ').append(Long.toUnsignedString(x));
                mine.add(sb.toString());
            }
            mine.add("budget " + hex(b.total()) + " " + hex(b.spent()) + " " + hex(b.deltaTotal()) + " "
                    + hex(b.deltaSpent()));
            double[] after = r.sample(DpmoRng.DIST_UNIFORM, 2);
            mine.add("after " + hex(after[0]) + " " + hex(after[1]));
            check(mine.size() == expected.size(), mine.size() + " lines against the C ABI's " + expected.size());
            for (int j = 0; j < mine.size(); j++) {
                check(mine.get(j).equals(expected.get(j)), "line " + j + ":\n  Java:  " + mine.get(j)
                        + "\n  C ABI: " + expected.get(j));
            }
            // The outputs are not trivial: something was released, and signed and unsigned orders differ.
            check(mine.get(1).split(" ").length > 2, "partitions released nothing: " + mine.get(1));
        });
    }

    static double[] toDoubles(long[] v) {
        double[] d = new double[v.length];
        for (int j = 0; j < v.length; j++) d[j] = v[j];
        return d;
    }
}
