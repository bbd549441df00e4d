"""A labelled relevance set: 48 realistic observations in 3 projects, and questions about them.

Each question lists the labels of the observations that answer it; ``seed(store)`` writes the
set through the store layer and returns ``label -> id``. Distractors share words with the
answers on purpose ("refund policy copy", "retry button styling"), so a ranker that matches
words without weighing them fails. Shared by the search tests and by anything that measures
relevance (vector and hybrid rankers, ``bench/relevance.py``).

Times: every record is on a fixed day in November 2026 (UTC), so date filters are exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.clock import ms_from_iso
from workbench.models import ObservationDraft, SummaryDraft
from workbench.store import observations, sessions, summaries
from workbench.store.connection import atomic
from workbench.store.database import Store

PROJECTS = ("payments-api", "webapp", "infra")
ROOTS = {
    "payments-api": "/home/dev/src/payments-api",
    "webapp": "/home/dev/src/webapp",
    "infra": "/home/dev/src/infra",
}
# session -> (project, platform_source, day of November 2026)
SESSIONS = {
    "pay-1": ("payments-api", "claude-code", 3),
    "pay-2": ("payments-api", "claude-code", 10),
    "pay-3": ("payments-api", "claude-code", 17),
    "web-1": ("webapp", "claude-code", 4),
    "web-2": ("webapp", "claude-code", 12),
    "web-3": ("webapp", "claude-code", 19),
    "inf-1": ("infra", "cursor", 6),
    "inf-2": ("infra", "cursor", 14),
    "inf-3": ("infra", "claude-code", 21),
}


@dataclass(frozen=True)
class Obs:
    label: str
    session: str
    type: str
    title: str
    narrative: str
    facts: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    read: tuple[str, ...] = ()  # relative to the project root
    modified: tuple[str, ...] = ()
    subtitle: str = ""
    hour: int = 10


OBSERVATIONS: tuple[Obs, ...] = (
    # ---- payments-api ------------------------------------------------------------------
    Obs(
        "refund-idempotency",
        "pay-1",
        "bugfix",
        "Idempotency key stops duplicate refund charges",
        "Customers were refunded twice when the payment provider timed out and the client "
        "retried the POST. The refund handler now requires an Idempotency-Key header and stores "
        "the key with the refund row, so a retried request returns the first result.",
        ("refund handler stores Idempotency-Key", "duplicate POST returns original refund"),
        ("payments", "idempotency", "retries"),
        ("src/refunds/api.py",),
        ("src/refunds/handler.py", "src/refunds/models.py"),
        "refunds charged twice on retry",
        9,
    ),
    Obs(
        "refund-policy-copy",
        "pay-1",
        "change",
        "Refund policy wording in API docs",
        "Updated the refund policy section of the OpenAPI description to say refunds take "
        "five business days.",
        (),
        ("docs",),
        (),
        ("docs/openapi.yaml",),
        hour=11,
    ),
    Obs(
        "webhook-retry",
        "pay-1",
        "feature",
        "Exponential backoff for failed webhook deliveries",
        "Webhook deliveries that fail with 5xx or time out are retried with exponential backoff "
        "(1s, 2s, 4s … up to 1h) and jitter; after 12 attempts the event is parked in the dead "
        "letter table for manual replay.",
        ("max 12 attempts", "dead letter table webhook_dlq"),
        ("webhooks", "retries", "backoff"),
        (),
        ("src/webhooks/deliver.py",),
        hour=13,
    ),
    Obs(
        "invoice-rounding",
        "pay-2",
        "bugfix",
        "Invoice totals off by one cent",
        "Invoice totals summed float line amounts and rounded at the end, giving one-cent "
        "differences against the PDF. Amounts are now Decimal in minor units and rounded per "
        "line with banker's rounding.",
        ("use Decimal minor units", "round half even per line"),
        ("money", "rounding", "invoices"),
        (),
        ("src/invoices/totals.py",),
        hour=9,
    ),
    Obs(
        "currency-table",
        "pay-2",
        "discovery",
        "Currency exponents come from ISO 4217 table",
        "Found that currency minor-unit exponents (JPY 0, USD 2, BHD 3) are loaded from a "
        "vendored ISO 4217 CSV at start-up.",
        (),
        ("money", "currency"),
        ("src/money/currency.py", "data/iso4217.csv"),
        (),
        hour=10,
    ),
    Obs(
        "orders-index",
        "pay-2",
        "refactor",
        "Composite index on orders(customer_id, created_at)",
        "The customer orders listing did a full table scan. Added a composite index on "
        "orders(customer_id, created_at DESC); the query plan now uses the index and p95 dropped "
        "from 840 ms to 12 ms.",
        ("EXPLAIN shows index range scan", "p95 840 ms -> 12 ms"),
        ("database", "performance", "indexes"),
        ("src/orders/queries.py",),
        ("migrations/0042_orders_index.sql",),
        hour=14,
    ),
    Obs(
        "stripe-sdk",
        "pay-2",
        "change",
        "Bump stripe SDK to 11.x",
        "Upgraded the stripe client library; no API changes needed in our wrapper.",
        (),
        ("dependencies",),
        (),
        ("pyproject.toml",),
        hour=15,
    ),
    Obs(
        "rate-limit",
        "pay-3",
        "feature",
        "Token-bucket rate limiting on the public API",
        "Public endpoints are now limited per API key with a token bucket in Redis "
        "(100 requests/minute, burst 20); over-limit calls get 429 with Retry-After.",
        ("429 with Retry-After header", "100 req/min per key"),
        ("api", "rate-limiting", "redis"),
        (),
        ("src/middleware/ratelimit.py",),
        hour=9,
    ),
    Obs(
        "secret-leak",
        "pay-3",
        "security_alert",
        "Live API key committed in test fixture",
        "A live Stripe secret key was found committed in tests/fixtures/stripe.json. The key "
        "was rotated, the fixture replaced with a fake, and gitleaks added to pre-commit.",
        ("key rotated", "gitleaks pre-commit hook"),
        ("secrets", "security"),
        ("tests/fixtures/stripe.json",),
        (".pre-commit-config.yaml",),
        hour=11,
    ),
    Obs(
        "decimal-lint",
        "pay-3",
        "change",
        "Lint rule forbidding float money arithmetic",
        "Added a custom lint that flags float literals multiplied with amount fields.",
        (),
        ("money", "linting"),
        (),
        ("tools/lint_money.py",),
        hour=12,
    ),
    Obs(
        "payout-schedule",
        "pay-3",
        "decision",
        "Payouts run daily at 02:00 UTC",
        "Decided to batch merchant payouts once a day at 02:00 UTC instead of per transaction, "
        "to cut provider fees; urgent payouts stay manual.",
        (),
        ("payouts", "scheduling"),
        (),
        ("src/payouts/schedule.py",),
        hour=15,
    ),
    Obs(
        "retry-button",
        "pay-3",
        "change",
        "Retry button label on payment failure email",
        "Changed the email template's button from 'Try again' to 'Retry payment'.",
        (),
        ("email",),
        (),
        ("templates/payment_failed.html",),
        hour=16,
    ),
    Obs(
        "ledger-migration",
        "pay-1",
        "discovery",
        "Ledger entries are append-only by trigger",
        "The ledger table has a BEFORE UPDATE trigger raising an error, so corrections must be "
        "new compensating entries.",
        (),
        ("database", "ledger"),
        ("migrations/0007_ledger.sql",),
        (),
        hour=15,
    ),
    Obs(
        "pay-healthcheck",
        "pay-1",
        "change",
        "Health endpoint reports provider latency",
        "GET /health now includes the last provider round-trip time.",
        (),
        ("observability",),
        (),
        ("src/health.py",),
        hour=16,
    ),
    Obs(
        "fraud-threshold",
        "pay-2",
        "decision",
        "Fraud score threshold raised to 0.85",
        "Chose 0.85 as the block threshold after reviewing last quarter's false positives.",
        (),
        ("fraud",),
        (),
        ("src/fraud/rules.py",),
        hour=16,
    ),
    Obs(
        "pay-readme",
        "pay-3",
        "change",
        "README setup steps for local Postgres",
        "Documented docker compose up for the local Postgres used by the test suite.",
        (),
        ("docs",),
        (),
        ("README.md",),
        hour=17,
    ),
    # ---- webapp --------------------------------------------------------------------------
    Obs(
        "auth-redirect-loop",
        "web-1",
        "bugfix",
        "Login redirect loop after session expiry",
        "When the session cookie expired the middleware redirected to /login, which redirected "
        "back because a stale refresh token was still accepted. The refresh token is now "
        "cleared on expiry, ending the infinite redirect.",
        ("clear refresh token on expiry",),
        ("auth", "sessions", "cookies"),
        ("src/auth/middleware.ts",),
        ("src/auth/session.ts",),
        hour=9,
    ),
    Obs(
        "samesite-cookie",
        "web-1",
        "change",
        "Session cookie SameSite=Lax",
        "Set SameSite=Lax on the session cookie for the new subdomain.",
        (),
        ("cookies",),
        (),
        ("src/auth/cookies.ts",),
        hour=10,
    ),
    Obs(
        "dark-mode",
        "web-1",
        "feature",
        "Dark mode theme for the settings page",
        "Added a dark colour palette with CSS custom properties and a toggle on the settings "
        "page; the choice persists in localStorage and follows prefers-color-scheme by default.",
        ("CSS variables --bg --fg", "prefers-color-scheme default"),
        ("ui", "theming"),
        (),
        ("src/styles/theme.css", "src/pages/settings.tsx"),
        hour=14,
    ),
    Obs(
        "settings-form",
        "web-1",
        "refactor",
        "Settings form split into sections",
        "Split the settings page form into profile, notifications and billing sections.",
        (),
        ("ui",),
        (),
        ("src/pages/settings.tsx",),
        hour=15,
    ),
    Obs(
        "ws-leak",
        "web-2",
        "bugfix",
        "Memory leak from unclosed WebSocket listeners",
        "Heap snapshots grew by 40 MB an hour: every reconnect added a new message listener to "
        "the WebSocket without removing the old one. Listeners are now removed in the cleanup "
        "of the useEffect hook.",
        ("heap +40 MB/h", "remove listener in cleanup"),
        ("websockets", "memory", "react"),
        ("src/hooks/useLive.ts",),
        ("src/hooks/useLive.ts",),
        hour=9,
    ),
    Obs(
        "bundle-split",
        "web-2",
        "refactor",
        "Route-level code splitting",
        "Lazy-loaded the admin and reports routes; the main bundle went from 1.9 MB to 780 kB.",
        ("main bundle 1.9 MB -> 780 kB",),
        ("performance", "bundling"),
        (),
        ("src/routes.tsx", "vite.config.ts"),
        hour=11,
    ),
    Obs(
        "i18n-plurals",
        "web-2",
        "bugfix",
        "Wrong plural forms in Polish translations",
        "Polish needs three plural categories; switched to Intl.PluralRules.",
        (),
        ("i18n",),
        (),
        ("src/i18n/plural.ts",),
        hour=13,
    ),
    Obs(
        "form-validation",
        "web-2",
        "feature",
        "Inline validation for the signup form",
        "Signup fields validate on blur with zod schemas shared with the API.",
        (),
        ("forms", "validation"),
        (),
        ("src/pages/signup.tsx",),
        hour=14,
    ),
    Obs(
        "csp-header",
        "web-2",
        "security_note",
        "Content-Security-Policy blocks inline scripts",
        "Added a strict CSP with nonces; the analytics snippet moved to an external file.",
        (),
        ("security", "headers"),
        (),
        ("server/headers.ts",),
        hour=15,
    ),
    Obs(
        "e2e-flaky",
        "web-3",
        "bugfix",
        "Flaky end-to-end test timing out in CI",
        "The checkout e2e test timed out about one run in five on CI because it waited a fixed "
        "2 seconds for the payment iframe. It now waits for the iframe's ready event, and the "
        "CI timeout was raised from 30 s to 60 s.",
        ("wait for ready event", "CI timeout 60 s"),
        ("testing", "ci", "flaky-tests"),
        ("e2e/checkout.spec.ts",),
        ("e2e/checkout.spec.ts",),
        hour=9,
    ),
    Obs(
        "storybook",
        "web-3",
        "change",
        "Storybook stories for buttons",
        "Added stories for primary, secondary and danger buttons.",
        (),
        ("ui", "docs"),
        (),
        ("src/components/Button.stories.tsx",),
        hour=10,
    ),
    Obs(
        "avatar-upload",
        "web-3",
        "feature",
        "Avatar upload with client-side resize",
        "Images are resized to 256 px in a canvas before upload.",
        (),
        ("uploads",),
        (),
        ("src/components/Avatar.tsx",),
        hour=11,
    ),
    Obs(
        "api-client",
        "web-3",
        "refactor",
        "Typed API client generated from OpenAPI",
        "Replaced hand-written fetch calls with a client generated from openapi.yaml.",
        (),
        ("api", "codegen"),
        (),
        ("src/api/client.ts",),
        hour=13,
    ),
    Obs(
        "web-retry-fetch",
        "web-3",
        "change",
        "Fetch wrapper retries idempotent GETs once",
        "GET requests are retried once on network error; POSTs never are.",
        (),
        ("retries", "network"),
        (),
        ("src/api/fetch.ts",),
        hour=14,
    ),
    Obs(
        "timezone-display",
        "web-1",
        "bugfix",
        "Dates shown in server timezone",
        "Order dates rendered in UTC; now formatted with the browser's timezone.",
        (),
        ("dates",),
        (),
        ("src/utils/format.ts",),
        hour=16,
    ),
    Obs(
        "web-eslint",
        "web-2",
        "change",
        "ESLint flat config",
        "Migrated to eslint.config.js.",
        (),
        ("linting",),
        (),
        ("eslint.config.js",),
        hour=16,
    ),
    # ---- infra ---------------------------------------------------------------------------
    Obs(
        "docker-slim",
        "inf-1",
        "refactor",
        "Multi-stage Dockerfile shrinks image size",
        "The API image was 1.4 GB because build tools shipped in the final layer. A multi-stage "
        "build with python:3.11-slim as the runtime stage brings it to 180 MB.",
        ("1.4 GB -> 180 MB", "runtime stage python:3.11-slim"),
        ("docker", "containers"),
        (),
        ("Dockerfile",),
        hour=9,
    ),
    Obs(
        "decision-cache",
        "inf-1",
        "decision",
        "SQLite rather than Postgres for the local cache",
        "For the developer-machine cache we chose SQLite in WAL mode over a local Postgres: no "
        "server to run, one file, and readers never block the writer.",
        ("WAL mode", "no server process"),
        ("database", "caching", "sqlite"),
        (),
        ("docs/adr/0003-local-cache.md",),
        hour=11,
    ),
    Obs(
        "terraform-state",
        "inf-1",
        "discovery",
        "Terraform state lives in an S3 bucket with locking",
        "Remote state is in s3://acme-tf-state with a DynamoDB lock table.",
        (),
        ("terraform", "aws"),
        ("infra/main.tf",),
        (),
        hour=13,
    ),
    Obs(
        "k8s-probes",
        "inf-1",
        "change",
        "Readiness probe path set to /health",
        "Changed the deployment readiness probe to GET /health every 10 s.",
        (),
        ("kubernetes",),
        (),
        ("k8s/deployment.yaml",),
        hour=14,
    ),
    Obs(
        "ci-cache",
        "inf-2",
        "refactor",
        "CI caches pip and node_modules between runs",
        "Added actions/cache keyed on lockfile hashes; pipeline time fell from 14 to 6 minutes.",
        ("14 min -> 6 min",),
        ("ci", "caching"),
        (),
        (".github/workflows/ci.yml",),
        hour=9,
    ),
    Obs(
        "log-rotation",
        "inf-2",
        "change",
        "Log rotation for the worker containers",
        "Docker json-file driver now keeps 5 files of 10 MB.",
        (),
        ("logging", "docker"),
        (),
        ("compose.yaml",),
        hour=10,
    ),
    Obs(
        "vault-secrets",
        "inf-2",
        "security_note",
        "Secrets injected from Vault at deploy time",
        "Application secrets are read from Vault by the deploy job and never stored in the "
        "repository or images.",
        (),
        ("secrets", "vault", "security"),
        (),
        ("deploy/secrets.sh",),
        hour=11,
    ),
    Obs(
        "alerting",
        "inf-2",
        "feature",
        "Alert when queue depth stays above 1000",
        "Prometheus rule fires when the jobs queue stays above 1000 for 10 minutes.",
        (),
        ("monitoring", "alerts"),
        (),
        ("monitoring/rules.yml",),
        hour=13,
    ),
    Obs(
        "backup-restore",
        "inf-2",
        "discovery",
        "Nightly database backups tested by restore",
        "A weekly job restores the latest backup into a scratch database and runs checks.",
        (),
        ("backups", "database"),
        ("ops/backup.sh",),
        (),
        hour=14,
    ),
    Obs(
        "nginx-gzip",
        "inf-3",
        "change",
        "Enable gzip for JSON responses in nginx",
        "Added application/json to gzip_types.",
        (),
        ("nginx", "performance"),
        (),
        ("nginx/site.conf",),
        hour=9,
    ),
    Obs(
        "dns-ttl",
        "inf-3",
        "change",
        "Lower DNS TTL before migration",
        "Set the api record TTL to 60 s ahead of the move.",
        (),
        ("dns",),
        (),
        ("infra/dns.tf",),
        hour=10,
    ),
    Obs(
        "oom-worker",
        "inf-3",
        "bugfix",
        "Worker pods OOM-killed during report export",
        "Report export loaded all rows into memory; it now streams in chunks of 5000 and the "
        "memory limit was raised to 1 GiB.",
        ("stream in 5000-row chunks",),
        ("memory", "kubernetes"),
        (),
        ("worker/export.py", "k8s/worker.yaml"),
        hour=11,
    ),
    Obs(
        "cert-renewal",
        "inf-3",
        "change",
        "cert-manager renews TLS certificates",
        "Switched from manual certificates to cert-manager with Let's Encrypt.",
        (),
        ("tls", "kubernetes"),
        (),
        ("k8s/certs.yaml",),
        hour=13,
    ),
    Obs(
        "ssh-hardening",
        "inf-3",
        "security_note",
        "SSH password login disabled",
        "Bastion hosts accept keys only; root login disabled.",
        (),
        ("security", "ssh"),
        (),
        ("ansible/ssh.yml",),
        hour=14,
    ),
    Obs(
        "gpu-nodes",
        "inf-3",
        "decision",
        "No GPU node pool for now",
        "Decided not to add GPU nodes until the ML team has a workload.",
        (),
        ("kubernetes", "capacity"),
        (),
        ("docs/adr/0005-gpu.md",),
        hour=15,
    ),
)

# question -> labels of the observations that answer it
QUERIES: dict[str, tuple[str, ...]] = {
    "why were refunds charged twice": ("refund-idempotency",),
    "how do we retry failed webhooks?": ("webhook-retry",),
    "login keeps redirecting after the session expires": ("auth-redirect-loop",),
    "which database index made the orders query faster": ("orders-index",),
    "dark mode colours on the settings page": ("dark-mode",),
    "the docker image is too big": ("docker-slim",),
    "flaky test timeouts in CI": ("e2e-flaky",),
    "an API key was leaked in the repo": ("secret-leak",),
    "should the local cache use postgres or sqlite": ("decision-cache",),
    "invoice totals have a rounding error": ("invoice-rounding",),
    "memory leak with websocket listeners": ("ws-leak",),
    "rate limiting for the public API": ("rate-limit",),
}


@dataclass
class Seeded:
    ids: dict[str, int] = field(default_factory=dict)  # observation label -> id
    summaries: dict[str, int] = field(default_factory=dict)  # session -> summary id
    prompts: dict[str, int] = field(default_factory=dict)  # session -> prompt id

    def labels(self, ids: list[int]) -> list[str]:
        by_id = {v: k for k, v in self.ids.items()}
        return [by_id.get(i, f"?{i}") for i in ids]


def at(day: int, hour: int, minute: int = 0) -> int:
    return ms_from_iso(f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:00Z")


def seed(store: Store) -> Seeded:
    """Write the whole set (sessions, one prompt and one summary each, the observations)."""
    out = Seeded()
    conn = store.conn
    with atomic(conn):
        for sid, (project, platform, day) in SESSIONS.items():
            session = sessions.ensure(conn, sid, project, platform, at_ms=at(day, 8))
            obs_of = [o for o in OBSERVATIONS if o.session == sid]
            prompt = f"Work on {project}: " + "; ".join(o.title.lower() for o in obs_of[:2])
            _, prompt_id, _ = sessions.record_prompt(conn, session, prompt, at_ms=at(day, 8, 30))
            assert prompt_id is not None
            out.prompts[sid] = prompt_id
            for obs in obs_of:
                root = ROOTS[project]
                draft = ObservationDraft(
                    type=obs.type,
                    title=obs.title,
                    subtitle=obs.subtitle,
                    narrative=obs.narrative,
                    facts=list(obs.facts),
                    concepts=list(obs.concepts),
                    files_read=[f"{root}/{p}" for p in obs.read],
                    files_modified=[f"{root}/{p}" for p in obs.modified],
                )
                oid, created = observations.insert(
                    conn,
                    draft,
                    content_session_id=sid,
                    project=project,
                    prompt_number=1,
                    created_ms=at(day, obs.hour),
                )
                assert created
                out.ids[obs.label] = oid
            out.summaries[sid] = summaries.upsert(
                conn,
                SummaryDraft(
                    request=prompt,
                    completed="; ".join(o.title for o in obs_of),
                    learned=obs_of[0].narrative[:200],
                ),
                content_session_id=sid,
                project=project,
                prompt_number=1,
                created_ms=at(day, 18),
            )
    return out
