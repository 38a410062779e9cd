"""The ``skillrt`` commands (Typer). Each command is a thin shell over the runtime.

No ``from __future__ import annotations`` here: Typer reads every command's parameters at
each start, and with string annotations it evaluated each of them twice (``eval``, a
``ForwardRef`` compiled per name), about a third of building the commands. Names imported
for type checking only are quoted."""

import json
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from skillrt._io.config_files import make_state_dir
from skillrt.cli.common import (
    fail,
    find_task,
    given_before_command,
    make_runtime,
    open_config,
    user_errors,
)
from skillrt.exceptions import UserError

if TYPE_CHECKING:
    from skillrt.settings import RuntimeConfig

__all__ = ["app", "main"]

T = TypeVar("T")


def _run(work: Coroutine[Any, Any, T]) -> T:
    import asyncio  # here: a command that runs nothing (skillrt tasks) does not load it

    return asyncio.run(work)


# The parts one command needs (the REPL and its line editor, the one-shot display, doctor's
# checks) are imported in that command: `skillrt tasks` need not load prompt_toolkit.

app = typer.Typer(
    name="skillrt",
    help="Write, edit and research your Markdown blog with durable, cancellable AI tasks.\n\n"
    "Settings come from ./skillrt.toml, ~/.config/skillrt/config.toml and SKILLRT_* variables."
    " The posts folder (posts_dir, SKILLRT_POSTS_DIR or --posts-dir) is detected when unset:"
    " posts/, Hugo content/, Hexo source/_posts/, Jekyll _posts/, VitePress or MkDocs docs/,"
    " an Obsidian vault; skillrt doctor shows what was found.",
    add_completion=False,
    # Markdown, not Rich's markup: Rich took "skillrt[mcp]" for a style tag and printed
    # "skillrt", and kept a docstring's line breaks in the list of commands.
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,  # tracebacks with locals could show keys
    context_settings={"help_option_names": ["-h", "--help"]},
)

Root = Annotated[
    Path | None,
    typer.Option(
        "--root",
        "-C",
        help="The blog folder, as if started there (default: the current folder,"
        " or $SKILLRT_CONTENT_ROOT).",
        show_default=False,
    ),
]
PostsDir = Annotated[
    str | None,
    typer.Option(
        "--posts-dir",
        help="The posts folder under the blog folder (setting posts_dir; default: detected).",
        show_default=False,
    ),
]
Verbose = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Debug logs on stderr (else JSON in the state folder)."),
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]
Answers = Annotated[
    list[str] | None,
    typer.Option("--answer", "-a", help="Answer the task's next question (repeatable)."),
]
TaskId = Annotated[str, typer.Argument(help="A task id; a unique prefix is enough.")]


def _print_version(wanted: bool) -> None:
    """``skillrt --version``: the version, then exit 0 (it was "No such option", exit 2; the
    version was shown only in the chat's first line)."""
    if wanted:
        from skillrt import __version__

        print(f"skillrt {__version__}")
        raise typer.Exit(0)


Version = Annotated[
    bool,
    typer.Option(
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
]


@app.callback(invoke_without_command=True)
def _default(
    ctx: typer.Context, root: Root = None, posts_dir: PostsDir = None, version: Version = False
) -> None:
    """Without a command, start the chat.

    ``--root``/``-C`` and ``--posts-dir`` before the command hold for it (``skillrt -C DIR
    tasks``, as ``git -C``); the command's own option wins. Only the commands took them once,
    and ``skillrt -C ~/blog`` (as the README says) failed "No such option: -C"."""
    given_before_command(root, posts_dir)
    if ctx.invoked_subcommand is None:
        chat(
            root=root,
            posts_dir=posts_dir,
            verbose=False,
            resume_last=False,
            session=None,
            yes=False,
        )


@app.command()
def chat(
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
    resume_last: Annotated[
        bool,
        typer.Option(
            "--continue", "-c", help="Pick up the last session here: its turns and its focus."
        ),
    ] = False,
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Open the session of this name (made if new)."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Write edits without showing the diff first.")
    ] = False,
) -> None:
    """Chat with your blog: type requests, watch tasks run; Ctrl-C cancels, Ctrl-D quits."""
    from skillrt.cli.readers import make_reader
    from skillrt.cli.repl import Repl
    from skillrt.cli.sessions import choose_session

    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        config.session_id, continued = choose_session(
            config.state_path, name=session, resume_last=resume_last
        )
        runtime = make_runtime(config)
        reader = make_reader(config.state_path / "input-history")
        repl = Repl(
            runtime,
            Console(),
            reader,
            continuing=resume_last and not continued,
            confirm=False if yes else None,
        )
        status = _run(repl.run())
    raise typer.Exit(status)


