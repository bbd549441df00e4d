"""ml-pipeline: nightly feature building and model training (polars, LightGBM, pytest)."""

# ruff: noqa: E501 (stories are data: prompts and tool output are kept on one line each)

from __future__ import annotations

from typing import Any

from scenarios import routine
from scenarios.kit import (
    Project,
    bash,
    commit,
    edit,
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
    "ml-pipeline",
    "python",
    {
        "pipeline/features.py": ["build_features", "ratio_features", "load_events", "join_orders"],
        "pipeline/train.py": ["TrainConfig", "train_model", "evaluate", "save_model"],
        "pipeline/validate.py": ["SchemaError", "check_schema", "null_report", "range_report"],
        "pipeline/encoding.py": ["TargetEncoder", "fit_encoder", "target_encode"],
        "pipeline/io.py": ["read_parquet", "write_parquet", "s3_uri"],
        "dags/nightly.py": ["nightly_dag", "feature_task", "train_task"],
    },
)
PYTEST = "pytest -q"


def stories() -> list[dict[str, Any]]:
    return [
        routine.tour(
            P,
            "the nightly DAG",
            "dags/nightly.py",
            "build_features",
            ["dags/nightly.py", "pipeline/train.py", "pipeline/bench_models.py"],
            "The nightly DAG runs at 02:00 UTC: build_features joins yesterday's events with orders and "
            "writes data/features/<date>.parquet, then train_model retrains the chargeback model and "
            "saves it under models/<date>/ if validation AUC beats the current one.",
        ),
        *ratio_inf(),
        *target_leakage(),
        routine.review(
            P,
            "fix/target-leakage",
            [
                ("pipeline/encoding.py", 58, 7),
                ("pipeline/train.py", 11, 2),
                ("tests/test_encoding.py", 34, 0),
            ],
            "The out-of-fold logic is right. One risk: TargetEncoder.fit keeps per-merchant means for "
            "merchants with a single order, and m=50 smoothing keeps them near the mean, which is what "
            "we want; but scoring must use the encoder saved with the model, not a refit. Worth a test.",
        ),
        *schema_check(),
        *polars_lazy(),
        routine.catch_up(
            P,
            [
                "Join orders lazily with polars",
                "Check the events schema before building features",
                "Out-of-fold target encoding for merchant_id",
                "Null ratio for zero orders; fail validation on non-finite values",
            ],
            "Recent work: the orders join is lazy (peak memory 2.1 GiB), the DAG checks the events "
            "schema first, target encoding is out of fold (validation AUC 0.808, no more leakage), and "
            "inf ratios fail validation.",
        ),
        *notebook_key(),
        *model_choice(),
        *seeded_training(),
        *faster_tests(),
        *drift_report(),
    ]


