"""inventory-service: a Go stock reservation service (Postgres, go test, go vet)."""

# ruff: noqa: E501 (stories are data: prompts and tool output are kept on one line each)

from __future__ import annotations

from typing import Any

from scenarios import routine
from scenarios.kit import (
    Project,
    bash,
    commit,
    edit,
    go_test_out,
    grep,
    lint_out,
    multi_edit,
    plan,
    read,
    session,
    turn,
    web_fetch,
    web_search,
    write,
)

P = Project(
    "inventory-service",
    "go",
    {
        "internal/stock/reserve.go": ["Reserve", "Release", "ErrInsufficientStock", "available"],
        "internal/api/handlers.go": [
            "handleReserve",
            "handleRelease",
            "handleHealth",
            "writeError",
        ],
        "internal/store/postgres.go": ["NewPgStore", "WithTx", "StockFor"],
        "cmd/inventory/main.go": ["main", "run"],
    },
    module="github.com/acme/inventory",
)
MOD = "github.com/acme/inventory"


def stories() -> list[dict[str, Any]]:
    return [
        routine.tour(
            P,
            "stock reservations",
            "internal/stock/reserve.go",
            "Reserve",
            ["internal/api/handlers.go", "internal/stock/reserve_test.go"],
            "A reservation holds units of one SKU for 15 minutes: Reserve decrements the available "
            "level and records a held reservation, Release (or the expiry sweeper) gives the units back.",
        ),
        *overselling_race(),
        *readiness_probe(),
        *go_vet(),
        *double_release(),
        *context_propagation(),
        routine.release(
            P,
            "v1.6.0",
            (
                "go test ./...",
                go_test_out(
                    f"{MOD}/internal/...",
                    passed=[
                        "TestReserve",
                        "TestReserveConcurrent",
                        "TestRelease",
                        "TestReleaseTwice",
                        "TestCancelledRequestStopsQuery",
                    ],
                ),
            ),
            ("go vet ./... && staticcheck ./...", ""),
            [
                "Propagate the request context to Postgres",
                "Release a reservation at most once",
                "Fix go vet findings (printf verb, copied mutex)",
                "Add /healthz and /readyz with a database ping",
                "Reserve stock under a row lock",
            ],
        ),
        *repository_split(),
        *pgx_choice(),
        *dependency_bump(),
    ]


def overselling_race() -> list[dict[str, Any]]:
    race = "Write at 0x00c0001a4018 by goroutine 9:\n  github.com/acme/inventory/internal/stock.Reserve()\n      /home/dev/src/inventory-service/internal/stock/reserve.go:41 +0x1a4\nPrevious read at 0x00c0001a4018 by goroutine 8:\n  github.com/acme/inventory/internal/stock.Reserve()\n      /home/dev/src/inventory-service/internal/stock/reserve.go:37 +0x9c"
    return [
        session(
            P,
            "overselling under load",
            [
                turn(
                    "Under load we oversell: stock goes negative for popular SKUs. Reproduce it first.",
                    [
                        read(
                            P,
                            "internal/stock/reserve.go",
                            "func Reserve(ctx context.Context, s Store, sku string, qty int) error {\n\tlevel, err := s.StockFor(ctx, sku)\n\tif err != nil {\n\t\treturn err\n\t}\n\tif level.Available < qty {\n\t\treturn ErrInsufficientStock\n\t}\n\treturn s.SetAvailable(ctx, sku, level.Available-qty)\n}",
                        ),
                        bash(
                            "go test -race ./internal/stock/ -run TestReserveConcurrent -v",
                            go_test_out(
                                f"{MOD}/internal/stock",
                                failed=[
                                    (
                                        "TestReserveConcurrent",
                                        "reserve_test.go:58: reserved 11 units of SKU-1042 with only 10 in stock",
                                    )
                                ],
                                race=race,
                            ),
                            description="Concurrent reservation test with the race detector",
                        ),
                    ],
                    "Reserve reads the level and writes it back in two statements with no lock: two requests "
                    "both see 10 available and both succeed. The race detector confirms it.\nNext: lock the row "
                    "in Postgres; a mutex would not help with three replicas.",
                ),
                turn(
                    "Fix it with a row lock in Postgres, not a mutex — we run three replicas.",
                    [
                        edit(
                            P,
                            "internal/stock/reserve.go",
                            "\tlevel, err := s.StockFor(ctx, sku)\n\tif err != nil {\n\t\treturn err\n\t}\n\tif level.Available < qty {\n\t\treturn ErrInsufficientStock\n\t}\n\treturn s.SetAvailable(ctx, sku, level.Available-qty)",
                            "\treturn s.WithTx(ctx, func(tx Tx) error {\n\t\t// SELECT … FOR UPDATE: concurrent reservations of one SKU queue on the row\n\t\tlevel, err := tx.StockForUpdate(ctx, sku)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif level.Available < qty {\n\t\t\treturn ErrInsufficientStock\n\t\t}\n\t\treturn tx.SetAvailable(ctx, sku, level.Available-qty)\n\t})",
                            line=35,
                        ),
                        edit(
                            P,
                            "internal/store/postgres.go",
                            "const stockFor = `SELECT available FROM stock WHERE sku = $1`",
                            "const stockFor = `SELECT available FROM stock WHERE sku = $1`\nconst stockForUpdate = `SELECT available FROM stock WHERE sku = $1 FOR UPDATE`",
                            line=22,
                        ),
                        bash(
                            "go test -race ./internal/stock/ -run TestReserveConcurrent -v",
                            go_test_out(f"{MOD}/internal/stock", passed=["TestReserveConcurrent"]),
                            description="Concurrent reservation test with the race detector",
                        ),
                        commit("Reserve stock under a row lock", 3, 27, 9, branch="fix/oversell"),
                    ],
                    "Reservations now run in a transaction that locks the SKU's row with FOR UPDATE; the "
                    "concurrent test passes under -race and stock can no longer go negative.",
                ),
            ],
        )
    ]


