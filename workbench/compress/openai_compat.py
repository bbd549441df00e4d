"""The OpenAI-compatible compressor: OpenRouter, Gemini's OpenAI endpoint, Ollama, llama.cpp, vLLM.

One ``/chat/completions`` call per tool call or summary, through the ``openai`` package. The
prompts, the strict XML parsing and the file filling are the Claude compressor's
(``workbench.compress.llm``), so a local model writes the same kind of observation; the tool
data stays fenced as untrusted inside the user message.

Why these choices:
- ``openai`` is imported lazily: hooks, ``--help`` and the offline path must not pay for it.
- ``max_retries=0``: the worker owns retries and backoff (see ``claude.py``).
- A local server needs no key: the client is given a placeholder (the SDK insists on one),
  so compression can run fully offline with a local model.
- Errors are classified by ``workbench.provider_errors``, like Claude's.
- A 200 without a usable ``choices[0].message.content`` is a malformed reply (retryable):
  it is what a proxy in between or a server mid-restart sends, not the model's answer.
"""

from __future__ import annotations

from typing import Any

from workbench.compress.llm import LlmCompressor
from workbench.errors import CompressionError
from workbench.provider_errors import ProviderText, to_compression_error
from workbench.settings import Settings

NO_KEY = "no-key"  # sent to local servers, which ignore it


def provider_text(label: str, key_env: str | None) -> ProviderText:
    """How this provider's errors name their fixes (its key's env var, our settings)."""
    key = (
        f"export a valid key in {key_env}" if key_env else "set WORKBENCH_OPENAI_COMPAT_API_KEY_ENV"
    )
    return ProviderText(
        label=label,
        key_fix=(
            f"Fix the key ({key}) and restart the service; queued events are kept, or go to "
            "the next provider in WORKBENCH_COMPRESSOR_CHAIN."
        ),
        model_setting="WORKBENCH_OPENAI_COMPAT_MODEL",
        billing_fix="Add credit with the provider, or use a local model (provider ollama)",
        endpoint_setting="WORKBENCH_OPENAI_COMPAT_BASE_URL",
    )


class OpenAICompatCompressor(LlmCompressor):
    """Observations and summaries from any server speaking OpenAI's chat completions."""

    name = "openai_compat"

    def __init__(self, client: Any, model: str, *, text: ProviderText | None = None) -> None:
        super().__init__(client, model)
        self.text = text or provider_text("the OpenAI-compatible API", None)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAICompatCompressor:
        """A compressor for ``settings``; ``CompressionError`` when it is not configured."""
        config = settings.openai_compat()
        if config.problem is not None:
            raise CompressionError(
                f"the openai_compat compressor is not configured: {config.problem}.",
                retryable=False,
                # URL and model set: what is missing is the key.
                kind="auth" if config.base_url and config.model else "not_configured",
            )
        assert config.base_url is not None
        assert config.model is not None
        import openai  # only for a provider that can run: it costs about a second

        client = openai.OpenAI(
            api_key=config.api_key or NO_KEY,
            base_url=config.base_url,
            max_retries=0,
            timeout=settings.llm_timeout_s,
        )
        label = f"the {config.provider} API at {config.base_url}"
        return cls(client, config.model, text=provider_text(label, config.key_env))

    def _ask(self, system: str, user: str, max_tokens: int) -> tuple[str, int]:
        """(reply text, tokens used) for one request; API errors become ``CompressionError``."""
        import openai

        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
            )
        except openai.OpenAIError as exc:
            raise to_compression_error(exc, self.text, self.model) from exc
        choices = getattr(completion, "choices", None)
        message = (
            getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        )
        text = getattr(message, "content", None)
        if not isinstance(text, str):
            raise CompressionError(
                f"{self.text.label} answered without a message (no choices[0].message.content: "
                f"{str(completion)[:200]!r}); will retry later.",
                retryable=True,
                kind="transient",
            )
        usage = getattr(completion, "usage", None)
        tokens = sum(
            value
            for name in ("prompt_tokens", "completion_tokens")
            if isinstance(value := getattr(usage, name, 0), int)
        )
        return text, tokens
