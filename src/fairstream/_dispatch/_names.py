"""Policies by name, as the CLI and ``Dispatcher(policy="...")`` give them."""

from __future__ import annotations

from ._policy import Policy
from .policies._fixed import AIMD, Fixed, Serial
from .policies._gradient import Gradient
from .policies._waves import Waves
from .policies.auto._auto import Auto

__all__ = ["make_policy"]


def make_policy(policy: str | Policy) -> Policy:
    """A policy object from a name: ``auto``, ``gradient``, ``aimd``, ``serial``,
    ``fixed:N`` or ``waves:B``."""
    if isinstance(policy, Policy):
        return policy
    name, _, arg = policy.partition(":")
    if name == "auto":
        return Auto()
    if name == "gradient":
        return Gradient()
    if name == "aimd":
        return AIMD()
    if name == "serial":
        return Serial()
    if name == "fixed" and arg.isdigit():
        return Fixed(int(arg))
    if name == "waves" and arg.isdigit():
        return Waves(int(arg))
    raise ValueError(f"unknown policy {policy!r}: auto, gradient, aimd, serial, fixed:N or waves:B")
