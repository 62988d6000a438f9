"""The HTML report: one forwardable page of the verdict, its evidence and the timeline."""

from ._i18n import Lang, guess_lang
from ._page import render_html, write_html

__all__ = ["Lang", "guess_lang", "render_html", "write_html"]
