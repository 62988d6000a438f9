"""Credentials out of every URL a trace records or exports (OpenTelemetry's rule for ``url.full``).

A base URL can carry a user and password (``http://alice:secret@host/v1``) or a key in its
query (``?api-key=...``). A trace, a results file or a span keeps the URL with the userinfo
replaced by ``REDACTED:REDACTED`` and every query value by ``REDACTED`` (the names stay: they
say which parameter was set, not to what).
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

__all__ = ["CAPTURE_ENV", "REDACTED", "capture_content", "redact_text", "redact_url"]

REDACTED = "REDACTED"


def redact_url(url: str) -> str:
    """``url`` without its credentials; unchanged when it has none (no ``@``, no ``?``)."""
    if "@" not in url and "?" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL we can take apart: keep nothing of it
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}:{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        names = [name for name, _ in parse_qsl(query, keep_blank_values=True)]
        query = "&".join(f"{quote(name, safe='')}={REDACTED}" for name in names) or REDACTED
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_URL = re.compile(r"""[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>]+""")


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted (an error message that quotes a request's URL)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def capture_content(explicit: bool | None = None) -> bool:
    """Keep prompt and completion text? Only when asked: ``explicit``, else the OTel GenAI
    convention's ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``. Off by default."""
    if explicit is not None:
        return explicit
    return os.environ.get(CAPTURE_ENV, "").strip().lower() == "true"
