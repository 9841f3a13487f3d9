# SPDX-License-Identifier: MIT
"""The amdqp package's PEP 517 build backend: the standard library only.

The package is pure Python (ctypes over libamdqp), so a wheel is a zip of
amdqp/*.py and its metadata. setuptools' backend needs the `wheel`
package for that, which a fresh venv on Debian 12 lacks and cannot fetch
offline (pip: "invalid command 'bdist_wheel'"); this one needs nothing, so

    pip install --no-build-isolation ./libuser/python

works in any venv, with or without setuptools, and without a network.
The metadata (name, version, summary, licence, classifiers) comes from
pyproject.toml's [project] table and amdqp/_version.py. Nothing is
written into the source folder.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    try:
        import tomli as tomllib
    except ImportError as e:
        raise ImportError("building amdqp with Python < 3.11 needs tomli "
                          "(apt-get install python3-tomli)") from e

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
_PACKAGE = "amdqp"
_TAG = "py3-none-any"
# Fixed timestamps: the same sources give the same wheel.
_DATE = (2020, 1, 1, 0, 0, 0)


def _project():
    with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _version():
    path = os.path.join(_ROOT, _PACKAGE, "_version.py")
    with open(path, encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError(f"no __version__ = \"...\" line in {path}")
    return m.group(1)


def _metadata():
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {_version()}",
        f"Summary: {p.get('description', '')}",
    ]
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license", {}).get("text")
    if lic:
        lines.append(f"License: {lic}")
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    return "\n".join(lines) + "\n"


def _dist_info():
    return f"{_PACKAGE}-{_version()}.dist-info"


def _sources():
    """The package's modules, sorted: (path in the wheel, bytes)."""
    pkg = os.path.join(_ROOT, _PACKAGE)
    out = []
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{_PACKAGE}/{name}", f.read()))
    return out


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: amdqp_build\n"
            f"Root-Is-Purelib: true\nTag: {_TAG}\n")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return f"{path},sha256={digest.rstrip(b'=').decode()},{len(data)}\n"


def _write_wheel(wheel_directory, files):
    """Write files [(path, bytes)] plus WHEEL, METADATA and RECORD."""
    di = _dist_info()
    files = list(files) + [
        (f"{di}/METADATA", _metadata().encode()),
        (f"{di}/WHEEL", _wheel_file().encode()),
    ]
    record = "".join(_record_line(p, d) for p, d in files)
    record += f"{di}/RECORD,,\n"
    files.append((f"{di}/RECORD", record.encode()))
    name = f"{_PACKAGE}-{_version()}-{_TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, _DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory,
                                     config_settings=None):
    di = _dist_info()
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for name, text in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(metadata_directory, di, name), "w",
                  encoding="utf-8") as f:
            f.write(text)
    return di


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _write_wheel(wheel_directory, _sources())


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    """pip install -e: a .pth file that puts the source folder on sys.path."""
    return _write_wheel(wheel_directory,
                        [(f"_{_PACKAGE}_editable.pth", (_ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{_PACKAGE}-{_version()}"
    name = f"{base}.tar.gz"
    members = ["pyproject.toml", "build_backend/amdqp_build.py"]
    members += [p for p, _ in _sources()]
    pkg_info = _metadata().encode()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                      format=tarfile.PAX_FORMAT) as t:
        for rel in members:
            t.add(os.path.join(_ROOT, rel), arcname=f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(pkg_info))
    return name
