"""payments-api: a FastAPI payments service (Postgres, alembic, pytest)."""

# ruff: noqa: E501 (stories are data: prompts and tool output are kept on one line each)

from __future__ import annotations

from typing import Any

from scenarios import routine
from scenarios.kit import (
    Project,
    bash,
    commit,
    edit,
    grep,
    multi_edit,
    plan,
    pytest_out,
    read,
    session,
    task,
    turn,
    web_fetch,
    web_search,
    write,
)

P = Project(
    "payments-api",
    "python",
    {
        "app/main.py": ["create_app", "lifespan", "install_middleware"],
        "app/routes/refunds.py": ["RefundRequest", "refund", "list_refunds"],
        "app/routes/charges.py": ["ChargeRequest", "create_charge", "capture_charge"],
        "app/routes/webhooks.py": ["WebhookEvent", "receive_webhook", "dispatch_event"],
        "app/gateway/client.py": ["GatewayClient", "GatewayTimeout", "backoff_delays"],
        "app/gateway/signing.py": ["SignatureMismatch", "verify_signature", "sign_payload"],
        "app/db/models.py": ["Charge", "Refund", "Payout", "Customer", "LedgerEntry"],
        "app/services/payouts.py": [
            "PayoutBatch",
            "schedule_payouts",
            "next_payout_date",
            "claim_batch",
        ],
        "app/services/ledger.py": ["LedgerError", "post_entry", "balance_for"],
        "app/services/fx.py": ["RateCache", "convert", "rate_for"],
        "tests/test_webhooks.py": [
            "test_signature_valid",
            "test_signature_unicode_payload",
            "test_replay_rejected",
        ],
        "tests/conftest.py": ["client", "db_session", "gateway_stub"],
        "config/staging.env": [],
    },
)
PYTEST = "pytest -q"


def stories() -> list[dict[str, Any]]:
    return [
        routine.tour(
            P,
            "the refund flow",
            "app/routes/refunds.py",
            "GatewayClient",
            ["app/routes/refunds.py", "app/routes/charges.py", "app/services/payouts.py"],
            "A refund is validated by RefundRequest, sent to the gateway through GatewayClient "
            "(three attempts with backoff on GatewayTimeout) and recorded as a Refund row plus a "
            "ledger entry in the same transaction.",
        ),
        *webhook_unicode(),
        *payouts_dst(),
        *ledger_decimal(),
        routine.catch_up(
            P,
            [
                "Represent money as Decimal in the ledger, fx and fees",
                "Schedule payouts in the merchant's zone and store them as UTC",
                "Verify webhook signatures against the raw request body",
            ],
            "Last week: money became Decimal in the ledger, fx and fees (the one-cent drift is gone), "
            "payouts are scheduled in the merchant's zone after the DST double payout, and webhook "
            "signatures are verified on the raw body. The working tree is clean.",
        ),
        *rate_limiting(),
        routine.review(
            P,
            "feat/rate-limit",
            [
                ("app/middleware/ratelimit.py", 142, 0),
                ("app/main.py", 3, 1),
                ("tests/test_ratelimit.py", 41, 0),
            ],
            "Looks good. Two risks: the middleware keys buckets by the raw Authorization header, so "
            "rotating an API key resets its bucket (key by the key id instead), and the Lua script is "
            "sent on every request (register it once with SCRIPT LOAD at startup).",
        ),
        *amount_minor_rename(),
        *payout_locking(),
        *committed_credentials(),
        *flaky_replay_test(),
        *fastapi_upgrade(),
        routine.release(
            P,
            "v2.14.0",
            (PYTEST, pytest_out("tests", passed=218, seconds=9.3)),
            (
                "ruff check . && mypy app",
                "All checks passed!\nSuccess: no issues found in 64 source files\n",
            ),
            [
                "Upgrade to FastAPI 0.115 and pydantic 2.10",
                "Freeze the clock in the webhook replay test",
                "Untrack staging.env and scan for secrets in pre-commit",
                "Claim payout batches with FOR UPDATE SKIP LOCKED",
                "Rename amount_cents to amount_minor",
                "Rate-limit /charges and /refunds per API key",
            ],
        ),
        *dashboard_index(),
    ]


