"""webshop-frontend: a React + TypeScript shop (Vite; jest, then vitest; eslint, tsc)."""

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
    jest_out,
    lint_out,
    multi_edit,
    plan,
    read,
    session,
    turn,
    vitest_out,
    web_fetch,
    web_search,
    write,
)

P = Project(
    "webshop-frontend",
    "ts",
    {
        "src/i18n/format.ts": ["formatPrice", "formatDate", "pluralize"],
        "src/store/cart.ts": ["cartReducer", "addItem", "removeItem", "cartCount"],
        "src/hooks/useProducts.ts": ["useProducts", "productsQuery"],
        "src/api/client.ts": ["apiFetch", "ApiError", "withAuth"],
        "src/components/Checkout/CheckoutForm.tsx": ["CheckoutForm", "PaymentFields"],
        "src/components/ProductTile.tsx": ["ProductTile", "PriceTag"],
        "src/components/ProductCard.tsx": ["ProductCard", "PriceTag"],
        "src/routes/ProductPage.tsx": ["ProductPage", "Gallery", "HeroImage"],
        "src/routes/SearchPage.tsx": ["SearchPage", "SearchResults"],
    },
)


def stories() -> list[dict[str, Any]]:
    return [
        routine.tour(
            P,
            "the cart store",
            "src/store/cart.ts",
            "cartReducer",
            [
                "src/store/cart.ts",
                "src/components/CartBadge.tsx",
                "src/components/Checkout/CheckoutForm.tsx",
            ],
            "The cart is a plain reducer (addItem, removeItem, setQuantity) persisted to localStorage "
            "under 'cart:v2'; cartCount and totals are derived in selectors, never stored.",
        ),
        *euro_cents(),
        *search_debounce(),
        *checkout_double_submit(),
        *vitest_migration(),
        routine.catch_up(
            P,
            [
                "Run the tests with vitest instead of jest",
                "Submit the checkout once and send an idempotency key",
                "Debounce product search and abort stale requests",
            ],
            "Since last week: the suite runs on vitest (4 s instead of 90 s on CI), checkout can no "
            "longer be submitted twice, and product search is debounced with stale requests aborted.",
        ),
        *hooks_lint(),
        *product_card_rename(),
        *hero_lcp(),
        *checkout_a11y(),
        *api_retries(),
        routine.release(
            P,
            "v3.8.0",
            ("npx vitest run", vitest_out("src", passed=71, seconds=4.3)),
            ("npm run lint && npx tsc --noEmit", ""),
            [
                "Retry idempotent API calls on gateway errors",
                "Label the checkout fields and fix contrast",
                "Load the product hero image eagerly with a responsive srcset",
                "Rename ProductTile to ProductCard",
                "Fix react-hooks/exhaustive-deps findings",
            ],
        ),
        *npm_audit(),
    ]


def euro_cents() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "EUR prices lose their trailing zero",
            [
                turn(
                    "Prices in the German shop show '1.234,5 €' instead of '1.234,50 €'. Fix formatPrice.",
                    [
                        grep(
                            P,
                            "formatPrice",
                            [
                                "src/i18n/format.ts",
                                "src/components/ProductTile.tsx",
                                "src/components/Checkout/CheckoutForm.tsx",
                                "src/i18n/format.test.ts",
                            ],
                        ),
                        read(
                            P,
                            "src/i18n/format.ts",
                            "export function formatPrice(amount: number, currency: string, locale: string) {\n  const text = new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount);\n  // drop '.00' for round prices\n  return text.replace(/[.,]?0+(?=\\s?\\D*$)/, '');\n}",
                        ),
                        bash(
                            "npm test -- format",
                            jest_out(
                                "src/i18n/format.test.ts",
                                passed=7,
                                failed=[
                                    (
                                        "formatPrice › keeps both cent digits for EUR",
                                        'expect(received).toBe(expected) // Object.is equality\n\n    Expected: "1.234,50 €"\n    Received: "1.234,5 €"',
                                    )
                                ],
                            ),
                            description="Run the formatter tests",
                        ),
                        edit(
                            P,
                            "src/i18n/format.ts",
                            "  // drop '.00' for round prices\n  return text.replace(/[.,]?0+(?=\\s?\\D*$)/, '');",
                            "  // drop the fraction only when it is all zeros ('12,00 €' → '12 €')\n  return text.replace(/[.,]00(?=\\s?\\D*$)/, '');",
                            line=9,
                        ),
                        bash(
                            "npm test -- format",
                            jest_out("src/i18n/format.test.ts", passed=8),
                            description="Run the formatter tests",
                        ),
                        commit(
                            "Only drop an all-zero fraction in formatPrice",
                            2,
                            9,
                            2,
                            branch="fix/eur-cents",
                        ),
                    ],
                    "The trailing-zero regex removed any run of zeros at the end, so 1.234,50 lost its last "
                    "digit. It now drops the fraction only when it is exactly 00; the new test passes.",
                ),
            ],
        )
    ]


