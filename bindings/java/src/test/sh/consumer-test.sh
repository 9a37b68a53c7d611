#!/usr/bin/env bash
# consumer/ used the way an outside project uses dpmo: org.dpmo:dpmo from a Maven repository layout, nothing else
# on the class path, no java.library.path, no -Ddpmo.library, run from another folder.
#   1. plain javac/java, the jar taken from the Maven layout;
#   2. Maven 3 offline (settings-debian-offline.xml: Debian's packaged plugins), `mvn package`, then java.
# Usage: consumer-test.sh BUILD M2   (the Makefile installed the artifacts into M2; JAVA, JAVAC, VERSION exported)
set -euo pipefail
build=$1 m2=$2
: "${JAVA:?}" "${JAVAC:?}" "${VERSION:?}"
work="$build/consumer-test"
rm -rf "$work" && mkdir -p "$work"
dep="$m2/org/dpmo/dpmo/$VERSION/dpmo-$VERSION.jar"
[ -f "$dep" ] || { echo "consumer-test: $dep is missing (java-install did not run?)" >&2; exit 1; }
grep -q "<version>$VERSION</version>" consumer/pom.xml || {
    echo "consumer-test: consumer/pom.xml does not depend on dpmo $VERSION: update it and README.md" >&2; exit 1; }
failed=0

# Runs example.Consumer with CLASSPATH and nothing else; checks what it prints.
run() { # NAME CLASSPATH
    if (cd / && env -u LD_LIBRARY_PATH -u JAVA_TOOL_OPTIONS -u _JAVA_OPTIONS -u JDK_JAVA_OPTIONS \
            "$JAVA" -cp "$2" example.Consumer) > "$work/$1.log" 2>&1 \
        && grep -q -E "^dpmo $VERSION: picks [0-3] and [0-3], budget left 0\.0$" "$work/$1.log" \
        && grep -q '^third pick refused: The remaining privacy budget' "$work/$1.log"; then
        echo "ok   consumer ($1): $(head -n 1 "$work/$1.log")"
    else
        failed=1; echo "FAIL consumer ($1):"; sed 's/^/       /' "$work/$1.log"
    fi
}

# 1. Plain javac and java.
"$JAVAC" --release 11 -Xlint:all -Werror -cp "$dep" -d "$work/javac-classes" $(find consumer/src/main/java -name '*.java')
run "javac, jar from the Maven layout" "$dep:$work/javac-classes"

# 2. Maven, offline: the project copied out of the source tree, the local repository is M2.
cp -R consumer "$work/maven"
if (cd "$work/maven" && mvn -B -q -Dstyle.color=never -s settings-debian-offline.xml -Dmaven.repo.local="$m2" package) \
        > "$work/mvn.log" 2>&1; then
    run "mvn package, offline" "$work/maven/target/dpmo-consumer-1.0.jar:$dep"
else
    failed=1; echo "FAIL consumer (mvn package, offline):"; sed 's/^/       /' "$work/mvn.log"
fi
exit $failed
