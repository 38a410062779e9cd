"""UNDERSTANDING and PLANNING: from a task's input to a skill and its checked params.

The router proposes an intent (its regex table first, then the model's suggestion, which the
router scores against the text). Before a route runs, the planner may ask the user instead of
guessing: a yes/no question before a route only the model chose reaches the web, deletes or
writes under low trust, or numbered choices when the router is unsure (see ``clarify.py``).
Whatever ends here without a skill to run (small talk with no chat skill, a declined question,
missing params) is a ``NoTask``: the reply says why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog
from pydantic import BaseModel, ValidationError

from skillrt._io.modeljson import model_data
from skillrt._io.validation import problems
from skillrt._routing.clarify import (
    RouteQuestion,
    asks_what_it_can_do,
    choose_question,
    confirm_question,
    holds_back,
)
from skillrt._routing.router import CHAT, UNKNOWN, IntentRouter, ParsedIntent, RouteDraft
from skillrt._tasks.machine import State
from skillrt._tasks.task import Task
from skillrt.exceptions import UnknownSkill
from skillrt.llm.taskllm import TaskLLM
from skillrt.outcomes import Outcome
from skillrt.settings import RuntimeConfig
from skillrt.skill.context import Later
from skillrt.skill.definition import Skill
from skillrt.skill.replies import reply

if TYPE_CHECKING:
    from skillrt._routing.intent_table import IntentSpec

__all__ = ["LOGS_INFO", "NoTask", "Planner", "params_problem"]

LOGS_INFO = frozenset({"debug", "info"})
"""The ``log_level`` values at which the runtime's logger (``make_logger``) writes info lines."""


@dataclass(frozen=True, slots=True)
class NoTask:
    """Planning ended without a skill to run."""

    outcome: Outcome
    content: str


Planned = tuple[Skill[Any], BaseModel] | NoTask


def params_problem(skill: str, exc: ValidationError, language: str = "en") -> str:
    """One line naming each bad field: ``Bad parameters for Summarize: path: Field required``
    (pydantic's own words for each field, the line around them in the user's language)."""
    return reply("params_problem", language, skill=skill, problems=problems(exc.errors()).line)


def route_context(context: Mapping[str, Any]) -> dict[str, Any]:
    """What the router may know of a request's context besides its text: the open file, that
    there is a selection, the focus, and the skill of the session's last task (a browsing
    session's follow-ups)."""
    ctx: dict[str, Any] = {}
    if context.get("current_file"):
        ctx["current_file"] = context["current_file"]
    if context.get("selected_text"):
        ctx["has_selection"] = True
    for key in ("focus", "last_skill"):
        value = context.get(key)
        if isinstance(value, str):
            ctx[key] = value
    return ctx


