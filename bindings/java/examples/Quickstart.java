import org.dpmo.Dpmo;
import org.dpmo.DpmoException;
import org.dpmo.DpmoRng;
import org.dpmo.PrivacyBudget;
import org.dpmo.Sensitivity;

/**
 * An online shop privately chooses which products to feature (the Java twin of examples-c/quickstart.c).
 * Each count is the number of distinct customers who bought the product: one customer changes each count by
 * at most 1, so the global sensitivity is 1.
 *
 * Run: make -C bindings/java example
 */
public final class Quickstart {
    static final String[] PRODUCTS = {"wireless earbuds", "espresso machine", "running shoes", "desk lamp",
        "yoga mat", "board game", "water bottle", "phone charger"};
    static final double[] BUYERS = {1204, 950, 1201, 400, 90, 15, 600, 1198};
    /** A second objective per product: average rating x 100. PrivPareto's global mechanism needs no Δ_i: the
     * Pareto score's sensitivity is n - 1 whatever the objectives. */
    static final double[] RATING = {410, 455, 470, 430, 480, 300, 390, 420};

    public static void main(String[] args) {
        DpmoRng rng = new DpmoRng();                 // ChaCha20 seeded from SecureRandom
        PrivacyBudget budget = new PrivacyBudget(1.0);

        double[] p = Dpmo.exponentialProbabilities(BUYERS, 1.0, 0.01);
        System.out.println("exponential mechanism at epsilon = 0.01, exact probabilities:");
        for (int i = 0; i < p.length; i++) System.out.printf("  %-17s %6.0f buyers  P = %.4f%n", PRODUCTS[i], BUYERS[i], p[i]);

        int pick = Dpmo.selectExponential(rng, BUYERS, 1.0, 0.25, budget);
        System.out.println("featured (exponential, eps 0.25):      " + PRODUCTS[pick]);
        pick = Dpmo.selectPermuteAndFlip(rng, BUYERS, 1.0, 0.25, budget);
        System.out.println("featured (permute-and-flip, eps 0.25): " + PRODUCTS[pick]);

        int[] top = Dpmo.selectTopK(rng, Dpmo.SELECTOR_PERMUTE_AND_FLIP, BUYERS, 1.0, 0.25, 3, budget);
        StringBuilder names = new StringBuilder();
        for (int t : top) names.append(names.length() == 0 ? "" : ", ").append(PRODUCTS[t]);
        System.out.println("top 3 (permute-and-flip, eps 0.25):    " + names);

        // Two objectives, buyers and rating: PrivPareto (global) picks one product of the Pareto front.
        double[] util = new double[2 * BUYERS.length];
        for (int r = 0; r < BUYERS.length; r++) {
            util[2 * r] = BUYERS[r];
            util[2 * r + 1] = RATING[r];
        }
        int[] front = Dpmo.selectPrivPareto(rng, util, 2, Dpmo.DOMINANCE_TEXTBOOK, Dpmo.SELECTOR_EXPONENTIAL, 0.25, 1,
                budget);
        System.out.println("PrivPareto (buyers, rating), eps 0.25: " + PRODUCTS[front[0]]);
        System.out.printf("budget left: %.2f%n", budget.remaining());

        try {
            Dpmo.selectExponential(rng, BUYERS, 1.0, 0.25, budget);
        } catch (DpmoException e) {
            System.out.println("one more selection: DpmoException " + e.status() + ": " + e.getMessage());
        }
        // A NaN utility is private data, not an error: it counts as the lowest score and the call is charged as
        // usual, so no status tells the analyst whether the data holds one.
        PrivacyBudget other = new PrivacyBudget(1.0);
        int nanPick = Dpmo.selectLocalDampening(rng, new double[] {1, Double.NaN},
                Sensitivity.perCandidate(new double[] {1, 1}, 1, 4), Dpmo.DAMPENING_SHIFTED, Dpmo.SELECTOR_EXPONENTIAL,
                0.5, other);
        System.out.printf("NaN utility: no error, the lowest score (picked %d), charged %.2f%n", nanPick, other.spent());
    }
}