def webhook_unicode() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "webhook signatures and non-ASCII payloads",
            [
                turn(
                    "Webhooks from the gateway sandbox fail signature verification whenever the "
                    "customer name has an umlaut (Müller). Find out why.",
                    [
                        grep(
                            P,
                            "verify_signature",
                            [
                                "app/gateway/signing.py",
                                "app/routes/webhooks.py",
                                "tests/test_webhooks.py",
                            ],
                        ),
                        read(
                            P,
                            "app/gateway/signing.py",
                            "def verify_signature(payload: dict, header: str) -> None:\n    body = json.dumps(payload).encode()\n    expected = hmac.new(SECRET, body, hashlib.sha256).hexdigest()\n    if not hmac.compare_digest(expected, header.split('v1=')[1]):\n        raise SignatureMismatch(header)",
                        ),
                        read(
                            P,
                            "app/routes/webhooks.py",
                            "@router.post('/webhooks/gateway')\nasync def receive_webhook(request: Request):\n    payload = await request.json()\n    verify_signature(payload, request.headers['Gateway-Signature'])\n    return await dispatch_event(WebhookEvent(**payload))",
                        ),
                        bash(
                            f"{PYTEST} tests/test_webhooks.py",
                            pytest_out(
                                "tests/test_webhooks.py",
                                passed=13,
                                failed=[
                                    (
                                        "tests/test_webhooks.py::test_signature_unicode_payload",
                                        "app.gateway.signing.SignatureMismatch: t=1761312000,v1=5f2c9e… does not match the payload",
                                    )
                                ],
                            ),
                            description="Run the webhook tests",
                        ),
                    ],
                    "verify_signature re-serialises the parsed JSON with json.dumps, which escapes non-ASCII "
                    "characters, so the bytes it hashes are not the bytes the gateway signed. Verification "
                    "must use the raw request body. Next: pass `await request.body()` to verify_signature.",
                ),
                turn(
                    "Fix it: verify against the raw body and only parse after the check.",
                    [
                        edit(
                            P,
                            "app/routes/webhooks.py",
                            "    payload = await request.json()\n    verify_signature(payload, request.headers['Gateway-Signature'])",
                            "    raw = await request.body()\n    verify_signature(raw, request.headers['Gateway-Signature'])\n    payload = json.loads(raw)",
                            line=41,
                        ),
                        edit(
                            P,
                            "app/gateway/signing.py",
                            "def verify_signature(payload: dict, header: str) -> None:\n    body = json.dumps(payload).encode()",
                            "def verify_signature(body: bytes, header: str) -> None:",
                            line=18,
                        ),
                        bash(
                            f"{PYTEST} tests/test_webhooks.py",
                            pytest_out("tests/test_webhooks.py", passed=14),
                            description="Run the webhook tests",
                        ),
                        commit(
                            "Verify webhook signatures against the raw request body",
                            2,
                            4,
                            3,
                            branch="fix/webhook-raw-body",
                        ),
                    ],
                    "Signatures are now checked on the raw bytes and the payload is parsed afterwards; all 14 "
                    "webhook tests pass, including the umlaut case.",
                ),
            ],
        )
    ]


def payouts_dst() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "duplicate payouts after the DST change",
            [
                turn(
                    "Finance says two merchants got their weekly payout twice on Monday 27 October. "
                    "Look into schedule_payouts.",
                    [
                        read(
                            P,
                            "app/services/payouts.py",
                            "def next_payout_date(last: datetime) -> datetime:\n    # local wall-clock time, naive\n    return (last + timedelta(days=7)).replace(hour=6, minute=0)",
                        ),
                        grep(
                            P,
                            "next_payout_date",
                            [
                                "app/services/payouts.py",
                                "app/tools/replay_payouts.py",
                                "tests/test_payouts.py",
                            ],
                        ),
                        bash(
                            "psql payments_dev -c \"SELECT merchant_id, scheduled_for, count(*) FROM payouts WHERE scheduled_for::date = '2026-10-27' GROUP BY 1, 2 HAVING count(*) > 1\"",
                            " merchant_id |    scheduled_for    | count\n-------------+---------------------+-------\n        4410 | 2026-10-27 06:00:00 |     2\n        8812 | 2026-10-27 06:00:00 |     2\n(2 rows)\n",
                            description="Find the duplicated payouts",
                        ),
                        bash(
                            f"{PYTEST} tests/test_payouts.py -k dst",
                            pytest_out(
                                "tests/test_payouts.py",
                                passed=0,
                                failed=[
                                    (
                                        "tests/test_payouts.py::test_weekly_payout_across_dst_change",
                                        "AssertionError: assert 2 == 1 (payouts scheduled for merchant 4410 on 2026-10-27)",
                                    )
                                ],
                            ),
                            description="Reproduce with the DST test",
                        ),
                    ],
                    "next_payout_date works on naive local datetimes: when the clocks went back on 26 October "
                    "the 06:00 slot was computed twice, and the 'already scheduled' check compares naive "
                    "timestamps, so a second batch got through. Payout times must be computed in the "
                    "merchant's zone and stored in UTC.",
                ),
                turn(
                    "Make it timezone-aware: compute in the merchant's zone with zoneinfo, store UTC, and add the migration.",
                    [
                        edit(
                            P,
                            "app/services/payouts.py",
                            "    return (last + timedelta(days=7)).replace(hour=6, minute=0)",
                            "    local = last.astimezone(ZoneInfo(merchant.timezone)) + timedelta(days=7)\n    return local.replace(hour=6, minute=0).astimezone(UTC)",
                            line=57,
                        ),
                        edit(
                            P,
                            "app/db/models.py",
                            "    scheduled_for = Column(DateTime, nullable=False)",
                            "    scheduled_for = Column(DateTime(timezone=True), nullable=False)",
                            line=88,
                        ),
                        write(
                            P,
                            "alembic/versions/0012_payouts_scheduled_for_tz.py",
                            '"""payouts.scheduled_for becomes timestamptz (values were Europe/Berlin wall-clock)."""\n\nrevision = "0012"\ndown_revision = "0011"\n\n\ndef upgrade() -> None:\n    op.execute(\n        "ALTER TABLE payouts ALTER COLUMN scheduled_for TYPE timestamptz"\n        " USING scheduled_for AT TIME ZONE \'Europe/Berlin\'"\n    )\n\n\ndef downgrade() -> None:\n    op.execute("ALTER TABLE payouts ALTER COLUMN scheduled_for TYPE timestamp")\n',
                        ),
                        bash(
                            "alembic upgrade head",
                            "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\nINFO  [alembic.runtime.migration] Running upgrade 0011 -> 0012, payouts.scheduled_for becomes timestamptz\n",
                            description="Apply the migration locally",
                        ),
                        bash(
                            f"{PYTEST} tests/test_payouts.py -k dst",
                            pytest_out("tests/test_payouts.py", passed=3),
                            description="Reproduce with the DST test",
                        ),
                        commit(
                            "Schedule payouts in the merchant's zone and store them as UTC",
                            3,
                            31,
                            6,
                            branch="fix/payouts-dst",
                            created=["alembic/versions/0012_payouts_scheduled_for_tz.py"],
                        ),
                    ],
                    "Payout dates are now computed in the merchant's time zone and stored as timestamptz; "
                    "the DST tests pass. Remaining: refund the two duplicated payouts (merchants 4410 and 8812) by hand.",
                ),
            ],
        )
    ]


