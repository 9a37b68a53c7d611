"""The package under test is the installed wheel, in a fresh venv; its version is the C library's."""

import os
import sys

import dpmo


def test_imported_from_the_fresh_venv_not_the_source_tree():
    venv = os.environ.get("DPMO_VENV")
    assert venv, "run through `make python`"
    assert os.path.realpath(dpmo.__file__).startswith(os.path.realpath(venv))
    assert os.path.realpath(dpmo._native.__file__).startswith(os.path.realpath(venv))
    assert os.path.realpath(sys.prefix) == os.path.realpath(venv)


def test_abi3_extension_and_typing_files():
    native = os.path.basename(dpmo._native.__file__)
    assert native.endswith(".abi3.so"), native
    pkg = os.path.dirname(dpmo.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    assert os.path.exists(os.path.join(pkg, "_native.pyi"))


def test_version_matches_the_c_library(libdpmo):
    assert dpmo.__version__ == libdpmo.dpmo_version().decode()
