#!/usr/bin/env python3
"""What each registry requires of dpmo's artifacts, checked offline (packaging/README.md says why each rule).

    check_registry.py crate [ROOT]               Cargo.toml metadata, README.crate.md, one repository URL
    check_registry.py wheel WHEEL [ROOT]          tags (and auditwheel's verdict), license files, metadata
    check_registry.py sdist SDIST [ROOT]          license files, every Cargo target file the sdist names
    check_registry.py pom POM JAR [ROOT]          Maven Central's required elements, the sources and javadoc
                                                  jars beside the jar, Enable-Native-Access in its manifest
    check_registry.py selftest [ROOT]             each crate rule catches a broken variant
    check_registry.py pom-selftest POM JAR [ROOT] each pom rule catches a broken variant

Each command prints one line per problem and exits 1 if there is any. The functions return the list of problems,
so that tests can run them on broken variants (bindings/python/tests/test_packaging.py does for wheel and sdist).
"""

import shutil
import tempfile
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import xml.etree.ElementTree as ET
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# crates.io: at most 5 keywords of at most 20 characters (ASCII letters, digits, _ - +, starting with a letter),
# at most 5 categories, each one of crates.io's category slugs (those used here, as listed on crates.io).
KNOWN_CATEGORIES = {"algorithms", "cryptography", "no-std", "no-std::no-alloc", "science", "mathematics",
                    "development-tools::ffi", "embedded"}
KEYWORD = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]{0,19}$")
# The glibc the wheel may need at most: manylinux2014 = manylinux_2_17.
WHEEL_PLATFORM = "manylinux_2_17_x86_64"
LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")
POM = "{http://maven.apache.org/POM/4.0.0}"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def repository(root):
    """The one repository URL: the root Cargo.toml's; every other manifest must name the same."""
    return tomllib.loads(read(os.path.join(root, "Cargo.toml")))["package"]["repository"]