def ledger_decimal() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "ledger off by one cent",
            [
                turn(
                    "The ledger balance for merchant 8812 is off by 0.01 EUR against the bank statement. Why?",
                    [
                        bash(
                            "python -m app.tools.reconcile --merchant 8812 --month 2026-10",
                            "entries: 317\nledger balance: 10432.17 EUR\nbank statement: 10432.18 EUR\ndifference:     -0.01 EUR\n",
                            description="Reconcile October for merchant 8812",
                        ),
                        read(
                            P,
                            "app/services/ledger.py",
                            "def balance_for(merchant_id: int) -> float:\n    entries = session.scalars(select(LedgerEntry).where(LedgerEntry.merchant_id == merchant_id))\n    return sum(e.amount for e in entries)",
                        ),
                        read(
                            P,
                            "app/services/fx.py",
                            "def convert(amount: float, currency: str, to: str = 'EUR') -> float:\n    return round(amount * rate_for(currency, to), 2)",
                        ),
                    ],
                    "Amounts are floats: fx.convert rounds every converted entry with round(), binary floating "
                    "point that rounds some half-cent cases down, and summing 317 entries drifts by a cent. "
                    "Decision: money becomes Decimal end to end, quantised once per entry with ROUND_HALF_EVEN.",
                ),
                turn(
                    "Agreed. Plan the switch to Decimal for the ledger and fx, then start.",
                    [
                        plan(
                            "# Money as Decimal\n\n- LedgerEntry.amount becomes Numeric(18, 4); no float column left\n- fx.convert takes and returns Decimal, quantised with ROUND_HALF_EVEN\n- balance_for sums Decimals; no float() anywhere in app/services\n- a hypothesis test: convert then sum equals sum then convert within one minor unit"
                        ),
                        multi_edit(
                            P,
                            "app/services/fx.py",
                            [
                                (
                                    "def convert(amount: float, currency: str, to: str = 'EUR') -> float:",
                                    "def convert(amount: Decimal, currency: str, to: str = 'EUR') -> Decimal:",
                                ),
                                (
                                    "    return round(amount * rate_for(currency, to), 2)",
                                    "    return (amount * rate_for(currency, to)).quantize(CENT, ROUND_HALF_EVEN)",
                                ),
                            ],
                        ),
                        edit(
                            P,
                            "app/services/ledger.py",
                            "def balance_for(merchant_id: int) -> float:",
                            "def balance_for(merchant_id: int) -> Decimal:",
                            line=71,
                        ),
                        bash(
                            f"{PYTEST} tests/test_ledger.py",
                            pytest_out(
                                "tests/test_ledger.py",
                                passed=9,
                                failed=[
                                    (
                                        "tests/test_ledger.py::test_balance_matches_statement",
                                        "TypeError: unsupported operand type(s) for +: 'decimal.Decimal' and 'float'",
                                    ),
                                    (
                                        "tests/test_ledger.py::test_fee_entries",
                                        "TypeError: unsupported operand type(s) for *: 'float' and 'decimal.Decimal'",
                                    ),
                                ],
                            ),
                            description="Run the ledger tests",
                        ),
                    ],
                    "fx and the ledger now use Decimal, but two tests still mix in floats from the fee "
                    "calculation. Next: convert fees.py and the test fixtures.",
                ),
            ],
        ),
        session(
            P,
            "ledger Decimal migration, continued",
            [
                turn(
                    "Continue the Decimal migration: the ledger tests still fail on float mixing.",
                    [
                        grep(
                            P,
                            r"float\(",
                            [],
                            path="app/services",
                            lines=[
                                "app/services/fees.py:23:    return float(amount) * FEE_RATE",
                                "app/services/fees.py:31:    minimum = float(settings.min_fee)",
                            ],
                        ),
                        edit(
                            P,
                            "app/services/fees.py",
                            "    return float(amount) * FEE_RATE",
                            "    return (amount * FEE_RATE).quantize(CENT, ROUND_HALF_EVEN)",
                            line=23,
                        ),
                        bash(
                            f"{PYTEST} tests/test_ledger.py",
                            pytest_out("tests/test_ledger.py", passed=11),
                            description="Run the ledger tests",
                        ),
                        bash(
                            "ruff check app/",
                            "app/services/fees.py:4:8: F401 [*] `math` imported but unused\napp/services/fx.py:2:1: I001 [*] Import block is un-sorted or un-formatted\nFound 2 errors.\n[*] 2 fixable with the `--fix` option.\n",
                            description="Lint",
                        ),
                        bash(
                            "ruff check app/ --fix",
                            "Found 2 errors (2 fixed, 0 remaining).\n",
                            description="Fix the lint errors",
                        ),
                        bash(
                            "python -m app.tools.reconcile --merchant 8812 --month 2026-10",
                            "entries: 317\nledger balance: 10432.18 EUR\nbank statement: 10432.18 EUR\ndifference:      0.00 EUR\n",
                            description="Reconcile again",
                        ),
                        commit(
                            "Represent money as Decimal in the ledger, fx and fees",
                            5,
                            64,
                            29,
                            branch="fix/ledger-decimal",
                        ),
                    ],
                    "All 11 ledger tests pass and merchant 8812 reconciles to the cent. The reconcile tool "
                    "should run nightly. Next: add the hypothesis round-trip test from the plan.",
                ),
            ],
        ),
    ]


