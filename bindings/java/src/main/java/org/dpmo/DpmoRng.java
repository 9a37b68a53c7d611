package org.dpmo;

import java.security.SecureRandom;

/**
 * A dpmo random generator: the 64-byte {@code dpmo_rng} state, held in this object and advanced by every
 * selection that draws from it.
 *
 * <p>{@link #DpmoRng()} seeds ChaCha20 (cryptographically secure) from {@link SecureRandom}: use it for
 * real releases. The explicit-seed constructors exist for reproducible tests and simulations; a known seed
 * makes the output predictable, which voids the privacy guarantee. {@link #XOSHIRO256PP} is fast but
 * <b>not cryptographically secure</b> (its state can be recovered from its outputs): simulations and tests
 * only.
 *
 * <p>Thread safety: one generator may be shared by threads; calls that draw from it are serialised by a
 * private lock of the generator (never the generator object itself), always taken after the budget's (see
 * {@link Dpmo}, "Threads and lock order"), so no {@code synchronized} block of yours can deadlock a call.
 * Threads that each keep their own generator never wait for each other. This class is deliberately neither {@code Cloneable} nor
 * {@code Serializable}: two copies of a state would repeat randomness.
 *
 * <p>Processes: the JVM never forks a copy of itself ({@code ProcessBuilder} starts a new program, which holds no
 * generator), so a generator cannot be copied into another process and no process check is made (it could
 * never fire). A JVM snapshot restored more than once (CRaC, AWS Lambda SnapStart, a cloned VM) does copy every
 * generator, undetectably from inside: create generators after the restore, never before a checkpoint.
 */
public final class DpmoRng {
    /** ChaCha20, cryptographically secure (the default). */
    public static final int CHACHA20 = 0;
    /** Xoshiro256++: fast and reproducible, NOT cryptographically secure. Tests and simulations only. */
    public static final int XOSHIRO256PP = 1;

    /** Uniform on (0, 1). */
    public static final int DIST_UNIFORM = 0;
    /** Standard exponential (rate 1). */
    public static final int DIST_EXPONENTIAL = 1;
    /** Standard Gumbel. */
    public static final int DIST_GUMBEL = 2;
    /** Standard Laplace. */
    public static final int DIST_LAPLACE = 3;

    static {
        Dpmo.load();
    }

    /** The opaque {@code dpmo_rng} state (8 x uint64), read and written only by the JNI shim; its monitor is
     * the generator's lock. */
    private final long[] state = new long[8];
    private final int kind;

    /** ChaCha20 seeded with 32 bytes from {@link SecureRandom}. */
    public DpmoRng() {
        this(CHACHA20, secureSeed());
    }

    /**
     * ChaCha20 from an explicit seed (reproducible: for tests only).
     *
     * @param seed 32 bytes
     * @throws DpmoException NULL_POINTER for a null seed, LENGTH_MISMATCH unless it has 32 bytes
     */
    public DpmoRng(byte[] seed) {
        this(CHACHA20, seed);
    }

    /**
     * Generator {@code kind} from an explicit 32-byte seed.
     *
     * @param kind {@link #CHACHA20} or {@link #XOSHIRO256PP}
     * @param seed 32 bytes
     * @throws DpmoException NULL_POINTER for a null seed, LENGTH_MISMATCH unless it has 32 bytes,
     *     INVALID_ARGUMENT for an unknown kind
     */
    public DpmoRng(int kind, byte[] seed) {
        init(state, kind, seed);
        this.kind = kind;
    }

    /**
     * ChaCha20 keyed by 32 bytes from the operating system's secure source, read by the C library itself
     * ({@code dpmo_rng_init_os}: getrandom(2) on Linux).
     *
     * @return a new generator
     * @throws DpmoException UNSUPPORTED where the C library has no such source (use {@link #DpmoRng()})
     */
    public static DpmoRng fromOs() {
        return new DpmoRng(CHACHA20);
    }