def readiness_probe() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "liveness and readiness endpoints",
            [
                turn(
                    "Add /healthz (liveness) and /readyz, which pings Postgres with a 1 s timeout, and wire them into the deployment.",
                    [
                        read(
                            P,
                            "internal/api/handlers.go",
                            "func handleHealth(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n}",
                        ),
                        edit(
                            P,
                            "internal/api/handlers.go",
                            "func handleHealth(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n}",
                            'func handleHealth(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n}\n\nfunc (a *API) handleReady(w http.ResponseWriter, r *http.Request) {\n\tctx, cancel := context.WithTimeout(r.Context(), time.Second)\n\tdefer cancel()\n\tif err := a.db.PingContext(ctx); err != nil {\n\t\twriteError(w, http.StatusServiceUnavailable, "database unreachable")\n\t\treturn\n\t}\n\tw.WriteHeader(http.StatusOK)\n}',
                            line=120,
                        ),
                        write(
                            P,
                            "internal/api/health_test.go",
                            "package api\n\nfunc TestReadyFailsWithoutDatabase(t *testing.T) { /* … */ }\n\nfunc TestHealthAlwaysOK(t *testing.T) { /* … */ }\n",
                        ),
                        bash(
                            "go test ./internal/api/ -run 'Health|Ready' -v",
                            go_test_out(
                                f"{MOD}/internal/api",
                                passed=["TestHealthAlwaysOK", "TestReadyFailsWithoutDatabase"],
                            ),
                            description="Health tests",
                        ),
                        commit(
                            "Add /healthz and /readyz with a database ping",
                            3,
                            41,
                            1,
                            branch="feat/readiness",
                            created=["internal/api/health_test.go"],
                        ),
                    ],
                    "/healthz always answers 200; /readyz pings Postgres with a one-second timeout and "
                    "answers 503 when it cannot.\nNext: point the deployment's readinessProbe at /readyz in platform-infra.",
                ),
            ],
        )
    ]


def go_vet() -> list[dict[str, Any]]:
    vet = lint_out(
        "vet",
        [
            (
                "internal/api/handlers.go",
                88,
                "printf: log.Printf format %d has arg sku of wrong type string",
            ),
            (
                "internal/store/postgres.go",
                61,
                "copylocks: WithTx passes lock by value: store.PgStore contains sync.Mutex",
            ),
        ],
    )
    return [
        session(
            P,
            "go vet fails after the Go 1.23 bump",
            [
                turn(
                    "CI's go vet step fails since we bumped to Go 1.23. Fix the findings.",
                    [
                        bash("go vet ./...", "", vet, description="Vet everything", exit_code=1),
                        read(
                            P,
                            "internal/store/postgres.go",
                            "type PgStore struct {\n\tmu sync.Mutex\n\tdb *sql.DB\n}\n\nfunc (s PgStore) WithTx(ctx context.Context, fn func(Tx) error) error {",
                        ),
                        edit(
                            P,
                            "internal/api/handlers.go",
                            '\tlog.Printf("reserve %d", sku)',
                            '\tlog.Printf("reserve sku=%s qty=%d", sku, qty)',
                            line=88,
                        ),
                        edit(
                            P,
                            "internal/store/postgres.go",
                            "func (s PgStore) WithTx(ctx context.Context, fn func(Tx) error) error {",
                            "func (s *PgStore) WithTx(ctx context.Context, fn func(Tx) error) error {",
                            line=61,
                        ),
                        bash("go vet ./...", "", description="Vet everything"),
                        commit(
                            "Fix go vet findings (printf verb, copied mutex)",
                            2,
                            2,
                            2,
                            branch="fix/go-vet",
                        ),
                    ],
                    "Two real findings: a %d verb for a string SKU, and WithTx on a value receiver copying the "
                    "store's mutex (so it never locked anything). Both fixed; go vet is clean.",
                ),
            ],
        )
    ]


