"""Two relevance sets from public meeting transcripts: QMSum (Zhong et al., NAACL 2021).

Source: the public repository github:Yale-LILY/QMSum (MIT licence), files
``data/ALL/{train,val,test}/<meeting>.json``: each holds ``meeting_transcripts`` (a list of
``{"speaker", "content"}`` turns) and ``specific_query_list`` (``{"query", "answer",
"relevant_text_span": [["start", "end"], ...]}``, turn indexes, inclusive). The raw files are
not in git: copy ``data/ALL`` of that repository to ``/work/data-sets/qmsum/data/ALL`` (or pass
another path). Without them the sets are skipped with a message naming the path.

Shaped like a user's memory of meetings: one memory per turn (``"<speaker>: <content>"``), one
project per meeting, every question searched with its meeting's project filter. Turns of one
or two words ("Mm-hmm .", "Okay .") are not stored: a memory keeps what was said, not the
back-channel (and it halves what the bench must embed). The gold evidence of a question is
the stored turns of its spans with at least ``SUBSTANTIVE`` words (a span of 20 turns holds
many "Yeah, right"s no ranker could be asked to find); a span with none keeps all its turns.

- ``meetings``: the AMI product-design meetings of QMSum's test split (ES/IS/TS, 20 meetings):
  spoken, informal, many short turns;
- ``committee``: the parliamentary committee meetings (the Welsh Parliament's education
  committee and the Canadian House of Commons' covid committee; QMSum's val and test splits,
  12 meetings: the train split's 24 more cost ~20 minutes of a loaded CPU to embed):
  long formal turns where a question's names and terms recur verbatim.

Classes: ``speaker`` when the question names one of the meeting's speakers (their label or a
word of it: "What did the Project Manager think...", "What did Kirsty Williams say..."),
``topic`` otherwise. QMSum has no dates: a meeting's turns are stored a minute apart from a
fixed day per meeting, so storage order is the order spoken.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bench.set_question import SetQuestion

DEFAULT_PATH = Path("/work/data-sets/qmsum/data/ALL")
SETS = ("meetings", "committee")
CLASSES = ("speaker", "topic")
SUBSTANTIVE = 8  # words: a turn that can carry evidence
MIN_WORDS = 3  # words: shorter turns are back-channel, not stored
FIRST_DAY_MS = 1_600_000_000_000
DAY_MS = 86_400_000
_ROLE_WORDS = {"a", "an", "the", "am", "mp", "ms", "mr", "mrs", "dr", "of", "and"}


@dataclass(frozen=True)
class Turn:
    meeting: str
    text: str
    created_ms: int


def available(path: Path = DEFAULT_PATH) -> str | None:
    """None when the raw files are there, else why the sets are skipped."""
    if not any(path.glob("*/*.json")):
        return (
            f"QMSum sets skipped: no {path}/<split>/<meeting>.json (copy data/ALL of "
            "github:Yale-LILY/QMSum there, or pass its path)"
        )
    return None


def _files(name: str, path: Path) -> list[Path]:
    if name == "meetings":
        return sorted(p for p in (path / "test").glob("*.json") if p.name[:2] in ("ES", "IS", "TS"))
    if name == "committee":
        return sorted(
            p
            for split in ("val", "test")
            for p in (path / split).glob("*.json")
            if p.name.startswith(("education", "covid"))
        )
    raise ValueError(f"unknown QMSum set {name!r}; use one of {', '.join(SETS)}")


def _speaker_words(speakers: set[str]) -> set[str]:
    words = set()
    for s in speakers:
        words.add(s.lower())
        words.update(w for w in re.findall(r"[a-z]+", s.lower()) if w not in _ROLE_WORDS)
    return {w for w in words if len(w) > 1}


def _classify(query: str, speakers: set[str]) -> str:
    low = query.lower()
    tokens = set(re.findall(r"[a-z]+", low))
    for word in _speaker_words(speakers):
        if (" " in word and word in low) or word in tokens:
            return "speaker"
    return "topic"


def build(name: str, path: Path = DEFAULT_PATH) -> tuple[list[Turn], list[SetQuestion]]:
    """The stored turns (storage order) and the questions, evidence as turn indexes."""
    turns: list[Turn] = []
    questions: list[SetQuestion] = []
    for day, file in enumerate(_files(name, path)):
        meeting = file.stem
        data = json.loads(file.read_text(encoding="utf-8"))
        kept: dict[int, int] = {}  # transcript index -> stored index
        substantive: set[int] = set()
        speakers: set[str] = set()
        for n, turn in enumerate(data["meeting_transcripts"]):
            speaker = str(turn.get("speaker") or "").strip()
            content = " ".join(str(turn.get("content") or "").split())
            words = len(content.split())
            if words < MIN_WORDS:
                continue
            speakers.add(speaker)
            kept[n] = len(turns)
            if words >= SUBSTANTIVE:
                substantive.add(n)
            created = FIRST_DAY_MS + day * DAY_MS + len(kept) * 60_000
            turns.append(Turn(meeting, f"{speaker}: {content}", created))
        for q in data.get("specific_query_list", []):
            span = [
                n
                for start, end in q["relevant_text_span"]
                for n in range(int(start), int(end) + 1)
                if n in kept
            ]
            gold = [n for n in span if n in substantive] or span
            if not gold:
                continue
            evidence = tuple(dict.fromkeys(kept[n] for n in gold))
            text = " ".join(str(q["query"]).split())
            questions.append(SetQuestion(_classify(text, speakers), text, meeting, evidence))
    return turns, questions