def rate_limiting() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "rate limiting for the public API",
            [
                turn(
                    "We need rate limiting on the public /charges and /refunds endpoints: 100 requests per "
                    "minute per API key. Plan it first, don't write code yet.",
                    [
                        read(
                            P,
                            "app/main.py",
                            "def create_app() -> FastAPI:\n    app = FastAPI(lifespan=lifespan)\n    install_middleware(app)\n    app.include_router(charges.router)\n    app.include_router(refunds.router)\n    app.include_router(webhooks.router)\n    return app",
                        ),
                        web_search(
                            "starlette middleware rate limit token bucket redis lua",
                            [
                                (
                                    "Rate limiting with Redis: token bucket in a Lua script",
                                    "https://redis.io/learn/develop/dotnet/aspnetcore/rate-limiting/sliding-window",
                                ),
                                (
                                    "slowapi: rate limiting for Starlette and FastAPI",
                                    "https://github.com/laurentS/slowapi",
                                ),
                                (
                                    "RFC 6585: 429 Too Many Requests",
                                    "https://www.rfc-editor.org/rfc/rfc6585#section-4",
                                ),
                            ],
                        ),
                        web_fetch(
                            "https://www.rfc-editor.org/rfc/rfc6585#section-4",
                            "What must a 429 response contain?",
                            "The 429 status code indicates that the user has sent too many requests in a given amount of time. The response representations SHOULD include details explaining the condition, and MAY include a Retry-After header indicating how long to wait before making a new request.",
                        ),
                        plan(
                            "# Rate limiting for /charges and /refunds\n\n- Token bucket per API key, 100 tokens/minute, kept in Redis by one Lua script (atomic refill + take)\n- Answer 429 with Retry-After and an error body naming the limit\n- Webhooks and /healthz are exempt\n- Limits come from Settings per merchant plan (starter 100/min, scale 1000/min)\n- Fail open if Redis is down, and log it"
                        ),
                    ],
                    "Plan accepted: a Redis token bucket per API key in middleware, 429 with Retry-After, "
                    "webhooks exempt, failing open when Redis is unavailable.",
                ),
                turn(
                    "Implement it as planned.",
                    [
                        write(
                            P,
                            "app/middleware/ratelimit.py",
                            '"""Per-API-key token bucket in Redis; fails open when Redis is down."""\n\nfrom __future__ import annotations\n\nREFILL = """\nlocal tokens = tonumber(redis.call(\'GET\', KEYS[1]) or ARGV[1])\n...\n"""\n\n\nclass TokenBucketLimiter:\n    def __init__(self, redis, per_minute: int) -> None:\n        self.redis = redis\n        self.per_minute = per_minute\n\n    async def take(self, key: str) -> float | None:\n        """None when allowed, else seconds to wait."""\n        ...\n\n\nclass RateLimitMiddleware(BaseHTTPMiddleware):\n    async def dispatch(self, request, call_next):\n        ...\n',
                        ),
                        edit(
                            P,
                            "app/main.py",
                            "    install_middleware(app)",
                            "    install_middleware(app)\n    app.add_middleware(RateLimitMiddleware, limiter=TokenBucketLimiter(redis, settings.rate_per_minute))",
                            line=22,
                        ),
                        write(
                            P,
                            "tests/test_ratelimit.py",
                            "def test_101st_request_gets_429(client, api_key): ...\n\ndef test_retry_after_header(client, api_key): ...\n\ndef test_webhooks_are_exempt(client): ...\n\ndef test_fails_open_without_redis(client, broken_redis): ...\n",
                        ),
                        bash(
                            f"{PYTEST} tests/test_ratelimit.py",
                            pytest_out("tests/test_ratelimit.py", passed=6, seconds=2.4),
                            description="Run the rate limit tests",
                        ),
                        commit(
                            "Rate-limit /charges and /refunds per API key",
                            4,
                            187,
                            1,
                            branch="feat/rate-limit",
                            created=["app/middleware/ratelimit.py", "tests/test_ratelimit.py"],
                        ),
                    ],
                    "Rate limiting is in: RateLimitMiddleware with a Redis token bucket, 429 plus Retry-After, "
                    "webhooks exempt. Six tests pass. Next: load-test it against staging Redis.",
                ),
            ],
        )
    ]


