package example;

import org.dpmo.Dpmo;
import org.dpmo.DpmoException;
import org.dpmo.DpmoRng;
import org.dpmo.PrivacyBudget;

/**
 * The smallest application of dpmo: pick the most popular of four items privately, twice, against a budget,
 * and show that a third pick is refused. Run with nothing but the dpmo jar on the class path.
 */
public final class Consumer {
    private Consumer() {}

    public static void main(String[] args) {
        double[] votes = {120, 95, 130, 40}; // one person changes one count by at most 1: sensitivity 1
        DpmoRng rng = new DpmoRng();          // ChaCha20 seeded from SecureRandom
        PrivacyBudget budget = new PrivacyBudget(1.0);
        int first = Dpmo.selectExponential(rng, votes, 1.0, 0.5, budget);
        int second = Dpmo.selectPermuteAndFlip(rng, votes, 1.0, 0.5, budget);
        System.out.println("dpmo " + Dpmo.version() + ": picks " + first + " and " + second
                + ", budget left " + budget.remaining());
        try {
            Dpmo.selectExponential(rng, votes, 1.0, 0.5, budget);
            System.out.println("third pick: not refused");
            System.exit(1);
        } catch (DpmoException e) {
            System.out.println("third pick refused: " + e.getMessage());
        }
    }
}