@app.command()
def run(
    text: Annotated[str, typer.Argument(help="The request, e.g. 'write an article about Rust'.")],
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="The post the request is about.")
    ] = None,
    selection: Annotated[
        str | None, typer.Option("--selection", help="Selected text the request is about.")
    ] = None,
    answer: Answers = None,
    as_json: Json = False,
    confirm: Annotated[
        bool | None,
        typer.Option(
            "--confirm/--yes",
            help="Show an edit's diff and ask before writing (--yes: never ask). "
            "Default: edit.confirm, else no.",
        ),
    ] = None,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
) -> None:
    """Run one task and exit: 0 done, 1 failed, 2 bad input, 3 unfinished, 74 state folder
    unusable (read-only, full), 130 cancelled."""
    from skillrt.blog.files import FileStore
    from skillrt.cli.oneshot import OneShot

    with user_errors():
        context: dict[str, str | bool] = {}
        if confirm is not None:
            context["confirm"] = confirm
        if selection is not None:
            context["selected_text"] = selection
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        if file is not None:  # a usage error (2), as undo says it: "run --file /etc/passwd"
            FileStore(config.root).relative(file)  # exited 1, a task that failed
            context["current_file"] = str(file)
        shot = OneShot(make_runtime(config), as_json=as_json, answers=list(answer or []))
        status = _run(shot.run(text, context))
    raise typer.Exit(status)


@app.command()
def undo(
    path: Annotated[
        str | None, typer.Argument(help="The post; without it, the last post written.")
    ] = None,
    as_json: Json = False,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
) -> None:
    """Restore the version kept before the last write (of PATH), byte for byte: an edit undone,
    a new post moved to the trash, a deleted one brought back. Exit 0 done, 1 refused, 2 a
    PATH outside the blog."""
    from skillrt.blog.files import FileStore
    from skillrt.cli.oneshot import OneShot

    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        if path is not None:  # a usage error (2), as publish says it: "undo ../../etc/passwd"
            FileStore(config.root).relative(path)  # exited 1, as if there was nothing to undo
        shot = OneShot(make_runtime(config, with_model=False), as_json=as_json)
        status = _run(shot.undo(path))
    raise typer.Exit(status)


@app.command()
def resume(
    task_id: TaskId,
    answer: Answers = None,
    as_json: Json = False,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="The task's new token limit (all its calls)."),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", min=0, help="The task's new cost limit in USD."),
    ] = None,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
) -> None:
    """Continue a task from its last completed step (exit status as for run); a task stopped
    by its budget goes on with a raised --max-tokens / --max-cost, completed steps not paid
    for again."""
    from skillrt.cli.oneshot import OneShot

    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        shot = OneShot(make_runtime(config), as_json=as_json, answers=list(answer or []))
        budget = {"max_tokens": max_tokens, "max_cost": max_cost}
        given = {k: v for k, v in budget.items() if v is not None}
        status = _run(shot.resume(task_id, budget=given or None))
    raise typer.Exit(status)


@app.command()
def replay(
    task_id: TaskId,
    as_json: Json = False,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
) -> None:
    """Run a recorded Browse task's actions again, without a model (exit status as for run)."""
    from skillrt.cli.oneshot import OneShot

    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        task_id = _recorded(config, task_id)
        runtime = make_runtime(config, with_model=False)
        # The skill that replays recordings is the one taking a `replay` parameter.
        replaying = [s.name for s in runtime.skills.values() if "replay" in s.params.model_fields]
        if not replaying:
            raise UserError("no registered skill replays recorded tasks")
        shot = OneShot(runtime, as_json=as_json)
        status = _run(shot.skill(replaying[0], {"replay": task_id}))
    raise typer.Exit(status)


def _recorded(config: "RuntimeConfig", task_id: str) -> str:
    """The task id, when a recording of it is kept (``<state>/replays/<id>.json``,
    docs/browsing.md). An unknown id is a usage error (exit 2, as for run), said before a
    task starts: it was a task failing "no recorded browsing task", exit 1."""
    task_id = task_id.strip()
    if not task_id or not (config.state_path / "replays" / f"{task_id}.json").is_file():
        raise fail(f"no recorded browsing task {task_id!r} to replay")
    return task_id


@app.command()
def tasks(
    as_json: Json = False, root: Root = None, posts_dir: PostsDir = None, verbose: Verbose = False
) -> None:
    """List the tasks that can be resumed (paused, or cut off by a crash)."""
    from skillrt.cli.tasklist import tasks_command

    status = tasks_command(as_json=as_json, root=root, verbose=verbose, posts_dir=posts_dir)
    raise typer.Exit(status)


