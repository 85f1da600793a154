"""``lab setup``: Debian packages, libiscsi fio, a patched tgt, the slow device and the line, cached.

fio is built from Debian's fio source package (``apt-get source``, Debian's patches applied)
configured with ``--enable-libiscsi``; tgt from Debian's tgt source package with the project's
patch ``patches/tgt-r2t-window.patch``; slowdisk (a FUSE file with a per-request time and a rate
cap, :mod:`.slowdisk`) and the compiled delay line from the project's own C sources
``native/slowdisk.c`` and ``native/delayline.c``. Each build lives in
``.cache/lab/<tool>-<key>/`` where the key hashes the source package version (or the C source's
sha256), the patch's sha256 and the build recipe; a build whose ``build.json`` matches is reused,
so a warm ``lab setup`` only checks packages and stamps.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

PATCH = Path(__file__).with_name("patches") / "tgt-r2t-window.patch"
SLOWDISK_SOURCE = Path(__file__).with_name("native") / "slowdisk.c"
DELAYLINE_SOURCE = Path(__file__).with_name("native") / "delayline.c"
DEB_SRC_FILE = Path("/etc/apt/sources.list.d/iscsi-report-lab-src.sources")
# Runtime tools and the few build dependencies these two builds need (not the packages' full
# Build-Depends: no GUI, RDMA, Ceph or Gluster back ends are built).
PACKAGES = (
    "build-essential",
    "dpkg-dev",
    "pkg-config",
    "libiscsi-dev",
    "zlib1g-dev",
    "tshark",
    "iperf3",
    "iputils-ping",
    "iproute2",
    "fuse3",
    "libfuse3-dev",
)
FIO_CONFIGURE = ("--enable-libiscsi", "--disable-optimizations", "--extra-cflags=-O2")
TGT_MAKE = ("ISCSI=1",)
SLOWDISK_CFLAGS = ("-O2", "-Wall", "-Wextra")
DELAYLINE_CFLAGS = ("-O2", "-Wall", "-Wextra")
APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
APT_LOCK = ("-o", "DPkg::Lock::Timeout=600")


class SetupError(RuntimeError):
    """A setup step failed; the message names the step and the log file."""


@dataclass(frozen=True)
class Tools:
    """Paths of the lab's binaries."""

    fio: Path
    tgtd: Path
    tgtadm: Path
    fio_source_version: str
    tgt_source_version: str
    patch_sha256: str
    slowdisk: Path
    delayline: Path

    def as_dict(self) -> dict[str, str]:
        """JSON-friendly view."""
        return {k: str(v) for k, v in self.__dict__.items()}


def cache_root(project_root: str | Path) -> Path:
    """``<project>/.cache/lab`` (or $ISCSI_REPORT_LAB_CACHE)."""
    env = os.environ.get("ISCSI_REPORT_LAB_CACHE")
    return Path(env) if env else Path(project_root).resolve() / ".cache" / "lab"


def patch_sha256() -> str:
    """sha256 of the project's tgt patch."""
    return hashlib.sha256(PATCH.read_bytes()).hexdigest()


def _run(
    cmd: list[str], log: Path | None = None, cwd: Path | None = None, env: dict[str, str] | None = None
) -> str:
    full_env = {**os.environ, **(env or {})}
    res = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True, check=False)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(cmd)}\n{res.stdout}{res.stderr}\n")
    if res.returncode != 0:
        where = f" (log: {log})" if log else ""
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
        raise SetupError(f"{' '.join(cmd[:4])} failed with {res.returncode}{where}:\n{tail}")
    return res.stdout


def missing_packages(packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """Packages of ``packages`` not installed (dpkg-query)."""
    res = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
        capture_output=True,
        text=True,
        check=False,
    )
    installed = {line.split()[0] for line in res.stdout.splitlines() if line.endswith(" installed")}
    return [p for p in packages if p not in installed]


def deb_src_text(
    sources_dir: Path = Path("/etc/apt/sources.list.d"), sources_list: Path = Path("/etc/apt/sources.list")
) -> str:
    """deb822 deb-src stanzas for the suites of the existing Debian ``deb`` sources."""
    stanzas: list[str] = []
    for path in sorted(sources_dir.glob("*.sources")):
        if path == DEB_SRC_FILE:
            continue
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            if re.search(r"^Types:.*\bdeb\b", block, re.M) and "debian" in block:
                lines = [ln for ln in block.strip().splitlines() if not ln.startswith("#")]
                lines = ["Types: deb-src" if ln.startswith("Types:") else ln for ln in lines]
                stanzas.append("\n".join(lines))
    if sources_list.exists():
        for line in sources_list.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^deb\s+(\[[^]]*\]\s+)?(\S*debian\S*)\s+(\S+)\s+(.+)$", line.strip())
            if m:
                stanzas.append(
                    f"Types: deb-src\nURIs: {m.group(2)}\nSuites: {m.group(3)}\nComponents: {m.group(4)}"
                )
    if not stanzas:
        raise SetupError("no Debian 'deb' source found to mirror as deb-src")
    head = "# iscsi-report lab: Debian source packages (fio, tgt) for `iscsi-report lab setup`\n"
    return head + "\n\n".join(stanzas) + "\n"


