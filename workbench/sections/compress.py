"""The compressor names, the fallback chain's rules and the OpenAI-compatible presets.

Kept free of any import of ``workbench.settings`` (which validates with these) and of any SDK,
so settings, health and ``doctor`` can say what is configured without loading a client.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

PROBE_SECONDS = 3.0  # doctor's wait for an OpenAI-compatible server to answer

COMPRESSORS = ("claude", "openai_compat", "offline")

# provider → (base URL, env var of the key; None = a local server that needs no key)
PRESETS: dict[str, tuple[str | None, str | None]] = {
    "custom": (None, None),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY"),
    "ollama": ("http://127.0.0.1:11434/v1", None),
    "llamacpp": ("http://127.0.0.1:8080/v1", None),
    "vllm": ("http://127.0.0.1:8000/v1", None),
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_chain(names: list[str]) -> list[str]:
    """``names`` if it is a usable chain; else a ``ValueError`` that says what to write."""
    example = (
        'e.g. ["claude", "openai_compat", "offline"] (or WORKBENCH_COMPRESSOR_CHAIN=claude,offline)'
    )
    if not names:
        raise ValueError(f"compressor_chain is empty; list at least one compressor, {example}")
    unknown = [n for n in names if n not in COMPRESSORS]
    if unknown:
        raise ValueError(
            f"compressor_chain has unknown names {unknown}; use only "
            f"{', '.join(COMPRESSORS)}, {example}"
        )
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"compressor_chain lists {twice} more than once; list each once")
    if "offline" in names and names[-1] != "offline":
        raise ValueError(
            "compressor_chain puts offline before other compressors, but offline never fails, "
            "so they would never run; put offline last"
        )
    return names


def check_key_env_name(value: str) -> str:
    """``value`` if it can be an env var's name; a pasted key is refused, with why."""
    if _ENV_NAME.match(value):
        return value
    raise ValueError(
        "openai_compat_api_key_env is the *name* of the environment variable that holds the "
        "key (e.g. OPENROUTER_API_KEY), not the key itself: settings.json is not a place for "
        "secrets. Export the key in that variable and write its name here."
    )


@dataclass(frozen=True)
class OpenAICompatConfig:
    """Where the OpenAI-compatible compressor sends requests, and with which key."""

    provider: str
    base_url: str | None
    model: str | None
    key_env: str | None

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.key_env) or None if self.key_env else None

    @property
    def local(self) -> bool:
        """A server on this machine (Ollama, llama.cpp, vLLM): no key needed."""
        host = urlsplit(self.base_url or "").hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    @property
    def missing_key(self) -> bool:
        """A remote server and no key: an ``auth`` problem rather than a missing setting."""
        return self.api_key is None and not self.local

    @property
    def problem(self) -> str | None:
        """Why it cannot run (and the fix), else None."""
        if not self.base_url:
            return (
                "no base URL: set WORKBENCH_OPENAI_COMPAT_PROVIDER (openrouter, gemini, ollama, "
                "llamacpp, vllm) or WORKBENCH_OPENAI_COMPAT_BASE_URL"
            )
        if not self.model:
            return "no model: set WORKBENCH_OPENAI_COMPAT_MODEL (e.g. qwen2.5:7b for Ollama)"
        if self.missing_key:
            if self.key_env:
                return f"no API key: export {self.key_env} (or point it at a local server)"
            return (
                f"{self.base_url} is not on this machine and no key is named: set "
                "WORKBENCH_OPENAI_COMPAT_API_KEY_ENV to the env var that holds the key"
            )
        return None


def unreachable(base_url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why nothing answers at ``base_url`` (and the fix), else None: ``doctor``'s probe.

    One GET of ``<base_url>/models`` (the OpenAI listing every compatible server has); any
    HTTP answer, even 401 or 404, means a server is there. Only a refused connection, a
    timeout or a name that does not resolve is "unreachable": the compressor would fail
    every batch while the settings look fine.
    """
    import urllib.error
    import urllib.request

    url = base_url.rstrip("/") + "/models"
    try:
        with urllib.request.urlopen(url, timeout=timeout):  # noqa: S310 - http(s) validated
            return None
    except urllib.error.HTTPError:
        return None  # a server answered
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return (
            f"{base_url} does not answer ({reason}): start the server (for Ollama: "
            "`ollama serve`) or fix WORKBENCH_OPENAI_COMPAT_BASE_URL"
        )


def openai_compat_config(
    provider: str, *, base_url: str | None, model: str | None, key_env: str | None
) -> OpenAICompatConfig:
    """The provider's preset with the explicit settings on top."""
    preset_url, preset_env = PRESETS.get(provider, (None, None))
    return OpenAICompatConfig(
        provider=provider,
        base_url=base_url or preset_url,
        model=model,
        key_env=key_env or preset_env,
    )
