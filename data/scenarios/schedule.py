"""When each demo session happened: six weeks of working days, a few sessions a day.

Sessions keep their order within a project (a story's second session comes after its first),
projects are interleaved so each one spans the whole period, and the busy days and hours
look like a person's: more on Tuesday to Thursday, little at weekends, mornings and early
afternoons. Everything is drawn from one seeded ``random.Random``, so a seed is a schedule.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 10, 19, tzinfo=UTC)  # a Monday
DAYS = 41  # through Friday 2026-11-27: six working weeks
DAY_WEIGHTS = (0.9, 1.15, 1.2, 1.1, 0.75, 0.08, 0.04)  # Monday … Sunday
# Start times (UTC hour, minute) a session may begin at, morning to evening.
STARTS = ((8, 20), (9, 5), (10, 10), (11, 15), (13, 10), (14, 20), (15, 30), (16, 40), (19, 5))
NAMESPACE = uuid.UUID("6f1c2b8e-4d3a-4e5f-9a7b-0c1d2e3f4a5b")


def plan(projects: dict[str, list[dict[str, Any]]], seed: int) -> list[dict[str, Any]]:
    """The sessions of every project with ``session_id`` and ``start_ms``, in time order."""
    rng = random.Random(f"{seed}:schedule")
    queues = {name: list(sessions) for name, sessions in projects.items()}
    total = sum(len(q) for q in queues.values())
    days = sorted(rng.choices(range(DAYS), weights=[_weight(d) for d in range(DAYS)], k=total))
    slots: list[datetime] = []
    for day in sorted(set(days)):
        count = min(days.count(day), len(STARTS))
        for hour, minute in sorted(rng.sample(STARTS, count)):
            slots.append(
                START + timedelta(days=day, hours=hour, minutes=minute + rng.randint(0, 25))
            )
    while len(slots) < total:  # a day drawn more often than it has start times
        slots.append(slots[-1] + timedelta(hours=2))
    slots.sort()
    planned: list[dict[str, Any]] = []
    counters: dict[str, int] = {}
    for when in slots[:total]:
        names = sorted(n for n, q in queues.items() if q)
        name = rng.choices(names, weights=[len(queues[n]) for n in names])[0]
        item = dict(queues[name].pop(0))
        counters[name] = counters.get(name, 0) + 1
        item["session_id"] = str(uuid.uuid5(NAMESPACE, f"{seed}:{name}:{counters[name]}"))
        item["start_ms"] = int(when.timestamp() * 1000)
        planned.append(item)
    return planned


def _weight(day: int) -> float:
    return DAY_WEIGHTS[(START + timedelta(days=day)).weekday()]
