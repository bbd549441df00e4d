"""A second relevance set: long multi-session conversations, one memory per turn (issue 10).

The coding-history set (``bench/relevance_set.py``) asks about one observation at a time. This
one is shaped like the public long-memory benchmarks instead: one person talks with an
assistant over 16 sessions spread across 2026; every turn (theirs and the assistant's) is one
memory, and the questions need

- ``single-hop``: one turn, asked with some of its words;
- ``multi-hop``: two or three turns, usually from different sessions (the question names what
  one turn says and asks what another says);
- ``temporal``: when something happened, or what came first (the evidence turns; their
  session dates carry the answer);
- ``paraphrase``: one turn, asked without any of its (stemmed) words.

Everything is generated from templates and a seeded ``random.Random``: names, places and the
order of the small talk change with ``seed``, the shape does not, and the same seed gives the
same list every run (no network, no model). Hard parts on purpose: the assistant's replies
echo the user's topic words without the answer, and near-miss turns (a colleague's beagle, a
cousin's marathon) share vocabulary with the evidence.

``build(seed)`` returns the turns in storage order and the questions with their evidence as
indexes into that list; ``bench/relevance.py`` stores them and maps indexes to ids.
"""

# ruff: noqa: E501  (a data file: one turn or question per line reads better than wrapped strings)
from __future__ import annotations

import random
from dataclasses import dataclass, field

from workbench.clock import ms_from_iso

CLASSES = ("single-hop", "multi-hop", "temporal", "paraphrase")
SESSIONS = 16
DAY_MS = 86_400_000
FIRST_DAY = "2026-01-05"  # session n is on FIRST_DAY + 12·n days, at 19:00 UTC


@dataclass(frozen=True)
class Turn:
    session: int  # 0-based
    speaker: str  # "user" | "assistant"
    text: str


@dataclass(frozen=True)
class Question:
    cls: str  # one of CLASSES
    text: str
    evidence: tuple[int, ...]  # indexes into Conversation.turns


@dataclass
class Conversation:
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def session_ms(self, session: int) -> int:
        return ms_from_iso(f"{FIRST_DAY}T19:00:00Z") + session * 12 * DAY_MS


# ----- slot pools (each value used once per build) ---------------------------------------------
_POOLS: dict[str, list[str]] = {
    "pet": ["Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Clover"],
    "vet": ["Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka"],
    "teacher": ["Ingrid", "Tomasz", "Amara", "Rafael", "Yelena"],
    "company": ["Northwind Analytics", "Bluefin Logistics", "Quarry Labs", "Helio Grid"],
    "manager": ["Priya", "Declan", "Mireille", "Kwame", "Soren"],
    "race_city": ["Valencia", "Porto", "Lisbon", "Seville"],
    "sister": ["Hannah", "Lucia", "Freya", "Noor", "Ottilie"],
    "wedding_city": ["Dubrovnik", "Edinburgh", "Bruges", "Ljubljana"],
    "nut": ["cashews", "pine nuts", "hazelnuts", "pistachios"],
    "district": ["Riverside", "Old Market", "Hillcrest", "Canal Quarter"],
    "neighbour": ["Beatrix", "Cormac", "Delphine", "Emeka", "Fenna"],
    "book": ["The Glass Orchard", "A Map of Salt", "Winter Lighthouse", "The Quiet Ferry"],
    "book2": ["Paper Moons", "The Last Cartographer", "Ember Street", "North of Nowhere"],
    "car": ["Skoda Octavia", "Toyota Auris", "Volvo V40", "Mazda 3"],
    "country": ["Mexico", "Argentina", "Peru", "Colombia"],
    "dish": ["saffron rice pudding", "plum dumplings", "apricot tart", "honey cake"],
    "partner": ["Sam", "Robin", "Alex", "Jordan", "Morgan"],
    "colleague": ["Gwen", "Ivo", "Petra", "Anselm", "Rosalind"],
    "cousin": ["Mateo", "Ilse", "Jonah", "Kasia"],
}