    /** A ChaCha20 generator seeded by the C library from the operating system ({@link #fromOs()}). */
    private DpmoRng(int kind) {
        initOs(state);
        this.kind = kind;
    }

    /**
     * Generator {@code kind} seeded with 32 bytes from {@link SecureRandom}.
     *
     * @param kind {@link #CHACHA20} or {@link #XOSHIRO256PP}
     * @return a new generator
     */
    public static DpmoRng secure(int kind) {
        return new DpmoRng(kind, secureSeed());
    }

    /**
     * A reproducible generator from a {@code long} (expanded to 32 bytes by splitmix64): convenient in tests.
     * Not for releases.
     *
     * @param kind {@link #CHACHA20} or {@link #XOSHIRO256PP}
     * @param seed any value; nearby seeds give unrelated states
     * @return a new generator
     */
    public static DpmoRng seeded(int kind, long seed) {
        byte[] s = new byte[32];
        long x = seed;
        for (int i = 0; i < 32; i++) {
            // splitmix64 expansion, so that nearby seeds give unrelated states
            if (i % 8 == 0) {
                x += 0x9E3779B97F4A7C15L;
                long z = x;
                z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
                z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
                z = z ^ (z >>> 31);
                for (int j = 0; j < 8; j++) {
                    s[i + j] = (byte) (z >>> (8 * j));
                }
            }
        }
        return new DpmoRng(kind, s);
    }

    /**
     * The kind of generator.
     *
     * @return {@link #CHACHA20} or {@link #XOSHIRO256PP}
     */
    public int kind() {
        return kind;
    }

    /**
     * {@code count} independent draws from a standard distribution ({@link #DIST_UNIFORM},
     * {@link #DIST_EXPONENTIAL}, {@link #DIST_GUMBEL}, {@link #DIST_LAPLACE}), in floating point. For tests,
     * audits and simulation only: never add these to a value you release (floating-point noise leaks the value,
     * Mironov 2012); use {@link #sampleDiscreteLaplace(double, double, int)} for that.
     *
     * @param distribution one of the {@code DIST_*} constants
     * @param count how many draws (≥ 0)
     * @return the draws
     * @throws DpmoException INVALID_ARGUMENT for an unknown distribution or a negative count
     */
    public double[] sample(int distribution, int count) {
        return sample(this, distribution, count);
    }

    /**
     * {@code count} independent exact draws Z of the discrete Laplace distribution
     * P(Z = z) ∝ exp(−|z| · granularity / scale) on the integers (Canonne, Kamath &amp; Steinke 2020): the noise
     * for releasing a value. To release f(x) with sensitivity Δ under ε-DP, round f(x) to a multiple of
     * {@code granularity} (or use an integer count and granularity 1), take scale = Δ / ε, and release
     * f(x) + granularity · Z. Every coin is exact, so the released values are immune to the floating-point
     * attack on the Laplace mechanism.
     *
     * @param scale the scale, Δ / ε (finite, &gt; 0)
     * @param granularity the spacing of the released values (finite, &gt; 0); scale / granularity must lie in
     *     [2<sup>-64</sup>, 2<sup>32</sup>]
     * @param count how many draws (≥ 0)
     * @return the draws Z (multiply by granularity)
     * @throws DpmoException INVALID_ARGUMENT for a bad scale, granularity or count
     */
    public long[] sampleDiscreteLaplace(double scale, double granularity, int count) {
        return sampleDiscreteLaplace(this, scale, granularity, count);
    }

    @Override
    public String toString() {
        return "DpmoRng[" + (kind == CHACHA20 ? "ChaCha20" : "Xoshiro256++") + "]";
    }

    private static byte[] secureSeed() {
        byte[] seed = new byte[32];
        new SecureRandom().nextBytes(seed);
        return seed;
    }

    private static native void init(long[] state, int kind, byte[] seed);

    private static native double[] sample(DpmoRng rng, int distribution, int count);

    private static native void initOs(long[] state);

    private static native long[] sampleDiscreteLaplace(DpmoRng rng, double scale, double granularity, int count);
}