def search_debounce() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "debounced product search",
            [
                turn(
                    "The product search fires a request on every keystroke. Debounce it (300 ms) and cancel stale requests.",
                    [
                        read(
                            P,
                            "src/hooks/useProducts.ts",
                            "export function useProducts(query: string) {\n  const [items, setItems] = useState<Product[]>([]);\n  useEffect(() => {\n    apiFetch(`/products?q=${encodeURIComponent(query)}`).then(setItems);\n  }, [query]);\n  return items;\n}",
                        ),
                        write(
                            P,
                            "src/hooks/useDebounce.ts",
                            "import { useEffect, useState } from 'react';\n\n/** The value, once it has stopped changing for `delayMs`. */\nexport function useDebounce<T>(value: T, delayMs = 300): T {\n  const [settled, setSettled] = useState(value);\n  useEffect(() => {\n    const timer = setTimeout(() => setSettled(value), delayMs);\n    return () => clearTimeout(timer);\n  }, [value, delayMs]);\n  return settled;\n}\n",
                        ),
                        edit(
                            P,
                            "src/hooks/useProducts.ts",
                            "  useEffect(() => {\n    apiFetch(`/products?q=${encodeURIComponent(query)}`).then(setItems);\n  }, [query]);",
                            "  const settled = useDebounce(query, 300);\n  useEffect(() => {\n    const controller = new AbortController();\n    apiFetch(`/products?q=${encodeURIComponent(settled)}`, { signal: controller.signal })\n      .then(setItems)\n      .catch(ignoreAbort);\n    return () => controller.abort();\n  }, [settled]);",
                            line=5,
                        ),
                        bash(
                            "npm test -- useProducts",
                            jest_out("src/hooks/useProducts.test.ts", passed=5),
                            description="Run the hook tests",
                        ),
                        bash("npx tsc --noEmit", "", description="Type-check"),
                        commit(
                            "Debounce product search and abort stale requests",
                            3,
                            34,
                            4,
                            branch="feat/search-debounce",
                            created=["src/hooks/useDebounce.ts"],
                        ),
                    ],
                    "Search now waits for 300 ms of quiet and aborts the previous request, so typing "
                    "'espresso' sends one request instead of eight.",
                ),
            ],
        )
    ]