def markdown_links(text):
    """Targets of [text](target) and of reference definitions, outside fenced code blocks."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"\]\(([^)\s]+)[^)]*\)", text) + re.findall(r"^\s*\[[^\]]+\]:\s*(\S+)", text, flags=re.M)


def crate_problems(cargo_toml, readme, repo, members):
    """cargo_toml, readme: texts of the root Cargo.toml and of the file its `readme` names; members: {path: text}
    of the other workspace manifests."""
    problems = []
    try:
        manifest = tomllib.loads(cargo_toml)
    except tomllib.TOMLDecodeError as e:
        return [f"Cargo.toml: {e}"]
    pkg = manifest.get("package", {})
    for field in ("description", "license", "repository", "documentation", "readme", "rust-version"):
        if not isinstance(pkg.get(field), str) or not pkg[field]:
            problems.append(f"Cargo.toml: [package] has no {field}")
    if pkg.get("repository", repo) != repo:
        problems.append(f"Cargo.toml: repository {pkg.get('repository')!r} is not {repo!r}")
    keywords, categories = pkg.get("keywords", []), pkg.get("categories", [])
    if not keywords or len(keywords) > 5:
        problems.append(f"Cargo.toml: {len(keywords)} keywords (crates.io takes 1 to 5)")
    problems += [f"Cargo.toml: keyword {k!r} is not accepted by crates.io" for k in keywords if not KEYWORD.match(k)]
    if not categories or len(categories) > 5:
        problems.append(f"Cargo.toml: {len(categories)} categories (crates.io takes 1 to 5)")
    problems += [f"Cargo.toml: category {c!r} is not a crates.io category slug" for c in categories
                 if c not in KNOWN_CATEGORIES]
    docs_rs = pkg.get("metadata", {}).get("docs", {}).get("rs")
    if not docs_rs:
        problems.append("Cargo.toml: no [package.metadata.docs.rs]")
    tests_msrv = pkg.get("metadata", {}).get("dpmo", {}).get("tests-rust-version")
    if not tests_msrv:
        problems.append("Cargo.toml: no [package.metadata.dpmo] tests-rust-version")
    readme_name = pkg.get("readme", "")
    if readme_name and not any(readme_name == p.lstrip("/") for p in pkg.get("include", [])):
        problems.append(f"Cargo.toml: include does not ship the readme {readme_name}")
    for target in markdown_links(readme):
        if not re.match(r"^https://", target):
            problems.append(f"{readme_name}: link {target!r} is not absolute https (crates.io resolves it elsewhere)")
    if repo not in readme:
        problems.append(f"{readme_name}: does not link the repository {repo}")
    version = pkg.get("version", "")
    major, minor = (version.split(".") + ["", ""])[:2]
    want = f'{major}.{minor}' if major == "0" else major
    if f'dpmo = "{want}"' not in readme:
        problems.append(f'{readme_name}: the dependency line is not dpmo = "{want}" (version {version})')
    for v, what in ((pkg.get("rust-version"), "the library"), (tests_msrv, "the tests")):
        if v and not re.search(rf"Rust {re.escape(v)}\b", readme):
            problems.append(f"{readme_name}: does not state Rust {v} for {what}")
    for path, text in sorted(members.items()):
        m = tomllib.loads(text).get("package", {})
        if m.get("publish", True) is not False:
            problems.append(f"{path}: published crate (only dpmo is; set publish = false)")
        if m.get("repository") != repo:
            problems.append(f"{path}: repository {m.get('repository')!r} is not {repo!r}")
        if m.get("rust-version") != pkg.get("rust-version"):
            problems.append(f"{path}: rust-version {m.get('rust-version')!r} is not the library's")
    return problems


def check_crate(root):
    manifest = read(os.path.join(root, "Cargo.toml"))
    parsed = tomllib.loads(manifest)
    readme = read(os.path.join(root, parsed["package"]["readme"]))
    members = {m + "/Cargo.toml": read(os.path.join(root, m, "Cargo.toml"))
               for m in parsed["workspace"]["members"] if m != "."}
    problems = crate_problems(manifest, readme, repository(root), members)
    pyproject = tomllib.loads(read(os.path.join(root, "bindings/python/pyproject.toml")))
    if pyproject["project"].get("urls", {}).get("Repository") != repository(root):
        problems.append("bindings/python/pyproject.toml: [project.urls] Repository is not Cargo.toml's repository")
    return problems


def wheel_problems(path, repo, root, auditwheel=True):
    problems = []
    name = os.path.basename(path)
    parts = name[:-len(".whl")].split("-")
    if len(parts) != 5:
        return [f"{name}: not a wheel file name"]
    dist, version, python_tag, abi_tag, platform_tag = parts
    if (python_tag, abi_tag) != ("cp39", "abi3"):
        problems.append(f"{name}: tags {python_tag}-{abi_tag}, not cp39-abi3 (one wheel for CPython >= 3.9)")
    if WHEEL_PLATFORM not in platform_tag.split("."):
        problems.append(f"{name}: platform {platform_tag} does not include {WHEEL_PLATFORM}")
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        info = f"{dist}-{version}.dist-info"
        for lic in LICENSES:
            member = f"{info}/licenses/{lic}"
            if member not in names:
                problems.append(f"{name}: no {member}")
            elif z.read(member) != open(os.path.join(root, lic), "rb").read():
                problems.append(f"{name}: {member} differs from the repository's {lic}")
        meta = z.read(f"{info}/METADATA").decode() if f"{info}/METADATA" in names else ""
        for line in ("License-Expression: MIT OR Apache-2.0", f"Project-URL: Repository, {repo}",
                     *(f"License-File: {lic}" for lic in LICENSES)):
            if line not in meta.splitlines():
                problems.append(f"{name}: METADATA lacks {line!r}")
    if auditwheel and not problems:
        out = subprocess.run([sys.executable, "-m", "auditwheel", "show", path], capture_output=True, text=True)
        text = " ".join(out.stdout.split())
        m = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
        if out.returncode != 0 or not m:
            problems.append(f"{name}: auditwheel show failed: {out.stdout}{out.stderr}")
        elif m.group(1) != WHEEL_PLATFORM:
            problems.append(f"{name}: auditwheel says the binary is {m.group(1)}, not {WHEEL_PLATFORM}")
    return problems


def sdist_problems(path):
    problems = []
    name = os.path.basename(path)
    with tarfile.open(path) as t:
        files = {m.name.split("/", 1)[1]: m for m in t.getmembers() if "/" in m.name and m.isfile()}
        for lic in LICENSES:
            if lic not in files:
                problems.append(f"{name}: no {lic}")
        if "PKG-INFO" not in files or "pyproject.toml" not in files:
            problems.append(f"{name}: no PKG-INFO or pyproject.toml")
        # Every target a Cargo manifest of the sdist declares must be there: `pip install` runs cargo on them.
        for manifest in [f for f in files if f == "Cargo.toml" or f.endswith("/Cargo.toml")]:
            base = os.path.dirname(manifest)
            parsed = tomllib.loads(t.extractfile(files[manifest]).read().decode())
            for kind, folder in (("bench", "benches"), ("test", "tests"), ("example", "examples"), ("bin", "src/bin")):
                for target in parsed.get(kind, []):
                    p = target.get("path", f"{folder}/{target['name']}.rs")
                    if os.path.normpath(os.path.join(base, p)) not in files:
                        problems.append(f"{name}: {manifest} declares the {kind} {target['name']} but has no {p}")
    return problems


def manifest_attributes(jar):
    with zipfile.ZipFile(jar) as z:
        text = z.read("META-INF/MANIFEST.MF").decode("utf-8").replace("\r\n", "\n")
    text = re.sub(r"\n ", "", text)  # continuation lines
    return dict(line.split(": ", 1) for line in text.split("\n\n")[0].splitlines() if ": " in line)


def pom_problems(pom_text, repo, jar=None):
    """Maven Central's requirements of the pom (central.sonatype.org, "Requirements"): coordinates, name,
    description, url, licenses, developers, scm; the sources and javadoc jars beside the jar; and the jar's
    manifest carries Enable-Native-Access (JEP 472)."""
    problems = []
    try:
        project = ET.fromstring(pom_text)
    except ET.ParseError as e:
        return [f"pom: not XML: {e}"]

    def text(path):
        e = project.find("/".join(POM + p for p in path.split("/")))
        return (e.text or "").strip() if e is not None else ""

    for field in ("modelVersion", "groupId", "artifactId", "version", "name", "description", "url",
                  "licenses/license/name", "licenses/license/url", "developers/developer/name",
                  "scm/url", "scm/connection", "scm/developerConnection"):
        if not text(field):
            problems.append(f"pom: no <{field.replace('/', '><')}>")
    for i, lic in enumerate(project.findall(f"{POM}licenses/{POM}license"), 1):
        for field in ("name", "url"):
            if not (lic.findtext(POM + field) or "").strip():
                problems.append(f"pom: license {i} has no <{field}>")
    version = text("version")
    if "@" in pom_text or version.endswith("-SNAPSHOT"):
        problems.append(f"pom: an unfilled placeholder or a snapshot version ({version})")
    for field in ("url", "scm/url"):
        if text(field) and text(field) != repo:
            problems.append(f"pom: <{field}> {text(field)} is not the repository {repo}")
    for field in ("scm/connection", "scm/developerConnection"):
        if text(field) and not text(field).startswith("scm:git:" + repo):
            problems.append(f"pom: <{field}> is not scm:git:{repo}...")
    if jar is not None:
        base = jar[: -len(".jar")]
        for suffix, needed in (("-sources.jar", ".java"), ("-javadoc.jar", "index.html")):
            path = base + suffix
            if not os.path.isfile(path):
                problems.append(f"no {os.path.basename(path)} beside the jar (Maven Central requires it)")
                continue
            with zipfile.ZipFile(path) as z:
                if not any(n.endswith(needed) for n in z.namelist()):
                    problems.append(f"{os.path.basename(path)} holds no {needed}")
        with zipfile.ZipFile(jar) as z:
            classes = {n[: -len(".class")] for n in z.namelist() if n.endswith(".class") and "$" not in n}
        if os.path.isfile(base + "-sources.jar"):
            with zipfile.ZipFile(base + "-sources.jar") as z:
                sources = {n[: -len(".java")] for n in z.namelist() if n.endswith(".java")}
            problems += [f"{os.path.basename(base)}-sources.jar: no source of {c}" for c in sorted(classes - sources)]
        if manifest_attributes(jar).get("Enable-Native-Access") != "ALL-UNNAMED":
            problems.append(f"{os.path.basename(jar)}: MANIFEST.MF lacks Enable-Native-Access: ALL-UNNAMED")
    return problems


def selftest(root):
    """Each rule on a broken variant of the real inputs: the checker must report it."""
    repo = repository(root)
    manifest = read(os.path.join(root, "Cargo.toml"))
    readme = read(os.path.join(root, tomllib.loads(manifest)["package"]["readme"]))
    members = {m + "/Cargo.toml": read(os.path.join(root, m, "Cargo.toml"))
               for m in tomllib.loads(manifest)["workspace"]["members"] if m != "."}
    failures = []
    base = crate_problems(manifest, readme, repo, members)
    if base:
        return [f"selftest: the real crate already fails: {base}"]

    def expect(label, problems):
        if not problems:
            failures.append(f"selftest: not caught: {label}")
        else:
            print(f"selftest: caught {label}: {problems[0]}")

    breaks = [
        ("no repository", lambda m, r: (re.sub(r'(?m)^repository = .*\n', "", m, count=1), r)),
        ("no documentation", lambda m, r: (re.sub(r'(?m)^documentation = .*\n', "", m, count=1), r)),
        ("no docs.rs metadata", lambda m, r: (m.replace("[package.metadata.docs.rs]", "[package.metadata.docs-rs]"), r)),
        ("a keyword of 21 characters", lambda m, r: (m.replace('"privacy"', '"exponential-mechanism"'), r)),
        ("an unknown category", lambda m, r: (m.replace('"science"', '"privacy"'), r)),
        ("the readme not included", lambda m, r: (m.replace('"/README.crate.md",', ""), r)),
        ("a relative link in the readme", lambda m, r: (m, r + "\nSee [the design](docs/DESIGN.md).\n")),
        ("a stale dependency line", lambda m, r: (m.replace('version = "0.2.0"', 'version = "0.3.0"', 1), r)),
        ("an MSRV the readme does not state", lambda m, r: (m.replace('rust-version = "1.88"', 'rust-version = "1.86"'), r)),
    ]
    for label, f in breaks:
        m, r = f(manifest, readme)
        if (m, r) == (manifest, readme):
            failures.append(f"selftest: the break '{label}' changes nothing")
            continue
        expect(label, crate_problems(m, r, repo, members))
    member, text = sorted(members.items())[0]
    expect(f"{member} published", crate_problems(manifest, readme, repo, {member: text.replace("publish = false", "")}))
    expect(f"{member} with another repository",
           crate_problems(manifest, readme, repo, {member: text.replace(repo, repo + "-fork")}))
    return failures


def pom_selftest(pom_text, repo, jar):
    base = pom_problems(pom_text, repo, jar)
    if base:
        return [f"pom-selftest: the real pom already fails: {base}"]
    failures = []
    breaks = [
        ("no <url>", lambda t: re.sub(r"\n  <url>[^<]*</url>", "", t, count=1)),
        ("no <scm>", lambda t: re.sub(r"<scm>.*?</scm>", "", t, flags=re.S)),
        ("no <developers>", lambda t: re.sub(r"<developers>.*?</developers>", "", t, flags=re.S)),
        ("no license url", lambda t: re.sub(r"<license>(.*?)<url>[^<]*</url>", r"<license>\1", t, flags=re.S)),
        ("no <description>", lambda t: re.sub(r"<description>.*?</description>", "", t, flags=re.S)),
        ("a snapshot version", lambda t: re.sub(r"(<artifactId>dpmo</artifactId>\s*<version>)([^<]*)", r"\1\2-SNAPSHOT", t)),
        ("another repository in <scm>", lambda t: t.replace(f"<connection>scm:git:{repo}", "<connection>scm:git:https://example.org/x")),
    ]
    for label, f in breaks:
        broken = f(pom_text)
        if broken == pom_text:
            failures.append(f"pom-selftest: the break '{label}' changes nothing")
        elif not pom_problems(broken, repo, jar):
            failures.append(f"pom-selftest: not caught: {label}")
        else:
            print(f"pom-selftest: caught {label}: {pom_problems(broken, repo, jar)[0]}")
    # The jar without the manifest attribute, and without its sources jar beside it.
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, os.path.basename(jar))
        with zipfile.ZipFile(jar) as src, zipfile.ZipFile(copy, "w") as dst:
            for item in src.infolist():
                data = src.read(item)
                if item.filename == "META-INF/MANIFEST.MF":
                    data = re.sub(rb"Enable-Native-Access: [^\r\n]*\r?\n", b"", data)
                dst.writestr(item, data)
        shutil.copy(jar[: -len(".jar")] + "-javadoc.jar", copy[: -len(".jar")] + "-javadoc.jar")
        for label, problems in (("a jar without Enable-Native-Access and without its sources jar",
                                 pom_problems(pom_text, repo, copy)),):
            wanted = ("Enable-Native-Access", "-sources.jar")
            missing = [w for w in wanted if not any(w in p for p in problems)]
            if missing:
                failures.append(f"pom-selftest: not caught: {label} ({missing})")
            else:
                print(f"pom-selftest: caught {label}: {'; '.join(problems)}")
    return failures


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "crate":
        problems = check_crate(args[0] if args else ROOT)
    elif cmd == "wheel":
        root = args[1] if len(args) > 1 else ROOT
        problems = wheel_problems(args[0], repository(root), root)
    elif cmd == "sdist":
        problems = sdist_problems(args[0])
    elif cmd == "pom":
        root = args[2] if len(args) > 2 else ROOT
        problems = pom_problems(read(args[0]), repository(root), args[1])
    elif cmd == "pom-selftest":
        root = args[2] if len(args) > 2 else ROOT
        problems = pom_selftest(read(args[0]), repository(root), args[1])
    elif cmd == "selftest":
        problems = selftest(args[0] if args else ROOT)
    else:
        print(__doc__)
        return 2
    for p in problems:
        print(p)
    if not problems:
        print(f"check_registry {cmd}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
