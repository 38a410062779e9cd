"""The writing skills: a blog author's everyday work on the Markdown posts.

WriteArticle, EditContent, Summarize, AnswerQuestion, CodeExplain, UpdateGraph,
CreateArticle, DeleteArticle and Translate. Each reports progress, makes every model call and side
effect a durable step, and replies in the user's language.
"""

from __future__ import annotations

from typing import Any

from skillrt.skill.definition import Skill

__all__ = ["writing_skills"]


def writing_skills() -> list[Skill[Any]]:
    """Every writing skill."""
    from .answer import answer_question, explain_code
    from .edit import edit_content
    from .manage import create_article, delete_article
    from .summarize import summarize
    from .translate import translate
    from .update_graph import update_graph
    from .write import write_article

    return [
        write_article,
        edit_content,
        summarize,
        answer_question,
        explain_code,
        update_graph,
        create_article,
        delete_article,
        translate,
    ]
