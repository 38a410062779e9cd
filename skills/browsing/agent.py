"""The browsing executor: a planner and a navigator taking turns over one browser.

Each step observes the page; the planner runs at the first step, every ``planning_interval``
steps (every step when following a predefined plan), after an action failed twice and when
the navigator says ``done``; then the navigator proposes up to ``max_actions_per_step``
actions, which run in order. Only the planner ends the task.

The loop stops at ``max_steps``, after ``max_failures`` consecutive failed steps, and when the
same actions are proposed a third time on an unchanged page (the second time they are skipped
and the model is told so). Errors the model caused (a bad index, an unparseable answer, a
network failure, a URL the firewall refused) are recorded on the step and count as failures;
fatal errors end the task at once: an abort, an exceeded budget, a fatal provider error
(authentication, permission, bad request), a browser that cannot go on, and a start URL the
firewall refuses. A URL refused mid-task is not fatal: the page may have planted it (prompt
injection), so the request is refused, logged (``browser.url_refused``) and reported to the
model as that action's error.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from skillrt.exceptions import BrowserError, ProviderError, URLNotAllowed
from skillrt.skills.browsing.actions import (
    BROWSER_ACTIONS,
    ActionResult,
    DoneAction,
    ExtractAction,
    describe_action,
)
from skillrt.skills.browsing.browser import run_action
from skillrt.skills.browsing.config import browser_config
from skillrt.skills.browsing.prompts import (
    fence_untrusted,
    new_nonce,
    system_message,
    truncate_tokens,
)
from skillrt.skills.browsing.schemas import (
    ExtractOutput,
    NavigatorOutput,
    PlannerOutput,
    PredefinedPlannerOutput,
)
from skillrt.skills.browsing.secret_guard import SecretGuard, SecretNotSent
from skillrt.skills.browsing.turns import AgentStep, EndReason, Plan, TurnOutcome, TurnRecord
from skillrt.skills.browsing.typed_secrets import TypedSecrets
from skillrt.skills.writing.checks import (
    Check,
    Generated,
    not_cut_short,
    not_degenerate,
    not_refusing,
    run_checks,
)
from skillrt.skills.writing.figures import figures_from
from skillrt.skills.writing.on_topic import grounded
from skillrt.skills.writing.passages import names_from
from skillrt.skills.writing.scaffold import without_echo

if TYPE_CHECKING:
    from skillrt.llm.base import LLMMessage
    from skillrt.skill.context import SkillContext
    from skillrt.skills.browsing.actions import Action, BrowserAction
    from skillrt.skills.browsing.browser import Browser
    from skillrt.skills.browsing.observation import Observation
    from skillrt.skills.browsing.plans import PredefinedPlan

__all__ = ["AgentResult", "AgentStep", "BrowserAgent", "EndReason"]

HISTORY_IN_PROMPT = 12
EXTRACTS_IN_PROMPT = 6
EXTRACTS_KEPT = 20
SEEN_CHARS = 40_000  # of one page's text kept to judge the final answer by
SEEN_PAGES = 40  # texts kept so (the first ones: the rest are not added)
M = TypeVar("M", bound=BaseModel)


_NOT_ON_PAGE = "(not on this page)"
"""How an extract the page could not answer is marked (and a final answer that carries the
mark is no answer found: ``BrowserAgent._unfit``)."""

_ANSWER_REFUSED = "answer refused"
_TYPED_OR_CHOSEN = ("type ", "select ", "goto ")  # the actions whose words are the task's
CHECKS_FAILED_TWICE = "the answer failed its checks twice"  # (a result's detail opens so)
"""How a final answer that failed its checks is journalled among a step's results: the
first one is refused and the task goes on; a second ends it, unsuccessful."""

_DONE_FAILED = "done, not successful"
"""How a done that said it did not succeed is journalled among a step's results (a new key
in the turn record would keep an older version from reading the journal)."""


@dataclass(slots=True)
class AgentResult:
    success: bool
    answer: str
    reason: EndReason
    detail: str
    url: str
    steps: list[AgentStep]


def _fatal(exc: BaseException) -> bool:
    if isinstance(exc, ProviderError):
        return exc.fatal
    if isinstance(exc, BrowserError):
        return not exc.recoverable
    return True


class BrowserAgent:
    """Runs one web task in one browser. ``run()`` returns an ``AgentResult`` or raises."""

    def __init__(
        self,
        ctx: SkillContext,
        browser: Browser,
        task: str,
        *,
        start_url: str | None = None,
        plan: PredefinedPlan | None = None,
        start_from_page: bool = False,
        guard: SecretGuard | None = None,
    ) -> None:
        cfg = browser_config(ctx.config)
        self.ctx = ctx
        self.browser = browser
        self.task = task
        self.start_url = start_url
        # A follow-up starts where the last task ended: a URL the web chose, so it is shown to
        # the model only inside the fence (as the page's own URL), never as the user's.
        self.start_from_page = start_from_page
        self.predefined = plan
        self.max_steps = cfg.max_steps
        self.max_failures = cfg.max_failures
        self.max_actions = cfg.max_actions_per_step
        self.interval = cfg.planning_interval
        self.text_tokens = cfg.observation_tokens * 3
        self.history: list[AgentStep] = []
        self.failures = 0
        self.plan: Plan | None = None
        self.memory = ""
        self.extracted: list[str] = []
        self.seen: dict[str, str] = {}  # the pages' text shown to the model, by digest
        self._seen_now: list[str] = []  # ... first shown in the turn running
        self.pending_answer: str | None = None
        self.pending_failed = False  # the navigator said done, but that it did not succeed
        self.replan = True
        self._repeats: Counter[str] = Counter()
        self._nudge: str | None = None
        self._rejected = False
        self.url = ""  # where the browser is (kept in the journal: a resume reopens it)
        self._opened = False
        self.guard = guard or SecretGuard.from_config(ctx.config, start_url)
        self.secrets = TypedSecrets(self.guard)

    # --- the loop -------------------------------------------------------------------------

    async def run(self) -> AgentResult:
        """The loop. Each turn is a durable step of the task (``browser-step-N``): its record
        (the URL reached, the step's summary, actions and results, the agent's memory and plan,
        an outcome) is journalled, so a resumed task replays the turns it had finished without
        a model call, reopens the last URL and goes on from there; a pause takes effect between
        turns. Secret typed text is not in the record (``typed_secrets``)."""
        self._status(f"Starting: {self.task}")
        while len(self.history) < self.max_steps:
            self.ctx.signal.raise_if_aborted()
            number = len(self.history) + 1
            record = await self.ctx.step(f"browser-step-{number}", partial(self._live, number))
            outcome = self._apply(record)
            if outcome is not None:
                return outcome
            if self.failures >= self.max_failures:
                detail = (
                    f"{self.failures} steps failed in a row; last error: {self.history[-1].error}"
                )
                return self._end("max_failures", detail)
        return self._end("max_steps", f"no answer within {self.max_steps} steps")

    async def _live(self, number: int) -> dict[str, Any]:
        """Run turn ``number`` for real (it is not in the journal yet): its record."""
        if not self._opened:  # the start URL, or where a resumed task had got to
            self._opened = True
            target = self.url or self.start_url
            if target:
                await self._open(target)  # refused or unreachable: fatal
                self._navigated()
        step = AgentStep(number=number)
        self._seen_now = []
        outcome: AgentResult | None = None
        try:
            outcome = await self._step(step)
        except (BrowserError, ProviderError) as exc:
            if _fatal(exc):
                raise
            step.error = f"{type(exc).__name__}: {exc}"
        failures = self.failures + 1 if step.error else 0
        if not step.error and step.nudge is not None:  # a skipped (repeated) step is neither
            failures = self.failures
        record = TurnRecord(
            step=step.to_record(),
            summary=step.summary(),
            url=self.browser.url,
            failures=failures,
            memory=self.memory,
            extracted=self.extracted[-EXTRACTS_KEPT:],
            pending_answer=self.pending_answer,
            replan=self.replan,
            rejected=self._rejected,
            nudge=self._nudge,
            plan=None if self.plan is None else self.plan.model_dump(mode="json"),
            repeats=dict(self._repeats),
            seen=self._seen_now,
            outcome=None
            if outcome is None
            else TurnOutcome(
                success=outcome.success,
                answer=outcome.answer,
                reason=outcome.reason,
                detail=outcome.detail,
            ),
        )
        return dict(self.secrets.scrub(record.model_dump(mode="json")))

    async def _open(self, target: str) -> None:
        """Open the start URL (or where a resumed task had got to). Refused somewhere it led
        (a redirect, the page's own script), the error says it led there: the task failed
        "URL not allowed: http://10.0.0.1/admin: private address", naming an address the
        user never gave."""
        try:
            await self.browser.goto(target)
        except URLNotAllowed as exc:
            if exc.url.rstrip("/") == target.rstrip("/"):
                raise
            led = f"{exc.reason}; {target} led there (a redirect, or the page's own script)"
            raise URLNotAllowed(exc.url, led) from exc

    def _apply(self, data: dict[str, Any]) -> AgentResult | None:
        """Take on the state a turn's record holds (after running it, or from the journal)."""
        record = TurnRecord.model_validate(data)
        plan_model: type[Plan] = (
            PlannerOutput if self.predefined is None else PredefinedPlannerOutput
        )
        self.history.append(AgentStep.from_record(record.step, plan_model))
        self.url = record.url or self.url
        self.failures = record.failures
        self.memory = record.memory or ""
        self.extracted = list(record.extracted)
        for text in record.seen:  # (a resumed task: the pages its finished turns were shown)
            self._saw(text)
        self.pending_answer = record.pending_answer
        if record.pending_answer is None:
            self.pending_failed = False
        elif any(r.startswith(("done:", f"{_DONE_FAILED}:")) for r in record.step.results):
            self.pending_failed = any(r.startswith(f"{_DONE_FAILED}:") for r in record.step.results)
        self.replan = record.replan
        self._rejected = record.rejected
        self._nudge = record.nudge
        plan = record.plan
        self.plan = None if plan is None else plan_model.model_validate(plan)
        self._repeats = Counter(record.repeats)
        outcome = record.outcome
        if outcome is None:
            return None
        return AgentResult(
            outcome.success, outcome.answer, outcome.reason, outcome.detail, self.url, self.history
        )

    def _saw(self, text: str) -> None:
        """Keep a page's text the model was shown (``seen``), for judging its final answer,
        and for the turn's record when it is new."""
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self.seen and len(self.seen) < SEEN_PAGES:
            self.seen[key] = text[:SEEN_CHARS]
            self._seen_now.append(self.seen[key])

    async def _step(self, step: AgentStep) -> AgentResult | None:
        observation = await self.browser.observe()
        self._saw(observation.render())
        step.url = observation.url
        where = self.secrets.redact(observation.url)
        self.ctx.progress(step.number, self.max_steps, f"Step {step.number}", where)
        if self._should_plan(step.number):
            plan = await self._plan(step, observation)
            if plan.done and (refused := self._unfit(plan)) is None:
                return self._finish(plan)
            if plan.done and (ended := self._refuse(step, plan, str(refused))) is not None:
                return ended
        output = await self._navigate(step, observation)
        actions = output.actions[: self.max_actions]
        if not actions:
            step.error = "the navigator proposed no action"
            return None
        if self._repeated(step, observation, actions):
            if step.nudge is None:
                return self._end("repeated_action", self._repeating())
            return None
        for action in actions:
            self.ctx.signal.raise_if_aborted()
            if not await self._execute(step, action, observation):
                break
        return None

    def _should_plan(self, number: int) -> bool:
        if self.predefined is not None or self.replan or self.pending_answer is not None:
            return True
        return (number - 1) % self.interval == 0

    # --- the model calls ------------------------------------------------------------------

    async def _ask(self, kind: str, body: str, model: type[M], nonce: str) -> M:
        messages: list[LLMMessage] = [
            system_message(kind, nonce, max_actions=self.max_actions),
            {"role": "user", "content": body},
        ]
        result = await self.ctx.llm.chat(messages, response_model=model)
        return result.parsed_as(model)

    async def _plan(self, step: AgentStep, observation: Observation) -> Plan:
        nonce = new_nonce()
        prompt = self._planner_prompt(observation, nonce)
        plan: Plan
        if self.predefined is None:
            plan = await self._ask("planner", prompt, PlannerOutput, nonce)
        else:
            plan = await self._ask("predefined", prompt, PredefinedPlannerOutput, nonce)
        step.plan = plan
        self.plan = plan
        self.replan = False
        self._rejected = self.pending_answer is not None and not plan.done
        if not plan.done:
            self.pending_answer = None
            self.pending_failed = False
        self.ctx.events.emit(
            "agent:reasoned",
            role="planner",
            reasoning=plan.step_by_step_reasoning,
            proposed_actions=list(plan.proposed_actions),
            done=plan.done,
        )
        return plan

    async def _navigate(self, step: AgentStep, observation: Observation) -> NavigatorOutput:
        nonce = new_nonce()
        prompt = self._navigator_prompt(observation, nonce)
        output = await self._ask("navigator", prompt, NavigatorOutput, nonce)
        self._nudge = None
        step.state = output.current_state
        if output.current_state.memory:
            self.memory = output.current_state.memory[:2000]
        self.ctx.events.emit(
            "agent:reasoned",
            role="navigator",
            reasoning=output.current_state.evaluation_previous_goal,
            next_goal=output.current_state.next_goal,
        )
        if output.current_state.next_goal:
            self._status(output.current_state.next_goal)
        return output

    async def _extract(self, question: str) -> str:
        nonce = new_nonce()
        text = truncate_tokens(await self.browser.page_text(), self.text_tokens)
        page = f"Page: {self.browser.url}\n{text}"  # the URL is the page's choice too
        self._saw(page)
        body = f"Question: {question}\n{fence_untrusted(page, nonce)}"
        parsed = await self._ask("extract", body, ExtractOutput, nonce)
        return parsed.answer if parsed.found else f"{_NOT_ON_PAGE} {parsed.answer}"

    # --- actions --------------------------------------------------------------------------

    async def _execute(self, step: AgentStep, action: Action, seen: Observation) -> bool:
        """Run one action; False stops the rest of the step's actions."""
        shown = self.secrets.shown(action, seen)  # secret typed text stays out of the record
        described = describe_action(shown)
        step.actions.append(described)
        index = getattr(action, "index", None)
        value = next(
            (getattr(shown, k) for k in ("url", "text", "option") if hasattr(shown, k)), None
        )
        self.ctx.events.emit("agent:action", action=action.action, ref=index, value=value)
        if isinstance(action, DoneAction):
            self.pending_answer = action.answer
            self.pending_failed = not action.success
            said = "done" if action.success else _DONE_FAILED  # (the record's keys stay)
            step.results.append(f"{said}: {truncate_tokens(action.answer, 200)}")
            return False
        if isinstance(action, ExtractAction):
            answer = await self._extract(action.question)
            self.extracted.append(f"{action.question} -> {truncate_tokens(answer, 300)}")
            step.results.append(f"{described} -> {truncate_tokens(answer, 120)}")
            return True
        if not isinstance(action, BROWSER_ACTIONS):
            raise TypeError(f"unknown action {action!r}")
        self.ctx.events.emit("browser:action_started", action=action.action, ref=index, value=value)
        result = await self._act(step, action, seen, described)
        target = seen.element(index) if index is not None else None
        step.recorded.append(
            {
                "action": shown.model_dump(mode="json"),
                "signature": None if target is None else dataclasses.asdict(target.signature),
                "url": seen.url,
                "success": result.success,
                "secret": shown is not action,
            }
        )
        self.ctx.events.emit(
            "browser:action_completed",
            action=action.action,
            success=result.success,
            error=result.error,
            is_recoverable=result.is_recoverable,
            resolved_by=result.resolved_by,
        )
        if result.navigated:
            self._navigated()
        step.results.append(f"{described}: {result.summary()}")
        if not result.success:
            step.error = result.error
            self.replan = self.replan or result.stale
            return False
        return True

    async def _act(
        self, step: AgentStep, action: BrowserAction, seen: Observation, described: str
    ) -> ActionResult:
        try:
            return await run_action(self.browser, action, seen)
        except SecretNotSent as exc:  # refused before anything was sent; its URL is scrubbed
            step.refused.append(exc.url)
            self.ctx.logger.warning(
                "browser.secret_refused", url=exc.url, reason=exc.reason, action=described
            )
            return ActionResult.failed(action.action, f"refused: {exc.reason} ({exc.url})")
        except URLNotAllowed as exc:
            step.refused.append(exc.url)
            self.ctx.logger.warning(
                "browser.url_refused",
                url=self.secrets.redact(exc.url),
                reason=self.secrets.redact(exc.reason),
                action=described,
            )
            error = f"refused by the URL firewall: {exc.url} ({exc.reason})"
            return ActionResult.failed(action.action, error)
        except BrowserError as exc:
            if not exc.recoverable:
                raise
            return ActionResult.failed(action.action, str(exc))

    def _repeated(self, step: AgentStep, observation: Observation, actions: list[Action]) -> bool:
        """Whether these actions were already proposed on this very page (then nudge or stop)."""
        described = [describe_action(self.secrets.shown(a, observation)) for a in actions]
        key = hashlib.sha256(
            "\n".join([observation.fingerprint(), *described]).encode()
        ).hexdigest()
        self._repeats[key] += 1
        if self._repeats[key] == 1:
            return False
        if self._repeats[key] == 2:
            step.nudge = (
                f"You already proposed {'; '.join(described)} on this same page and it did not "
                "help. Do something different (another element, another page, or done)."
            )
            self._nudge = (  # outside the fence: no action named (a URL may be the page's)
                "You already proposed the same actions on this same page (see the last step) "
                "and it did not help. Do something different (another element, another page, "
                "or done)."
            )
            self._status("The same actions were proposed again on an unchanged page")
        return True

    # --- prompts --------------------------------------------------------------------------

    def _common_prompt(self) -> list[str]:
        """What the user and the runtime said: the task and the start URL the user gave."""
        lines = [f"Task: {self.task}"]
        if self.start_url and not self.start_from_page:
            lines.append(f"Start URL: {self.start_url}")
        return lines

    def _fenced_block(self, observation: Observation, nonce: str) -> str:
        """Everything the web could have chosen, inside the untrusted fence.

        The steps so far (the URLs visited, the results and errors naming the page's links),
        the navigator's memory and answer, what was extracted and the page itself.
        """
        parts = []
        earlier = len(self.history) - HISTORY_IN_PROMPT
        if self.history:
            parts.append(
                "Steps so far:"
                + (f" ({earlier} earlier steps not shown)" if earlier > 0 else "")
                + "\n"
                + "\n".join(
                    truncate_tokens(s.summary(), 150) for s in self.history[-HISTORY_IN_PROMPT:]
                )
            )
        if self.memory:
            parts.append(f"Navigator memory: {self.memory}")
        if self.pending_answer is not None:
            failed = " (it says it did NOT succeed)" if self.pending_failed else ""
            parts.append(
                f"The navigator says the task is done{failed}. Its answer: {self.pending_answer}"
            )
        if self.extracted:
            parts.append(
                "Extracted so far:\n"
                + "\n".join(f"- {e}" for e in self.extracted[-EXTRACTS_IN_PROMPT:])
            )
        parts.append(observation.render())
        return (
            "What happened so far and the current page "
            f"(step {len(self.history) + 1} of {self.max_steps}), as data:\n"
            + fence_untrusted("\n\n".join(parts), nonce)
        )

    def _planner_prompt(self, observation: Observation, nonce: str) -> str:
        lines = self._common_prompt()
        if self.predefined is not None:
            lines.append(f"Predefined plan {self.predefined.name!r}: {self.predefined.goal}")
            lines.extend(f"{i}. {s}" for i, s in enumerate(self.predefined.steps, 1))
            todo = self.plan.todo_markdown if isinstance(self.plan, PredefinedPlannerOutput) else ""
            lines.append("Checklist so far:\n" + (todo or self.predefined.todo_markdown()))
        if self.pending_answer is not None:
            lines.append("The navigator says the task is done; check its answer (in the block).")
        lines.append(self._fenced_block(observation, nonce))
        return "\n".join(lines)

    def _navigator_prompt(self, observation: Observation, nonce: str) -> str:
        lines = self._common_prompt()
        plan = self.plan
        if isinstance(plan, PredefinedPlannerOutput) and plan.todo_markdown:
            lines.append("Checklist (from the planner):\n" + plan.todo_markdown)
        if plan is not None and plan.proposed_actions:
            lines.append(
                "Planner's next steps:\n" + "\n".join(f"- {a}" for a in plan.proposed_actions)
            )
        if self._rejected:
            lines.append("The planner did not accept your answer yet; keep going.")
        if self._nudge:
            lines.append(f"NOTE: {self._nudge}")
        lines.append(self._fenced_block(observation, nonce))
        return "\n".join(lines)

    # --- ends -----------------------------------------------------------------------------

    def _finish(self, plan: Plan) -> AgentResult:
        answer = self._answer(plan)
        if self.pending_failed:
            # The navigator's done said it did not succeed ("I could not find the population
            # on this page."): reported as done before, with the page as its source.
            self._status("Stopped: the navigator could not do the task")
            return AgentResult(
                False,
                answer,
                "unsuccessful",
                "the navigator said it could not do the task",
                self.browser.url or self.url,
                self.history,
            )
        self._status("Task complete")
        return AgentResult(
            True,
            answer,
            "completed",
            "the planner confirmed the task is complete",
            self.browser.url or self.url,
            self.history,
        )

    def _answer(self, plan: Plan) -> str:
        return plan.final_answer.strip() or (self.pending_answer or "").strip()

    def _unfit(self, plan: Plan) -> str | None:
        """Why the final answer of a task said done cannot be reported as its result (None:
        it can): the model saying, as a model, that it cannot do it ("As an AI language
        model, I cannot browse the internet"), an answer that stops mid-sentence, a loop, one
        that only says the task or the model's instructions again. It was shown as the
        task's answer, done. An empty answer (a task that was to act, not
        to find) and a done that said it did not succeed are not judged here."""
        answer = self._answer(plan)
        if not answer or self.pending_failed:
            return None
        if not without_echo(answer, self._instructions()):
            return "it says the task or its instructions back, nothing found"
        if _NOT_ON_PAGE in answer:  # (an extract's "not found", passed on as the result)
            return f"it is an extract the page did not answer ({truncate_tokens(answer, 40)})"
        seen = (self.task, self.memory, *self.extracted)  # (what a page said is the page's)
        checks = [not_degenerate, not_refusing(*seen), not_cut_short, *self._grounding()]
        _, verdicts = run_checks(Generated(text=answer), checks)
        failed = [f"{v.name}: {v.reason}" for v in verdicts if not v.passed]
        return "; ".join(failed) or None

    def _grounding(self) -> list[Check]:
        """The checks that the answer is the pages': ``grounded``, ``figures_from`` and
        ``names_from``, against the pages' text the model was shown (``seen``, journalled
        with each turn, so a resumed task judges by the same) and the task: "The default
        maximum is 1024 threads." from a page that says 512 was reported as the task's result,
        done, and so was "It is Poseidonia." from a home page that names no capital. A name
        the task typed, chose or went to (its actions, as recorded; not its refused answers,
        which a done action records too) is the task's own. None when no
        page's text was kept (a task journalled before this was: nothing to judge by)."""
        pages = [*self.seen.values(), *self.extracted]
        if not self.seen:
            return []
        done = [a for step in self.history for a in step.actions if a.startswith(_TYPED_OR_CHOSEN)]
        return [
            grounded(*pages, pages=True),
            figures_from(*pages, question=self.task, pages=True),
            names_from(*pages, *done, question=self.task, pages=True),
        ]

    def _instructions(self) -> list[str]:
        """What the model was told (the task, the planner's and the navigator's rules): an
        answer that only says it again is none ("Find out from the Atlas Wiki what the
        capital of Atlantis is" as the capital's answer)."""
        kinds = ("planner" if self.predefined is None else "predefined", "navigator")
        told = [system_message(k, "", max_actions=self.max_actions)["content"] for k in kinds]
        return [self.task, *told]

    def _refuse(self, step: AgentStep, plan: Plan, reason: str) -> AgentResult | None:
        """A final answer that failed its checks (``_unfit``): the first time, refused and the
        task goes on, the navigator told why; the second time, the task ends unsuccessful,
        the answer shown as what was found, not as the result."""
        again = any(r.startswith(f"{_ANSWER_REFUSED}:") for s in self.history for r in s.results)
        step.results.append(f"{_ANSWER_REFUSED}: {truncate_tokens(reason, 100)}")
        if again:
            self._status("Stopped: the answer failed its checks twice")
            return AgentResult(
                False,
                self._answer(plan),
                "unsuccessful",
                f"{CHECKS_FAILED_TWICE} ({reason})",
                self.browser.url or self.url,
                self.history,
            )
        self._status(f"The answer was refused, going on: {reason}")
        self.pending_answer = None
        self.pending_failed = False
        self._rejected = True
        self.replan = True
        self._nudge = (
            f"The final answer was refused ({truncate_tokens(reason, 100)}). Find the answer on "
            "the pages and give it in full sentences, or say done with success false."
        )
        return None

    def _repeating(self) -> str:
        """Why the task ends repeating itself, with why its answer was refused when it was:
        a navigator giving the refused "The default maximum is 1024 threads." again ended
        with "the same actions kept repeating", the refusal and its reason unsaid."""
        refused = [
            r for s in self.history for r in s.results if r.startswith(f"{_ANSWER_REFUSED}:")
        ]
        if not refused:
            return "the same actions kept repeating"
        why = refused[-1].split(":", 1)[1].strip()
        return f"the same actions kept repeating; its answer was refused ({why})"

    def _end(self, reason: EndReason, detail: str) -> AgentResult:
        self._status(f"Stopped: {detail}")
        answer = self.pending_answer or (self.plan.final_answer if self.plan else "") or ""
        return AgentResult(
            False, answer, reason, detail, self.browser.url or self.url, self.history
        )

    def _status(self, message: str) -> None:
        self.ctx.events.emit("agent:status", message=message)

    def _navigated(self) -> None:
        url, title = self.secrets.redact([self.browser.url, self.browser.title])
        self.ctx.events.emit("browser:navigated", url=url, title=title)