def amount_minor_rename() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "amount_cents becomes amount_minor",
            [
                turn(
                    "amount_cents is misleading for JPY (no decimals) and KWD (three). Rename it to "
                    "amount_minor everywhere; no behaviour change.",
                    [
                        grep(
                            P,
                            "amount_cents",
                            [
                                "app/db/models.py",
                                "app/routes/refunds.py",
                                "app/routes/charges.py",
                                "app/services/ledger.py",
                                "app/services/cents.py",
                                "tests/test_refunds.py",
                                "tests/test_charges.py",
                            ],
                        ),
                        edit(
                            P,
                            "app/db/models.py",
                            "    amount_cents = Column(BigInteger, nullable=False)",
                            "    amount_minor = Column(BigInteger, nullable=False)",
                            line=54,
                        ),
                        edit(
                            P,
                            "app/routes/refunds.py",
                            "    return await client.refund(req.charge_id, req.amount_cents)",
                            "    return await client.refund(req.charge_id, req.amount_minor)",
                            line=33,
                        ),
                        edit(
                            P,
                            "app/routes/charges.py",
                            "    charge = Charge(amount_cents=req.amount_cents, currency=req.currency)",
                            "    charge = Charge(amount_minor=req.amount_minor, currency=req.currency)",
                            line=28,
                        ),
                        bash(
                            "git mv app/services/cents.py app/services/minor_units.py",
                            "",
                            description="Rename the helper module",
                        ),
                        bash(
                            f"{PYTEST}",
                            pytest_out("tests", passed=212, seconds=8.9),
                            description="Full test suite",
                        ),
                        commit(
                            "Rename amount_cents to amount_minor",
                            9,
                            41,
                            41,
                            branch="refactor/amount-minor",
                        ),
                    ],
                    "Renamed amount_cents to amount_minor in the models, routes and services, moved cents.py "
                    "to minor_units.py; all 212 tests pass. The API field keeps its old name as an alias "
                    "for one release.",
                ),
            ],
        )
    ]