def double_release() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "releasing a reservation twice",
            [
                turn(
                    "Support found SKUs with more stock than we own. Releasing the same reservation twice seems to add the units back twice.",
                    [
                        read(
                            P,
                            "internal/stock/reserve.go",
                            "func Release(ctx context.Context, s Store, id ReservationID) error {\n\tr, err := s.Reservation(ctx, id)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn s.AddAvailable(ctx, r.SKU, r.Qty)\n}",
                            offset=60,
                        ),
                        bash(
                            "go test ./internal/stock/ -run TestReleaseTwice -v",
                            go_test_out(
                                f"{MOD}/internal/stock",
                                failed=[
                                    (
                                        "TestReleaseTwice",
                                        "reserve_test.go:97: available for SKU-7 = 12, want 10 after releasing reservation r-31 twice",
                                    )
                                ],
                            ),
                            description="Reproduce",
                        ),
                        edit(
                            P,
                            "internal/stock/reserve.go",
                            "\tr, err := s.Reservation(ctx, id)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn s.AddAvailable(ctx, r.SKU, r.Qty)",
                            "\t// Only a held reservation can be released: the UPDATE is the guard, not a read.\n\tr, ok, err := s.MarkReleased(ctx, id) // UPDATE … SET status='released' WHERE id=$1 AND status='held' RETURNING sku, qty\n\tif err != nil || !ok {\n\t\treturn err\n\t}\n\treturn s.AddAvailable(ctx, r.SKU, r.Qty)",
                            line=61,
                        ),
                        bash(
                            "go test ./internal/stock/ -run TestReleaseTwice -v",
                            go_test_out(f"{MOD}/internal/stock", passed=["TestReleaseTwice"]),
                            description="Reproduce",
                        ),
                        commit(
                            "Release a reservation at most once",
                            2,
                            18,
                            4,
                            branch="fix/double-release",
                        ),
                    ],
                    "Release never checked the reservation's status, so a retried release (the webshop retries "
                    "DELETEs) returned the units twice. The status change is now the guard: only a held "
                    "reservation is released, once.\nNext: a script to recount stock for the SKUs affected since October.",
                ),
            ],
        )
    ]


def context_propagation() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "queries outliving their requests",
            [
                turn(
                    "Requests that time out at the load balancer keep their queries running for 30 s. Check context propagation.",
                    [
                        grep(
                            P,
                            r"context\.Background\(\)",
                            [],
                            path="internal",
                            lines=[
                                "internal/store/postgres.go:74:\trows, err := s.db.QueryContext(context.Background(), stockFor, sku)",
                                "internal/store/postgres.go:102:\ttx, err := s.db.BeginTx(context.Background(), nil)",
                                "internal/api/handlers.go:57:\tctx := context.Background()",
                            ],
                        ),
                        read(
                            P,
                            "internal/api/handlers.go",
                            "func (a *API) handleReserve(w http.ResponseWriter, r *http.Request) {\n\tctx := context.Background()\n\tif err := stock.Reserve(ctx, a.store, sku, qty); err != nil {",
                            offset=50,
                        ),
                        edit(
                            P,
                            "internal/api/handlers.go",
                            "\tctx := context.Background()",
                            "\tctx := r.Context()",
                            line=57,
                        ),
                        multi_edit(
                            P,
                            "internal/store/postgres.go",
                            [
                                (
                                    "\trows, err := s.db.QueryContext(context.Background(), stockFor, sku)",
                                    "\trows, err := s.db.QueryContext(ctx, stockFor, sku)",
                                ),
                                (
                                    "\ttx, err := s.db.BeginTx(context.Background(), nil)",
                                    "\ttx, err := s.db.BeginTx(ctx, nil)",
                                ),
                            ],
                        ),
                        bash(
                            "go test ./...",
                            go_test_out(
                                f"{MOD}/internal/...",
                                passed=[
                                    "TestReserve",
                                    "TestReserveConcurrent",
                                    "TestRelease",
                                    "TestCancelledRequestStopsQuery",
                                ],
                            ),
                            description="All tests",
                        ),
                        commit(
                            "Propagate the request context to Postgres",
                            2,
                            4,
                            4,
                            branch="fix/context",
                        ),
                    ],
                    "Handlers and the store used context.Background(), so a cancelled request never cancelled "
                    "its query. The request context now flows down to QueryContext/BeginTx.",
                ),
            ],
        )
    ]