async def _abandon(config: "RuntimeConfig", prefix: str) -> str:
    runtime = make_runtime(config, with_model=False)
    await runtime.initialize()
    try:
        task = find_task(prefix, runtime.get_resumable_tasks())
        if not await runtime.abandon_task(task.id):
            raise fail(f"task {task.id} cannot be abandoned now")
        return task.id
    finally:
        await runtime.close()


@app.command()
def abandon(
    task_id: TaskId, root: Root = None, posts_dir: PostsDir = None, verbose: Verbose = False
) -> None:
    """Give up a resumable task for good."""
    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        done = _run(_abandon(config, task_id))
    print(f"abandoned {done}")


@app.command()
def doctor(
    as_json: Json = False,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
    no_generate: Annotated[
        bool, typer.Option("--no-generate", help="Do not try one token on the embedded model.")
    ] = False,
) -> None:
    """Show the config files, model, folders, index and browser skillrt would use here; with
    the embedded model, generate one token in a worker process (ok, crashed or slow).

    Writes nothing: no state folder, no log file, no index."""
    from skillrt.cli.doctor import doctor_command

    status = doctor_command(
        as_json=as_json, root=root, posts_dir=posts_dir, verbose=verbose, generate=not no_generate
    )
    raise typer.Exit(status)


@app.command()
def index(
    as_json: Json = False, root: Root = None, posts_dir: PostsDir = None, verbose: Verbose = False
) -> None:
    """Re-index the posts (full-text index and link graph); only changed posts are read."""
    from skillrt.blog.memory import BlogMemory

    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        make_state_dir(config.state_path)
        memory = BlogMemory(
            config.root,
            config.state_path,
            config.posts_dir,
            drafts_dir=config.layout.drafts_dir,
            inline_tags=config.layout.kind == "obsidian",
        )
        try:
            memory.posts.check()  # a damaged index or graph is moved aside and built again
            memory.graph.check()
            report = memory.refresh()
            items = [post.to_item() for post in memory.posts.all_posts()]
            total = len(items)
        finally:
            memory.close()
    missing = config.layout.markdown_files is None  # (a mistyped folder removes nothing)
    if as_json:
        data = {"posts": total, "items": items, **report.to_dict()}
        print(json.dumps(data, ensure_ascii=False), flush=True)
    elif missing:
        print(f"{total} posts indexed; {config.root / config.posts_dir} is not there", flush=True)
    else:
        print(
            f"{total} posts indexed in {config.root / config.posts_dir}: {len(report.added)}"
            f" added, {len(report.updated)} updated, {len(report.removed)} removed,"
            f" {report.unchanged} unchanged",
            flush=True,
        )
    if not as_json:
        for path, reason in report.errors:
            print(f"  skipped {path}: {reason}", file=sys.stderr)
    if (total == 0 or missing) and (hint := config.layout.hint()) is not None:
        # "--posts-dir nope" indexed "0 posts" and said nothing of why (the chat and the
        # doctor say it): a new blog's folder may not exist yet, so it is a hint, not an error.
        print(f"hint: {hint}", file=sys.stderr)


@app.command()
def publish(
    path: Annotated[str, typer.Argument(help="The draft to publish, relative to the blog.")],
    as_json: Json = False,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
) -> None:
    """Publish a draft: take its draft mark off (draft = true, draft: true, published: false)
    or move it out of _drafts/; every other byte stays. Answers may use it afterwards;
    `skillrt undo` puts the draft back."""
    from skillrt.blog.files import FileStore
    from skillrt.blog.memory import BlogMemory
    from skillrt.blog.publish import publish_kept
    from skillrt.blog.siteconfig import site_today
    from skillrt.blog.versions import VersionStore
    from skillrt.messages import new_id

    with user_errors():
        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        make_state_dir(config.state_path)
        files = FileStore(
            config.root,
            trash_dir=config.state_path / "trash",
            max_read_bytes=config.max_post_bytes,
        )
        # (today where the site reads its dates, as the chat takes it: not this machine's)
        kind = config.layout.kind
        day = site_today(config.root, kind)
        # (kept for `skillrt undo`, as the chat's publish is: "There is nothing to undo" it was)
        versions = VersionStore(config.state_path / "versions", keep=config.undo.keep)
        done = publish_kept(
            files,
            path,
            posts_dir=config.posts_dir,
            day=day,
            versions=versions,
            key=f"publish-{new_id()}",
            kind=kind,
        )
        memory = BlogMemory(
            config.root,
            config.state_path,
            config.posts_dir,
            drafts_dir=config.layout.drafts_dir,
            inline_tags=config.layout.kind == "obsidian",
        )
        try:
            memory.refresh()
        finally:
            memory.close()
    if as_json:
        data = {
            "path": done.path,
            "changed": done.changed,
            "moved_from": done.moved_from,
            "removed": list(done.removed),
            "scheduled": done.scheduled,
            "expired": done.expired,
        }
        print(json.dumps(data, ensure_ascii=False))
        return
    if not done.changed:
        print(f"{done.path} is not a draft; nothing changed.")
    else:
        moved = f" (moved from {done.moved_from})" if done.moved_from else ""
        print(f"Published {done.path}{moved}.")
    generator = config.layout.kind.capitalize()
    if done.scheduled:  # (a draft dated 2027 was "Published", and Hugo held it back)
        print(f"Its date is {done.scheduled}: {generator} puts it on the site from that day.")
    elif done.expired:
        print(f"Its expiry date, {done.expired}, has passed: {generator} will not show it.")