def payout_locking() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "claiming payout batches safely",
            [
                turn(
                    "Two payout workers can pick the same batch. Should we use advisory locks or SELECT … "
                    "FOR UPDATE SKIP LOCKED? Compare and recommend.",
                    [
                        task(
                            "Find where payout batches are claimed",
                            "Find every code path that claims or processes a pending payout batch and say whether it locks the row.",
                            "Batches are claimed in app/services/payouts.py:claim_batch (a SELECT of one pending batch, then a separate UPDATE to 'processing') and in app/tools/replay_payouts.py, which calls the same SELECT. Neither locks the row, so two workers can read the same pending batch between the SELECT and the UPDATE.",
                            uses=11,
                        ),
                        web_search(
                            "postgres SELECT FOR UPDATE SKIP LOCKED job queue vs advisory locks pgbouncer",
                            [
                                (
                                    "PostgreSQL docs: The Locking Clause (SKIP LOCKED)",
                                    "https://www.postgresql.org/docs/16/sql-select.html#SQL-FOR-UPDATE-SHARE",
                                ),
                                (
                                    "Advisory locks and PgBouncer transaction pooling",
                                    "https://www.pgbouncer.org/features.html",
                                ),
                                (
                                    "What is SKIP LOCKED for in PostgreSQL 9.5?",
                                    "https://www.2ndquadrant.com/en/blog/what-is-select-skip-locked-for-in-postgresql-9-5/",
                                ),
                            ],
                        ),
                        web_fetch(
                            "https://www.pgbouncer.org/features.html",
                            "Do session-level advisory locks work in transaction pooling mode?",
                            "In transaction pooling mode a server connection is assigned to a client only for the duration of a transaction. Session-level features such as SET/RESET, LISTEN, WITH HOLD cursors and session-level advisory locks are not supported.",
                        ),
                        plan(
                            "# Claim payout batches with SKIP LOCKED\n\n- claim_batch: SELECT … FOR UPDATE SKIP LOCKED LIMIT 1 and the UPDATE to 'processing' in one transaction\n- no advisory locks: session-level ones break under PgBouncer transaction pooling, which production uses\n- replay_payouts reuses claim_batch instead of its own query\n- a test with two concurrent workers and one batch"
                        ),
                    ],
                    "Recommendation: SELECT … FOR UPDATE SKIP LOCKED. Advisory locks are session-level and "
                    "PgBouncer runs in transaction mode in production, so they would silently not hold.",
                ),
                turn(
                    "Go ahead with SKIP LOCKED.",
                    [
                        edit(
                            P,
                            "app/services/payouts.py",
                            "    batch = session.scalars(select(PayoutBatch).where(PayoutBatch.status == 'pending').limit(1)).first()",
                            "    batch = session.scalars(\n        select(PayoutBatch).where(PayoutBatch.status == 'pending')\n        .limit(1).with_for_update(skip_locked=True)\n    ).first()",
                            line=102,
                        ),
                        edit(
                            P,
                            "app/tools/replay_payouts.py",
                            "    batch = _pending_batch(session)",
                            "    batch = claim_batch(session)",
                            line=17,
                        ),
                        bash(
                            f"{PYTEST} tests/test_payouts.py",
                            pytest_out("tests/test_payouts.py", passed=12, seconds=3.7),
                            description="Payout tests incl. the concurrency test",
                        ),
                        commit(
                            "Claim payout batches with FOR UPDATE SKIP LOCKED",
                            3,
                            22,
                            9,
                            branch="fix/payout-claims",
                        ),
                    ],
                    "claim_batch now locks the row it takes and skips locked ones; the two-worker test passes.",
                ),
            ],
        )
    ]


def committed_credentials() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "credentials in the repository",
            [
                turn(
                    "Before we open-source the SDK folder: did anyone commit credentials? Check config/ "
                    "and the git history.",
                    [
                        grep(
                            P,
                            "AWS_|SECRET|PASSWORD",
                            ["config/staging.env", "config/ci.env.example"],
                            path="config",
                        ),
                        read(
                            P,
                            "config/staging.env",
                            "DATABASE_URL=postgresql://payments@staging-db:5432/payments\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_REGION=eu-central-1\nS3_BUCKET=payments-staging-exports\n",
                        ),
                        bash(
                            "git log --oneline --follow -- config/staging.env",
                            "9c1e4d2 Add staging export bucket\n41aa0f7 Staging config for the export job\n",
                            description="When did it enter the history?",
                        ),
                        bash(
                            "cat .env",
                            "DATABASE_URL=postgresql://payments@localhost:5432/payments_dev\nGATEWAY_BASE_URL=https://sandbox.gateway.example\n",
                            description="Check the local env file",
                        ),
                    ],
                    "config/staging.env holds an AWS access key for the staging export bucket and has been in "
                    "the history since the 'Staging config for the export job' commit. .env itself is "
                    "ignored and only has local URLs. Next: rotate the key in IAM, untrack the file, "
                    "and purge it from history before publishing.",
                ),
                turn(
                    "Untrack it, ignore config/*.env and add a secret scanner to pre-commit.",
                    [
                        bash(
                            "git rm --cached config/staging.env",
                            "rm 'config/staging.env'\n",
                            description="Stop tracking the file",
                        ),
                        edit(
                            P,
                            ".gitignore",
                            "__pycache__/\n.env",
                            "__pycache__/\n.env\nconfig/*.env\n!config/*.env.example",
                            line=3,
                        ),
                        bash(
                            "pip install detect-secrets==1.5.0",
                            "Successfully installed detect-secrets-1.5.0\n",
                            description="Install the scanner",
                        ),
                        edit(
                            P,
                            ".pre-commit-config.yaml",
                            "repos:",
                            "repos:\n  - repo: https://github.com/Yelp/detect-secrets\n    rev: v1.5.0\n    hooks:\n      - id: detect-secrets\n        args: ['--baseline', '.secrets.baseline']",
                            line=1,
                        ),
                        commit(
                            "Untrack staging.env and scan for secrets in pre-commit",
                            3,
                            9,
                            5,
                            branch="chore/secrets",
                        ),
                    ],
                    "The file is untracked and ignored, and detect-secrets runs in pre-commit. Remaining: the "
                    "key must be rotated in IAM today and the history rewritten with git filter-repo.",
                ),
            ],
        )
    ]


