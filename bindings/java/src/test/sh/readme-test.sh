#!/usr/bin/env bash
# Every fenced code block of the binding's README is checked, by its tag:
#   java  a complete compilation unit declaring a class: all are compiled together against the jar (--release 11,
#         -Xlint:all -Werror), and each class with a main() is run with no library path.
#   sh    run with bash -euo pipefail in a scratch folder holding those .java files, with HOME a scratch home
#         whose ~/.m2/repository holds this build (as after `make java-install`). `make` commands only dry-run
#         (make -n, from the repository root): the test is itself one of them.
#   xml   must appear verbatim in consumer/pom.xml, which consumer-test builds with Maven.
#   a block under <!-- readme-test: spark --> (java or sh) is skipped here: `make spark-test` compiles it against
#         Spark and runs it on a standalone cluster (spark/test/cluster-test.sh).
#   text  the output of the program named by the comment just above the block,
#         <!-- readme-test: output of examples/NAME.java; random: PREFIX|PREFIX -->: equal line by line, except
#         that lines starting with a random PREFIX are compared up to their first ':'.
# Any other tag, an untagged block or an indented fence fails the test.
# Usage: readme-test.sh README BUILD JAR SCRATCH   (JAVA, JAVAC, VERSION, GROUP_PATH, ARTIFACT exported)
set -euo pipefail
readme=$1 build=$(cd "$2" && pwd) jarfile=$(cd "$(dirname "$3")" && pwd)/$(basename "$3") work=$4
: "${JAVA:?}" "${JAVAC:?}" "${VERSION:?}"
root=$(cd ../.. && pwd)
rm -rf "$work" && mkdir -p "$work/blocks" "$work/run" "$work/home"
failed=0 checked=0 skipped=0
fail() { failed=$((failed + 1)); echo "FAIL readme: $*"; }

# Split the README into blocks/NN.{lang,line,directive,body}.
awk -v out="$work/blocks" '
    /^[ \t]+```/ { printf "%d\n", NR > (out "/indented"); next }
    /^```/ {
        if (!inb) {
            n++; f = sprintf("%s/%02d", out, n); lang = substr($0, 4); gsub(/[ \t]/, "", lang)
            print lang > (f ".lang"); print NR > (f ".line"); print directive > (f ".directive")
            printf "" > (f ".body"); inb = 1; directive = ""
        } else { inb = 0; close(f ".body") }
        next
    }
    inb { print > (f ".body"); next }
    /<!-- readme-test:/ { d = $0; sub(/.*<!-- readme-test: */, "", d); sub(/ *-->.*/, "", d); directive = d }
' "$readme"
[ ! -f "$work/blocks/indented" ] || fail "indented code fence at line(s) $(paste -sd, "$work/blocks/indented")"

# The scratch home: ~/.m2/repository holds this build, as after `make java-install`.
M2_REPO="$work/home/.m2/repository" bash scripts/m2-install.sh "$jarfile" "$build/$ARTIFACT-$VERSION.pom" \
    "$build/$ARTIFACT-$VERSION-javadoc.jar" "$build/$ARTIFACT-$VERSION-sources.jar" > /dev/null

# java: write each unit under its class name, compile them all, run those with a main().
javas=() mains=()
for lang_file in "$work"/blocks/*.lang; do
    b=${lang_file%.lang}
    [ "$(cat "$lang_file")" = java ] || continue
    [ "$(cat "$b.directive")" != spark ] || continue
    cls=$(sed -n -E 's/^(public )?(final )?class ([A-Za-z0-9_]+).*/\3/p' "$b.body" | head -n 1)
    if [ -z "$cls" ]; then fail "java block at line $(cat "$b.line") declares no class"; continue; fi
    cp "$b.body" "$work/run/$cls.java"
    javas+=("$work/run/$cls.java")
    grep -q 'public static void main(String\[\] args)' "$b.body" && mains+=("$cls")
