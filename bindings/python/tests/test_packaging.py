"""The wheel and the sdist as PyPI receives them (packaging/check_registry.py): a portable manylinux_2_17 abi3
wheel that carries the license texts, an sdist with every file its Cargo manifests name; each check shown to
catch a broken variant. `make python` also installs the sdist into a fresh venv (sdist-test)."""

import importlib.util
import json
import os
import shutil
import subprocess
import tarfile
import zipfile

import pytest

ROOT = os.environ.get("DPMO_ROOT", "")
WHEEL = os.environ.get("DPMO_WHEEL", "")
SDIST = os.environ.get("DPMO_SDIST", "")
pytestmark = pytest.mark.skipif(not (ROOT and WHEEL and SDIST), reason="run through `make python`")


def _checker():
    spec = importlib.util.spec_from_file_location("check_registry", os.path.join(ROOT, "packaging/check_registry.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def check():
    return _checker()


@pytest.fixture(scope="module")
def repo(check):
    return check.repository(ROOT)


def _rewrite_wheel(src, dst, drop=(), replace=None):
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as b:
        for item in a.infolist():
            if any(item.filename.endswith(d) for d in drop):
                continue
            data = a.read(item)
            if replace and item.filename.endswith(replace[0]):
                data = replace[1]
            b.writestr(item, data)
    return dst


def test_one_wheel_and_one_sdist_in_target_wheels():
    # `pip install target/wheels/dpmo-*.whl` (README) resolves only while one dpmo wheel is there.
    names = sorted(n for n in os.listdir(os.path.dirname(WHEEL)) if n.startswith("dpmo-"))
    assert names == sorted([os.path.basename(WHEEL), os.path.basename(SDIST)]), names


def test_the_wheel_is_portable_abi3_and_carries_its_licenses(check, repo):
    assert os.path.basename(WHEEL).endswith("-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"), WHEEL
    assert check.wheel_problems(WHEEL, repo, ROOT) == []


def test_wheel_check_catches_a_linux_only_tag(check, repo, tmp_path):
    bad = tmp_path / os.path.basename(WHEEL).replace("manylinux2014_x86_64.manylinux_2_17_x86_64", "linux_x86_64")
    shutil.copy(WHEEL, bad)
    assert any("does not include manylinux_2_17_x86_64" in p for p in check.wheel_problems(str(bad), repo, ROOT))


def test_wheel_check_catches_missing_licenses(check, repo, tmp_path):
    bad = _rewrite_wheel(WHEEL, str(tmp_path / os.path.basename(WHEEL)), drop=("licenses/LICENSE-MIT",))
    assert any("no dpmo-" in p and "LICENSE-MIT" in p for p in check.wheel_problems(bad, repo, ROOT))


def test_wheel_check_catches_a_binary_needing_a_newer_glibc(check, repo, tmp_path):
    # What the wheel was before zig: an extension linked against the build machine's glibc (here 2.34+, whose
    # libc carries pthread_create@GLIBC_2.34), named manylinux_2_17 all the same. auditwheel reads the symbols.
    src = tmp_path / "probe.c"
    src.write_text("#include <pthread.h>\nvoid *dpmo_probe(void) { return (void *)pthread_create; }\n")
    so = tmp_path / "probe.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    if b"GLIBC_2.34" not in so.read_bytes():
        pytest.skip("this machine's glibc is older than 2.34: no newer symbol to probe with")
    bad = _rewrite_wheel(WHEEL, str(tmp_path / os.path.basename(WHEEL)),
                         replace=("_native.abi3.so", so.read_bytes()))
    problems = check.wheel_problems(bad, repo, ROOT)
    assert any("auditwheel says the binary is manylinux_2_34" in p for p in problems), problems


def test_the_sdist_names_only_files_it_has(check):
    assert check.sdist_problems(SDIST) == []
    with tarfile.open(SDIST) as t:
        names = {m.name.split("/", 1)[1] for m in t.getmembers() if "/" in m.name}
    assert {"LICENSE-MIT", "LICENSE-APACHE", "benches/pareto.rs", "bindings/python/src/lib.rs"} <= names


def test_sdist_check_catches_a_missing_bench(check, tmp_path):
    # The sdist of 0.2.0 as first built: the workspace's Cargo.toml declares [[bench]] pareto, the file was left
    # out, and `pip install dpmo-0.2.0.tar.gz` failed with "can't find `pareto` bench".
    with tarfile.open(SDIST) as t:
        t.extractall(tmp_path / "x", filter="data")
    top = next((tmp_path / "x").iterdir())
    (top / "benches" / "pareto.rs").unlink()
    bad = tmp_path / os.path.basename(SDIST)
    with tarfile.open(bad, "w:gz") as t:
        t.add(top, arcname=top.name)
    problems = check.sdist_problems(str(bad))
    assert any("declares the bench pareto but has no benches/pareto.rs" in p for p in problems), problems


def test_building_from_bindings_python_leaves_no_wheel_in_target_wheels():
    # maturin's build backend (`pip install ./bindings/python`) leaves a copy of its wheel in
    # <cargo target dir>/wheels; bindings/python/.cargo/config.toml moves that to target/python.
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
                         cwd=os.path.join(ROOT, "bindings/python"), capture_output=True, text=True, check=True)
    target = os.path.realpath(json.loads(out.stdout)["target_directory"])
    assert target == os.path.realpath(os.path.join(ROOT, "target/python")), target
    assert os.path.realpath(os.path.dirname(WHEEL)) != os.path.join(target, "wheels")