def ratio_inf() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "AUC drop after Tuesday's retrain",
            [
                turn(
                    "The model's AUC dropped from 0.81 to 0.62 after Tuesday's retrain. Investigate the features.",
                    [
                        bash(
                            "python -m pipeline.validate --report data/features/2026-10-27.parquet",
                            "rows: 1,482,004  columns: 38\nratio_refunds_orders      inf: 1,204 (0.08%)  null: 0\ndays_since_signup         ok\nbasket_value_p90          ok\norders_30d                ok\n1 column with non-finite values\n",
                            description="Profile the feature file",
                        ),
                        read(
                            P,
                            "pipeline/features.py",
                            "def ratio_features(df: pl.LazyFrame) -> pl.LazyFrame:\n    return df.with_columns(\n        ratio_refunds_orders=pl.col('refunds') / pl.col('orders'),\n    )",
                        ),
                        bash(
                            f"{PYTEST} tests/test_features.py -k ratio",
                            pytest_out(
                                "tests/test_features.py",
                                passed=4,
                                failed=[
                                    (
                                        "tests/test_features.py::test_ratio_for_new_customers",
                                        "AssertionError: ratio_refunds_orders is inf for customers with 0 orders",
                                    )
                                ],
                            ),
                            description="Feature tests",
                        ),
                    ],
                    "Customers with zero orders get refunds/0 = inf, and since Tuesday's data includes "
                    "brand-new sign-ups (the onboarding change) the split points on that column are garbage. "
                    "Next: give 0 orders a null ratio and make validation fail on non-finite values.",
                ),
                turn(
                    "Fix it: 0 orders should give a null ratio, and validate must fail the run on inf.",
                    [
                        edit(
                            P,
                            "pipeline/features.py",
                            "        ratio_refunds_orders=pl.col('refunds') / pl.col('orders'),",
                            "        ratio_refunds_orders=pl.when(pl.col('orders') > 0)\n        .then(pl.col('refunds') / pl.col('orders'))\n        .otherwise(None),",
                            line=61,
                        ),
                        edit(
                            P,
                            "pipeline/validate.py",
                            "    report = null_report(df)",
                            "    report = null_report(df)\n    bad = [c for c in numeric_columns(df) if df[c].is_infinite().any()]\n    if bad:\n        raise SchemaError(f'non-finite values in {bad}')",
                            line=44,
                        ),
                        bash(
                            f"{PYTEST} tests/test_features.py tests/test_validate.py",
                            pytest_out("tests/test_features.py tests/test_validate.py", passed=17),
                            description="Feature and validation tests",
                        ),
                        bash(
                            "python -m pipeline.train --config configs/train.yaml --date 2026-10-27",
                            "loaded 1,482,004 rows, 38 features\nvalidation auc=0.812 logloss=0.331\nsaved models/2026-10-27/model.txt\n",
                            description="Retrain on Tuesday's data",
                        ),
                        commit(
                            "Null ratio for zero orders; fail validation on non-finite values",
                            3,
                            18,
                            2,
                            branch="fix/ratio-inf",
                        ),
                    ],
                    "With a null ratio for zero orders the retrain is back at AUC 0.812, and validate now "
                    "stops the nightly run on any inf.",
                ),
            ],
        )
    ]


def target_leakage() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "leakage in the merchant target encoding",
            [
                turn(
                    "Validation AUC is 0.97 but production is 0.80. I suspect leakage in the merchant target encoding.",
                    [
                        read(
                            P,
                            "pipeline/encoding.py",
                            "def target_encode(df: pl.DataFrame, column: str, target: str) -> pl.DataFrame:\n    # mean target per category, computed on the full frame\n    means = df.group_by(column).agg(pl.col(target).mean().alias(f'{column}_te'))\n    return df.join(means, on=column)",
                        ),
                        read(
                            P,
                            "pipeline/train.py",
                            "def train_model(cfg: TrainConfig) -> Model:\n    df = target_encode(load_features(cfg.date), 'merchant_id', 'chargeback')\n    train, valid = split_by_time(df, cfg.valid_days)\n    return fit(train, valid)",
                        ),
                        task(
                            "Which features see the target before the split?",
                            "List every feature in pipeline/ computed from the target column, and whether it is computed before or after the train/validation split.",
                            "Only merchant_id_te uses the target: target_encode runs in train_model before split_by_time, so every validation row's encoding includes its own label and the labels of later rows. All other features are computed from inputs only.",
                            uses=7,
                        ),
                        plan(
                            "# Out-of-fold target encoding\n\n- fit the merchant encoding on the training window only, 5 folds within it (each row encoded by the other folds)\n- validation and scoring rows use the encoder fit on the full training window\n- smoothing toward the global mean with m=50, so small merchants are not memorised\n- a test that validation AUC does not change when validation labels are shuffled"
                        ),
                    ],
                    "Confirmed: merchant_id_te is computed on the full frame before the split, so validation "
                    "rows see their own labels. Decision: out-of-fold encoding with smoothing.",
                ),
                turn(
                    "Implement the out-of-fold encoding and retrain.",
                    [
                        edit(
                            P,
                            "pipeline/encoding.py",
                            "    # mean target per category, computed on the full frame\n    means = df.group_by(column).agg(pl.col(target).mean().alias(f'{column}_te'))",
                            "    # out of fold: each row is encoded by the folds it is not in, smoothed toward the mean\n    means = _oof_means(df, column, target, folds=5, m=50)",
                            line=22,
                        ),
                        edit(
                            P,
                            "pipeline/train.py",
                            "    df = target_encode(load_features(cfg.date), 'merchant_id', 'chargeback')\n    train, valid = split_by_time(df, cfg.valid_days)",
                            "    train, valid = split_by_time(load_features(cfg.date), cfg.valid_days)\n    encoder = TargetEncoder('merchant_id', 'chargeback', folds=5, m=50).fit(train)\n    train, valid = encoder.transform_oof(train), encoder.transform(valid)",
                            line=48,
                        ),
                        bash(
                            "python -m pipeline.train --config configs/train.yaml --date 2026-11-02",
                            "fold 1 auc=0.812\nfold 2 auc=0.806\nfold 3 auc=0.809\nfold 4 auc=0.803\nfold 5 auc=0.811\nvalidation auc=0.808 (was 0.971 with in-sample encoding)\n",
                            description="Retrain",
                        ),
                        bash(
                            f"{PYTEST} tests/test_train.py",
                            pytest_out("tests/test_train.py", passed=8, seconds=14.2),
                            description="Training tests",
                        ),
                        commit(
                            "Out-of-fold target encoding for merchant_id",
                            3,
                            71,
                            9,
                            branch="fix/target-leakage",
                        ),
                    ],
                    "Validation AUC is now 0.808, in line with production's 0.80; the 0.97 was leakage.",
                ),
            ],
        )
    ]


