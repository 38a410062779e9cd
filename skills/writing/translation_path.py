"""Where a translation is saved: the way the site's own translations are named.

Beside the original as ``<name>-<code>`` (``posts/x.md`` → ``posts/x-en.md``; a page bundle
``x/index.md`` → ``x-en/index.md``) on a blog that keeps no translations of its own. A site
that does is followed, as its generator reads it:

- **By file name** (Hugo's and Zola's ``x.zh.md``, a bundle's ``x/index.zh.md``): where the
  site's config declares its languages (Hugo's ``languages``, Zola's ``[languages.X]``) or,
  none read, files beside the post are named so, ``<name>.<code>.md`` in the site's own
  spelling of the code (``x.zh-cn.md``), a bundle's in the bundle (``x/index.zh.md``: it keeps
  its images). The site's default language is the file without a code (``x.md``). Written
  ``channels-zh.md``, Hugo built a second English page of Chinese text, and
  ``hello-zola.zh-en.md`` (the code added after the one in the name) stopped Zola's build
  ("has a language code of zh-en which isn't present in the config.toml `languages`"). A
  language the config does not declare gets ``<name>-<code>.md``, a page of the default
  language: Zola refuses a code it does not know.
- **By folder** (Hugo's ``contentDir`` per language, VitePress's ``locales``, a folder under
  ``docs/`` each): the same path in the other language's folder (``content/en/posts/x.md`` →
  ``content/zh/posts/x.md``, ``docs/posts/x.md`` → ``docs/zh/posts/x.md``), when both folders
  are declared (Hugo's need not be there yet).

A post that has the language already is not translated again (``first_names``,
``translate.existing_translation``). A name taken meanwhile gets ``-<code>`` (``x-en.md``),
or ``-2``... before the code (``x-2.zh.md``): never ``x.zh-2.md``, a code Zola refuses.
A page bundle's translation in a bundle of its own (``x-en/index.md``) gets the bundle's
other files (``bundle_resources``: its images, copied by ``translate``); one in the same
bundle (``x/index.zh.md``) shares them. Blocking I/O (the site's config, the folder): call it
from a sync step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path, PurePosixPath
from typing import Any

from skillrt.blog.conventions import CODED_NAME, LANGUAGE_CODE
from skillrt.blog.siteconfig import hugo_config, read_config

from .languages import LANGUAGES

__all__ = [
    "SiteLanguages",
    "bundle_resources",
    "first_names",
    "site_languages",
    "translation_path",
]

MAX_TRIES = 50
MAX_NAMES = 5000
_BUNDLE_PAGE = re.compile(rf"^(?P<page>_?index)(?:\.(?P<code>{LANGUAGE_CODE}))?$")
_GLOB_MARKS = re.compile(r"[*?\[]")
_PAGE_SUFFIXES = (".md", ".markdown")
_VITEPRESS = ("config.mts", "config.ts", "config.mjs", "config.js")
# A locale's key in VitePress's config: "zh: {", "'zh-CN': {"
_LOCALE = re.compile(
    r"""^\s*['"]?(?P<key>[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})?)['"]?\s*:\s*\{""", re.M
)
_ROOT_LANG = re.compile(r"""\broot\s*:\s*\{[^{}]*?\blang\s*:\s*['"](?P<lang>[\w-]+)['"]""")


@dataclass(frozen=True, slots=True)
class SiteLanguages:
    """A site's languages: ``default``, the code of the language its uncoded files are in;
    ``codes``, each language's code as the site spells it, by its first part lowercased
    (``zh``: ``zh-cn``); ``folders``, the content folder of a language that has its own (by
    the site's code, relative to the blog's root); ``by_name``: files are told apart by a
    code in their name (no config read: files beside the post are)."""

    default: str = "en"
    codes: dict[str, str] = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)
    by_name: bool = True


def _primary(code: str) -> str:
    return re.split(r"[-_]", code, maxsplit=1)[0].casefold()


def _is_code(code: str, site: SiteLanguages | None) -> bool:
    """Whether ``code`` (from a file name) is a language's: the site's, or one we know."""
    folded = code.casefold()
    return _primary(code) in LANGUAGES or (
        site is not None and folded in {c.casefold() for c in site.codes.values()}
    )


def _declared(default: str, languages: dict[str, Any]) -> SiteLanguages:
    """The languages a Hugo or Zola config declares, with Hugo's ``contentDir`` folders (a
    site that has them names no file by its language)."""
    codes = {_primary(str(code)): str(code) for code in languages}
    codes.setdefault(_primary(default), default)
    folders = {
        str(code): str(conf["contentDir"]).strip("/")
        for code, conf in languages.items()
        if isinstance(conf, dict) and isinstance(conf.get("contentDir"), str)
    }
    return SiteLanguages(default=default, codes=codes, folders=folders, by_name=not folders)


def _hugo(root: Path) -> SiteLanguages | None:
    """A Hugo site's languages (``hugo.toml``, ``config.yaml``…, ``config/_default/``,
    ``languages.toml`` there: ``hugo_config``), or None when none declares more than one."""
    main, languages = hugo_config(root)
    if len(languages) < 2:
        return None
    default = main.get("defaultContentLanguage") or main.get("defaultcontentlanguage") or "en"
    return _declared(str(default), languages)