@dataclass
class _Thread:
    turns: list[tuple[int, str, str]]  # (session, speaker, text)
    # (class, text, evidence): a turn index of this thread, or (thread, turn) for another one
    questions: list[tuple[str, str, tuple[int | tuple[int, int], ...]]]


def _threads(v: dict[str, str]) -> list[_Thread]:
    """The facts of the conversation and the questions about them (``v``: the slot values)."""
    U, A = "user", "assistant"
    return [
        _Thread(
            [
                (
                    1,
                    U,
                    f"We finally adopted a beagle puppy from the shelter and named her {v['pet']}.",
                ),
                (
                    1,
                    A,
                    "Congratulations on the new puppy! Beagles are curious and need plenty of long walks.",
                ),
                (
                    6,
                    U,
                    f"Took {v['pet']} to the vet, Dr. {v['vet']}, for her vaccinations and she was very brave.",
                ),
                (
                    6,
                    A,
                    "Glad the vaccinations went smoothly. Puppies often sleep a lot after a vet visit.",
                ),
            ],
            [
                (
                    "single-hop",
                    "What did we name the beagle puppy we adopted from the shelter?",
                    (0,),
                ),
                (
                    "paraphrase",
                    "What is the young hound we brought home from the rescue centre called?",
                    (0,),
                ),
                ("multi-hop", "Which doctor treats our beagle?", (0, 2)),
                ("temporal", "When did we adopt the puppy?", (0,)),
            ],
        ),
        _Thread(
            [
                (2, U, f"I signed up for cello lessons; my teacher is called {v['teacher']}."),
                (2, A, "How exciting! The cello is a wonderful instrument to start as an adult."),
                (
                    9,
                    U,
                    "My recital piece is the prelude from the first Bach suite and I am nervous about it.",
                ),
                (
                    9,
                    A,
                    "Nerves are normal before a recital. Practising in front of a friend can help.",
                ),
            ],
            [
                ("single-hop", "Who is my cello teacher?", (0,)),
                (
                    "paraphrase",
                    "Which instructor shows me how to play the big bowed string instrument?",
                    (0,),
                ),
                (
                    "multi-hop",
                    f"What will I perform for {v['teacher']}'s students on stage?",
                    (0, 2),
                ),
                (
                    "temporal",
                    "Did I start cello lessons before or after adopting the beagle?",
                    (0, (0, 0)),
                ),  # (thread, turn): the beagle thread
            ],
        ),
        _Thread(
            [
                (
                    3,
                    U,
                    f"I accepted an offer from {v['company']} as a data engineer and I start next month.",
                ),
                (3, A, "Congratulations on the offer! Data engineering is in high demand."),
                (
                    5,
                    U,
                    f"First week at the new job went well; my manager {v['manager']} is very supportive.",
                ),
                (12, U, "I got promoted to senior data engineer today!"),
                (12, A, "That is fantastic news, well deserved after all that hard work."),
            ],
            [
                ("single-hop", "Which company offered me the data engineer position?", (0,)),
                ("paraphrase", "Who employs me these days?", (0,)),
                ("multi-hop", f"Who is my boss at {v['company']}?", (0, 2)),
                ("temporal", "When was I promoted to a senior role?", (3,)),
                ("temporal", "How long after accepting the offer did I get promoted?", (0, 3)),
            ],
        ),
        _Thread(
            [
                (2, U, f"Started training for the {v['race_city']} half marathon in the autumn."),
                (
                    2,
                    A,
                    "A half marathon is a great goal. Build up your distance slowly to avoid injury.",
                ),
                (7, U, "Ran 15 km this morning without stopping and my knee felt fine."),
                (13, U, f"Finished the {v['race_city']} half marathon in 1:52, a personal best!"),
                (13, A, "Amazing result! Make sure you rest and stretch this week."),
            ],
            [
                ("single-hop", "What was my finishing time in the half marathon?", (3,)),
                ("paraphrase", "How quickly did I complete that long race?", (3,)),
                (
                    "multi-hop",
                    "How did the race I was training for in the autumn turn out?",
                    (0, 3),
                ),
                ("temporal", "When did I first manage 15 km without stopping?", (2,)),
            ],
        ),
        _Thread(
            [
                (
                    4,
                    U,
                    f"My sister {v['sister']} is getting married in {v['wedding_city']} next summer.",
                ),
                (
                    4,
                    A,
                    "How lovely! Summer weddings abroad are special. Are you part of the wedding party?",
                ),
                (10, U, f"Booked our flights to {v['wedding_city']} for the wedding."),
                (14, U, "The wedding was beautiful; I gave a speech and cried halfway through."),
                (14, A, "That sounds like a moving speech. Your sister must have been touched."),
            ],
            [
                ("single-hop", "Where is my sister getting married?", (0,)),
                ("paraphrase", "In which town will my sibling tie the knot?", (0,)),
                ("multi-hop", f"What did I do at {v['sister']}'s ceremony?", (0, 3)),
                ("temporal", "When did we book the flights for the wedding?", (2,)),
            ],
        ),
        _Thread(
            [
                (
                    5,
                    U,
                    f"The allergist confirmed I am allergic to {v['nut']}, so no more pesto for me.",
                ),
                (
                    5,
                    A,
                    "Good to know for sure. Always check labels, since nuts hide in many sauces.",
                ),
            ],
            [
                ("single-hop", "What did the allergist say I am allergic to?", (0,)),
                ("paraphrase", "Which food makes me ill according to the specialist?", (0,)),
            ],
        ),
        _Thread(
            [
                (6, U, f"We are moving to a flat in {v['district']} with a small balcony."),
                (8, U, "Moving day was chaos and the sofa did not fit through the door."),
                (11, U, "Planted tomatoes and basil on the balcony this weekend."),
                (11, A, "Tomatoes and basil grow well together. Water them in the evening."),
            ],
            [
                ("single-hop", "What did I plant on the balcony?", (2,)),
                ("paraphrase", "Which vegetables and herbs am I growing outside?", (2,)),
                ("multi-hop", f"What am I growing at the place in {v['district']}?", (0, 2)),
                ("temporal", "When did we move house?", (1,)),
            ],
        ),
        _Thread(
            [
                (
                    3,
                    U,
                    f"Joined a book club run by my neighbour {v['neighbour']}; the first pick is {v['book']}.",
                ),
                (
                    3,
                    A,
                    "Book clubs are a great way to read things you would never choose yourself.",
                ),
                (10, U, f"The book club argued for an hour about the ending of {v['book2']}."),
            ],
            [
                ("single-hop", "What was the first pick of the book club?", (0,)),
                ("paraphrase", "Which novel did the reading group choose at the start?", (0,)),
                ("multi-hop", f"Who runs the club that discussed {v['book2']}?", (0, 2)),
            ],
        ),
        _Thread(
            [
                (8, U, f"Our old car failed its inspection, so we bought a used {v['car']}."),
                (8, A, "A used car can be good value. Did you get a service history with it?"),
                (15, U, f"The {v['car']} needed new brakes, which cost 400 euros."),
            ],
            [
                ("single-hop", "Which car did we buy after the old one failed inspection?", (0,)),
                (
                    "paraphrase",
                    "What vehicle replaced the one that did not pass the yearly check?",
                    (0,),
                ),
                ("multi-hop", "What repair did our replacement car need?", (0, 2)),
                ("temporal", "When did we replace the old car?", (0,)),
            ],
        ),
        _Thread(
            [
                (1, U, f"I want to learn Spanish before the trip to {v['country']}."),
                (
                    4,
                    U,
                    "I am using a language app for 20 minutes every day and I am on a 30-day streak.",
                ),
                (
                    11,
                    U,
                    f"Had my first real conversation in Spanish with a waiter in {v['country']}!",
                ),
                (11, A, "That is a milestone! Speaking with locals is the best practice."),
            ],
            [
                ("single-hop", "Where did I have my first conversation in Spanish?", (2,)),
                (
                    "paraphrase",
                    "Which nation was I travelling to when I studied the foreign tongue?",
                    (0,),
                ),
                (
                    "temporal",
                    "How long before the trip had I been practising with the app?",
                    (1, 2),
                ),
                ("multi-hop", "Did my daily practice pay off abroad?", (1, 2)),
            ],
        ),
        _Thread(
            [
                (9, U, f"My grandmother's {v['dish']} recipe uses cardamom and orange zest."),
                (9, A, "Cardamom and orange zest sound like a wonderful pairing in a dessert."),
            ],
            [
                ("single-hop", "Which spices go into my grandmother's recipe?", (0,)),
                ("paraphrase", "What flavours does granny put in her family sweet?", (0,)),
            ],
        ),
        _Thread(
            [
                (7, U, "I have been sleeping badly; the doctor suggested no screens after 10 pm."),
                (7, A, "Cutting screens before bed often helps. A regular wake-up time helps too."),
                (12, U, "Since I stopped scrolling at night I fall asleep much faster."),
            ],
            [
                ("single-hop", "What did the doctor suggest for my sleeping problems?", (0,)),
                ("paraphrase", "What advice did the physician give for my insomnia?", (0,)),
                ("multi-hop", "Did the advice about phones before bed work?", (0, 2)),
                ("temporal", "When did I tell you I was sleeping badly?", (0,)),
            ],
        ),
        _Thread(
            [
                (10, U, "My laptop screen cracked, so I sent it for repair under warranty."),
                (12, U, "Got the laptop back with a new screen, the repair was free."),
            ],
            [
                ("single-hop", "What happened to my laptop screen?", (0,)),
                ("paraphrase", "Why was my computer away at the shop?", (0,)),
                ("temporal", "How long was the laptop away for repair?", (0, 1)),
            ],
        ),
        _Thread(
            [
                (12, U, "Volunteered at the food bank on Saturday sorting donations."),
                (12, A, "That is a kind way to spend a Saturday. Food banks always need help."),
            ],
            [
                ("single-hop", "Where did I volunteer on Saturday?", (0,)),
                ("paraphrase", "Where did I help out for charity at the weekend?", (0,)),
            ],
        ),
        _Thread(
            [
                (13, U, f"For {v['partner']}'s birthday I booked a pottery class for two."),
                (
                    13,
                    A,
                    "A pottery class is a thoughtful present, something you can enjoy together.",
                ),
                (15, U, "We made two wonky mugs at the pottery class and loved it."),
            ],
            [
                ("single-hop", f"What did I book for {v['partner']}'s birthday?", (0,)),
                ("paraphrase", "What gift did I arrange for my other half?", (0,)),
                ("multi-hop", f"What did {v['partner']} and I make together as a present?", (0, 2)),
                ("temporal", "When was the pottery class booked?", (0,)),
            ],
        ),
    ]