def schema_check() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "schema check in the nightly DAG",
            [
                turn(
                    "Add a schema check step to the nightly DAG so bad upstream data fails fast, before the 40-minute feature step.",
                    [
                        read(
                            P,
                            "dags/nightly.py",
                            "with DAG('nightly', schedule='0 2 * * *', catchup=False) as dag:\n    features = feature_task()\n    train = train_task()\n    features >> train",
                        ),
                        write(
                            P,
                            "pipeline/schemas/events.json",
                            '{\n  "order_id": "Int64",\n  "customer_id": "Int64",\n  "merchant_id": "Int64",\n  "amount": "Decimal(18,4)",\n  "currency": "Utf8",\n  "created_at": "Datetime(us, UTC)",\n  "refunded": "Boolean"\n}\n',
                        ),
                        edit(
                            P,
                            "pipeline/validate.py",
                            "def check_schema(df: pl.LazyFrame) -> None:\n    pass",
                            "def check_schema(df: pl.LazyFrame, expected: dict[str, str]) -> None:\n    actual = {name: str(dtype) for name, dtype in df.collect_schema().items()}\n    missing = sorted(set(expected) - set(actual))\n    wrong = sorted(c for c in expected if c in actual and actual[c] != expected[c])\n    if missing or wrong:\n        raise SchemaError(missing=missing, wrong={c: (expected[c], actual[c]) for c in wrong})",
                            line=12,
                        ),
                        edit(
                            P,
                            "dags/nightly.py",
                            "    features = feature_task()\n    train = train_task()\n    features >> train",
                            "    schema = schema_task()\n    features = feature_task()\n    train = train_task()\n    schema >> features >> train",
                            line=31,
                        ),
                        write(
                            P,
                            "tests/test_validate.py",
                            "def test_missing_column_fails(events): ...\n\ndef test_wrong_dtype_fails(events): ...\n\ndef test_matching_schema_passes(events): ...\n",
                        ),
                        bash(
                            f"{PYTEST} tests/test_validate.py",
                            pytest_out("tests/test_validate.py", passed=6),
                            description="Validation tests",
                        ),
                        commit(
                            "Check the events schema before building features",
                            4,
                            58,
                            3,
                            branch="feat/schema-check",
                            created=["pipeline/schemas/events.json", "tests/test_validate.py"],
                        ),
                    ],
                    "The DAG now starts with a schema check against pipeline/schemas/events.json; a missing "
                    "column or changed dtype fails in seconds instead of 40 minutes in.",
                ),
            ],
        )
    ]


