package org.dpmo;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Properties;

/**
 * Finds, loads and checks the JNI library {@code libdpmo_jni.so} once per class loader.
 *
 * <p>Where it comes from, first match wins:
 * <ol>
 *   <li>the absolute path in the system property {@code dpmo.library}, when set;</li>
 *   <li>the copy this jar carries for the running platform, {@code org/dpmo/native/<os>-<arch>/} (e.g.
 *       {@code linux-x86_64/libdpmo_jni.so}): extracted into a fresh directory that only this user can read
 *       (under {@code dpmo.tmpdir}, default {@code java.io.tmpdir}), loaded, then deleted (the loaded
 *       mapping stays valid);</li>
 *   <li>{@code System.loadLibrary("dpmo_jni")}, that is {@code java.library.path}, for platforms the jar
 *       carries nothing for.</li>
 * </ol>
 *
 * <p>Then the library must be the one this jar was built with: the same dpmo version (the C library's
 * {@code dpmo_version()}) and the same JNI signature (a hash of the native method declarations). Anything
 * else fails with an {@link UnsatisfiedLinkError} that says which library was found and what was expected,
 * before any dpmo call can run.
 */
final class NativeLibrary {
    /** The library's base name: {@code System.mapLibraryName} gives {@code libdpmo_jni.so} on Linux. */
    static final String NAME = "dpmo_jni";

    /** Where the loaded library came from (null until loaded): for messages and the tests. */
    private static String source;

    private NativeLibrary() {}

    /** Loads and checks the library once; throws UnsatisfiedLinkError with a clear message otherwise. */
    static synchronized void load() {
        if (source != null) {
            return;
        }
        Properties build = buildProperties();
        String expectedVersion = build.getProperty("version", "?");
        String expectedSignature = build.getProperty("jni", "?");
        String from = loadFromFirstSource(expectedVersion);
        String version;
        try {
            version = Dpmo.version();
        } catch (UnsatisfiedLinkError e) {
            throw linkError("the native library " + from + " is not a dpmo JNI library (no dpmo version)", e);
        }
        if (!expectedVersion.equals(version)) {
            throw linkError("the native library " + from + " is dpmo " + version + ", but this jar (org.dpmo:dpmo:"
                    + expectedVersion + ") needs dpmo " + expectedVersion + ": " + remedy(from), null);
        }
        String signature;
        try {
            signature = jniSignature();
        } catch (UnsatisfiedLinkError e) {
            signature = "none";
        }
        if (!expectedSignature.equals(signature)) {
            throw linkError("the native library " + from + " (dpmo " + version + ") was built from other Java"
                    + " sources than this jar (JNI signature " + signature + ", expected " + expectedSignature
                    + "): " + remedy(from), null);
        }
        source = from;
    }

    /** What to do when the library found does not match the jar, by where it was found. */
    private static String remedy(String from) {
        if (from.startsWith("-Ddpmo.library")) {
            return "point -Ddpmo.library to the libdpmo_jni.so built with this jar, or leave it unset to use the"
                    + " copy the jar carries";
        }
        if (from.startsWith("bundled")) {
            return "this jar was assembled from mismatched parts; rebuild it (make -C bindings/java build)";
        }
        return "put the libdpmo_jni.so built with this jar on java.library.path, or pass -Ddpmo.library";
    }

    /** Where the library was loaded from, or null before {@link #load()} succeeded. */
    static synchronized String source() {
        return source;
    }