# ----- distractors -----------------------------------------------------------------------------
def _near_misses(v: dict[str, str]) -> list[tuple[int, str, str]]:
    """Turns that share vocabulary with an answer and are not it."""
    U, A = "user", "assistant"
    return [
        (3, U, f"My colleague {v['colleague']} also has a beagle, an old one who hates the rain."),
        (5, U, f"My cousin {v['cousin']} ran a full marathon last year and swears by ice baths."),
        (7, A, "Many runners find that a rest day every week helps their knees recover."),
        (9, U, "A friend played the violin as a child but gave up when she was twelve."),
        (10, A, "Weddings can be expensive; booking flights early usually helps."),
        (11, U, "The neighbours downstairs grow peppers on their balcony."),
        (14, U, f"{v['colleague']} is adopting a kitten from the same shelter."),
        (6, A, "Moving is one of the most stressful life events, so be kind to yourself."),
        (13, U, "My old laptop still works but the battery only lasts an hour."),
        (15, U, "Another book club in town meets at the library on Tuesdays."),
        (2, U, f"{v['cousin']} is learning Portuguese for work."),
        (4, A, "Allergies can appear in adulthood, so it is worth getting tested."),
        (8, U, "The car park at work is being resurfaced all month."),
        (14, U, "I sent my grandmother a postcard from the trip."),
        (0, U, "New year, new notebook: I want to write down more of what happens."),
        (0, A, "Keeping a journal is a good habit. I am happy to help you remember things."),
    ]