def flaky_replay_test() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "flaky webhook replay test",
            [
                turn(
                    "test_replay_rejected fails about one CI run in twenty. Make it deterministic.",
                    [
                        bash(
                            f"{PYTEST} tests/test_webhooks.py -k replay --count 50",
                            pytest_out(
                                "tests/test_webhooks.py",
                                passed=49,
                                failed=[
                                    (
                                        "tests/test_webhooks.py::test_replay_rejected[37-50]",
                                        "AssertionError: expected 409 for a replayed event, got 200",
                                    )
                                ],
                                seconds=6.1,
                            ),
                            description="Repeat the flaky test 50 times",
                        ),
                        read(
                            P,
                            "tests/test_webhooks.py",
                            "def test_replay_rejected(client):\n    header = sign_payload(BODY, timestamp=int(time.time()) - 300)\n    assert client.post('/webhooks/gateway', content=BODY, headers={'Gateway-Signature': header}).status_code == 409",
                        ),
                        read(
                            P,
                            "app/gateway/signing.py",
                            "TOLERANCE_S = 300\n\ndef _too_old(timestamp: int) -> bool:\n    return time.time() - timestamp > TOLERANCE_S",
                        ),
                    ],
                    "The test signs a timestamp exactly TOLERANCE_S old with int(time.time()), while the check "
                    "uses the float time.time(): when the request lands in the same second the event is "
                    "300.0x seconds old and rejected, otherwise it is accepted. It depends on the clock.",
                ),
                turn(
                    "Fix the test with a frozen clock, and make the boundary explicit.",
                    [
                        edit(
                            P,
                            "tests/conftest.py",
                            "@pytest.fixture\ndef client(app):",
                            "@pytest.fixture\ndef frozen_now(monkeypatch):\n    monkeypatch.setattr(time, 'time', lambda: 1_761_312_000.0)\n    return 1_761_312_000\n\n\n@pytest.fixture\ndef client(app):",
                            line=14,
                        ),
                        edit(
                            P,
                            "tests/test_webhooks.py",
                            "def test_replay_rejected(client):\n    header = sign_payload(BODY, timestamp=int(time.time()) - 300)",
                            "def test_replay_rejected(client, frozen_now):\n    header = sign_payload(BODY, timestamp=frozen_now - 301)",
                            line=52,
                        ),
                        bash(
                            f"{PYTEST} tests/test_webhooks.py -k replay --count 200",
                            pytest_out("tests/test_webhooks.py", passed=200, seconds=18.3),
                            description="Repeat 200 times",
                        ),
                        commit(
                            "Freeze the clock in the webhook replay test",
                            2,
                            9,
                            2,
                            branch="test/frozen-clock",
                        ),
                    ],
                    "The replay test now runs on a frozen clock one second past the tolerance; 200 repetitions pass.",
                ),
            ],
        )
    ]