    /** The platform directory name of the running JVM, e.g. {@code linux-x86_64}. */
    static String platform() {
        String os = System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "unknown").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "macos";
        } else if (os.startsWith("windows")) {
            os = "windows";
        } else {
            os = os.replaceAll("[^a-z0-9]+", "");
        }
        if (arch.equals("amd64") || arch.equals("x86_64") || arch.equals("x64")) {
            arch = "x86_64";
        } else if (arch.equals("aarch64") || arch.equals("arm64")) {
            arch = "aarch64";
        } else {
            arch = arch.replaceAll("[^a-z0-9_]+", "");
        }
        return os + "-" + arch;
    }

    /** Loads from the first source that applies; returns a description of it. */
    private static String loadFromFirstSource(String version) {
        String explicit = System.getProperty("dpmo.library");
        if (explicit != null && !explicit.isEmpty()) {
            String from = "-Ddpmo.library=" + explicit;
            try {
                System.load(explicit);
            } catch (UnsatisfiedLinkError e) {
                throw linkError("cannot load the native library " + from + " (it must be the absolute path of a"
                        + " libdpmo_jni.so built for this platform, " + platform() + "): " + e.getMessage(), e);
            }
            return from;
        }
        String platform = platform();
        String file = System.mapLibraryName(NAME);
        String resource = "native/" + platform + "/" + file;
        URL bundled = NativeLibrary.class.getResource(resource);
        if (bundled != null) {
            return loadBundled(bundled, platform, file, version);
        }
        try {
            System.loadLibrary(NAME);
        } catch (UnsatisfiedLinkError e) {
            String carried = buildProperties().getProperty("platforms", "");
            throw linkError("this jar carries no native library for " + platform + " (it carries: "
                    + (carried.isEmpty() ? "none" : carried) + ") and " + file + " is not on"
                    + " java.library.path: build libdpmo_jni.so for this platform (bindings/java: make build) and"
                    + " pass -Ddpmo.library=/absolute/path/to/" + file, e);
        }
        return "java.library.path (" + file + ")";
    }

    private static String loadBundled(URL bundled, String platform, String file, String version) {
        String tmp = System.getProperty("dpmo.tmpdir");
        if (tmp == null || tmp.isEmpty()) {
            tmp = System.getProperty("java.io.tmpdir");
        }
        Path dir = null;
        Path copy = null;
        try {
            // createTempDirectory gives rwx------ on POSIX file systems: no other user can swap the file.
            dir = Files.createTempDirectory(Paths.get(tmp), "dpmo-" + version + "-");
            copy = dir.resolve(file);
            try (InputStream in = bundled.openStream()) {
                Files.copy(in, copy);
            }
            System.load(copy.toAbsolutePath().toString());
            return "bundled " + platform + "/" + file + " (extracted to " + copy + ", then deleted)";
        } catch (IOException e) {
            throw linkError("cannot extract the bundled " + platform + "/" + file + " into " + tmp + " (set"
                    + " -Ddpmo.tmpdir to a writable directory, or -Ddpmo.library to a libdpmo_jni.so): " + e, e);
        } catch (UnsatisfiedLinkError e) {
            throw linkError("cannot load the bundled " + platform + "/" + file + " (built for glibc-based Linux"
                    + "; if " + tmp + " is mounted noexec, set -Ddpmo.tmpdir to another directory; or build"
                    + " libdpmo_jni.so here and pass -Ddpmo.library=/absolute/path/to/" + file + "): "
                    + e.getMessage(), e);
        } finally {
            // Once loaded (or not), the file is no longer needed: the mapping outlives the directory entry.
            deleteQuietly(copy);
            deleteQuietly(dir);
        }
    }

    private static void deleteQuietly(Path p) {
        if (p == null) {
            return;
        }
        try {
            Files.deleteIfExists(p);
        } catch (IOException | SecurityException e) {
            p.toFile().deleteOnExit();
        }
    }

    /** org/dpmo/dpmo.properties, written by the build: version, jni (signature), platforms. */
    private static Properties buildProperties() {
        Properties p = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("dpmo.properties")) {
            if (in == null) {
                throw linkError("org/dpmo/dpmo.properties is missing: this is not a jar built by"
                        + " bindings/java/Makefile", null);
            }
            p.load(in);
        } catch (IOException e) {
            throw linkError("cannot read org/dpmo/dpmo.properties: " + e, e);
        }
        return p;
    }

    private static UnsatisfiedLinkError linkError(String message, Throwable cause) {
        UnsatisfiedLinkError e = new UnsatisfiedLinkError("dpmo: " + message);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /** A hash of the native method declarations the library was compiled against. */
    private static native String jniSignature();
}
