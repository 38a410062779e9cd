"""A PostgreSQL address shown in a message or log never shows its password, wherever the
address gives it (no server needed)."""

from __future__ import annotations

import pytest

from skillrt._state.postgres import redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:sec@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:p@ss@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u@h/db?password=sec&sslmode=require",
         "postgresql://u@h/db?password=***&sslmode=require"),
        ("postgresql://h/db?sslmode=x&PASSWORD=sec#f", "postgresql://h/db?sslmode=x&PASSWORD=***#f"),
        ("host=h password=sec user=u", "host=h password=*** user=u"),
        ("host=h password = 'se c\\'ret' user=u", "host=h password = *** user=u"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)  # fmt: skip
def test_the_password_is_never_shown(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "sec" not in redact_url(url).replace("sslmode", "")