def ensure_apt(log: Path, say) -> None:
    """deb-src entry present, package lists fresh enough, required packages installed."""
    text = deb_src_text()
    need_update = not DEB_SRC_FILE.exists() or DEB_SRC_FILE.read_text(encoding="utf-8") != text
    if need_update:
        DEB_SRC_FILE.write_text(text, encoding="utf-8")
        say(f"wrote {DEB_SRC_FILE}")
    missing = missing_packages()
    if not need_update:
        probe = subprocess.run(
            ["apt-get", "source", "--print-uris", "-qq", "tgt", "fio"],
            capture_output=True,
            text=True,
            check=False,
        )
        need_update = probe.returncode != 0 or ".dsc" not in probe.stdout
    if need_update or missing:
        say("apt-get update")
        _run(["apt-get", *APT_LOCK, "update", "-qq"], log, env=APT_ENV)
    if missing:
        say(f"apt-get install {' '.join(missing)}")
        _run(
            ["apt-get", *APT_LOCK, "install", "-y", "-qq", "--no-install-recommends", *missing],
            log,
            env=APT_ENV,
        )


def source_version(package: str) -> str:
    """Version (without epoch) of the source package ``apt-get source`` would fetch (.dsc name)."""
    out = _run(["apt-get", "source", "--print-uris", "-qq", package])
    for line in out.splitlines():
        m = re.search(r"'\S+/" + re.escape(package) + r"_([^/']+)\.dsc'", line)
        if m:
            return unquote(m.group(1))
    raise SetupError(f"apt-get source --print-uris {package}: no .dsc listed")


