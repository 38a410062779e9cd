"""The skill author's API: declare a skill, and everything its ``run`` receives.

::

    from skillrt.skill import SkillContext, SkillResult, skill

A skill is a function decorated with ``skill`` (``definition``); it receives a
``SkillContext`` (``context``) and returns a ``SkillResult``. Its params may use the text types
of ``params``; the errors a user can fix become replies through ``refusals``; its words in
Chinese and English are a ``Replies`` table (``replies``); ``ctx.conversation`` is a
``Conversation`` (``conversation``). The intents it serves may be declared with ``Intent``
(``intent``): labels, questions, examples and patterns of its own. ``ctx.tools.call`` returns
a ``ToolOutput`` (``tools``): what a tool of an MCP server answered.
"""

from skillrt.skill.context import SkillContext, TaskInput
from skillrt.skill.conversation import Conversation, Turn
from skillrt.skill.definition import Skill, SkillResult, skill
from skillrt.skill.intent import Effect, Intent
from skillrt.skill.params import Chars, LongText, PostPath, Text
from skillrt.skill.refusals import REFUSED, refusal
from skillrt.skill.replies import Replies
from skillrt.skill.tools import ToolOutput

__all__ = [
    "REFUSED",
    "Chars",
    "Conversation",
    "Effect",
    "Intent",
    "LongText",
    "PostPath",
    "Replies",
    "Skill",
    "SkillContext",
    "SkillResult",
    "TaskInput",
    "Text",
    "ToolOutput",
    "Turn",
    "refusal",
    "skill",
]