_SMALL_TALK = [
    ("user", "{when} it rained all day so I stayed in and watched a documentary about {topic}."),
    ("assistant", "{lead} What did you find most interesting about {topic}?"),
    ("user", "{when} I cooked a big pot of {food} for the week."),
    ("assistant", "{lead} Batch cooking {food} is a great way to save time on busy evenings."),
    ("user", "{when} work was busy, lots of meetings about {work}."),
    ("assistant", "{lead} Meetings about {work} can be draining. Did you manage a break?"),
    ("user", "{when} I went for a walk by the river and saw {sight}."),
    ("assistant", "{lead} Seeing {sight} on a walk is good for the mind."),
    ("user", "{when} I was thinking about redecorating the hallway in {colour}."),
    ("assistant", "{lead} A hallway in {colour} would be brighter. Have you tried a sample pot?"),
    ("user", "{when} I listened to a podcast about {topic} on the way home."),
    ("user", "{when} I had coffee with an old school friend and we talked about {topic}."),
]
_FILL = {
    "when": [
        "On Monday",
        "On Tuesday",
        "Yesterday",
        "This morning",
        "Last night",
        "Today",
        "At the weekend",
        "On Thursday",
    ],
    "lead": [
        "That sounds cosy.",
        "Nice!",
        "I see.",
        "Oh, interesting.",
        "How lovely.",
        "Good for you.",
    ],
    "topic": [
        "octopuses",
        "medieval castles",
        "deep sea volcanoes",
        "the history of tea",
        "urban foxes",
        "lighthouses",
        "the space station",
        "bees",
        "Roman roads",
        "glaciers",
        "jazz in the fifties",
        "typography",
    ],
    "food": ["lentil soup", "chilli", "vegetable curry", "bolognese", "minestrone", "dal"],
    "work": ["the quarterly plan", "a reorganisation", "the budget", "hiring", "a migration"],
    "sight": ["a heron", "two swans", "a kingfisher", "rowing boats", "a field of poppies"],
    "colour": ["sage green", "terracotta", "pale yellow", "navy blue", "warm grey"],
}
_SMALL_TALK_PER_SESSION = 14


