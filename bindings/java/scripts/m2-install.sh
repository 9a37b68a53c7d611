#!/usr/bin/env bash
# Installs org.dpmo:dpmo into a Maven repository layout, as `mvn install` would:
#   $M2_REPO/org/dpmo/dpmo/VERSION/dpmo-VERSION.{jar,pom}, -javadoc.jar, -sources.jar, *.sha1
#   $M2_REPO/org/dpmo/dpmo/maven-metadata-local.xml listing every installed version.
# Usage: M2_REPO=... GROUP_PATH=org/dpmo ARTIFACT=dpmo m2-install.sh JAR POM JAVADOC_JAR SOURCES_JAR
# Each file is written under a temporary name and renamed, so a reader never sees half a jar.
set -euo pipefail
jar=$1 pom=$2 javadoc=$3 sources=$4
: "${M2_REPO:?}" "${GROUP_PATH:?}" "${ARTIFACT:?}" "${VERSION:?}"
base="$M2_REPO/$GROUP_PATH/$ARTIFACT"
dir="$base/$VERSION"
mkdir -p "$dir"

put() { # put SRC NAME
    local tmp="$dir/.$2.tmp.$$"
    cp "$1" "$tmp"
    mv -f "$tmp" "$dir/$2"
    sha1sum "$dir/$2" | cut -d' ' -f1 > "$tmp" && mv -f "$tmp" "$dir/$2.sha1"
}
put "$jar" "$ARTIFACT-$VERSION.jar"
put "$pom" "$ARTIFACT-$VERSION.pom"
put "$javadoc" "$ARTIFACT-$VERSION-javadoc.jar"
put "$sources" "$ARTIFACT-$VERSION-sources.jar"

# maven-metadata-local.xml: every version folder that holds a pom (sorted as versions).
versions=$(cd "$base" && for d in */; do d=${d%/}; [ -f "$d/$ARTIFACT-$d.pom" ] && echo "$d"; done | sort -V)
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<metadata>'
    echo "  <groupId>${GROUP_PATH//\//.}</groupId>"
    echo "  <artifactId>$ARTIFACT</artifactId>"
    echo '  <versioning>'
    echo "    <release>$(tail -n 1 <<<"$versions")</release>"
    echo '    <versions>'
    for v in $versions; do echo "      <version>$v</version>"; done
    echo '    </versions>'
    echo "    <lastUpdated>$(date -u +%Y%m%d%H%M%S)</lastUpdated>"
    echo '  </versioning>'
    echo '</metadata>'
} > "$base/.maven-metadata-local.xml.tmp.$$"
mv -f "$base/.maven-metadata-local.xml.tmp.$$" "$base/maven-metadata-local.xml"
echo "java-install: org.dpmo:$ARTIFACT:$VERSION -> $dir"
ls -1 "$dir" | grep -v '\.sha1$' | sed 's/^/  /'