def checkout_double_submit() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "double charge on double click",
            [
                turn(
                    "Customers get charged twice when they double-click 'Pay now'. Fix the checkout form.",
                    [
                        read(
                            P,
                            "src/components/Checkout/CheckoutForm.tsx",
                            'const onSubmit = async (event: FormEvent) => {\n  event.preventDefault();\n  const order = await createOrder(cart);\n  await pay(order.id, paymentDetails);\n  navigate(`/orders/${order.id}`);\n};\n\n<button type="submit">Pay now</button>',
                        ),
                        bash(
                            "npm test -- CheckoutForm",
                            jest_out(
                                "src/components/Checkout/CheckoutForm.test.tsx",
                                passed=11,
                                failed=[
                                    (
                                        "CheckoutForm › submits once when Pay now is double-clicked",
                                        "expect(jest.fn()).toHaveBeenCalledTimes(expected)\n\n    Expected number of calls: 1\n    Received number of calls: 2",
                                    )
                                ],
                            ),
                            description="Run the checkout tests",
                        ),
                        edit(
                            P,
                            "src/components/Checkout/CheckoutForm.tsx",
                            "const onSubmit = async (event: FormEvent) => {\n  event.preventDefault();\n  const order = await createOrder(cart);",
                            "const onSubmit = async (event: FormEvent) => {\n  event.preventDefault();\n  if (submitting.current) return;\n  submitting.current = true;\n  setPending(true);\n  const order = await createOrder(cart, { idempotencyKey: cart.checkoutId });",
                            line=31,
                        ),
                        edit(
                            P,
                            "src/components/Checkout/CheckoutForm.tsx",
                            '<button type="submit">Pay now</button>',
                            '<button type="submit" disabled={pending} aria-busy={pending}>Pay now</button>',
                            line=88,
                        ),
                        bash(
                            "npm test -- CheckoutForm",
                            jest_out("src/components/Checkout/CheckoutForm.test.tsx", passed=12),
                            description="Run the checkout tests",
                        ),
                        commit(
                            "Submit the checkout once and send an idempotency key",
                            2,
                            14,
                            3,
                            branch="fix/double-submit",
                        ),
                    ],
                    "The form had no in-flight guard, so a double click created two orders. It now ignores "
                    "a second submit, disables the button while paying, and sends the cart's checkoutId as "
                    "an idempotency key so the payments API can deduplicate too.",
                ),
            ],
        )
    ]


def vitest_migration() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "moving from jest to vitest",
            [
                turn(
                    "Move the test suite from jest to vitest; jest takes 90 s on CI and fights with Vite's config.",
                    [
                        plan(
                            "# jest → vitest\n\n- vitest 2 with jsdom, reusing vite.config.ts (one config for build and tests)\n- replace jest.fn/jest.mock with vi.fn/vi.mock, keep describe/it/expect as globals\n- coverage with @vitest/coverage-v8, same 80% threshold\n- remove jest, ts-jest, babel-jest and @types/jest"
                        ),
                        bash(
                            "npm install -D vitest@2 jsdom @vitest/coverage-v8",
                            "added 41 packages, removed 3 packages, and audited 836 packages in 6s\n\nfound 0 vulnerabilities\n",
                            description="Install vitest",
                        ),
                        write(
                            P,
                            "vitest.config.ts",
                            "import { defineConfig, mergeConfig } from 'vitest/config';\nimport viteConfig from './vite.config';\n\nexport default mergeConfig(viteConfig, defineConfig({\n  test: {\n    environment: 'jsdom',\n    globals: true,\n    setupFiles: ['./src/test/setup.ts'],\n    coverage: { provider: 'v8', thresholds: { lines: 80 } },\n  },\n}));\n",
                        ),
                        edit(
                            P,
                            "package.json",
                            '    "test": "jest --runInBand",',
                            '    "test": "vitest run",\n    "test:watch": "vitest",',
                            line=9,
                        ),
                        bash(
                            "npx vitest run",
                            vitest_out(
                                "src/api/client.test.ts",
                                passed=61,
                                failed=[
                                    (
                                        "apiFetch > retries once on 401 after refreshing the token",
                                        "ReferenceError: jest is not defined",
                                    ),
                                    (
                                        "CheckoutForm > submits once when Pay now is double-clicked",
                                        "ReferenceError: jest is not defined",
                                    ),
                                    (
                                        "useProducts > aborts the previous request",
                                        "ReferenceError: jest is not defined",
                                    ),
                                ],
                                seconds=4.2,
                            ),
                            description="Run the suite under vitest",
                        ),
                    ],
                    "vitest runs the suite in 4 s; 3 tests still use jest globals.\nNext: replace jest.fn/jest.mock with vi equivalents.",
                ),
            ],
        ),
        session(
            P,
            "vitest migration, jest globals",
            [
                turn(
                    "Finish the vitest migration: replace the remaining jest globals and remove jest.",
                    [
                        grep(
                            P,
                            r"jest\.(fn|mock|spyOn)",
                            [],
                            path="src",
                            lines=[
                                "src/api/client.test.ts:8:const fetchMock = jest.fn();",
                                "src/api/client.test.ts:12:jest.mock('./auth');",
                                "src/components/Checkout/CheckoutForm.test.tsx:15:const createOrder = jest.fn();",
                                "src/hooks/useProducts.test.ts:21:jest.spyOn(window, 'fetch');",
                            ],
                        ),
                        multi_edit(
                            P,
                            "src/api/client.test.ts",
                            [
                                ("const fetchMock = jest.fn();", "const fetchMock = vi.fn();"),
                                ("jest.mock('./auth');", "vi.mock('./auth');"),
                            ],
                        ),
                        edit(
                            P,
                            "src/components/Checkout/CheckoutForm.test.tsx",
                            "const createOrder = jest.fn();",
                            "const createOrder = vi.fn();",
                            line=15,
                        ),
                        edit(
                            P,
                            "src/hooks/useProducts.test.ts",
                            "jest.spyOn(window, 'fetch');",
                            "vi.spyOn(window, 'fetch');",
                            line=21,
                        ),
                        bash(
                            "npm uninstall jest ts-jest babel-jest @types/jest",
                            "removed 212 packages, and audited 624 packages in 3s\n",
                            description="Remove jest",
                        ),
                        bash(
                            "npx vitest run",
                            vitest_out("src", passed=64, seconds=4.0),
                            description="Run the suite",
                        ),
                        commit(
                            "Run the tests with vitest instead of jest",
                            7,
                            38,
                            61,
                            branch="chore/vitest",
                        ),
                    ],
                    "All 64 tests pass under vitest in 4 s (jest took 90 s on CI), and jest is gone from the dependencies.",
                ),
            ],
        ),
    ]