def build(seed: int = 11, small_talk: int = _SMALL_TALK_PER_SESSION) -> Conversation:
    """The whole set for ``seed``: turns in storage order (session by session) and questions.

    ``small_talk`` turns per session pad the facts (fewer make a smaller set for tests).
    """
    rng = random.Random(seed)
    values = {slot: rng.choice(pool) for slot, pool in _POOLS.items()}
    placed: list[tuple[int, float, tuple[str, str], tuple[int, int] | None]] = []
    threads = _threads(values)
    for t, thread in enumerate(threads):
        for k, (session, speaker, text) in enumerate(thread.turns):
            # a thread's turns keep their order inside a session (k breaks ties)
            placed.append((session, k + rng.random() * 0.5, (speaker, text), (t, k)))
    for session, speaker, text in _near_misses(values):
        placed.append((session, rng.random() * 6, (speaker, text), None))
    seen: set[str] = set()
    for session in range(SESSIONS):
        for _ in range(small_talk):
            for _attempt in range(20):
                speaker, template = rng.choice(_SMALL_TALK)
                text = template.format(**{k: rng.choice(o) for k, o in _FILL.items()})
                if text not in seen:  # identical turns would be one memory in the store
                    seen.add(text)
                    placed.append((session, rng.random() * 6, (speaker, text), None))
                    break
    placed.sort(key=lambda p: (p[0], p[1]))
    out = Conversation()
    where: dict[tuple[int, int], int] = {}
    for session, _, (speaker, text), ref in placed:
        if ref is not None:
            where[ref] = len(out.turns)
        out.turns.append(Turn(session, speaker, text))
    for t, thread in enumerate(threads):
        for cls, text, evidence in thread.questions:
            refs = [k if isinstance(k, tuple) else (t, k) for k in evidence]
            out.questions.append(Question(cls, text, tuple(where[r] for r in refs)))
    return out
