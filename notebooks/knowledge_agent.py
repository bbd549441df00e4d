import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="workbench · knowledge agent")

with app.setup:
    import argparse
    from typing import Any

    import altair as alt
    import marimo as mo
    import polars as pl

    from workbench import notebooks
    from workbench.errors import WorkbenchError
    from workbench.store import observations as observation_store

    USAGE = {
        "input_tokens": "input",
        "cache_read_input_tokens": "cache read",
        "cache_creation_input_tokens": "cache write",
        "output_tokens": "output",
    }


@app.function
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``--data-dir``, the corpus to open, and ``--question`` to ask once headless."""
    parser = notebooks.base_parser("Chat with the knowledge agent over one corpus.")
    parser.add_argument("--corpus", help="corpus name (default: the first one)")
    parser.add_argument("--question", help="ask this once (prime first) and show the answer")
    return notebooks.parse_known(parser, argv)


@app.function
def ask(client: Any, name: str, question: str) -> dict[str, Any]:
    """One question in the corpus's conversation (the service primes it if needed)."""
    return client.post(f"/api/corpus/{name}/query", {"question": question})


@app.function
def agent_label(agent: str | None) -> str:
    """Which agent answers, in words (the offline one is honest about being extractive)."""
    if not agent:
        return "not known yet (prime the corpus or ask a question)"
    if agent.startswith("offline"):
        return (
            f"`{agent}`: no Anthropic API key is set in the service, so answers are quotes from "
            "the corpus, not a synthesis. Set ANTHROPIC_API_KEY and restart the service for Claude."
        )
    return f"`{agent}` (Messages API, corpus in the prompt cache)"


@app.function
def filter_line(flt: dict[str, Any]) -> str:
    """``project=payments-api; types=bugfix,decision`` (the parts that are set)."""
    parts = [
        f"{k}={','.join(v) if isinstance(v, list) else v}"
        for k, v in flt.items()
        if v not in (None, [], "") and k != "limit"
    ]
    return "; ".join(parts) or "everything"


@app.function
def reply_markdown(result: dict[str, Any], base_url: str) -> str:
    """The answer, its cited observations linked to the API, and this turn's token usage."""
    lines = [result["answer"], ""]
    if result.get("reprimed"):
        lines.append(f"_The conversation was re-primed: {result.get('reprime_reason')}._\n")
    if result.get("sources"):
        lines.append("**Sources**")
        for source in result["sources"]:
            url = f"{base_url}/api/observation/{source['id']}"
            day = str(source.get("created_at", ""))[:10]
            lines.append(f"- [#{source['id']}]({url}) {source['type']} · {day} · {source['title']}")
    usage = result.get("usage") or {}
    parts = [f"{label} {usage.get(key, 0):,}" for key, label in USAGE.items()]
    lines.append(
        f"\n<small>{result.get('agent')} · turn {result.get('turn')} · {' · '.join(parts)}</small>"
    )
    return "\n".join(lines)


@app.function
def usage_row(result: dict[str, Any]) -> dict[str, Any]:
    """One row of the per-turn usage table."""
    usage = result.get("usage") or {}
    return {
        "turn": result.get("turn"),
        "agent": result.get("agent"),
        **{label: int(usage.get(key, 0)) for key, label in USAGE.items()},
        "citations": len(result.get("citations") or []),
        "cited": list(result.get("citations") or []),
    }


@app.function
def headless_summary(defs: Any) -> list[str]:
    """What a headless run (``python notebooks/knowledge_agent.py``) did, in a few lines."""
    names = defs.get("names")
    if names is None:
        return []
    lines = [f"{len(names)} corpora at {defs['settings'].base_url}: {', '.join(names)}"]
    primed = defs.get("primed")
    if defs.get("corpus_name"):
        agent = (primed or {}).get("agent")
        lines.append(f"corpus {defs['corpus_name']}" + (f", agent {agent}" if agent else ""))
    answer = defs.get("answer_result")
    if answer:
        first = next((ln for ln in answer["answer"].splitlines() if ln.strip()), "")
        lines.append(f"answer: {first[:200]}")
        lines.append(f"cited: {', '.join(str(c) for c in answer.get('citations', []))}")
    else:
        lines.append("no question asked (pass --question to ask one)")
    return lines


@app.cell(hide_code=True)
def _():
    mo.md(r"""
    # Knowledge agent

    Load one **corpus** into a conversation (*prime*), then ask follow-up questions about it.
    With an Anthropic key the corpus sits in Claude's prompt cache, so each follow-up pays for
    it at the cache-read rate (the usage table shows reads vs writes per turn). Without a key
    an offline agent answers by quoting the best-matching observations, and says so.
    Everything runs in the workbench service; this notebook only talks to its API.
    """)
    return


@app.cell
def _():
    args = parse_args()
    return (args,)


@app.cell
def _(args):
    settings = notebooks.settings_for(args.data_dir)
    try:
        _conn = notebooks.writer(settings)
        client, problem = _conn.client, None
        _note = "started it just now" if _conn.started else "already running"
    except WorkbenchError as exc:
        client, problem, _note = None, exc.message, ""
    mo.stop(client is None, mo.callout(mo.md(f"**No service.** {problem}"), kind="danger"))
    corpora = client.get("/api/corpus")["corpora"]
    names = [c["name"] for c in corpora if "error" not in c]
    mo.stop(
        not names,
        mo.callout(
            mo.md(
                "**No corpus yet.** Build one in the `corpus_builder` notebook "
                "(`workbench notebook corpus_builder`) or with "
                "`workbench corpus build NAME --project …`, then re-run this cell."
            ),
            kind="warn",
        ),
    )
    mo.md(f"Service at {settings.base_url} ({_note}); {len(names)} corpora.")
    return client, names, settings