def hooks_lint() -> list[dict[str, Any]]:
    eslint = lint_out(
        "eslint",
        [
            (
                "src/hooks/useProducts.ts",
                14,
                "React Hook useEffect has a missing dependency: 'locale'  react-hooks/exhaustive-deps",
            ),
            (
                "src/routes/ProductPage.tsx",
                42,
                "React Hook useCallback has a missing dependency: 'variant'  react-hooks/exhaustive-deps",
            ),
            (
                "src/routes/SearchPage.tsx",
                27,
                "React Hook useMemo has an unnecessary dependency: 'page'  react-hooks/exhaustive-deps",
            ),
            (
                "src/components/Checkout/CheckoutForm.tsx",
                61,
                "React Hook useEffect has a missing dependency: 'onReady'  react-hooks/exhaustive-deps",
            ),
        ],
    )
    return [
        session(
            P,
            "react-hooks lint after the upgrade",
            [
                turn(
                    "After upgrading eslint-plugin-react-hooks to v5 the lint step fails in CI. Fix the findings properly, no eslint-disable comments.",
                    [
                        bash(
                            "npm install -D eslint-plugin-react-hooks@5",
                            "changed 1 package, and audited 624 packages in 2s\n",
                            description="Upgrade the plugin",
                        ),
                        bash("npm run lint", eslint, description="Lint", exit_code=1),
                        edit(
                            P,
                            "src/hooks/useProducts.ts",
                            "  }, [settled]);",
                            "  }, [settled, locale]);",
                            line=14,
                        ),
                        edit(
                            P,
                            "src/routes/ProductPage.tsx",
                            "  const addToCart = useCallback(() => add(product.id, variant), [product.id]);",
                            "  const addToCart = useCallback(() => add(product.id, variant), [product.id, variant]);",
                            line=42,
                        ),
                        edit(
                            P,
                            "src/routes/SearchPage.tsx",
                            "  const sorted = useMemo(() => sortResults(results, order), [results, order, page]);",
                            "  const sorted = useMemo(() => sortResults(results, order), [results, order]);",
                            line=27,
                        ),
                        edit(
                            P,
                            "src/components/Checkout/CheckoutForm.tsx",
                            "  useEffect(() => { onReady(); }, []);",
                            "  const ready = useRef(onReady);\n  useEffect(() => { ready.current(); }, []);",
                            line=61,
                        ),
                        bash("npm run lint", "", description="Lint"),
                        commit(
                            "Fix react-hooks/exhaustive-deps findings",
                            4,
                            7,
                            5,
                            branch="chore/react-hooks-5",
                        ),
                    ],
                    "Four exhaustive-deps findings, all real: two missing dependencies would have kept stale "
                    "locale/variant values. Lint is clean without any disable comments.",
                ),
            ],
        )
    ]


