"""The builtin skills: writing (the blog), browsing (the web) and chat (the rest).

Advertised to the runtime through the ``skillrt.skills`` entry point, so the runtime never
imports this package (arrows point one way: skills -> runtime -> storage).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the package is imported for its settings model too (skillrt doctor)
    from skillrt.skill.definition import Skill

__all__ = ["builtin_skills"]


def builtin_skills() -> list[Skill[Any]]:
    """Every builtin skill, freshly imported."""
    from skillrt.skills.browsing import browsing_skills
    from skillrt.skills.chat import chat
    from skillrt.skills.writing import writing_skills

    return [*writing_skills(), *browsing_skills(), chat]