@app.command()
def serve(
    host: Annotated[
        str | None,
        typer.Option("--host", help="Address to listen on (default 127.0.0.1, serve.host)."),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", "-p", min=0, max=65535, help="Port (default 8765, serve.port; 0: any)."
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="Read the bearer token from this file (default serve-token in the state"
            " folder, created with mode 0600; $SKILLRT_SERVE__TOKEN overrides both).",
            show_default=False,
        ),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option("--allow-remote", help="Allow a non-loopback --host (the network sees it)."),
    ] = False,
    tls_cert: Annotated[
        Path | None,
        typer.Option("--tls-cert", help="Serve HTTPS with this certificate (PEM; serve.tls_cert)."),
    ] = None,
    tls_key: Annotated[
        Path | None,
        typer.Option("--tls-key", help="The certificate's private key (PEM; serve.tls_key)."),
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure", help="With --allow-remote: plain HTTP (a proxy in front adds TLS)."
        ),
    ] = False,
    root: Root = None,
    posts_dir: PostsDir = None,
    verbose: Verbose = False,
) -> None:
    """Serve the HTTP API and the web chat page for blog tools (needs skillrt[server])."""
    from skillrt.server import require_server

    with user_errors():
        require_server()
        from skillrt.server.run import check_bind, tls_files
        from skillrt.server.run import serve as run_server

        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        tls = tls_files(config, tls_cert, tls_key)
        check_bind(host or config.serve.host, allow_remote, tls=tls, insecure=insecure)
        run_server(
            config,
            host=host,
            port=port,
            token_file=token_file,
            allow_remote=allow_remote,
            tls_cert=tls_cert,
            tls_key=tls_key,
            insecure=insecure,
        )


@app.command("mcp")
def mcp_server(root: Root = None, posts_dir: PostsDir = None, verbose: Verbose = False) -> None:
    """Serve the skills as MCP tools on stdin and stdout, for editors and agents such as Claude
    Desktop, Claude Code and Cursor (needs skillrt[mcp]; docs/mcp.md)."""
    from skillrt.mcp import require_mcp

    with user_errors():
        require_mcp("skillrt mcp")
        from skillrt.mcp.server.stdio import serve_stdio

        config = open_config(root, verbose=verbose, posts_dir=posts_dir)
        _run(serve_stdio(make_runtime(config)))


def main() -> None:
    """Every command through Typer (``skillrt.cli.main`` takes ``tasks`` and ``doctor`` without
    it when their arguments are plain: cli/quick.py).

    A command line the parser refuses (an unknown option, a missing argument, a value out of
    range) is one line on stderr, ``skillrt: error: ...``, exit 2, as every other usage error
    is: Typer printed a usage line, a hint and the error in a box drawn 80 columns wide (a
    long message broken inside it), which a script reading stderr could not take as one."""
    try:  # Typer's own copy of Click (recent Typer); an older Typer uses Click itself
        from typer._click.exceptions import ClickException, UsageError
    except ImportError:  # (the same classes, by Click's own module: mypy sees two types)
        from click.exceptions import ClickException, UsageError  # type: ignore[assignment]

    try:
        status = app(prog_name="skillrt", standalone_mode=False)
    except UsageError as exc:
        print(f"skillrt: error: {_usage_line(exc)}", file=sys.stderr, flush=True)
        sys.exit(exc.exit_code)
    except ClickException as exc:  # (another: Click's own words)
        exc.show()
        sys.exit(exc.exit_code)
    except typer.Abort:  # an end of input where a prompt read one
        from skillrt.cli.quick import aborted

        aborted()
    sys.exit(status if isinstance(status, int) else 0)


def _usage_line(exc: Any) -> str:
    """The parser's message on one line, with where to read the command's options."""
    message = " ".join(exc.format_message().split())
    ctx = exc.ctx
    if ctx is None or ctx.command.get_help_option(ctx) is None:
        return message
    return f"{message} (see {ctx.command_path} {ctx.help_option_names[0]})"