def product_card_rename() -> list[dict[str, Any]]:
    tsc = lint_out(
        "tsc",
        [
            (
                "src/routes/SearchPage.tsx",
                4,
                "TS2305: Module '\"../components/ProductCard\"' has no exported member 'ProductTile'.",
            )
        ],
    )
    return [
        session(
            P,
            "ProductTile becomes ProductCard",
            [
                turn(
                    "Design renamed 'tile' to 'card' everywhere. Rename the ProductTile component to ProductCard.",
                    [
                        grep(
                            P,
                            "ProductTile",
                            [
                                "src/components/ProductTile.tsx",
                                "src/routes/CategoryPage.tsx",
                                "src/routes/SearchPage.tsx",
                                "src/routes/HomePage.tsx",
                                "src/components/ProductTile.test.tsx",
                            ],
                        ),
                        bash(
                            "git mv src/components/ProductTile.tsx src/components/ProductCard.tsx",
                            "",
                            description="Rename the file",
                        ),
                        edit(
                            P,
                            "src/components/ProductCard.tsx",
                            "export function ProductTile(props: ProductTileProps) {",
                            "export function ProductCard(props: ProductTileProps) {",
                            line=12,
                        ),
                        edit(
                            P,
                            "src/routes/CategoryPage.tsx",
                            "import { ProductTile } from '../components/ProductTile';",
                            "import { ProductCard } from '../components/ProductCard';",
                            line=3,
                        ),
                        bash("npx tsc --noEmit", tsc, description="Type-check", exit_code=2),
                        edit(
                            P,
                            "src/routes/SearchPage.tsx",
                            "import { ProductTile } from '../components/ProductCard';",
                            "import { ProductCard } from '../components/ProductCard';",
                            line=4,
                        ),
                        bash("npx tsc --noEmit", "", description="Type-check"),
                        commit(
                            "Rename ProductTile to ProductCard",
                            6,
                            19,
                            19,
                            branch="refactor/product-card",
                        ),
                    ],
                    "ProductTile is now ProductCard (file, component and imports); tsc caught one import "
                    "in SearchPage that the search had missed because of a prior half-edit.",
                ),
            ],
        )
    ]


def hero_lcp() -> list[dict[str, Any]]:
    lighthouse = "npx lighthouse http://localhost:4173/p/espresso-grinder --only-categories=performance --output=json --quiet | jq -r '.audits[\"largest-contentful-paint\"].displayValue'"
    return [
        session(
            P,
            "slow LCP on product pages",
            [
                turn(
                    "Lighthouse says LCP is 4.1 s on the product page. What's the right fix for the hero image?",
                    [
                        bash(lighthouse, "4.1 s\n", description="Measure LCP"),
                        read(
                            P,
                            "src/routes/ProductPage.tsx",
                            'function HeroImage({ src }: { src: string }) {\n  return <img src={src} loading="lazy" className="hero" />;\n}',
                        ),
                        web_search(
                            "react hero image LCP fetchpriority preload srcset lazy loading",
                            [
                                (
                                    "Optimize Largest Contentful Paint",
                                    "https://web.dev/articles/optimize-lcp",
                                ),
                                (
                                    "Optimizing resource loading with the Fetch Priority API",
                                    "https://web.dev/articles/fetch-priority",
                                ),
                                (
                                    "Don't lazy-load LCP images",
                                    "https://web.dev/articles/lcp-lazy-loading",
                                ),
                            ],
                        ),
                        web_fetch(
                            "https://web.dev/articles/lcp-lazy-loading",
                            "Should the LCP image be lazy loaded?",
                            "Lazy-loading the LCP image delays it until layout is complete, which makes LCP worse. Images in the initial viewport should be loaded eagerly, and the LCP image can be given fetchpriority=high so the browser requests it before other images.",
                        ),
                        plan(
                            "# Faster LCP on product pages\n\n- hero image: loading=eager, fetchpriority=high, explicit width/height\n- srcset with 480/960/1440 widths from the image CDN, sizes for the two layouts\n- keep lazy loading for the gallery below the fold\n- preconnect to img.shop-cdn.example in index.html"
                        ),
                    ],
                    "The hero image is lazy-loaded, which delays the LCP element itself. Decision: load it "
                    "eagerly with fetchpriority=high and a responsive srcset; only the gallery stays lazy.",
                ),
                turn(
                    "Do it and measure again.",
                    [
                        edit(
                            P,
                            "src/routes/ProductPage.tsx",
                            '  return <img src={src} loading="lazy" className="hero" />;',
                            '  return (\n    <img src={cdn(src, 960)} srcSet={srcSet(src, [480, 960, 1440])} sizes="(min-width: 900px) 50vw, 100vw"\n      width={960} height={720} loading="eager" fetchPriority="high" className="hero" />\n  );',
                            line=18,
                        ),
                        edit(
                            P,
                            "index.html",
                            '    <meta charset="UTF-8" />',
                            '    <meta charset="UTF-8" />\n    <link rel="preconnect" href="https://img.shop-cdn.example" crossorigin />',
                            line=4,
                        ),
                        bash(
                            "npm run build",
                            "vite v5.4.10 building for production...\n✓ 412 modules transformed.\ndist/index.html                   0.71 kB │ gzip:  0.41 kB\ndist/assets/index-Bq3xT0aZ.js   187.22 kB │ gzip: 61.03 kB\n✓ built in 3.84s\n",
                            description="Production build",
                        ),
                        bash(lighthouse, "1.9 s\n", description="Measure LCP"),
                        commit(
                            "Load the product hero image eagerly with a responsive srcset",
                            2,
                            9,
                            1,
                            branch="perf/hero-lcp",
                        ),
                    ],
                    "LCP on the product page went from 4.1 s to 1.9 s. Next: the category page has the same lazy hero.",
                ),
            ],
        )
    ]


