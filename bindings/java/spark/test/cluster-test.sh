#!/usr/bin/env bash
# The JVM Spark API on a real standalone cluster: a master and two one-core workers, each a separate JVM on
# 127.0.0.1 started with pyspark's launcher (bin/spark-class), as bindings/python/tests/test_spark_cluster.py
# does. Three spark-submit runs against it, each shipping the jars the documented way (--jars):
#   1. SparkClusterTest pipeline   the pipeline end to end, exact aggregates and charges, refusals;
#   2. SparkClusterTest broken     executors that cannot load the native library: everything refused, 0 charged;
#   3. the README's Spark recipe   its java block compiled into an application jar, its sh block run as written.
# Every process runs under nice in a process group of its own and is killed, group and all, on exit (even on a
# failure); the script then checks that none is left.
# Usage: cluster-test.sh BUILD DPMO_JAR DPMO_SPARK_JAR README   (SPARK_HOME, JAVA_HOME set by the Makefile)
set -euo pipefail
build=$1 dpmo_jar=$2 spark_jar=$3 readme=$4
: "${SPARK_HOME:?}" "${JAVA_HOME:?}"
work=$build/spark-cluster
rm -rf "$work" && mkdir -p "$work/conf" "$work/logs" "$work/readme"
started=$(date +%s.%N)
pgids=()
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { print b - a }'; }