def _zola(root: Path) -> SiteLanguages | None:
    config = read_config(root / "config.toml")
    languages = config.get("languages") if config else None
    if not config or not isinstance(languages, dict) or not languages:
        return None
    return _declared(str(config.get("default_language") or "en"), languages)


def _vitepress(root: Path, kind_dir: str) -> SiteLanguages | None:
    """A VitePress site's locales: ``root`` (the source folder, in its ``lang``, else English)
    and a folder under it each (``zh: {…}`` → ``docs/zh``), read from its config's text."""
    for name in _VITEPRESS:
        try:
            text = (root / kind_dir / ".vitepress" / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        start = text.find("locales")
        if start < 0:
            return None
        text = text[start:]
        found = _ROOT_LANG.search(text)
        default = found.group("lang") if found else "en"
        folders = {default: kind_dir}
        for locale in _LOCALE.finditer(text):
            key = locale.group("key")
            if _primary(key) in LANGUAGES and key != "root" and (root / kind_dir / key).is_dir():
                folders.setdefault(key, f"{kind_dir}/{key}")
        if len(folders) < 2:
            return None
        codes = {_primary(code): code for code in folders}
        return SiteLanguages(default=default, codes=codes, folders=folders, by_name=False)
    return None


def site_languages(root: Path, kind: str) -> SiteLanguages | None:
    """The languages the site at ``root`` (a blog of ``kind``) declares, or None."""
    if kind == "zola":
        return _zola(root)
    if kind == "vitepress" or (root / "docs" / ".vitepress").is_dir():
        return _vitepress(root, "docs")
    if kind in ("obsidian", "hexo", "jekyll", "mkdocs"):
        return None
    # (Hugo, also where its config folder, config/_default/, went unrecognised: "content")
    return _hugo(root)


def _parts(path: str, site: SiteLanguages | None) -> tuple[PurePosixPath, str, bool, str]:
    """``path``'s folder, its name without a language's code and suffix (a bundle's folder
    name), whether it is a page bundle's page, and the code its name holds ("" for none)."""
    rel = PurePosixPath(path)
    page = _BUNDLE_PAGE.match(rel.stem)
    if page is not None and rel.parent.name and not page.group("page").startswith("_"):
        code = page.group("code") or ""
        if code and not _is_code(code, site):
            return rel.parent, rel.stem, False, ""
        return rel.parent.parent, rel.parent.name, True, code
    coded = CODED_NAME.match(rel.stem)
    if coded is not None and _is_code(coded.group("code"), site):
        return rel.parent, coded.group("stem"), False, coded.group("code")
    return rel.parent, rel.stem, False, ""


def _sibling_codes(folder: Path) -> dict[str, str]:
    """The languages files in ``folder`` (or in its bundles) are named by (``x.zh.md``: zh),
    by their first part, as spelled; the uncoded files are in another (the default). At most
    ``MAX_NAMES`` names are read."""
    codes: dict[str, str] = {}
    try:
        entries = list(islice(folder.iterdir(), MAX_NAMES))
        names = [entry.name for entry in entries]
        for entry in entries:
            if entry.is_dir() and len(names) < MAX_NAMES:
                names += [page.name for page in islice(entry.iterdir(), 20)]
    except OSError:
        return codes
    for name in names:
        stem, dot, suffix = name.rpartition(".")
        coded = CODED_NAME.match(stem) if dot and suffix in ("md", "markdown") else None
        if coded is not None and _primary(coded.group("code")) in LANGUAGES:
            codes.setdefault(_primary(coded.group("code")), coded.group("code"))
    return codes


def _folder_of(path: str, site: SiteLanguages) -> tuple[str, str] | None:
    """The language whose folder ``path`` is in (the deepest), and that folder."""
    found = [
        (code, folder) for code, folder in site.folders.items() if path.startswith(folder + "/")
    ]
    return max(found, key=lambda item: len(item[1])) if found else None


def translation_path(
    root: Path, kind: str, path: str, code: str, taken: Callable[[str], bool]
) -> tuple[str, bool]:
    """Where the translation of ``path`` into ``code`` goes, and whether the site's own way
    named it (then it stays where it is named: no drafts folder). ``taken``: whether a file is
    there."""
    site = site_languages(root, kind)
    folder, name, bundle, _ = _parts(path, site)
    suffix = PurePosixPath(path).suffix or ".md"
    if site is not None and site.folders:
        moved = _in_folder(path, code, site, taken)
        if moved is not None:
            return moved, True
    if site is None:  # no config read: named as the files beside it are
        spelled = _sibling_codes(root / folder).get(code)
        default = ""
    else:
        spelled = site.codes.get(code) if site.by_name else None
        default = site.default
    if spelled is not None:
        return _coded(folder, name, bundle, suffix, code, spelled, default, taken), True
    return _dashed(folder, name, bundle, suffix, code), False


def first_names(root: Path, kind: str, path: str, code: str) -> tuple[str, bool, str]:
    """The name a translation of ``path`` into ``code`` gets when none is taken, whether the
    site's own way named it (``x.zh.md``, ``content/zh/x.md``, or ``x.md`` in the default
    language), and skillrt's own ``<name>-<code>`` beside it: where a translation made before
    is found (``translate.existing_translation``)."""
    wanted, sites_own = translation_path(root, kind, path, code, lambda _: False)
    folder, name, bundle, _ = _parts(path, site_languages(root, kind))
    return (
        wanted,
        sites_own,
        _dashed(folder, name, bundle, PurePosixPath(path).suffix or ".md", code),
    )


def _dashed(folder: PurePosixPath, name: str, bundle: bool, suffix: str, code: str) -> str:
    """``<name>-<code>`` beside the original (a bundle: ``<name>-<code>/index.md``)."""
    if bundle:
        return str(folder / f"{name}-{code}" / f"index{suffix}")
    return str(folder / f"{name}-{code}{suffix}")


def _coded(
    folder: PurePosixPath,
    name: str,
    bundle: bool,
    suffix: str,
    code: str,
    spelled: str,
    default: str,
    taken: Callable[[str], bool],
) -> str:
    """``<name>.<code>`` (``<name>`` alone in the default language), the first one free."""
    if spelled.casefold() == default.casefold():
        plain = str(folder / name / f"index{suffix}") if bundle else str(folder / f"{name}{suffix}")
        return plain if not taken(plain) else _dashed(folder, name, bundle, suffix, code)
    for n in range(1, MAX_TRIES):
        stem = name if n == 1 else f"{name}-{n}"
        if bundle:
            wanted = str(folder / stem / f"index.{spelled}{suffix}")
        else:
            wanted = str(folder / f"{stem}.{spelled}{suffix}")
        if not taken(wanted):
            return wanted
    return _dashed(folder, name, bundle, suffix, code)


def _in_folder(
    path: str, code: str, site: SiteLanguages, taken: Callable[[str], bool]
) -> str | None:
    """The same path in the folder of ``code``'s language, when ``path`` is in another
    language's folder; ``-<code>`` there when the name is taken. (The folder need not be
    there yet: Hugo reads a declared ``contentDir`` that is not; VitePress's locales are only
    those whose folder is, ``_vitepress``.) With ``content/zh`` declared and not made yet, a
    translation of ``content/en/posts/x.md`` went to ``content/en/posts/x-zh.md``, an
    English page of Chinese text."""
    source = _folder_of(path, site)
    spelled = site.codes.get(code)
    target = site.folders.get(spelled) if spelled is not None else None
    if source is None or target is None or source[1] == target:
        return None
    rest = path[len(source[1]) + 1 :]
    # (another language's folder under this one: VitePress's docs/zh under docs)
    if any(rest.startswith(folder[len(source[1]) + 1 :] + "/") for folder in site.folders.values()
           if folder.startswith(source[1] + "/")):  # fmt: skip
        return None
    folder, name, bundle, _ = _parts(f"{target}/{rest}", site)
    suffix = PurePosixPath(path).suffix or ".md"
    wanted = str(folder / name / f"index{suffix}") if bundle else str(folder / f"{name}{suffix}")
    return wanted if not taken(wanted) else _dashed(folder, name, bundle, suffix, code)


def bundle_resources(
    listed: Callable[[str], list[str]], path: str, new_path: str
) -> list[tuple[str, str]]:
    """The files to copy with the translation ``new_path`` of the page bundle ``path``: each
    file of the bundle that is no page (``cover.png``, ``img/a.png``; none in a folder that
    holds pages of its own), and where it goes in the translation's bundle. None when either
    is no bundle's page or both are in one bundle (``x/index.zh.md`` shares its images).
    ``content/posts/hooks/index.md`` translated into ``hooks-zh/index.md`` had no
    ``cover.png``: its ``![cover](cover.png)`` was broken (and Zola's ``resize_image`` on it
    fails the build). ``listed``: the blog's files matching a glob (``FileStore.list``)."""
    source, new = PurePosixPath(path), PurePosixPath(new_path)
    if not (_bundle_page(source) and _bundle_page(new)) or source.parent == new.parent:
        return []
    folder = str(source.parent)
    escaped = _GLOB_MARKS.sub(lambda mark: f"[{mark.group()}]", folder)
    found = [PurePosixPath(name).relative_to(folder) for name in listed(f"{escaped}/**/*")]
    pages = {name.parent for name in found if name.suffix.lower() in _PAGE_SUFFIXES}
    return [
        (f"{folder}/{name}", str(new.parent / name))
        for name in found
        if name.suffix.lower() not in _PAGE_SUFFIXES
        and not any(page != PurePosixPath(".") and name.is_relative_to(page) for page in pages)
    ]


def _bundle_page(path: PurePosixPath) -> bool:
    """Whether ``path`` is a leaf bundle's page (``x/index.md``, ``x/index.zh.md``)."""
    page = _BUNDLE_PAGE.match(path.stem)
    return page is not None and page.group("page") == "index" and bool(path.parent.name)