def repository_split() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "a repository interface for the handlers",
            [
                turn(
                    "Split internal/store into internal/repository behind an interface, so handler tests don't need Postgres.",
                    [
                        bash(
                            "git mv internal/store internal/repository",
                            "",
                            description="Move the package",
                        ),
                        write(
                            P,
                            "internal/repository/repository.go",
                            "package repository\n\n// StockRepository is what the API needs from storage; PgStore implements it.\ntype StockRepository interface {\n\tStockFor(ctx context.Context, sku string) (Level, error)\n\tWithTx(ctx context.Context, fn func(Tx) error) error\n}\n",
                        ),
                        multi_edit(
                            P,
                            "internal/api/handlers.go",
                            [
                                (
                                    '\t"github.com/acme/inventory/internal/store"',
                                    '\t"github.com/acme/inventory/internal/repository"',
                                ),
                                ("\tstore *store.PgStore", "\tstore repository.StockRepository"),
                            ],
                        ),
                        bash("go build ./...", "", description="Build"),
                        bash(
                            "go test ./...",
                            go_test_out(
                                f"{MOD}/internal/...",
                                passed=[
                                    "TestReserve",
                                    "TestReserveConcurrent",
                                    "TestHandleReserveWithFake",
                                    "TestReadyFailsWithoutDatabase",
                                ],
                            ),
                            description="All tests",
                        ),
                        commit(
                            "Move storage behind a StockRepository interface",
                            6,
                            48,
                            21,
                            branch="refactor/repository",
                        ),
                    ],
                    "Storage lives in internal/repository behind StockRepository; handler tests now use an "
                    "in-memory fake and run without Postgres.",
                ),
            ],
        )
    ]


def pgx_choice() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "pgx or database/sql",
            [
                turn(
                    "Would moving from database/sql with lib/pq to pgx v5 be worth it? Measure on the reserve path.",
                    [
                        web_search(
                            "pgx v5 vs database/sql lib/pq performance pgxpool maintenance mode",
                            [
                                (
                                    "jackc/pgx: PostgreSQL driver and toolkit for Go",
                                    "https://github.com/jackc/pgx",
                                ),
                                (
                                    "lib/pq is in maintenance mode",
                                    "https://github.com/lib/pq#status",
                                ),
                            ],
                        ),
                        web_fetch(
                            "https://github.com/lib/pq#status",
                            "Is lib/pq still maintained?",
                            "This package is currently in maintenance mode, which means: it generally does not accept new features; it does accept bug fixes and version compatibility changes. We recommend using pgx, which is actively maintained.",
                        ),
                        bash(
                            "go test -run '^$' -bench BenchmarkReserve -benchmem ./internal/stock/",
                            "goos: linux\ngoarch: amd64\npkg: github.com/acme/inventory/internal/stock\nBenchmarkReserve/database_sql-4   \t    3421\t    348211 ns/op\t    4812 B/op\t      71 allocs/op\nBenchmarkReserve/pgxpool-4        \t    5102\t    231044 ns/op\t    1208 B/op\t      18 allocs/op\nPASS\nok  \tgithub.com/acme/inventory/internal/stock\t3.912s\n",
                            description="Benchmark both drivers",
                        ),
                        plan(
                            "# Move to pgx v5\n\n- pgxpool directly (not the database/sql shim): 34% faster reserve, 4x fewer allocations\n- lib/pq is in maintenance mode\n- the StockRepository interface keeps the change inside internal/repository\n- use pgx's native FOR UPDATE row scanning, keep SQL text unchanged"
                        ),
                    ],
                    "Decision: move to pgx v5 with pgxpool. The reserve path is a third faster with a quarter "
                    "of the allocations, and lib/pq only gets bug fixes now.",
                ),
            ],
        )
    ]


def dependency_bump() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "monthly dependency update",
            [
                turn(
                    "Monthly dependency update: bump the Go modules and make sure everything still passes.",
                    [
                        bash(
                            "go get -u ./... && go mod tidy",
                            "go: upgraded github.com/jackc/pgx/v5 v5.7.1 => v5.7.2\ngo: upgraded golang.org/x/sync v0.8.0 => v0.9.0\ngo: upgraded github.com/prometheus/client_golang v1.20.4 => v1.20.5\n",
                            description="Update modules",
                        ),
                        bash(
                            "go test ./...",
                            go_test_out(
                                f"{MOD}/internal/...",
                                passed=[
                                    "TestReserve",
                                    "TestReserveConcurrent",
                                    "TestRelease",
                                    "TestHandleReserveWithFake",
                                ],
                            ),
                            description="All tests",
                        ),
                        bash(
                            "govulncheck ./...",
                            "No vulnerabilities found.\n",
                            description="Known vulnerabilities",
                        ),
                        commit("Update Go dependencies", 2, 9, 9, branch="chore/deps-2026-11"),
                    ],
                    "Three minor upgrades (pgx 5.7.2, x/sync, client_golang); tests pass and govulncheck finds nothing.",
                ),
            ],
        )
    ]