start() { # name args...: starts a process in a new session (its own process group), logs to $work/name.log
    local name=$1; shift
    setsid nice -n 10 "$@" > "$work/$name.log" 2>&1 < /dev/null &
    pgids+=("$!")
}
stop_all() {
    local code=$? left=""
    for pg in "${pgids[@]}"; do kill -TERM -- "-$pg" 2>/dev/null || true; done
    for _ in $(seq 1 50); do
        left=""
        for pg in "${pgids[@]}"; do kill -0 -- "-$pg" 2>/dev/null && left="$left $pg"; done
        [ -z "$left" ] && break
        sleep 0.2
    done
    for pg in $left; do kill -KILL -- "-$pg" 2>/dev/null || true; done
    sleep 0.5
    left=""
    for pg in "${pgids[@]}"; do kill -0 -- "-$pg" 2>/dev/null && left="$left $pg"; done
    if [ -n "$left" ]; then echo "spark-test: process groups left after the teardown:$left" >&2; code=1; fi
    printf 'spark-test: cluster torn down, %.1f s from the master start\n' "$(elapsed)"
    exit "$code"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
workers_alive() {
    python3 - "$1" <<'EOF'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/json/", timeout=2) as r:
        print(sum(w["state"] == "ALIVE" for w in json.load(r).get("workers", [])))
except (OSError, ValueError):
    print(0)
EOF
}

export SPARK_HOME JAVA_HOME SPARK_LOCAL_IP=127.0.0.1 SPARK_CONF_DIR=$work/conf SPARK_LOG_DIR=$work/logs \
       SPARK_DAEMON_MEMORY=256m
unset PYTHONPATH
# No site configuration leaks in; small memory, no UI; a failed task fails its job at once.
printf 'spark.ui.enabled false\nspark.ui.showConsoleProgress false\nspark.executor.memory 512m\nspark.task.maxFailures 1\nspark.sql.shuffle.partitions 4\n' \
    > "$work/conf/spark-defaults.conf"

port=$(free_port) ui=$(free_port)
master=spark://127.0.0.1:$port
start master "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$port" \
    --webui-port "$ui"
for i in 1 2; do
    mkdir -p "$work/worker$i"
    start "worker$i" "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 \
        --port "$(free_port)" --webui-port "$(free_port)" --cores 1 --memory 1g --work-dir "$work/worker$i" "$master"
done
for _ in $(seq 1 180); do [ "$(workers_alive "$ui")" = 2 ] && break; sleep 0.5; done
[ "$(workers_alive "$ui")" = 2 ] || { echo "spark-test: two workers did not come up:" >&2; tail -n 40 "$work/master.log" >&2; exit 1; }
printf 'spark-test: master and 2 workers up on %s in %.1f s\n' "$master" "$(elapsed)"

# The test application's jar.
"$JAVA_HOME/bin/jar" --create --file "$work/dpmo-spark-tests.jar" -C "$build/spark-test-classes" .

submit() { # name timeout args...: spark-submit in its own process group, killed after timeout seconds
    local name=$1 timeout=$2; shift 2
    start "$name" timeout -k 10 "$timeout" "$SPARK_HOME/bin/spark-submit" --master "$master" \
        --conf spark.driver.memory=512m "$@"
    local pid=${pgids[-1]} code=0
    wait "$pid" || code=$?
    grep -E '^(PASS|FAIL|RESULT)' "$work/$name.log" | sed "s/^/  $name: /" || true
    if [ "$code" != 0 ]; then
        echo "spark-test: $name exited with $code; the end of its log:" >&2; tail -n 60 "$work/$name.log" >&2; return 1
    fi
}

failed=0
submit pipeline 300 --class org.dpmo.spark.SparkClusterTest --jars "$dpmo_jar,$spark_jar" \
    "$work/dpmo-spark-tests.jar" pipeline || failed=1
submit broken 300 --class org.dpmo.spark.SparkClusterTest --jars "$dpmo_jar,$spark_jar" \
    --conf "spark.executor.extraJavaOptions=-Ddpmo.library=/nonexistent/libdpmo_jni.so" \
    "$work/dpmo-spark-tests.jar" broken || failed=1

# The README's Spark recipe: the java and sh blocks under <!-- readme-test: spark -->.
awk -v out="$work/readme" '
    /^```/ { if (inb) { inb = 0; close(f) } else if (mark) { n++; lang = substr($0, 4); f = out "/" n "." lang; inb = 1; mark = 0; printf "" > f } next }
    inb { print > f; next }
    /<!-- readme-test: spark -->/ { mark = 1 }
' "$readme"
javas=("$work"/readme/*.java) shs=("$work"/readme/*.sh)
if [ ! -f "${javas[0]}" ] || [ ! -f "${shs[0]}" ] || [ ${#javas[@]} != 1 ] || [ ${#shs[@]} != 1 ]; then
    echo "spark-test: the README needs exactly one java and one sh block marked <!-- readme-test: spark -->" >&2; exit 1
fi
cls=$(sed -n -E 's/^(public )?(final )?class ([A-Za-z0-9_]+).*/\3/p' "${javas[0]}" | head -n 1)
mkdir -p "$work/readme/src" "$work/readme/classes" "$work/readme/run"
cp "${javas[0]}" "$work/readme/src/$cls.java"
"$JAVA_HOME/bin/javac" -Xlint:all,-processing,-classfile,-path -Werror --release 17 -encoding UTF-8 \
    -cp "$dpmo_jar:$spark_jar:$SPARK_HOME/jars/*" -d "$work/readme/classes" "$work/readme/src/$cls.java"
"$JAVA_HOME/bin/jar" --create --file "$work/readme/run/app.jar" -C "$work/readme/classes" .
cp "$dpmo_jar" "$spark_jar" "$work/readme/run/"
# The sh block as written, in a folder holding app.jar and the two jars, with the master in $MASTER.
start readme timeout -k 10 300 env -C "$work/readme/run" PATH="$SPARK_HOME/bin:$PATH" MASTER="$master" \
    bash -euo pipefail "${shs[0]}"
code=0; wait "${pgids[-1]}" || code=$?
if [ "$code" != 0 ] || ! grep -q '^spent 1.0$' "$work/readme.log"; then
    echo "spark-test: the README's Spark recipe failed ($code):" >&2; tail -n 60 "$work/readme.log" >&2; failed=1
else
    echo "  readme: $(grep -E '^(top|spent|released)' "$work/readme.log" | paste -sd' ' -)"
fi
[ "$failed" = 0 ] && echo "spark-test: all passed"
exit "$failed"
