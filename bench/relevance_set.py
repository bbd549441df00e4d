"""A labelled relevance set for ``bench/relevance.py``: observations, queries, relevant ids.

50 hand-written *target* observations; 49 have a paraphrased query that shares no stemmed
term with them (the case BM25 cannot answer; ``bench/relevance.py`` checks it every run) and
23 a keyword query; plus 450 generated distractors, some deliberately close to a target in
vocabulary (same components, other problems) so keyword queries have competition.
Deterministic: the same list every run.

``TARGETS[i]`` is stored first, so its observation id is ``i + 1`` in a fresh store.
"""

# ruff: noqa: E501  (a data file: one observation per entry reads better than wrapped strings)
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    type: str
    title: str
    narrative: str
    facts: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    paraphrase: str = ""
    keyword: str = ""


T = Item
TARGETS: list[Item] = [
    T(
        "bugfix",
        "Stripe webhook retries caused duplicate refunds",
        "Stripe re-delivered refund.created webhooks after our handler timed out, so refunds were issued twice. Added idempotency keys stored per event id.",
        ["idempotency key per webhook event id", "handler timeout was 10s"],
        ["stripe", "idempotency"],
        "a buyer was reimbursed on two separate occasions",
        "duplicate refund webhook",
    ),
    T(
        "feature",
        "Theme follows prefers-color-scheme",
        "The UI now switches to the dark palette when the OS asks for it, with a manual override saved in localStorage.",
        ["CSS variables per palette"],
        ["css", "theming"],
        "dim look for the interface based on the operating system choice",
        "",
    ),
    T(
        "bugfix",
        "Pillow images not closed in thumbnail worker",
        "The thumbnail worker opened Pillow images without closing them; RSS grew to 3 GB over a day. Wrapped in context managers.",
        ["RSS 3 GB after 24h"],
        ["pillow", "resource-leak"],
        "process kept using more and more RAM until it crashed",
        "thumbnail worker pillow leak",
    ),
    T(
        "bugfix",
        "test_invoice_dates failed after midnight UTC",
        "The invoice date test compared local date to UTC date; froze the clock with freezegun.",
        ["freezegun freeze_time"],
        ["testing", "timezones"],
        "check that only breaks late in the evening",
        "",
    ),
    T(
        "change",
        "Composite index on orders(customer_id, created_at)",
        "Dashboard load went from 4 s to 80 ms after adding a composite index; EXPLAIN showed a full scan before.",
        ["4 s to 80 ms"],
        ["postgres", "indexing"],
        "the admin overview took ages to appear",
        "orders composite index dashboard",
    ),
    T(
        "bugfix",
        "Access tokens expired mid-upload",
        "JWT access tokens lived 5 minutes; multi-part uploads outlived them and failed with 401. Added refresh token rotation.",
        ["401 during multipart"],
        ["auth", "jwt"],
        "people got signed out while sending big files",
        "",
    ),
    T(
        "bugfix",
        "429 from GitHub API during sync",
        "The repository sync hit GitHub's secondary rate limit. Added exponential backoff with jitter and honoured Retry-After.",
        ["Retry-After header"],
        ["github", "rate-limit"],
        "third party service told us we were calling too often",
        "github rate limit backoff",
    ),
    T(
        "refactor",
        "Multi-stage Docker build",
        "Multi-stage build with a slim runtime stage cut the image from 1.2 GB to 180 MB.",
        ["1.2 GB to 180 MB"],
        ["docker"],
        "our shipping container was huge, made it much smaller",
        "",
    ),
    T(
        "bugfix",
        "Deadlock between account transfers",
        "Two transactions updated accounts rows in opposite order and deadlocked. Now locks are taken sorted by account id.",
        ["SELECT ... FOR UPDATE ordered by id"],
        ["postgres", "deadlock"],
        "jobs in the DB stuck waiting on each other forever",
        "deadlock accounts transactions",
    ),
    T(
        "bugfix",
        "Excel exports mangled accents",
        "Exports opened in Excel showed mojibake for accented names; now written as UTF-8 with a BOM.",
        ["utf-8-sig"],
        ["csv", "encoding"],
        "spreadsheet displayed garbage glyphs for people called José",
        "",
    ),
    T(
        "feature",
        "LaunchDarkly flag gates the new checkout",
        "The new checkout is behind a LaunchDarkly flag rolled out to 10% of accounts.",
        ["10% rollout"],
        ["feature-flags"],
        "turn the redesigned payment page on for some users only",
        "launchdarkly checkout flag",
    ),
    T(
        "bugfix",
        "SES bounces were never processed",
        "The SNS subscription for SES bounce notifications was never confirmed, so hard bounces kept being mailed.",
        ["SNS subscription pending"],
        ["email", "aws"],
        "letters to clients silently went undelivered",
        "",
    ),
    T(
        "security_alert",
        "AWS key committed in .env.example",
        "A live AWS access key was in .env.example. Rotated it and added a gitleaks pre-commit hook.",
        ["gitleaks"],
        ["secrets"],
        "credentials accidentally pushed to version control",
        "aws key committed gitleaks",
    ),
    T(
        "bugfix",
        "Vite dev server blocked by CORS",
        "The frontend on port 5173 was blocked by CORS; added it to the allowed origins in development.",
        ["port 5173"],
        ["cors", "vite"],
        "browser refused requests to our backend from the local UI",
        "",
    ),
    T(
        "bugfix",
        "Timestamps shown in UTC",
        "Dates were rendered in UTC; now formatted with Intl.DateTimeFormat in the user's locale.",
        ["Intl.DateTimeFormat"],
        ["i18n", "timezones"],
        "clock readings on screen were hours off for people abroad",
        "",
    ),
    T(
        "bugfix",
        "Offset pagination skipped rows",
        "When new items were inserted, OFFSET pagination skipped rows; switched to keyset cursors on (created_at, id).",
        ["keyset cursor"],
        ["pagination"],
        "scrolling the list missed some entries",
        "offset pagination keyset cursor",
    ),
    T(
        "bugfix",
        "N+1 queries on the posts feed",
        "The ORM loaded each post's author separately; select_related cut 300 queries to 2.",
        ["300 queries to 2"],
        ["orm", "performance"],
        "hundreds of tiny round trips to the database for a single screen",
        "",
    ),
    T(
        "bugfix",
        "Redis kept stale prices after admin edit",
        "The price cache in Redis was not invalidated on save; the key is now deleted in the post-save signal.",
        ["post_save signal"],
        ["redis", "caching"],
        "old amounts still displayed after changing them",
        "redis stale price cache",
    ),
    T(
        "bugfix",
        "nginx client_max_body_size rejected videos",
        "Uploads over 1 MB got 413 from nginx; raised client_max_body_size to 500m for the media route.",
        ["413 Request Entity Too Large"],
        ["nginx", "uploads"],
        "big movie clips could not be sent to the server",
        "",
    ),
    T(
        "feature",
        "Trigram similarity for product search",
        "Product search uses pg_trgm similarity so misspelt names still match.",
        ["pg_trgm"],
        ["search", "postgres"],
        "find items even when someone types it incorrectly",
        "trigram product search",
    ),
    T(
        "security_note",
        "Logs contained email addresses",
        "Request logs included email addresses; a logging filter now redacts them.",
        ["logging.Filter"],
        ["privacy", "logging"],
        "personal data ending up in diagnostic output",
        "",
    ),
    T(
        "bugfix",
        "Two replicas ran the nightly report",
        "Both replicas ran the report job at 02:00; a Postgres advisory lock now lets one run.",
        ["pg_try_advisory_lock"],
        ["cron", "locking"],
        "scheduled task executed twice each evening",
        "nightly report advisory lock",
    ),
    T(
        "bugfix",
        "Websocket dropped behind load balancer",
        "The ALB idle timeout of 60s closed quiet sockets; a heartbeat ping every 25s keeps them open.",
        ["ALB idle timeout 60s"],
        ["websocket"],
        "live updates silently stopped after a minute",
        "",
    ),
    T(
        "change",
        "Passwords migrated from SHA1 to argon2id",
        "Password hashes moved to argon2id; old SHA1 hashes are upgraded at next login.",
        ["rehash on login"],
        ["security", "hashing"],
        "stronger storage of user secrets",
        "sha1 argon2id password hashes",
    ),
    T(
        "bugfix",
        "Russian plural forms wrong",
        "Plural forms were wrong in Russian; switched messages to ICU MessageFormat.",
        ["ICU MessageFormat"],
        ["i18n"],
        "translated counts read incorrectly in some languages",
        "",
    ),
    T(
        "bugfix",
        "Orders table overflowed on iPhone",
        "The orders table overflowed on iPhone; below 640px it now renders as stacked cards.",
        ["breakpoint 640px"],
        ["css", "responsive"],
        "page broken on small handheld screens",
        "orders table iphone overflow",
    ),
    T(
        "change",
        "Pip cache in GitHub Actions",
        "Caching pip in GitHub Actions cut CI from 9 to 3 minutes.",
        ["actions/cache"],
        ["ci"],
        "pipeline got faster by reusing downloaded packages",
        "",
    ),
    T(
        "bugfix",
        "Float rounding errors in invoice totals",
        "Totals used floats and drifted; amounts are now Decimal and stored as integer cents.",
        ["integer cents"],
        ["money"],
        "sums were off by a penny",
        "float rounding invoice totals decimal",
    ),
    T(
        "bugfix",
        "Icon buttons lacked aria-label",
        "Icon-only buttons had no aria-label, so screen readers said just 'button'.",
        ["aria-label"],
        ["a11y"],
        "blind users could not tell what controls do",
        "",
    ),
    T(
        "bugfix",
        "SIGTERM killed in-flight requests on deploy",
        "Rolling deploys sent SIGTERM and killed in-flight requests; set timeout_graceful_shutdown to 30.",
        ["timeout_graceful_shutdown"],
        ["deploy"],
        "releases interrupted work that was still running",
        "sigterm graceful shutdown deploy",
    ),
    T(
        "bugfix",
        "Thundering herd after outage",
        "After the outage all clients reconnected at once; reconnection now waits a random delay.",
        ["random delay up to 30s"],
        ["resilience"],
        "everyone hammering the server at the same moment after recovery",
        "",
    ),
    T(
        "change",
        "loading=lazy on gallery images",
        "Lazy loading gallery images cut the initial page weight by 70%.",
        ["70% less"],
        ["performance", "images"],
        "pictures only fetched when scrolled into view",
        "lazy loading gallery images",
    ),
    T(
        "bugfix",
        "ALTER TABLE on 40M rows locked writes",
        "A migration's ALTER TABLE locked writes for 12 minutes; now using pt-online-schema-change.",
        ["12 minutes"],
        ["mysql", "migrations"],
        "restructuring a huge relation froze the app",
        "",
    ),
    T(
        "security_alert",
        "Session id not rotated after login",
        "The session id survived login, allowing session fixation; it is regenerated on authentication.",
        ["regenerate on login"],
        ["sessions"],
        "attacker could reuse a cookie from before sign-in",
        "session fixation login",
    ),
    T(
        "bugfix",
        "03/04 parsed as March instead of April",
        "The importer parsed 03/04 as March 4th for European files; imports now require ISO dates.",
        ["ISO 8601 only"],
        ["dates"],
        "day and month swapped when reading uploaded sheets",
        "",
    ),
    T(
        "security_note",
        "GraphQL query depth limited to 8",
        "Nested GraphQL queries could exhaust the server; a max depth of 8 is enforced.",
        ["max depth 8"],
        ["graphql"],
        "deeply recursive requests could overwhelm the API",
        "graphql depth limit",
    ),
    T(
        "feature",
        "CSV export of invoices",
        "Invoices can be exported as CSV from the billing page.",
        ["streamed response"],
        ["export"],
        "grab our payment records as a spreadsheet file",
        "",
    ),
    T(
        "refactor",
        "Split the 2,000-line utils.py",
        "The 2,000-line utils.py became six modules named for their jobs.",
        ["six modules"],
        ["structure"],
        "broke up a giant grab-bag source file",
        "split utils.py modules",
    ),
    T(
        "decision",
        "SQLite over Postgres for the local-first app",
        "Chose SQLite: one file, no server, WAL for concurrent readers.",
        ["WAL"],
        ["architecture"],
        "picked an embedded DB instead of a hosted DB",
        "",
    ),
    T(
        "decision",
        "Celery replaced by RQ",
        "Celery's configuration was too heavy for our needs; moved background jobs to RQ.",
        ["RQ workers"],
        ["queues"],
        "switched task runner library to a simpler one",
        "celery replaced rq",
    ),
    T(
        "discovery",
        "Sandbox sends no SEPA webhooks",
        "The payment provider's sandbox never sends webhooks for SEPA debits; must be simulated.",
        ["simulate in tests"],
        ["payments"],
        "staging environment of the checkout vendor does not notify us about bank transfers",
        "",
    ),
    T(
        "bugfix",
        "Off-by-one in pagination page count",
        "The page count used floor instead of ceil, hiding the last partial page.",
        ["ceil"],
        ["pagination"],
        "",
        "pagination page count off-by-one",
    ),
    T(
        "bugfix",
        "Let's Encrypt renewal failed",
        "Certificate renewal failed because port 80 was blocked; switched to the DNS-01 challenge.",
        ["DNS-01"],
        ["tls"],
        "browsers warned our site was unsafe after ninety days",
        "",
    ),
    T(
        "bugfix",
        "WAL archive filled the disk",
        "archive_command was failing silently, so Postgres WAL filled the disk.",
        ["archive_command"],
        ["postgres", "ops"],
        "machine ran out of storage space",
        "wal filled disk archive_command",
    ),
    T(
        "bugfix",
        "Like counter lost increments",
        "Concurrent likes lost increments; the counter is now updated atomically with n = n + 1.",
        ["atomic update"],
        ["concurrency"],
        "simultaneous clicks went missing when tallying votes",
        "",
    ),
    T(
        "bugfix",
        "Emoji filenames broke S3 signatures",
        "Uploads with emoji names failed the S3 signature; keys are NFC-normalised and percent-encoded.",
        ["NFC"],
        ["s3", "unicode"],
        "attachments with smiley symbols in their titles could not be stored",
        "",
    ),
    T(
        "change",
        "Sentry issues grouped by fingerprint",
        "Sentry alert noise dropped after grouping by a custom fingerprint.",
        ["custom fingerprint"],
        ["monitoring"],
        "too many duplicate error notifications",
        "sentry alert fingerprint",
    ),
    T(
        "feature",
        "Welcome tour with react-joyride",
        "New accounts see a welcome tour built with react-joyride.",
        ["react-joyride"],
        ["onboarding"],
        "guided walkthrough for first-time visitors",
        "",
    ),
    T(
        "decision",
        "Env vars override settings.json",
        "WORKBENCH_* env vars beat settings.json, which beats defaults.",
        ["env > file > defaults"],
        ["config"],
        "shell exported values win over the stored configuration",
        "",
    ),
    T(
        "change",
        "gzip and brotli in nginx",
        "Enabled gzip and brotli in nginx; the JS bundle went from 900 KB to 210 KB.",
        ["900 KB to 210 KB"],
        ["nginx", "performance"],
        "made the scripts sent to browsers much lighter over the wire",
        "",
    ),
]