def open_post(
    spec: IntentSpec, params: Mapping[str, Any], context: Mapping[str, Any]
) -> str | None:
    """What a yes/no question before ``spec`` names when the request names none of its
    params: the post open or in focus; "" when it needs none (something is named, or the
    intent has no ``nothing_named``); None when no post is open or in focus, where "the
    current post" was a post that was not there: "delete it" asked 'Delete “the current
    post”? (y/n)' with none, and then which post."""
    if spec.nothing_named is None or any(params.get(p) for p in spec.params):
        return ""
    for key in ("current_file", "focus"):
        value = context.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class Planner:
    def __init__(
        self,
        router: IntentRouter,
        skills: Mapping[str, Skill[Any]],
        config: RuntimeConfig,
        trust: Callable[[], str],
        logger: Callable[[], structlog.stdlib.BoundLogger],
    ) -> None:
        self.router = router
        self.skills = skills
        self.config = config
        self.trust = trust  # llm.router_trust as it stands (it depends on the model)
        self.logger = logger

    async def route_while(self, task: Task, lease: asyncio.Future[bool]) -> RouteDraft | None:
        """The task's route worked out while its ``lease`` is asked (``IntentRouter.decide``):
        one turn of the loop first, so that the turn's holds go out, then the work that has
        no effect (no event, no checkpoint, no model, the router's cache and counters as they
        were). None: nothing worked out (the lease answered first, or the work failed: then
        ``plan`` routes after the lease, as without it). A cancel meanwhile cancels the
        lease's waiter too, as one that came while it was awaited would."""
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            lease.cancel()
            raise
        if lease.done():
            return None
        try:
            context = route_context(task.record.context)
            await self.router.prepared(task.input.text, context)  # (built off the loop)
            if lease.done():
                return None
            return self.router.decide(task.input.text, context)
        except asyncio.CancelledError:
            lease.cancel()
            raise
        except Exception:  # routed again by ``plan``, which tells its errors as ever
            return None

    async def plan(
        self, task: Task, llm: Later[TaskLLM], draft: RouteDraft | None = None
    ) -> Planned:
        """Route the task's input, ask first where that is wiser, and check the params.
        ``draft``: its route as ``route_while`` worked it out (settled here). ``llm``: the
        task's model, made only when routing may ask it."""
        task.to(State.UNDERSTANDING)
        task.controller.signal.raise_if_aborted()
        router = self.router
        context = None
        if draft is None:  # (a draft was worked out by ``route_while``, prepared there)
            context = route_context(task.record.context)
            # What its kind of text needs (the classifier too, asked about below), built in a
            # thread when it is not yet (the first Chinese request, the first with a file
            # open...), not on the loop.
            await router.prepared(task.input.text, context)
        # routing's model call counts towards the task's cost and budget; a router with
        # no model of its own (the embedded model is not asked) routes without one
        model = llm.get() if router.llm is not None else None
        # A small model's guesses stay out where the classifier can decide (intents it
        # was not trained on, a plugin's or an MCP tool's, need the model).
        ask = self.trust() == "high" or router.classifier is None or bool(router.unclassified)
        signal = task.controller.signal
        if draft is None:
            intent = await router.parse(
                task.input.text,
                context,
                signal=signal,
                llm=model,
                ask_model=ask,
            )
        else:
            intent = await router.settle(draft, signal=signal, llm=model, ask_model=ask)
        task.record.intent = model_data(intent)  # (``model_dump(mode="json")``)
        if self.config.log_level in LOGS_INFO:  # (the logger's level: a line it drops still
            self.logger().info(  # costs its arguments and two calls, at every task)
                "agent.intent.parsed",
                task_id=task.id,
                type=intent.type,
                confidence=intent.confidence,
                source=intent.source,
            )
        lang = task.input.language
        if intent.type == CHAT and not self.router.handles(CHAT):
            return NoTask(Outcome.CHAT, reply("small_talk", lang))
        question = self.question(task, intent)
        if question is None and intent.confidence < self.config.confidence_threshold:
            # Nothing to offer (no skills): say what can be asked.
            return NoTask(Outcome.REPHRASE, self.router.rephrase_message(task.input.text))
        task.to(State.PLANNING)
        if question is not None:
            chosen = await self._ask(task, question, intent)
            if isinstance(chosen, NoTask):
                return chosen
            intent = chosen
        skill = self.router.find_skill(intent)
        if skill is None:
            return NoTask(Outcome.NO_SKILL, reply("no_skill", lang, intent=intent.type))
        try:
            params = skill.parse_params(intent.parameters)
        except ValidationError as exc:
            missing = ", ".join(str(e["loc"][0]) for e in exc.errors() if e.get("loc"))
            return NoTask(Outcome.BAD_PARAMS, reply("bad_params", lang, missing=missing))
        task.record.skill = skill.name
        task.record.params = model_data(params)
        return skill, params

    def plan_direct(self, task: Task) -> Planned:
        """A task whose skill is known (run by name, or resumed): check its params."""
        if task.state is State.IDLE:
            task.to(State.UNDERSTANDING)
        task.to(State.PLANNING)
        task.controller.signal.raise_if_aborted()
        skill = self.skills.get(task.record.skill or "")
        if skill is None:
            raise UnknownSkill(task.record.skill or "", list(self.skills))
        try:
            return skill, skill.parse_params(task.record.params)
        except ValidationError as exc:
            problem = params_problem(skill.name, exc, task.input.language)
            return NoTask(Outcome.BAD_PARAMS, problem)

    def question(self, task: Task, intent: ParsedIntent) -> RouteQuestion | None:
        """What to ask instead of running ``intent`` for ``task`` (see ``question_for``)."""
        return self.question_for(intent, task.input.text, task.input.language, task.record.context)

    def question_for(
        self, intent: ParsedIntent, text: str, lang: str, context: Mapping[str, Any]
    ) -> RouteQuestion | None:
        """What to ask instead of running ``intent``: a yes/no question before a route reaches
        the web, deletes or writes when a model chose it, when the classifier is not sure
        enough (``act_threshold``), or when the request holds back (a negation, a question
        about the action); numbered choices when the router is unsure. None: run it as it is
        (or nothing to offer)."""
        router = self.router
        # Known: a skill lists the intent, or a skill's own pattern decided it.
        known = router.handles(intent.type) or (
            intent.skill is not None and router.find_skill(intent) is not None
        )
        spec = router.spec(intent.type)
        effect = known and spec is not None and spec.effect != "read"
        # A request that holds back (a negation, a question about the action) gets the
        # likeliest actions to pick from: "我是不是写过…" is likelier a question than a yes.
        held_back = effect and holds_back(text)
        if effect and spec is not None and not held_back:
            likely = intent.confidence >= self.config.confidence_threshold
            # The params are worked out only where they are asked about or shown: an intent
            # with a url parameter, or a question to ask (most routes ask none).
            params = None
            pageless = False
            if "url" in spec.params:
                # An action on a web page with no page: no URL named and no browsing session to
                # go on ("click the login button" out of the blue) is asked about, however sure.
                params = router.params_for(intent.type, text, intent.parameters)
                pageless = not params.get("url") and not router.in_browsing_session(
                    route_context(context)
                )
            if (
                intent.source == "llm"
                or pageless
                or (likely and intent.confidence < self.config.act_threshold)
            ):
                if params is None:
                    params = router.params_for(intent.type, text, intent.parameters)
                current = open_post(spec, params, context)
                if current is None and intent.source != "llm" and likely:
                    return None  # its skill asks which post (DeleteArticle: then yes or no)
                return confirm_question(spec, params, text, lang, current=current)
        if intent.confidence >= self.config.confidence_threshold and known and not held_back:
            return None
        suggested = intent.type if intent.type != UNKNOWN else None
        names = router.alternatives(text, suggested, route_context(context))
        if held_back and router.handles(CHAT) and asks_what_it_can_do(text):
            # "can you translate posts too?" asks about the runtime: small talk answers it.
            names = [CHAT, *(n for n in names if n != CHAT)][:3]
        options = []
        for name in names:
            given = intent.parameters if name == intent.type else None
            option = router.spec(name)
            if option is not None:
                options.append((option, router.params_for(name, text, given)))
        return choose_question(options, text, lang) if options else None

    async def _ask(
        self, task: Task, question: RouteQuestion, intent: ParsedIntent
    ) -> ParsedIntent | NoTask:
        """Ask ``question`` and read the answer: the intent the user picked, or a ``NoTask``
        (declined, or the answer was a new request instead)."""
        task.route_question = question
        try:
            answer = await task.wait_for_answer(question.text, then=None)
        finally:
            task.route_question = None
        picked = question.interpret(answer)
        if picked is None or picked == "no":
            outcome = Outcome.DECLINED if picked == "no" else Outcome.SUPERSEDED
            return NoTask(outcome, reply("declined", task.input.language))
        chosen = ParsedIntent(
            type=picked.intent,
            confidence=1.0,
            parameters=picked.parameters,
            raw=intent.raw,
            source=intent.source,
            language=intent.language,
            model_confidence=intent.model_confidence,
        )
        task.record.intent = {**chosen.model_dump(mode="json"), "chosen_by_user": True}
        return chosen
