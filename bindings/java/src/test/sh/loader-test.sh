#!/usr/bin/env bash
# How org.dpmo finds and checks its native library, one JVM per case (LoaderTest.java).
# Usage: loader-test.sh BUILD JAR SO   (JAVA, JAR, VERSION, PLATFORM from the Makefile's environment)
set -euo pipefail
build=$(cd "$1" && pwd) jarfile=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") so=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
: "${JAVA:?}" "${JAR:?}" "${VERSION:?}" "${PLATFORM:?}"
work="$build/loader-test"
rm -rf "$work" && mkdir -p "$work"
tests="$build/test-classes"
failed=0 passed=0

# A variant of the jar: the staged jar tree with one change made by a shell command run inside it.
variant() { # variant NAME COMMAND
    rm -rf "$work/$1" && cp -R "$build/jar" "$work/$1"
    (cd "$work/$1" && eval "$2")
    "$JAR" --create --file "$work/$1.jar" -C "$work/$1" .
}
# Runs one case from / with no library path in the environment; prints its verdict.
case_() { # case_ NAME JAR [JVM OPTIONS...] -- LoaderTest ARGS...
    local name=$1 cp=$2; shift 2
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    if (cd / && env -u LD_LIBRARY_PATH "$JAVA" -Xcheck:jni "${opts[@]}" -Dexpect.version="$VERSION" \
          -cp "$cp:$tests" org.dpmo.LoaderTest "$@") > "$work/$name.log" 2>&1; then
        passed=$((passed + 1)); echo "ok   loader: $name — $(tail -n 1 "$work/$name.log")"
    else
        failed=$((failed + 1)); echo "FAIL loader: $name"; sed 's/^/       /' "$work/$name.log"
    fi
}

variant no-native "rm -rf org/dpmo/native && sed -i 's/^platforms=.*/platforms=/' org/dpmo/dpmo.properties"
variant other-version "sed -i 's/^version=.*/version=0.0.0-other/' org/dpmo/dpmo.properties"
variant other-signature "sed -i 's/^jni=.*/jni=0000000000000000/' org/dpmo/dpmo.properties"
sig=$(cat "$build/jni.sig")
mkdir -p "$work/tmpdir"

case_ "bundled copy, no library path" "$jarfile" -- ok "bundled $PLATFORM/libdpmo_jni.so"
case_ "bundled copy under -Ddpmo.tmpdir" "$jarfile" -Ddpmo.tmpdir="$work/tmpdir" -- ok "bundled $PLATFORM/"
[ -z "$(ls -A "$work/tmpdir")" ] || { failed=$((failed + 1)); echo "FAIL loader: $work/tmpdir is not empty"; }
case_ "unwritable -Ddpmo.tmpdir" "$jarfile" -Ddpmo.tmpdir=/nonexistent/dir -- \
    fail "cannot extract the bundled $PLATFORM/libdpmo_jni.so" "-Ddpmo.tmpdir"
case_ "-Ddpmo.library wins over the bundled copy" "$jarfile" -Ddpmo.library="$so" -- ok "-Ddpmo.library=$so"
case_ "-Ddpmo.library missing" "$jarfile" -Ddpmo.library=/nonexistent/libdpmo_jni.so -- \
    fail "cannot load the native library -Ddpmo.library=/nonexistent/libdpmo_jni.so"
echo 'int not_dpmo;' | "${CC:-cc}" -shared -fPIC -x c - -o "$work/libnot_dpmo.so"
case_ "-Ddpmo.library is not dpmo" "$jarfile" -Ddpmo.library="$work/libnot_dpmo.so" -- \
    fail "is not a dpmo JNI library"
case_ "no bundled copy: java.library.path" "$work/no-native.jar" -Djava.library.path="$(dirname "$so")" -- \
    ok "java.library.path"
case_ "no bundled copy, nothing on the path" "$work/no-native.jar" -- \
    fail "carries no native library for $PLATFORM (it carries: none)" "-Ddpmo.library="
case_ "version mismatch" "$work/other-version.jar" -- \
    fail "is dpmo $VERSION, but this jar (org.dpmo:dpmo:0.0.0-other) needs dpmo 0.0.0-other" "rebuild it"
case_ "version mismatch through -Ddpmo.library" "$work/other-version.jar" -Ddpmo.library="$so" -- \
    fail "the native library -Ddpmo.library=$so is dpmo $VERSION" "needs dpmo 0.0.0-other" "leave it unset"
case_ "JNI signature mismatch" "$work/other-signature.jar" -- \
    fail "built from other Java sources than this jar (JNI signature $sig, expected 0000000000000000)"

echo "loader tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