def polars_lazy() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "the join still runs out of memory",
            [
                turn(
                    "The nightly job still OOMs, now on join_orders. Finish moving it from pandas to a polars lazy scan.",
                    [
                        read(
                            P,
                            "pipeline/features.py",
                            "def join_orders(events_path: str, orders_path: str) -> pd.DataFrame:\n    events = pd.read_parquet(events_path)\n    orders = pd.read_parquet(orders_path)\n    return events.merge(orders, on='order_id', how='left')",
                            offset=140,
                        ),
                        edit(
                            P,
                            "pipeline/features.py",
                            "def join_orders(events_path: str, orders_path: str) -> pd.DataFrame:\n    events = pd.read_parquet(events_path)\n    orders = pd.read_parquet(orders_path)\n    return events.merge(orders, on='order_id', how='left')",
                            "def join_orders(events_path: str, orders_path: str) -> pl.LazyFrame:\n    events = pl.scan_parquet(events_path)\n    orders = pl.scan_parquet(orders_path).select('order_id', 'amount', 'refunded')\n    return events.join(orders, on='order_id', how='left')",
                            line=141,
                        ),
                        bash(
                            "git mv pipeline/pandas_utils.py pipeline/legacy/pandas_utils.py",
                            "",
                            description="Park the pandas helpers",
                        ),
                        bash(
                            "/usr/bin/time -v python -m pipeline.features --date 2026-11-03 2>&1 | grep -E 'Maximum resident|Elapsed'",
                            "\tElapsed (wall clock) time (h:mm:ss or m:ss): 6:12.40\n\tMaximum resident set size (kbytes): 2203412\n",
                            description="Peak memory of the feature step",
                        ),
                        bash(
                            f"{PYTEST} tests/test_features.py",
                            pytest_out("tests/test_features.py", passed=21, seconds=5.6),
                            description="Feature tests",
                        ),
                        commit(
                            "Join orders lazily with polars", 3, 14, 19, branch="perf/lazy-join"
                        ),
                    ],
                    "join_orders now scans both parquet files lazily and selects only the three order columns "
                    "it needs: peak memory 2.1 GiB (it was killed at 16 GiB), 6 minutes wall clock.",
                ),
            ],
        )
    ]


def notebook_key() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "a key in a notebook output",
            [
                turn(
                    "Someone noticed an AWS key printed in the exploration notebook's output. Clean it up and make sure it cannot happen again.",
                    [
                        read(
                            P,
                            "notebooks/exploration.ipynb",
                            '{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": ["import os\\n", "print(os.environ)"],\n   "outputs": [{"output_type": "stream", "text": ["AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\\n", "AWS_DEFAULT_REGION=eu-west-1\\n"]}]\n  }\n ]\n}',
                        ),
                        bash(
                            "jupyter nbconvert --clear-output --inplace notebooks/exploration.ipynb",
                            "[NbConvertApp] Converting notebook notebooks/exploration.ipynb to notebook\n[NbConvertApp] Writing 18211 bytes to notebooks/exploration.ipynb\n",
                            description="Strip the outputs",
                        ),
                        bash(
                            "aws configure list --profile pipeline",
                            "      Name                    Value             Type    Location\n      ----                    -----             ----    --------\n   profile                 pipeline           manual    --profile\naccess_key     ****************MPLE shared-credentials-file\n    region                eu-west-1      config-file    ~/.aws/config\n",
                            description="Which credentials does the pipeline profile use?",
                        ),
                        edit(
                            P,
                            ".pre-commit-config.yaml",
                            "repos:",
                            "repos:\n  - repo: https://github.com/kynan/nbstripout\n    rev: 0.8.1\n    hooks:\n      - id: nbstripout",
                            line=1,
                        ),
                        commit(
                            "Strip notebook outputs and enforce it in pre-commit",
                            2,
                            6,
                            14,
                            branch="chore/nbstripout",
                        ),
                    ],
                    "The output came from print(os.environ) and showed the pipeline profile's access key. "
                    "Outputs are stripped and nbstripout runs in pre-commit.\nNext: the key is still in git "
                    "history, so it has to be rotated.",
                ),
            ],
        )
    ]