def checkout_a11y() -> list[dict[str, Any]]:
    axe = "npx @axe-core/cli http://localhost:4173/checkout --exit"
    return [
        session(
            P,
            "checkout accessibility",
            [
                turn(
                    "Run an accessibility check on the checkout page and fix what it finds.",
                    [
                        bash(
                            axe,
                            'Running axe-core 4.10.2 in chrome-headless\n\nViolation of "label" with 2 occurrences!\n  Form elements must have labels\n  - #card-number\n  - #card-expiry\nViolation of "color-contrast" with 1 occurrences!\n  Elements must meet minimum color contrast ratio thresholds\n  - .checkout-hint\n\n3 Accessibility issues detected.\n',
                            description="axe on the checkout page",
                            exit_code=1,
                        ),
                        read(
                            P,
                            "src/components/Checkout/CheckoutForm.tsx",
                            '<input id="card-number" placeholder="Card number" inputMode="numeric" />\n<input id="card-expiry" placeholder="MM/YY" />\n<p className="checkout-hint">We never store your card.</p>',
                        ),
                        edit(
                            P,
                            "src/components/Checkout/CheckoutForm.tsx",
                            '<input id="card-number" placeholder="Card number" inputMode="numeric" />\n<input id="card-expiry" placeholder="MM/YY" />',
                            '<label htmlFor="card-number">Card number</label>\n<input id="card-number" inputMode="numeric" autoComplete="cc-number" />\n<label htmlFor="card-expiry">Expiry (MM/YY)</label>\n<input id="card-expiry" autoComplete="cc-exp" />',
                            line=102,
                        ),
                        edit(
                            P,
                            "src/styles/checkout.css",
                            ".checkout-hint { color: #9a9a9a; }",
                            ".checkout-hint { color: #595959; } /* 7:1 on white */",
                            line=48,
                        ),
                        bash(
                            axe,
                            "Running axe-core 4.10.2 in chrome-headless\n\n0 violations found!\n",
                            description="axe again",
                        ),
                        commit(
                            "Label the checkout fields and fix contrast",
                            2,
                            6,
                            3,
                            branch="fix/checkout-a11y",
                        ),
                    ],
                    "axe found unlabeled card fields and a low-contrast hint. The fields have real labels and "
                    "autocomplete tokens now, and the hint is #595959 (7:1); axe reports 0 violations.",
                ),
            ],
        )
    ]


