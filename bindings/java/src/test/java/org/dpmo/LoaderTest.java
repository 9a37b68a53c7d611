package org.dpmo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * One JVM per case of src/test/sh/loader-test.sh: how the native library is found and checked.
 *
 * <ul>
 *   <li>{@code ok SOURCE_PREFIX}: the first use loads the library from a source whose description starts with
 *       SOURCE_PREFIX, the version is the jar's, a selection runs, and a bundled copy was deleted after
 *       loading.</li>
 *   <li>{@code fail TEXT...}: the first use throws UnsatisfiedLinkError whose message contains every TEXT, and
 *       so does a second use (no half-initialised binding).</li>
 * </ul>
 * Exit status 0 when the case holds, 1 otherwise.
 */
public final class LoaderTest {
    private LoaderTest() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (mode.equals("ok")) {
            String version = Dpmo.version();
            String source = NativeLibrary.source();
            check(source != null && source.startsWith(args[1]), "loaded from '" + source + "', expected '" + args[1] + "...'");
            check(version.equals(System.getProperty("expect.version")), "version " + version);
            int pick = Dpmo.selectExponential(new DpmoRng(), new double[] {1, 2, 3}, 1, 1, new PrivacyBudget(1));
            check(pick >= 0 && pick < 3, "selection " + pick);
            if (source.startsWith("bundled")) {
                String copy = source.substring(source.indexOf("extracted to ") + 13, source.indexOf(", then deleted"));
                Path p = Paths.get(copy);
                check(!Files.exists(p) && !Files.exists(p.getParent()), "the extracted copy " + p + " is still there");
            }
            System.out.println("loader ok: dpmo " + version + " from " + source);
        } else if (mode.equals("fail")) {
            for (int attempt = 1; attempt <= 2; attempt++) {
                try {
                    System.out.println("unexpected: loaded dpmo " + Dpmo.version() + " from " + NativeLibrary.source());
                    System.exit(1);
                } catch (UnsatisfiedLinkError e) {
                    for (int i = 1; i < args.length; i++) {
                        check(e.getMessage().contains(args[i]), "message lacks '" + args[i] + "': " + e.getMessage());
                    }
                    if (attempt == 1) System.out.println("loader refused: " + e.getMessage());
                } catch (NoClassDefFoundError e) {
                    // The second use of a class whose initialisation failed: still refused.
                    check(attempt == 2, "NoClassDefFoundError on the first use: " + e);
                }
            }
        } else {
            throw new IllegalArgumentException(mode);
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            System.out.println("FAIL " + what);
            System.exit(1);
        }
    }
}