@app.cell
def _(args, names):
    corpus_choice = mo.ui.dropdown(
        names, value=args.corpus if args.corpus in names else names[0], label="corpus"
    )
    prime_button = mo.ui.run_button(label="Prime")
    reprime_button = mo.ui.run_button(label="Reprime (fresh conversation)", kind="warn")
    mo.hstack([corpus_choice, prime_button, reprime_button], justify="start")
    return corpus_choice, prime_button, reprime_button


@app.cell
def _(args, client, corpus_choice, prime_button, reprime_button):
    corpus_name = corpus_choice.value
    primed = None
    if reprime_button.value:
        primed = client.post(f"/api/corpus/{corpus_name}/reprime")
    elif prime_button.value or args.question:
        primed = client.post(f"/api/corpus/{corpus_name}/prime")
    meta = client.get(f"/api/corpus/{corpus_name}")
    _stats = meta["stats"]
    _prime_usage = (primed or {}).get("usage") or {}
    _state = (
        f"primed: session `{meta['session_id']}`"
        + (" (kept: already primed)" if primed and primed.get("already_primed") else "")
        if meta["session_id"]
        else "not primed yet: the first question primes it"
    )
    if reprime_button.value:
        _state += (
            " — **reprimed**: a fresh conversation; messages still shown in the chat are from the "
            "old one (↻ in the chat clears them)"
        )
    mo.vstack(
        [
            mo.hstack(
                [
                    mo.stat(_stats["observation_count"], label="observations"),
                    mo.stat(f"{_stats['token_estimate']:,}", label="corpus tokens"),
                    mo.stat(len(_stats["type_breakdown"]), label="types"),
                    mo.stat(
                        f"{_prime_usage.get('cache_creation_input_tokens', 0):,}",
                        label="cache write at prime",
                    ),
                ],
                justify="start",
            ),
            mo.md(
                f"**{meta['name']}** — {meta.get('description') or 'no description'} · "
                f"filter `{filter_line(meta['filter'])}` · {_state}.\n\n"
                + (
                    f"Answering: {agent_label(primed['agent'])}"
                    if primed
                    else "Answering: the service decides at the first answer (Claude when it "
                    "has an Anthropic key, else the offline extractive agent)."
                )
            ),
        ]
    )
    return corpus_name, meta, primed


@app.cell
def _(client, corpus_name, meta, primed, settings):
    # Every answer lands here too, so the usage and citation cells can follow the chat.
    turn_log: list[dict[str, Any]] = []

    def _model(messages: list[Any], _config: Any) -> str:
        result = ask(client, corpus_name, str(messages[-1].content))
        turn_log.append(usage_row(result))
        return reply_markdown(result, settings.base_url)

    chat = mo.ui.chat(
        _model,
        prompts=[
            "What went wrong most often, and how was it fixed?",
            "Which decisions were made, and why?",
            "What is still left to do?",
        ],
        max_height=520,
    )
    _ = (meta, primed)  # a new corpus or a re-prime starts a new chat
    chat
    return chat, turn_log


@app.cell
def _(chat, turn_log):
    _ = chat.value  # re-run after every message
    mo.stop(not turn_log, mo.md("_Token usage per turn appears here after the first answer._"))
    usage = pl.DataFrame([{k: v for k, v in row.items() if k != "cited"} for row in turn_log])
    _long = usage.unpivot(
        index="turn", on=list(USAGE.values()), variable_name="kind", value_name="tokens"
    )
    _chart = (
        alt.Chart(_long)
        .mark_bar()
        .encode(
            x=alt.X("turn:O"),
            y=alt.Y("tokens:Q"),
            color=alt.Color("kind:N"),
            xOffset="kind:N",
            tooltip=["turn", "kind", "tokens"],
        )
        .properties(title="tokens per turn: cache reads vs writes", height=200)
    )
    _spent = int(usage.select(list(USAGE.values())).sum_horizontal().sum())
    mo.vstack(
        [
            mo.md(f"Answered by {agent_label(turn_log[-1]['agent'])}"),
            mo.ui.table(usage, selection=None),
            mo.ui.altair_chart(_chart)
            if _spent
            else mo.md("_The offline agent calls no model: every turn costs 0 tokens._"),
        ]
    )
    return (usage,)


@app.cell
def _(chat, settings, turn_log):
    _ = chat.value
    mo.stop(not turn_log or not turn_log[-1]["cited"])
    with notebooks.open_store(settings) as _store:
        _cited = observation_store.get_many(_store.conn, turn_log[-1]["cited"], order_by="id_asc")
    mo.vstack(
        [
            mo.md("**Cited in the last answer** (full observations, from the store):"),
            mo.accordion(
                {
                    f"[{o.id}] {o.type} · {o.title}": mo.md(
                        f"{o.created_at[:16]} · {o.project}\n\n{o.narrative}\n\n"
                        + "\n".join(f"- {fact}" for fact in o.facts)
                    )
                    for o in _cited
                }
            ),
        ]
    )
    return


@app.cell
def _(args, client, corpus_name, primed, settings):
    # Headless (python knowledge_agent.py --question …): one answer, the same path as the chat.
    mo.stop(not args.question)
    _ = primed
    answer_result = ask(client, corpus_name, args.question)
    mo.md(reply_markdown(answer_result, settings.base_url))
    return (answer_result,)


if __name__ == "__main__":
    raise SystemExit(notebooks.run_headless(app, parse_args(), headless_summary, store=False))