done
if [ ${#javas[@]} -gt 0 ]; then
    if "$JAVAC" --release 11 -Xlint:all -Werror -encoding UTF-8 -cp "$jarfile" -d "$work/classes" "${javas[@]}" \
            > "$work/javac.log" 2>&1; then
        checked=$((checked + ${#javas[@]}))
        for cls in "${mains[@]}"; do
            if ! (cd "$work/run" && env -u LD_LIBRARY_PATH "$JAVA" -cp "$jarfile:$work/classes" "$cls") \
                    > "$work/$cls.out" 2>&1; then
                fail "java class $cls exits with an error:"; sed 's/^/       /' "$work/$cls.out"
            fi
        done
    else
        fail "java blocks do not compile:"; sed 's/^/       /' "$work/javac.log"
    fi
fi

for lang_file in "$work"/blocks/*.lang; do
    b=${lang_file%.lang}
    lang=$(cat "$lang_file") line=$(cat "$b.line") directive=$(cat "$b.directive")
    [ "$directive" != spark ] || { skipped=$((skipped + 1)); continue; }
    case "$lang" in
    java) ;;
    sh)
        # make only dry-runs, from the repository root; everything else runs for real.
        if (cd "$work/run" && HOME="$work/home" ROOT="$root" bash -euo pipefail -c '
                make() { (cd "$ROOT" && command make -n "$@" > /dev/null) || { echo "not a valid command: make $*"; return 1; }; }
                '"$(cat "$b.body")") > "$work/sh-$line.log" 2>&1; then
            checked=$((checked + 1))
        else
            fail "sh block at line $line:"; sed 's/^/       /' "$b.body"; echo "     output:"; sed 's/^/       /' "$work/sh-$line.log"
        fi
        ;;
    xml)
        body=$(cat "$b.body")
        if [[ "$(cat consumer/pom.xml)" == *"$body"* ]]; then
            checked=$((checked + 1))
        else
            fail "xml block at line $line is not in consumer/pom.xml (indentation included)"
        fi
        ;;
    text)
        prog=$(sed -n -E 's/^output of (examples\/[A-Za-z0-9_]+\.java).*/\1/p' <<<"$directive")
        random=$(sed -n -E 's/.*; random: (.*)$/\1/p' <<<"$directive")
        if [ -z "$prog" ]; then fail "text block at line $line has no '<!-- readme-test: output of ... -->' above it"; continue; fi
        cls=$(basename "$prog" .java)
        mkdir -p "$work/example-classes"
        "$JAVAC" --release 11 -encoding UTF-8 -cp "$jarfile" -d "$work/example-classes" "$prog"
        (cd "$work/run" && "$JAVA" -cp "$jarfile:$work/example-classes" "$cls") > "$work/$cls.txt" 2>&1 || true
        mask() { if [ -n "$random" ]; then sed -E "/^($random)/s/:.*/:/"; else cat; fi; }
        if diff <(mask < "$b.body") <(mask < "$work/$cls.txt") > "$work/text-$line.diff"; then
            checked=$((checked + 1))
        else
            fail "text block at line $line differs from the output of $prog:"; sed 's/^/       /' "$work/text-$line.diff"
        fi
        ;;
    *)
        fail "code block at line $line has tag '$lang', which this test cannot check (use java, sh, xml or text)"
        ;;
    esac
done
# Prose too: every artifact version the README names (dpmo-X.Y.Z, dpmo/X.Y.Z, org.dpmo:dpmo:X.Y.Z) is this build's,
# except in the example of a version-mismatch message.
stale=$(grep -v 'is dpmo [0-9.]*, but this jar' "$readme" | grep -o -E '(dpmo[-/]|org\.dpmo:dpmo:)[0-9]+\.[0-9]+\.[0-9]+' \
    | grep -v -E "[-/:]$VERSION\$" | sort -u | paste -sd' ' -) || true
[ -z "$stale" ] || fail "the README names other versions than $VERSION: $stale"

echo "readme tests: $checked blocks checked, $failed failed ($skipped Spark blocks left to make spark-test)"
[ "$failed" -eq 0 ]
