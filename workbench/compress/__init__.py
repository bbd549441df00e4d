"""Compressors: turn redacted events into observations and summaries.

Modules:
- ``base``     the ``Compressor`` protocol and ``build_compressor(settings)``
- ``offline``  deterministic rules, no network, the default without an API key
- ``claude``   the Anthropic Messages API, XML replies parsed strictly
- ``openai_compat``  OpenAI-compatible chat completions (OpenRouter, Gemini, Ollama, vLLM…)
- ``llm``      what the model compressors share: prompts, strict parsing, file filling
- ``chain``    the fallback chain: terminal errors move an event to the next provider
- ``xml``      the strict parser for ``<observation>`` / ``<summary>`` replies
- ``prompts``  the Claude compressor's prompts (tool data fenced as untrusted)
- ``digest``   the offline per-prompt summary
- ``rules/``   the offline rules, one module per kind of tool call
"""