def model_choice() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "LightGBM or XGBoost",
            [
                turn(
                    "Should we switch the chargeback model from LightGBM to XGBoost? Compare them on our data before deciding.",
                    [
                        web_search(
                            "lightgbm vs xgboost categorical features large tabular dataset training time",
                            [
                                (
                                    "LightGBM: Advanced Topics — Categorical Feature Support",
                                    "https://lightgbm.readthedocs.io/en/stable/Advanced-Topics.html",
                                ),
                                (
                                    "XGBoost: Categorical Data",
                                    "https://xgboost.readthedocs.io/en/stable/tutorials/categorical.html",
                                ),
                            ],
                        ),
                        web_fetch(
                            "https://lightgbm.readthedocs.io/en/stable/Advanced-Topics.html",
                            "How does LightGBM handle categorical features?",
                            "LightGBM can use categorical features directly, without one-hot encoding. It finds the optimal split over categories by sorting them by their accumulated gradient statistics, which is often better than one-hot encoding and much faster for high-cardinality features.",
                        ),
                        bash(
                            "python -m pipeline.bench_models --models lgbm,xgb --folds 5 --date 2026-11-09",
                            "model  auc_mean  auc_std  fit_s   predict_ms_per_10k\nlgbm   0.8121    0.0031   41.2    3.1\nxgb    0.8094    0.0035   118.7   4.4\n",
                            description="Benchmark both on the same folds",
                        ),
                        plan(
                            "# Keep LightGBM\n\n- AUC is within noise (0.812 vs 0.809) and LightGBM trains 2.9x faster on our 1.5M rows\n- native categorical handling covers merchant_category without one-hot encoding\n- revisit only if we need XGBoost's monotonic constraints per feature group"
                        ),
                    ],
                    "Decision: keep LightGBM. XGBoost is not better on our folds (0.809 vs 0.812 AUC) and trains "
                    "almost three times slower.",
                ),
            ],
        )
    ]


def seeded_training() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "flaky training test",
            [
                turn(
                    "test_model_beats_baseline fails now and then in CI. Find the nondeterminism.",
                    [
                        bash(
                            f"{PYTEST} tests/test_train.py -k baseline --count 10",
                            pytest_out(
                                "tests/test_train.py",
                                passed=8,
                                failed=[
                                    (
                                        "tests/test_train.py::test_model_beats_baseline[3-10]",
                                        "assert 0.7932 >= 0.8",
                                    ),
                                    (
                                        "tests/test_train.py::test_model_beats_baseline[7-10]",
                                        "assert 0.7968 >= 0.8",
                                    ),
                                ],
                                seconds=41.0,
                            ),
                            description="Repeat the flaky test",
                        ),
                        read(
                            P,
                            "pipeline/train.py",
                            "def fit(train: pl.DataFrame, valid: pl.DataFrame) -> Model:\n    model = LGBMClassifier(n_estimators=400, learning_rate=0.05, subsample=0.8, colsample_bytree=0.8)\n    return model.fit(train.drop('chargeback'), train['chargeback'])",
                        ),
                        edit(
                            P,
                            "pipeline/train.py",
                            "    model = LGBMClassifier(n_estimators=400, learning_rate=0.05, subsample=0.8, colsample_bytree=0.8)",
                            "    model = LGBMClassifier(\n        n_estimators=400, learning_rate=0.05, subsample=0.8, colsample_bytree=0.8,\n        random_state=cfg.seed, deterministic=True, force_row_wise=True,\n    )",
                            line=71,
                        ),
                        bash(
                            f"{PYTEST} tests/test_train.py -k baseline --count 10",
                            pytest_out("tests/test_train.py", passed=10, seconds=39.5),
                            description="Repeat the test",
                        ),
                        commit(
                            "Seed LightGBM and make training deterministic",
                            1,
                            4,
                            1,
                            branch="test/seeded-training",
                        ),
                    ],
                    "subsample and colsample_bytree drew a fresh random seed on every run, so AUC wandered "
                    "around the 0.8 threshold. Training is now seeded and deterministic; 10 of 10 runs pass.",
                ),
            ],
        )
    ]