def fastapi_upgrade() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "FastAPI and pydantic upgrade",
            [
                turn(
                    "Upgrade FastAPI to 0.115 and pydantic to 2.10, then fix whatever breaks.",
                    [
                        bash(
                            "pip install -U 'fastapi==0.115.*' 'pydantic==2.10.*'",
                            "Successfully installed fastapi-0.115.6 pydantic-2.10.4 pydantic-core-2.27.2 starlette-0.41.3\n",
                            description="Upgrade",
                        ),
                        bash(
                            f"{PYTEST}",
                            pytest_out(
                                "tests",
                                passed=209,
                                failed=[
                                    (
                                        "tests/test_refunds.py::test_refund_from_orm",
                                        "pydantic_core._pydantic_core.ValidationError: 1 validation error for RefundOut: Input should be a valid dictionary or instance of RefundOut",
                                    ),
                                    (
                                        "tests/test_charges.py::test_charge_from_orm",
                                        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ChargeOut",
                                    ),
                                    (
                                        "tests/test_payouts.py::test_batch_schema",
                                        "PydanticDeprecatedSince20: The `orm_mode` config key is removed, use from_attributes",
                                    ),
                                ],
                                seconds=9.4,
                            ),
                            description="Full test suite",
                        ),
                        grep(
                            P,
                            "orm_mode",
                            [
                                "app/routes/refunds.py",
                                "app/routes/charges.py",
                                "app/services/payouts.py",
                            ],
                        ),
                        edit(
                            P,
                            "app/routes/refunds.py",
                            "    class Config:\n        orm_mode = True",
                            "    model_config = ConfigDict(from_attributes=True)",
                            line=19,
                        ),
                        edit(
                            P,
                            "app/routes/charges.py",
                            "    class Config:\n        orm_mode = True",
                            "    model_config = ConfigDict(from_attributes=True)",
                            line=22,
                        ),
                        edit(
                            P,
                            "app/services/payouts.py",
                            "    class Config:\n        orm_mode = True",
                            "    model_config = ConfigDict(from_attributes=True)",
                            line=31,
                        ),
                        bash(
                            f"{PYTEST}",
                            pytest_out("tests", passed=212, seconds=9.1),
                            description="Full test suite",
                        ),
                        commit(
                            "Upgrade to FastAPI 0.115 and pydantic 2.10",
                            4,
                            12,
                            12,
                            branch="chore/upgrade-fastapi",
                        ),
                    ],
                    "The upgrade only broke the v1-style `orm_mode` configs; they now use "
                    "ConfigDict(from_attributes=True) and all 212 tests pass.",
                ),
            ],
        )
    ]


def dashboard_index() -> list[dict[str, Any]]:
    explain = "psql payments_dev -c 'EXPLAIN ANALYZE SELECT * FROM refunds WHERE merchant_id = 8812 ORDER BY created_at DESC LIMIT 50'"
    return [
        session(
            P,
            "slow refunds dashboard",
            [
                turn(
                    "The merchant dashboard takes 4 seconds to list refunds for big merchants. Profile the query.",
                    [
                        bash(
                            explain,
                            " Limit  (cost=48211.00..48211.12 rows=50 width=212) (actual time=3903.7..3903.8 rows=50 loops=1)\n   ->  Sort  (cost=48211.00..48342.18 rows=52472 width=212)\n         Sort Key: created_at DESC\n         ->  Seq Scan on refunds  (cost=0.00..46468.00 rows=52472 width=212)\n               Filter: (merchant_id = 8812)\n Execution Time: 3904.112 ms\n",
                            description="Explain the dashboard query",
                        ),
                        read(
                            P,
                            "app/db/models.py",
                            "class Refund(Base):\n    __tablename__ = 'refunds'\n    id = Column(BigInteger, primary_key=True)\n    merchant_id = Column(BigInteger, nullable=False)\n    charge_id = Column(BigInteger, ForeignKey('charges.id'))\n    created_at = Column(DateTime(timezone=True), nullable=False)",
                        ),
                        write(
                            P,
                            "alembic/versions/0013_refunds_merchant_created_idx.py",
                            '"""Index refunds by (merchant_id, created_at DESC) for the dashboard."""\n\nrevision = "0013"\ndown_revision = "0012"\n\n\ndef upgrade() -> None:\n    with op.get_context().autocommit_block():\n        op.create_index(\n            "ix_refunds_merchant_created", "refunds", ["merchant_id", sa.text("created_at DESC")],\n            postgresql_concurrently=True,\n        )\n',
                        ),
                        bash(
                            "alembic upgrade head",
                            "INFO  [alembic.runtime.migration] Running upgrade 0012 -> 0013, Index refunds by (merchant_id, created_at DESC)\n",
                            description="Apply the migration",
                        ),
                        bash(
                            explain,
                            " Limit  (cost=0.42..61.90 rows=50 width=212) (actual time=0.031..0.377 rows=50 loops=1)\n   ->  Index Scan using ix_refunds_merchant_created on refunds\n         Index Cond: (merchant_id = 8812)\n Execution Time: 0.412 ms\n",
                            description="Explain again",
                        ),
                        commit(
                            "Index refunds by merchant and creation time",
                            1,
                            17,
                            0,
                            branch="perf/refunds-index",
                            created=["alembic/versions/0013_refunds_merchant_created_idx.py"],
                        ),
                    ],
                    "The query did a sequential scan and sort over 52k rows. A concurrent index on "
                    "(merchant_id, created_at DESC) makes it an index scan: 3.9 s down to 0.4 ms.",
                ),
            ],
        )
    ]
