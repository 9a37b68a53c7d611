"""dpmo.spark on a real cluster: a standalone master and two workers, each a separate process on 127.0.0.1
started with pyspark's own launcher (bin/spark-class), and a Spark Connect server (bin/spark-submit) on that
master. The executors run the Python of DPMO_EXECUTOR_PYTHON, which has pyspark's dependencies (numpy,
pandas, pyarrow) and no dpmo, as a cluster's workers would: the wheel reaches them only the documented way
(README, "Spark on a cluster"). Every process started here runs under `nice` in a process group of its own
and is killed, group and all, even when a test fails; the teardown checks that none is left."""

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXECUTOR_PYTHON = os.environ.get("DPMO_EXECUTOR_PYTHON", "")
WHEEL = os.environ.get("DPMO_WHEEL", "")


def spark_home():
    import pyspark

    return os.path.dirname(pyspark.__file__)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java_home():
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = subprocess.run(["bash", "-c", "command -v java"], capture_output=True, text=True).stdout.strip()
    return os.path.dirname(os.path.dirname(os.path.realpath(java))) if java else ""


class Processes:
    """Processes started in process groups of their own (nice'd), all killed by close()."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.groups = []
        self.env = dict(
            os.environ,
            SPARK_HOME=spark_home(),
            JAVA_HOME=java_home(),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_CONF_DIR=str(workdir / "conf"),  # empty: no site configuration leaks in
            SPARK_DAEMON_MEMORY="256m",
            SPARK_LOG_DIR=str(workdir / "logs"),
            PYSPARK_PYTHON=EXECUTOR_PYTHON,
            PYSPARK_DRIVER_PYTHON=sys.executable,
        )
        self.env.pop("PYTHONPATH", None)
        (workdir / "conf").mkdir(exist_ok=True)
        # Small memory and no web UI for every driver and executor (the README's blocks set neither).
        (workdir / "conf" / "spark-defaults.conf").write_text(
            "spark.ui.enabled false\nspark.ui.showConsoleProgress false\nspark.executor.memory 512m\n"
            # A task that fails fails its job at once (Spark retries it 4 times by default): the same outcome.
            "spark.task.maxFailures 1\n")

    def start(self, name, args, **env):
        log = open(self.workdir / f"{name}.log", "w")
        p = subprocess.Popen(["nice", "-n", "10", *args], stdout=log, stderr=subprocess.STDOUT,
                             env=dict(self.env, **env), cwd=self.workdir, start_new_session=True)
        self.groups.append(p)
        return p

    def run(self, name, args, timeout):
        """Runs a process to its end (killed with its group after `timeout` s); returns (code, output)."""
        p = self.start(name, args)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(p)
        return p.returncode, (self.workdir / f"{name}.log").read_text()

    @staticmethod
    def kill(p):
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                return
            deadline = time.time() + wait
            while time.time() < deadline:
                p.poll()
                try:
                    os.killpg(p.pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.2)

    def close(self):
        for p in reversed(self.groups):
            self.kill(p)
        left = []
        for p in self.groups:
            try:
                os.killpg(p.pid, 0)
                left.append(p.args)
            except ProcessLookupError:
                pass
        return left

    def log(self, name):
        path = self.workdir / f"{name}.log"
        return path.read_text()[-3000:] if path.exists() else ""


def wait_for(what, predicate, timeout, processes, log):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    pytest.fail(f"{what} did not come up in {timeout} s:\n{processes.log(log)}")


def workers_alive(ui_port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            state = json.load(r)
        return sum(w["state"] == "ALIVE" for w in state.get("workers", []))
    except (OSError, ValueError):  # not up yet, or the UI still serving its HTML page instead of /json/
        return 0


def listening(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and two one-core workers on 127.0.0.1, torn down after the module."""
    if not EXECUTOR_PYTHON or not os.path.exists(EXECUTOR_PYTHON):
        pytest.fail(f"DPMO_EXECUTOR_PYTHON does not name the executors' Python (make python sets it): "
                    f"{EXECUTOR_PYTHON!r}")
    work = tmp_path_factory.mktemp("cluster")
    procs = Processes(work)
    spark_class = os.path.join(spark_home(), "bin", "spark-class")
    port, ui = free_port(), free_port()
    started = time.time()
    try:
        procs.start("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)])
        master = f"spark://127.0.0.1:{port}"
        for i in (1, 2):
            (work / f"worker{i}").mkdir()
            procs.start(f"worker{i}", [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                       "--port", str(free_port()), "--webui-port", str(free_port()),
                                       "--cores", "1", "--memory", "1g", "--work-dir", str(work / f"worker{i}"),
                                       master])
        wait_for("two workers", lambda: workers_alive(ui) == 2, 90, procs, "master")
        yield {"master": master, "procs": procs, "work": work, "started": started}
    finally:
        left = procs.close()
        print(f"\ncluster: {time.time() - started:.1f} s from the master's start to the teardown")
        assert not left, f"processes left after the teardown: {left}"


def shipping_commands():
    """The README's sh block that packs the wheel for the executors."""
    import re

    with open(os.environ["DPMO_README"], encoding="utf-8") as f:
        blocks = [b for b in re.findall(r"```sh\n(.*?)```", f.read(), flags=re.S) if "--target" in b]
    assert len(blocks) == 1, "the README's shipping block changed: update this test"
    return blocks[0]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """dpmo.tar.gz made by the README's own commands (pip: the executors' Python's, offline; the wheel under
    test in target/wheels/)."""
    if not WHEEL or not os.path.exists(WHEEL):
        pytest.fail(f"DPMO_WHEEL does not name the wheel: {WHEEL!r}")
    work = tmp_path_factory.mktemp("archive")
    (work / "target" / "wheels").mkdir(parents=True)
    os.symlink(WHEEL, work / "target" / "wheels" / os.path.basename(WHEEL))
    env = dict(os.environ, PATH=os.path.dirname(EXECUTOR_PYTHON) + os.pathsep + os.environ["PATH"],
               PIP_NO_INDEX="1", PIP_QUIET="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", shipping_commands()], cwd=work, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    path = work / "dpmo.tar.gz"
    with tarfile.open(path) as tar:
        names = tar.getnames()
    assert "./__init__.py" in names and any(n.startswith("./_native") for n in names), names
    return str(path)


def drive(cluster, mode, url, archive=None, timeout=150):
    args = [sys.executable, os.path.join(HERE, "spark_cluster_driver.py"), mode, url] + ([archive] if archive else [])
    code, output = cluster["procs"].run(f"driver-{mode}", args, timeout)
    assert code == 0, output[-4000:]
    return json.loads(output.strip().splitlines()[-1])


def check_pipeline(out, where):
    assert out["check"] is None and out["pipeline_error"] is None, out
    assert out["spent"] == 1.5  # the README's block: three releases at 0.5
    assert out["exact_counts"] == out["expected_counts"]  # the cluster's aggregation, exactly
    assert out["bounded_ok"]
    top = set(out["by_distinct_users"][:6])
    assert len(set(out["top3"])) == 3 and set(out["top3"]) <= top, out
    assert len(out["best_sum"]) == 1 and len(set(out["multi"])) == 2
    # The executors imported the shipped package, not an installed one.
    assert out["executor_files"] and all(f.endswith("/dpmo/__init__.py") and f.startswith(where)
                                         for f in out["executor_files"]), out["executor_files"]


def test_the_documented_pipeline_on_a_standalone_cluster(cluster, archive):
    out = drive(cluster, "ship", cluster["master"], archive)
    check_pipeline(out, str(cluster["work"]))
    print(f"\nstandalone cluster: the documented pipeline in {out['seconds']} s (driver start to stop)")


def test_executors_without_dpmo_charge_nothing(cluster):
    """The outside tester's attack: the documented pipeline on executors that cannot import dpmo had charged
    0.5 before it failed. Every release now fails first, with the reason, and charges nothing; the same
    release without the executor check (the broken variant) charges 0.5 and fails on the executors."""
    out = drive(cluster, "bare", cluster["master"])
    errors = [out["check"], out["pipeline_error"], out["multi_error"]]  # check_executors, select, select_multi
    for err in errors:
        assert err is not None and err["class"] == "UnsupportedError" and err["charged"] is False, out
        assert "cannot run dpmo" in err["detail"] and "No module named 'dpmo'" in err["detail"], err
    assert out["spent"] == 0.0 and out["spent_multi"] == 0.0
    assert out["unchecked_error"] is True and out["unchecked_spent"] == 0.5


def test_the_documented_pipeline_through_spark_connect(cluster, archive):
    """The same pipeline through a Spark Connect server on the same master: dpmo.spark uses DataFrames and
    mapInArrow only (no SparkContext, no RDD); the client ships the archive with spark.addArtifacts."""
    procs = cluster["procs"]
    port = free_port()
    server = procs.start("connect", [
        os.path.join(spark_home(), "bin", "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "--name", "dpmo-connect",
        "--master", cluster["master"], "--conf", "spark.ui.enabled=false", "--conf", "spark.executor.memory=512m",
        "--conf", "spark.sql.shuffle.partitions=4",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", f"spark.pyspark.python={EXECUTOR_PYTHON}"], SPARK_DAEMON_MEMORY="1g")  # the server's heap
    try:
        wait_for("the Spark Connect server", lambda: listening(port), 120, procs, "connect")
        out = drive(cluster, "connect", f"sc://127.0.0.1:{port}", archive)
    finally:
        procs.kill(server)
    check_pipeline(out, str(cluster["work"]))
    print(f"\nSpark Connect: the documented pipeline in {out['seconds']} s (session start to stop)")
