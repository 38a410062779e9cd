"""An article's sections without the model's words about them (``notes.without_notes``). The
embedded model's "Using tmux for remote work" was saved with a section opening "Here is a
rewritten version of the text with improvements:" and "The previous section ended abruptly,
…", and closing "I made some minor changes to improve clarity, grammar, and sentence
structure."."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from skillrt.skills.writing.notes import without_notes
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, writing_runtime

LEAD = "Here is a rewritten version of the text with improvements:"
ABOUT_PREVIOUS = "The previous section ended abruptly, and I wanted to give an overview."
CLOSING = (
    "I added more detail about the benefits of tmux.\n\n"
    "I made some minor changes to improve clarity, grammar, and sentence structure."
)
OWN = "Tmux keeps a session alive on the server.\n\nDetach with `C-b d` and attach again later."


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"{LEAD}\n\n{ABOUT_PREVIOUS} {OWN}\n\n{CLOSING}", OWN),
        (f"{LEAD}\n{OWN}", OWN),  # the lead-in on the first line of a paragraph
        (f"{OWN}\n\nI've kept the tone of the original text.", OWN),
        # The author's words, not notes: kept.
        ("I added a cron job that backs up the files.\n\nIt runs nightly.", None),
        (f"{OWN}\n\nI added more examples to the repository on GitHub.", None),
        (f"{OWN}\n\nI fixed the hook, and now the text renders correctly.", None),
        (f"{OWN}\n\nI kept the setup simple so the flow stays fast.", None),
        ("Here is a version of the script that handles errors:\n\n```sh\nset -e\n```", None),
        ("In the previous section we set up tmux. Now we split panes.", None),
        (f"{OWN}\n\n```text\nI made some changes to the text\n```", None),  # code
        ("Tmux.\n\nI made changes to the text.\n\nThen it ends here.", None),  # not closing
        (CLOSING, None),  # nothing else: left for the checks
    ],
)
def test_without_notes(text: str, kept: str | None) -> None:
    assert without_notes(text) == (text if kept is None else kept)


async def test_an_article_is_saved_without_the_models_notes(
    tmp_path: Path,
) -> None:
    blog = copy_blog(tmp_path / "blog")
    outline = {
        "title": "Using tmux for remote work",
        "description": "Sessions that outlive the connection.",
        "tags": ["tmux"],
        "sections": [
            {"heading": "Using tmux for remote work", "points": []},
            {"heading": "Detaching and attaching", "points": []},
        ],
    }
    first = "Tmux runs on the server, so a dropped connection loses nothing."
    second = f"{LEAD}\n\n{ABOUT_PREVIOUS} {OWN}\n\n{CLOSING}"
    rt = writing_runtime(blog, ScriptedModel([outline, first, second, EXTRACTION]))
    await rt.initialize()
    msg = await rt.run_skill("WriteArticle", {"topic": "tmux for remote work"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    body = frontmatter.load(blog / msg.data["path"]).content
    assert body == (
        f"## Using tmux for remote work\n\n{first}\n\n## Detaching and attaching\n\n{OWN}"
    )