def _key(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _stamp_ok(out_dir: Path, key: str, binaries: list[str]) -> bool:
    stamp = out_dir / "build.json"
    if not stamp.exists():
        return False
    try:
        doc = json.loads(stamp.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return False
    return doc.get("key") == key and all(os.access(out_dir / b, os.X_OK) for b in binaries)


def _fetch_source(package: str, version: str, work: Path, log: Path) -> Path:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    _run(["apt-get", "source", "-qq", package], log, cwd=work)
    if not list(work.glob(f"{package}_{version}.dsc")):
        raise SetupError(f"apt-get source {package} fetched another version than {version}")
    trees = [p for p in work.iterdir() if p.is_dir()]
    if len(trees) != 1:
        raise SetupError(f"apt-get source {package}: expected one source tree in {work}")
    return trees[0]


def build_fio(cache: Path, version: str, log: Path, say) -> Path:
    """The libiscsi-enabled fio binary for this source version (cached)."""
    key = _key("fio", version, *FIO_CONFIGURE)
    out = cache / f"fio-{key}"
    if _stamp_ok(out, key, ["fio"]):
        return out / "fio"
    say(f"building fio {version} with libiscsi (about a minute)")
    t0 = time.monotonic()
    tree = _fetch_source("fio", version, cache / "src" / "fio", log)
    _run(["./configure", *FIO_CONFIGURE], log, cwd=tree)
    config = (tree / "config-host.h").read_text(encoding="utf-8")
    if "CONFIG_LIBISCSI" not in config:
        raise SetupError(f"fio configure did not enable libiscsi (is libiscsi-dev installed?); {log}")
    _run(["make", f"-j{os.cpu_count() or 2}", "fio"], log, cwd=tree)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(tree / "fio", out / "fio")
    (out / "build.json").write_text(
        json.dumps(
            {
                "key": key,
                "source_package": "fio",
                "version": version,
                "configure": FIO_CONFIGURE,
                "build_s": round(time.monotonic() - t0, 1),
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    shutil.rmtree(cache / "src" / "fio", ignore_errors=True)
    return out / "fio"


def build_tgt(cache: Path, version: str, log: Path, say) -> tuple[Path, Path]:
    """tgtd and tgtadm from Debian's tgt source with the project's patch (cached)."""
    psha = patch_sha256()
    key = _key("tgt", version, psha, *TGT_MAKE)
    out = cache / f"tgt-{key}"
    if _stamp_ok(out, key, ["tgtd", "tgtadm"]):
        return out / "tgtd", out / "tgtadm"
    say(f"building tgt {version} with {PATCH.name}")
    t0 = time.monotonic()
    tree = _fetch_source("tgt", version, cache / "src" / "tgt", log)
    _run(["patch", "-p1", "-i", str(PATCH)], log, cwd=tree)
    _run(["make", f"-j{os.cpu_count() or 2}", "-C", "usr", *TGT_MAKE], log, cwd=tree)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("tgtd", "tgtadm"):
        shutil.copy2(tree / "usr" / name, out / name)
    (out / "build.json").write_text(
        json.dumps(
            {
                "key": key,
                "source_package": "tgt",
                "version": version,
                "patch": PATCH.name,
                "patch_sha256": psha,
                "make": TGT_MAKE,
                "build_s": round(time.monotonic() - t0, 1),
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    shutil.rmtree(cache / "src" / "tgt", ignore_errors=True)
    return out / "tgtd", out / "tgtadm"


def native_key(name: str, source: Path, cflags: tuple[str, ...]) -> str:
    """A native build's cache key: its name, the C source's sha256 and the compile flags."""
    return _key(name, hashlib.sha256(source.read_bytes()).hexdigest(), *cflags)


def slowdisk_key(source: Path = SLOWDISK_SOURCE, cflags: tuple[str, ...] = SLOWDISK_CFLAGS) -> str:
    """The slowdisk build's cache key: the C source's sha256 and the compile flags."""
    return native_key("slowdisk", source, cflags)


def delayline_key(source: Path = DELAYLINE_SOURCE, cflags: tuple[str, ...] = DELAYLINE_CFLAGS) -> str:
    """The compiled delay line's cache key: the C source's sha256 and the compile flags."""
    return native_key("delayline", source, cflags)


def build_native(
    cache: Path, log: Path, say, name: str, source: Path, cflags: tuple[str, ...], link_flags: list[str]
) -> Path:
    """Compile one of the project's own C programs (``native/``) into the cache, once per key."""
    key = native_key(name, source, cflags)
    out = cache / f"{name}-{key}"
    if _stamp_ok(out, key, [name]):
        return out / name
    say(f"building {name} from {source.name}")
    t0 = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    binary = out / name
    _run(["gcc", *cflags, "-o", str(binary), str(source), *link_flags], log)
    (out / "build.json").write_text(
        json.dumps(
            {
                "key": key,
                "source": source.name,
                "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
                "cflags": cflags,
                "link_flags": link_flags,
                "build_s": round(time.monotonic() - t0, 1),
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    return binary


def build_slowdisk(cache: Path, log: Path, say) -> Path:
    """The slowdisk FUSE daemon compiled from ``native/slowdisk.c`` against libfuse3 (cached)."""
    fuse_flags = _run(["pkg-config", "--cflags", "--libs", "fuse3"], log).split()
    return build_native(cache, log, say, "slowdisk", SLOWDISK_SOURCE, SLOWDISK_CFLAGS, fuse_flags)


def build_delayline(cache: Path, log: Path, say) -> Path:
    """The compiled delay line from ``native/delayline.c`` (cached; no library beyond libc)."""
    return build_native(cache, log, say, "delayline", DELAYLINE_SOURCE, DELAYLINE_CFLAGS, [])


def setup(project_root: str | Path, say=print) -> Tools:
    """Install packages; build (or reuse) fio, tgt, slowdisk and the compiled line; write tools.json."""
    if os.geteuid() != 0:
        raise SetupError("lab setup needs root (apt-get, network namespaces)")
    cache = cache_root(project_root)
    cache.mkdir(parents=True, exist_ok=True)
    log = cache / "setup.log"
    ensure_apt(log, say)
    fio_version, tgt_version = source_version("fio"), source_version("tgt")
    fio = build_fio(cache, fio_version, log, say)
    tgtd, tgtadm = build_tgt(cache, tgt_version, log, say)
    slowdisk = build_slowdisk(cache, log, say)
    delayline = build_delayline(cache, log, say)
    tools = Tools(fio, tgtd, tgtadm, fio_version, tgt_version, patch_sha256(), slowdisk, delayline)
    (cache / "tools.json").write_text(json.dumps(tools.as_dict(), indent=1), encoding="utf-8")
    return tools


def load_tools(project_root: str | Path) -> Tools | None:
    """The tools recorded by the last ``lab setup``, if they are all still there and current.

    A tools.json from before a tool was added (no ``slowdisk`` or ``delayline``), one that is not
    JSON, or one whose native programs were built from another source gives None: the caller runs
    ``lab setup`` again.
    """
    path = cache_root(project_root) / "tools.json"
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        tools = Tools(
            Path(doc["fio"]),
            Path(doc["tgtd"]),
            Path(doc["tgtadm"]),
            doc["fio_source_version"],
            doc["tgt_source_version"],
            doc["patch_sha256"],
            Path(doc["slowdisk"]),
            Path(doc["delayline"]),
        )
    except (json.JSONDecodeError, KeyError, TypeError):
        return None
    if not all(
        os.access(p, os.X_OK) for p in (tools.fio, tools.tgtd, tools.tgtadm, tools.slowdisk, tools.delayline)
    ):
        return None
    if tools.patch_sha256 != patch_sha256():
        return None
    if tools.slowdisk.parent.name != f"slowdisk-{slowdisk_key()}":
        return None
    if tools.delayline.parent.name != f"delayline-{delayline_key()}":
        return None
    return tools