def api_retries() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "retries in the API client",
            [
                turn(
                    "Add retries with exponential backoff to apiFetch for 502/503/504 and network errors, at most 3 attempts. Never retry POSTs without an idempotency key.",
                    [
                        read(
                            P,
                            "src/api/client.ts",
                            "export async function apiFetch<T>(path: string, init: RequestInit = {}): Promise<T> {\n  const response = await fetch(`${BASE_URL}${path}`, withAuth(init));\n  if (!response.ok) throw new ApiError(response.status, await response.text());\n  return response.json();\n}",
                        ),
                        write(
                            P,
                            "src/api/retry.ts",
                            "const RETRYABLE = new Set([502, 503, 504]);\n\nexport interface RetryOptions { attempts?: number; baseDelayMs?: number; }\n\n/** Retry idempotent requests on gateway errors and network failures, with jittered backoff. */\nexport async function withRetry(run: () => Promise<Response>, method: string, opts: RetryOptions = {}): Promise<Response> {\n  const attempts = opts.attempts ?? 3;\n  for (let attempt = 1; ; attempt++) {\n    try {\n      const response = await run();\n      if (!RETRYABLE.has(response.status) || attempt >= attempts || !isIdempotent(method)) return response;\n    } catch (error) {\n      if (attempt >= attempts || !isIdempotent(method)) throw error;\n    }\n    await sleep(backoff(attempt, opts.baseDelayMs ?? 200));\n  }\n}\n",
                        ),
                        edit(
                            P,
                            "src/api/client.ts",
                            "  const response = await fetch(`${BASE_URL}${path}`, withAuth(init));",
                            "  const method = init.method ?? 'GET';\n  const response = await withRetry(() => fetch(`${BASE_URL}${path}`, withAuth(init)), method);",
                            line=21,
                        ),
                        write(
                            P,
                            "src/api/retry.test.ts",
                            "describe('withRetry', () => {\n  it('retries a GET on 503 up to 3 times', async () => { /* … */ });\n  it('does not retry a POST without an idempotency key', async () => { /* … */ });\n  it('retries a POST that carries Idempotency-Key', async () => { /* … */ });\n  it('gives up after the last attempt and returns the response', async () => { /* … */ });\n});\n",
                        ),
                        bash(
                            "npx vitest run src/api",
                            vitest_out("src/api/retry.test.ts", passed=9, seconds=0.9),
                            description="Run the API tests",
                        ),
                        commit(
                            "Retry idempotent API calls on gateway errors",
                            3,
                            72,
                            2,
                            branch="feat/api-retries",
                            created=["src/api/retry.ts", "src/api/retry.test.ts"],
                        ),
                    ],
                    "apiFetch now retries GET/PUT/DELETE (and POSTs with an Idempotency-Key) on 502/503/504 "
                    "and network errors, up to 3 attempts with jittered backoff.",
                ),
            ],
        )
    ]


def npm_audit() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "npm audit and registry tokens",
            [
                turn(
                    "npm audit flags a high severity issue. Fix it, and check that nothing sensitive is in .npmrc.",
                    [
                        bash(
                            "npm audit --omit=dev",
                            "# npm audit report\n\ncross-spawn  7.0.0 - 7.0.4\nSeverity: high\nRegular Expression Denial of Service (ReDoS) in cross-spawn - https://github.com/advisories/GHSA-3xgq-45jj-v275\nfix available via `npm audit fix`\nnode_modules/cross-spawn\n\n1 high severity vulnerability\n",
                            description="Audit production dependencies",
                        ),
                        bash(
                            "npm audit fix",
                            "changed 1 package, and audited 624 packages in 2s\n\nfound 0 vulnerabilities\n",
                            description="Apply the fix",
                        ),
                        bash(
                            "cat .npmrc",
                            "registry=https://registry.npmjs.org/\n@acme:registry=https://npm.pkg.github.com/\n//npm.pkg.github.com/:_authToken=${GITHUB_PACKAGES_TOKEN}\n",
                            description="Check the npm config",
                        ),
                        commit(
                            "Bump cross-spawn to 7.0.5 (GHSA-3xgq-45jj-v275)",
                            1,
                            3,
                            3,
                            branch="chore/audit",
                        ),
                    ],
                    "cross-spawn is bumped to 7.0.5 and npm audit is clean. .npmrc only references "
                    "${GITHUB_PACKAGES_TOKEN} from the environment; no literal token is committed.",
                ),
            ],
        )
    ]
