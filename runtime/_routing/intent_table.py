"""The intent table: ``config/intents.toml`` (or another table) read, checked and compiled.

``IntentTable`` holds each intent's spec (what the LLM prompt and the rephrase reply say about
it) and its patterns in precedence order; the router (``skillrt._routing.router``) searches them. A
malformed table raises ``ConfigError`` naming the file, the key and what was expected. The
file's own comments say how patterns are written and matched.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillrt.exceptions import ConfigError
from skillrt.skill.intent import Effect, Intent, Pair

__all__ = ["IntentPattern", "IntentSpec", "IntentTable", "declared_patterns"]

_UNKNOWN = "UNKNOWN"  # the router's answer when nothing fits: no table may define it


class _PatternEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    regex: str
    lang: Literal["zh", "en", "any"] = "any"
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    fallback: bool = False
    requires: list[Literal["selection", "current_file", "browsing"]] = Field(default_factory=list)
    unless: list[Literal["browsing"]] = Field(default_factory=list)  # never right after a browse


class _Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    zh: str = Field(min_length=1)
    en: str = Field(min_length=1)


class _IntentEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    effect: Effect = "read"
    label: _Pair | None = None
    confirm: _Pair | None = None
    nothing_named: _Pair | None = None
    choice_names: list[str] = Field(default_factory=list)
    not_when: list[str] = Field(default_factory=list)
    offered: int = Field(default=0, ge=0)
    prior: float = Field(default=0.0, ge=-1.0, le=1.0)
    of_the_answer_after: list[str] = Field(default_factory=list)
    priority: int = 50
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    params: list[str] = Field(default_factory=list)
    extract: list[str] = Field(default_factory=list)
    text_param: str | None = None
    examples_zh: list[str] = Field(default_factory=list)
    examples_en: list[str] = Field(default_factory=list)
    cues: list[str] = Field(default_factory=list)
    needs_cue: bool = False
    patterns: list[_PatternEntry] = Field(default_factory=list)


class _TableFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    fragments: dict[str, str] = Field(default_factory=dict)
    extractors: dict[str, str] = Field(default_factory=dict)
    intents: dict[str, _IntentEntry]


@dataclass(frozen=True, slots=True)
class IntentSpec:
    """One intent: what the LLM prompt, the rephrase reply and the questions say about it (its
    section of the table, a skill's ``Intent`` declaration, or both merged)."""

    name: str
    description: str
    priority: int
    params: tuple[str, ...]
    text_param: str | None
    extract: tuple[re.Pattern[str], ...]
    examples_zh: tuple[str, ...]
    examples_en: tuple[str, ...]
    cues: re.Pattern[str] | None = None  # the intent's keywords: evidence for a model's answer
    effect: Effect = "read"
    label: Pair | None = None
    confirm: Pair | None = None
    nothing_named: Pair | None = None
    names: tuple[str, ...] = ()
    offered: int = 0
    prior: float = 0.0
    not_when: re.Pattern[str] | None = None  # a request it matches never routes here
    # intents whose reply a request of this one may be about (the table's ``of_the_answer_after``)
    of_the_answer_after: frozenset[str] = frozenset()
    # a classifier's guess of it with none of its ``cues`` in the text is no decision (the
    # table's ``needs_cue``; a delete always needs one)
    needs_cue: bool = False

    def merged(self, intent: Intent) -> IntentSpec:
        """This spec with what ``intent`` declares in its place (fields it leaves unset kept)."""
        zh = tuple(e for e in intent.examples if not e.isascii())
        en = tuple(e for e in intent.examples if e.isascii())
        cues = self.cues
        if intent.cues:
            both = (*intent.cues, *([cues.pattern] if cues is not None else []))
            cues = re.compile("|".join(f"(?:{c})" for c in both), re.IGNORECASE)
        return replace(
            self,
            description=intent.description or self.description,
            params=intent.params or self.params,
            text_param=intent.text_param or self.text_param,
            examples_zh=zh + self.examples_zh,
            examples_en=en + self.examples_en,
            cues=cues,
            effect=intent.effect or self.effect,
            label=intent.label or self.label,
            confirm=intent.confirm or self.confirm,
            nothing_named=intent.nothing_named or self.nothing_named,
            names=intent.names or self.names,
            offered=self.offered if intent.offered is None else intent.offered,
            prior=self.prior if intent.prior is None else intent.prior,
            not_when=(
                re.compile("|".join(f"(?:{c})" for c in intent.not_when), re.IGNORECASE)
                if intent.not_when
                else self.not_when
            ),
        )

    @classmethod
    def blank(cls, name: str, description: str = "") -> IntentSpec:
        """An intent no table describes (a skill's own): only its name and description."""
        return cls(name, description or name, 0, (), None, (), (), ())


def declared_patterns(intent: Intent) -> list[IntentPattern]:
    """The patterns an ``Intent`` declares, compiled (tried after the table's)."""
    return [
        IntentPattern(
            intent=intent.name,
            regex=re.compile(regex, re.IGNORECASE),
            confidence=0.85,
            fallback=False,
            chinese=False,
            latin=False,
            needs_selection=False,
            needs_file=False,
            needs_browsing=False,
            where=f"Intent({intent.name}).patterns[{i}]",
        )
        for i, regex in enumerate(intent.patterns)
    ]


@dataclass(frozen=True, slots=True)
class IntentPattern:
    intent: str
    regex: re.Pattern[str]
    confidence: float
    fallback: bool
    chinese: bool  # lang = "zh": cannot match ASCII-only text
    latin: bool  # lang = "en": cannot match text without an ASCII letter
    needs_selection: bool
    needs_file: bool
    needs_browsing: bool  # only right after a browsing task (a follow-up such as "go back")
    where: str  # "intents.X.patterns[i]", for messages
    avoids_browsing: bool = False  # never right after a browsing task ("show it" is the page's)


_FRAGMENT = re.compile(r"\{\{(\w+)\}\}")
_INTENT_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


class IntentTable:
    """The compiled regex table: intents with their specs, patterns in precedence order.

    Load it with ``IntentTable.load(path)``, ``IntentTable.from_mapping(data)`` or
    ``IntentTable.default()`` (the packaged ``config/intents.toml``). A malformed table raises
    ``ConfigError`` naming the file, the key and what was expected.
    """

    __slots__ = ("fallbacks", "patterns", "source", "specs")

    def __init__(
        self,
        specs: Mapping[str, IntentSpec],
        patterns: Sequence[IntentPattern],
        source: str = "<table>",
    ) -> None:
        self.specs: dict[str, IntentSpec] = dict(specs)
        self.source = source
        rank = {name: -spec.priority for name, spec in self.specs.items()}
        # Stable sort: higher priority first, then the order the patterns were written in.
        ordered = sorted(patterns, key=lambda p: rank.get(p.intent, 0))
        self.patterns: tuple[IntentPattern, ...] = tuple(p for p in ordered if not p.fallback)
        self.fallbacks: tuple[IntentPattern, ...] = tuple(p for p in ordered if p.fallback)

    @classmethod
    def default(cls) -> IntentTable:
        """The packaged table, compiled once per process (tables are never changed)."""
        return _default_table()

    @staticmethod
    def default_loaded() -> bool:
        """Whether ``default()`` has compiled the packaged table in this process already."""
        return _default_table.cache_info().currsize > 0

    @classmethod
    def load(cls, path: str | Path) -> IntentTable:
        source = Path(path)
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(str(source), "(file)", "a readable intents table", str(exc)) from exc
        return cls._from_text(text, str(source))

    @classmethod
    def _from_text(cls, text: str, source: str) -> IntentTable:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(source, "(file)", "valid TOML", str(exc)) from exc
        return cls.from_mapping(data, source)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<mapping>") -> IntentTable:
        try:
            table = _TableFile.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(part) for part in first["loc"]) or "(root)"
            raise ConfigError(source, key, first["msg"], first.get("input")) from exc

        def expand(regex: str, where: str) -> str:
            for _ in range(5):
                if "{{" not in regex:
                    return regex
                try:
                    regex = _FRAGMENT.sub(lambda m: table.fragments[m.group(1)], regex)
                except KeyError as exc:
                    raise ConfigError(
                        source, where, f"a defined fragment (known: {sorted(table.fragments)})"
                    ) from exc
            raise ConfigError(source, where, "fragments nested at most 5 deep")

        def compile_(regex: str, where: str) -> re.Pattern[str]:
            try:
                return re.compile(expand(regex, where), re.IGNORECASE)
            except re.error as exc:
                raise ConfigError(source, where, "a valid regular expression", str(exc)) from exc

        extractors = {
            name: compile_(regex, f"extractors.{name}") for name, regex in table.extractors.items()
        }
        specs: dict[str, IntentSpec] = {}
        patterns: list[IntentPattern] = []
        for name, entry in table.intents.items():
            if not _INTENT_NAME.fullmatch(name) or name == _UNKNOWN:
                raise ConfigError(
                    source, f"intents.{name}", "an UPPER_SNAKE name other than UNKNOWN"
                )
            missing = [e for e in entry.extract if e not in extractors]
            if missing:
                raise ConfigError(
                    source,
                    f"intents.{name}.extract",
                    f"extractors among {sorted(extractors)}",
                    missing,
                )
            specs[name] = IntentSpec(
                name=name,
                description=entry.description,
                priority=entry.priority,
                params=tuple(entry.params),
                text_param=entry.text_param,
                extract=tuple(extractors[e] for e in entry.extract),
                examples_zh=tuple(entry.examples_zh),
                examples_en=tuple(entry.examples_en),
                cues=(
                    compile_("|".join(f"(?:{c})" for c in entry.cues), f"intents.{name}.cues")
                    if entry.cues
                    else None
                ),
                effect=entry.effect,
                label=(entry.label.zh, entry.label.en) if entry.label else None,
                confirm=(entry.confirm.zh, entry.confirm.en) if entry.confirm else None,
                nothing_named=(
                    (entry.nothing_named.zh, entry.nothing_named.en)
                    if entry.nothing_named
                    else None
                ),
                names=tuple(entry.choice_names),
                offered=entry.offered,
                prior=entry.prior,
                needs_cue=entry.needs_cue,
                not_when=(
                    compile_(
                        "|".join(f"(?:{c})" for c in entry.not_when), f"intents.{name}.not_when"
                    )
                    if entry.not_when
                    else None
                ),
                of_the_answer_after=frozenset(entry.of_the_answer_after),
            )
            for i, pat in enumerate(entry.patterns):
                where = f"intents.{name}.patterns[{i}].regex"
                patterns.append(
                    IntentPattern(
                        intent=name,
                        regex=compile_(pat.regex, where),
                        confidence=entry.confidence if pat.confidence is None else pat.confidence,
                        fallback=pat.fallback,
                        chinese=pat.lang == "zh",
                        latin=pat.lang == "en",
                        needs_selection="selection" in pat.requires,
                        needs_file="current_file" in pat.requires,
                        needs_browsing="browsing" in pat.requires,
                        where=where,
                        avoids_browsing="browsing" in pat.unless,
                    )
                )
        return cls(specs, patterns, source)


@functools.cache
def _default_table() -> IntentTable:
    ref = resources.files("skillrt.config").joinpath("intents.toml")
    return IntentTable._from_text(ref.read_text(encoding="utf-8"), "skillrt/config/intents.toml")