def faster_tests() -> list[dict[str, Any]]:
    durations = pytest_out("tests", passed=64, seconds=212.4).replace(
        "=========================",
        "============================= slowest 4 durations ==============================\n"
        "88.12s call     tests/test_train.py::test_model_beats_baseline\n"
        "41.90s call     tests/test_features.py::test_build_features_end_to_end\n"
        "30.44s setup    tests/test_train.py::test_save_and_load\n"
        "12.07s call     tests/test_drift.py::test_shifted_feature_is_flagged\n"
        "=========================",
        1,
    )
    return [
        session(
            P,
            "a faster test suite",
            [
                turn(
                    "The test suite takes three and a half minutes. Find the slow tests and speed them up without losing coverage.",
                    [
                        bash(f"{PYTEST} --durations=4", durations, description="Slowest tests"),
                        read(
                            P,
                            "tests/conftest.py",
                            "@pytest.fixture(scope='function')\ndef features():\n    return build_features(load_events('tests/data/events-2026-10.parquet'))  # 400k rows",
                        ),
                        edit(
                            P,
                            "tests/conftest.py",
                            "@pytest.fixture(scope='function')\ndef features():\n    return build_features(load_events('tests/data/events-2026-10.parquet'))  # 400k rows",
                            "@pytest.fixture(scope='session')\ndef features():\n    # 20k rows, stratified on chargeback: same positives rate, 20x faster\n    return build_features(load_events('tests/data/events-sample-20k.parquet'))",
                            line=18,
                        ),
                        bash(
                            f"{PYTEST}",
                            pytest_out("tests", passed=64, seconds=31.8),
                            description="Full suite",
                        ),
                        commit(
                            "Session-scoped 20k-row feature fixture for the tests",
                            2,
                            5,
                            2,
                            branch="test/faster-suite",
                        ),
                    ],
                    "The features fixture rebuilt 400k rows for every test. A session-scoped, stratified 20k "
                    "sample keeps the same positive rate; the suite takes 32 s instead of 212 s.",
                ),
            ],
        )
    ]


def drift_report() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "weekly drift report",
            [
                turn(
                    "Add a weekly drift report: PSI per feature between the training data and last week's scoring data.",
                    [
                        write(
                            P,
                            "pipeline/drift.py",
                            '"""Population stability index per feature: training reference vs recent scoring data."""\n\nDRIFT_PSI = 0.25\n\n\ndef psi(reference: pl.Series, current: pl.Series, bins: int = 10) -> float:\n    edges = reference.quantile_bins(bins)\n    ...\n\n\ndef drift_table(reference: pl.DataFrame, current: pl.DataFrame) -> pl.DataFrame:\n    ...\n',
                        ),
                        write(
                            P,
                            "tests/test_drift.py",
                            "def test_identical_data_has_zero_psi(): ...\n\ndef test_shifted_feature_is_flagged(): ...\n",
                        ),
                        bash(
                            f"{PYTEST} tests/test_drift.py",
                            pytest_out("tests/test_drift.py", passed=5),
                            description="Drift tests",
                        ),
                        bash(
                            "python -m pipeline.drift --reference data/train/2026-11-01.parquet --current data/scoring/2026-W46.parquet",
                            "feature               psi    status\nratio_refunds_orders  0.31   DRIFT\norders_30d            0.12   watch\ndays_since_signup     0.04   ok\nbasket_value_p90      0.02   ok\n",
                            description="Run it on last week",
                        ),
                        commit(
                            "Weekly PSI drift report",
                            3,
                            96,
                            0,
                            branch="feat/drift",
                            created=["pipeline/drift.py", "tests/test_drift.py"],
                        ),
                    ],
                    "The drift report works; ratio_refunds_orders already drifts (PSI 0.31) because of the "
                    "new-customer mix.\nNext: schedule it in the DAG every Monday and post the table to #ml-alerts.",
                ),
            ],
        )
    ]