# ----- distractors ----------------------------------------------------------------------------
_COMPONENTS = [
    "checkout page",
    "refund report",
    "webhook signature check",
    "thumbnail cache",
    "invoice PDF",
    "orders API",
    "GitHub sync",
    "Docker compose file",
    "accounts service",
    "CSV importer",
    "feature flag client",
    "email templates",
    "pre-commit config",
    "CORS middleware",
    "date picker",
    "pagination widget",
    "posts feed",
    "Redis session store",
    "nginx config",
    "product search index",
    "request logger",
    "report scheduler",
    "websocket gateway",
    "password reset flow",
    "translation files",
    "orders table",
    "CI workflow",
    "money helpers",
    "button component",
    "deploy script",
    "reconnect logic",
    "gallery page",
    "migration runner",
    "login form",
    "spreadsheet parser",
    "GraphQL schema",
    "billing page",
    "utils module",
    "SQLite adapter",
    "job queue",
    "payment sandbox",
    "TLS config",
    "disk monitor",
    "like button",
    "S3 uploader",
    "Sentry setup",
    "onboarding screen",
    "settings loader",
    "asset bundler",
]
_ACTIONS = [
    (
        "refactor",
        "Renamed {c} internals",
        "Renamed functions in the {c} for clarity; no behaviour change.",
    ),
    (
        "change",
        "Upgraded dependencies of the {c}",
        "Bumped library versions used by the {c} and fixed deprecation warnings.",
    ),
    (
        "feature",
        "Added tests for the {c}",
        "Wrote unit tests covering the {c} happy path and two edge cases.",
    ),
    (
        "discovery",
        "Read how the {c} is wired",
        "Traced the {c} from entry point to storage to understand its data flow.",
    ),
    ("change", "Documented the {c}", "Added docstrings and a README section describing the {c}."),
    ("bugfix", "Fixed a typo in the {c}", "A misspelt label in the {c} was corrected."),
    (
        "feature",
        "Metrics for the {c}",
        "The {c} now exports Prometheus counters for calls and errors.",
    ),
    (
        "change",
        "Moved the {c} behind an interface",
        "Introduced a small protocol so the {c} can be swapped in tests.",
    ),
    ("refactor", "Type hints in the {c}", "Added type hints to the {c}; mypy strict passes."),
    (
        "bugfix",
        "Fixed a flaky test of the {c}",
        "A test of the {c} depended on dict ordering; inputs are sorted now.",
    ),
    ("change", "Debug logging in the {c}", "The {c} now logs each call at debug level."),
]


def distractors(count: int = 450, seed: int = 7) -> list[Item]:
    """``count`` plausible, unrelated observations (deterministic)."""
    combos = list(itertools.product(_COMPONENTS, _ACTIONS))
    random.Random(seed).shuffle(combos)
    out = []
    for component, (kind, title, narrative) in combos[:count]:
        out.append(
            Item(
                kind,
                title.format(c=component),
                narrative.format(c=component),
                [f"touched the {component}"],
                [component.split()[0].lower()],
            )
        )
    return out


def queries() -> list[tuple[str, str, int]]:
    """``(kind, query, relevant observation id)`` with ids as stored by ``observations()``."""
    out = []
    for number, item in enumerate(TARGETS, start=1):
        if item.paraphrase:
            out.append(("paraphrase", item.paraphrase, number))
        if item.keyword:
            out.append(("keyword", item.keyword, number))
    return out


def observations(distractor_count: int = 450) -> list[Item]:
    """Targets first (ids 1..50 in a fresh store), then the distractors."""
    return [*TARGETS, *distractors(distractor_count)]
