"""platform-infra: Terraform, Kubernetes manifests, CI workflows and Dockerfiles."""

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
    read,
    session,
    turn,
    web_search,
    write,
)

P = Project(
    "platform-infra",
    "hcl",
    {
        "terraform/modules/rds/main.tf": ["db_instance", "db_parameter_group", "db_subnet_group"],
        "terraform/envs/prod/main.tf": ["s3_bucket", "iam_role"],
    },
)
TF_PLAN = "terraform -chdir=terraform/envs/prod plan -no-color"


def stories() -> list[dict[str, Any]]:
    return [
        *rds_drift(),
        *hpa_flapping(),
        *ci_cache(),
        *slim_image(),
        routine.review(
            P,
            "ops/slim-image",
            [("docker/python.Dockerfile", 12, 6), (".github/workflows/deploy.yml", 2, 1)],
            "The multi-stage build is fine. Risk: python:3.11-slim has no libpq, and psycopg is installed "
            "from a wheel that bundles it, so that works; but the healthcheck in deploy.yml still calls "
            "curl, which the slim image does not have. Use python -c with urllib instead.",
        ),
        *cluster_secrets(),
        *oomkilled_job(),
        routine.catch_up(
            P,
            [
                "Give the nightly features job 6Gi until the lazy join ships",
                "Multi-stage, non-root Python image",
                "Cache pip downloads in CI",
                "Stabilize payments-api scale-down and raise the CPU target",
            ],
            "Last week in platform-infra: the nightly features job got 6Gi as a stopgap, the payments "
            "image is 212 MB and non-root, CI caches pip (about 3 minutes per run), and the payments "
            "HPA no longer flaps.",
        ),
        *certificate_expiry(),
        *staging_quota(),
    ]


def rds_drift() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "perpetual diff on the RDS parameter group",
            [
                turn(
                    "terraform plan for prod shows the RDS parameter group changing on every run, although nobody touches it. Why?",
                    [
                        bash(
                            TF_PLAN,
                            'module.rds.aws_db_instance.main: Refreshing state... [id=payments-prod]\n\n  # module.rds.aws_db_parameter_group.main will be updated in-place\n  ~ resource "aws_db_parameter_group" "main" {\n        name = "payments-prod-pg16"\n      - parameter {\n          - apply_method = "pending-reboot" -> null\n          - name         = "shared_preload_libraries"\n          - value        = "pg_stat_statements"\n        }\n      + parameter {\n          + apply_method = "immediate"\n          + name         = "shared_preload_libraries"\n          + value        = "pg_stat_statements"\n        }\n    }\n\nPlan: 0 to add, 1 to change, 0 to destroy.\n',
                            description="Plan prod",
                        ),
                        read(
                            P,
                            "terraform/modules/rds/main.tf",
                            'resource "aws_db_parameter_group" "main" {\n  name   = "${var.name}-pg16"\n  family = "postgres16"\n\n  parameter {\n    name  = "shared_preload_libraries"\n    value = "pg_stat_statements"\n  }\n}',
                        ),
                        web_search(
                            "terraform aws_db_parameter_group shared_preload_libraries apply_method perpetual diff",
                            [
                                (
                                    "aws_db_parameter_group: static parameters need apply_method = pending-reboot",
                                    "https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/db_parameter_group",
                                ),
                                (
                                    "Perpetual diff for static RDS parameters · hashicorp/terraform-provider-aws",
                                    "https://github.com/hashicorp/terraform-provider-aws/issues/593",
                                ),
                            ],
                        ),
                        edit(
                            P,
                            "terraform/modules/rds/main.tf",
                            '  parameter {\n    name  = "shared_preload_libraries"\n    value = "pg_stat_statements"\n  }',
                            '  parameter {\n    name         = "shared_preload_libraries"\n    value        = "pg_stat_statements"\n    apply_method = "pending-reboot" # static parameter: AWS stores it this way\n  }',
                            line=14,
                        ),
                        bash(
                            TF_PLAN,
                            "module.rds.aws_db_instance.main: Refreshing state... [id=payments-prod]\n\nNo changes. Your infrastructure matches the configuration.\n",
                            description="Plan prod again",
                        ),
                        commit(
                            "Declare apply_method for the static RDS parameter",
                            1,
                            3,
                            2,
                            branch="fix/rds-perpetual-diff",
                        ),
                    ],
                    "shared_preload_libraries is a static parameter, so AWS stores it with apply_method "
                    "pending-reboot while our config implied immediate; Terraform 'fixed' it on every plan. "
                    "Declaring pending-reboot makes the plan clean.",
                ),
            ],
        )
    ]


def hpa_flapping() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "payments HPA flapping",
            [
                turn(
                    "The payments-api deployment scales up and down every few minutes. Look at the HPA.",
                    [
                        bash(
                            "kubectl -n payments get hpa payments-api",
                            "NAME           REFERENCE                 TARGETS   MINPODS   MAXPODS   REPLICAS   AGE\npayments-api   Deployment/payments-api   48%/50%   3         12        7          41d\n",
                            description="HPA status",
                        ),
                        bash(
                            "kubectl -n payments describe hpa payments-api | tail -8",
                            "Events:\n  Type    Reason             Age    From                       Message\n  Normal  SuccessfulRescale  3m     horizontal-pod-autoscaler  New size: 7; reason: cpu resource utilization (percentage of request) above target\n  Normal  SuccessfulRescale  6m     horizontal-pod-autoscaler  New size: 4; reason: All metrics below target\n  Normal  SuccessfulRescale  9m     horizontal-pod-autoscaler  New size: 7; reason: cpu resource utilization (percentage of request) above target\n  Normal  SuccessfulRescale  12m    horizontal-pod-autoscaler  New size: 4; reason: All metrics below target\n",
                            description="Recent scaling events",
                        ),
                        read(
                            P,
                            "k8s/payments/hpa.yaml",
                            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: payments-api\nspec:\n  minReplicas: 3\n  maxReplicas: 12\n  metrics:\n    - type: Resource\n      resource:\n        name: cpu\n        target: {type: Utilization, averageUtilization: 50}",
                        ),
                        plan(
                            "# Calm the payments HPA\n\n- behavior.scaleDown.stabilizationWindowSeconds: 300 (the default 0 for our version)\n- scale down at most 1 pod per minute; scale up stays fast (100% per 30 s)\n- target CPU 65%: 50% sits inside the request-spike noise of the gateway calls\n- keep minReplicas 3 for zone spread"
                        ),
                    ],
                    "It flaps between 4 and 7 pods every three minutes: CPU hovers around the 50% target "
                    "and there is no scale-down stabilization. Decision: a 5-minute scale-down window and a 65% target.",
                ),
                turn(
                    "Apply that plan.",
                    [
                        edit(
                            P,
                            "k8s/payments/hpa.yaml",
                            "        target: {type: Utilization, averageUtilization: 50}",
                            "        target: {type: Utilization, averageUtilization: 65}\n  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 300\n      policies: [{type: Pods, value: 1, periodSeconds: 60}]\n    scaleUp:\n      policies: [{type: Percent, value: 100, periodSeconds: 30}]",
                            line=12,
                        ),
                        bash(
                            "kubectl apply -f k8s/payments/hpa.yaml",
                            "horizontalpodautoscaler.autoscaling/payments-api configured\n",
                            description="Apply",
                        ),
                        commit(
                            "Stabilize payments-api scale-down and raise the CPU target",
                            1,
                            8,
                            1,
                            branch="ops/hpa-behavior",
                        ),
                    ],
                    "Applied; the HPA now waits 5 minutes before scaling down and removes at most one pod a "
                    "minute.\nNext: check tomorrow's scaling events to confirm it settled.",
                ),
            ],
        )
    ]


def ci_cache() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "slow dependency install in CI",
            [
                turn(
                    "CI spends four minutes installing Python dependencies on every run. Cache them.",
                    [
                        bash(
                            "gh run list --workflow ci.yml --limit 5",
                            "STATUS  TITLE                                  WORKFLOW  BRANCH             EVENT         ID          ELAPSED\n✓       Verify webhook signatures against …    ci        fix/webhook-raw-…  pull_request  8812734411  7m41s\n✓       Index refunds by merchant and crea…    ci        perf/refunds-ind…  pull_request  8812690012  7m58s\n✓       Upgrade to FastAPI 0.115 and pyda…     ci        chore/upgrade-f…   pull_request  8812511935  8m02s\n",
                            description="Recent CI runs",
                        ),
                        read(
                            P,
                            ".github/workflows/ci.yml",
                            "jobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.11'\n      - run: pip install -r requirements.txt -r requirements-dev.txt\n      - run: pytest -q",
                        ),
                        edit(
                            P,
                            ".github/workflows/ci.yml",
                            "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.11'",
                            "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.11'\n          cache: pip\n          cache-dependency-path: |\n            requirements.txt\n            requirements-dev.txt",
                            line=14,
                        ),
                        commit("Cache pip downloads in CI", 1, 4, 0, branch="ci/pip-cache"),
                        bash(
                            "gh run watch --exit-status",
                            "✓ ci · 8813002217\nTriggered via push about 4 minutes ago\n\nJOBS\n✓ test in 3m12s (ID 24412876)\n",
                            description="Watch the new run",
                        ),
                    ],
                    "setup-python now caches pip downloads keyed on both requirements files; the first cached "
                    "run took 3m12s instead of ~8 minutes.",
                ),
            ],
        )
    ]


def slim_image() -> list[dict[str, Any]]:
    dockerfile = '# syntax=docker/dockerfile:1.7\nFROM python:3.11-slim AS build\nWORKDIR /src\nCOPY requirements.txt .\nRUN pip wheel --wheel-dir /wheels -r requirements.txt\n\nFROM python:3.11-slim\nRUN useradd --create-home app\nCOPY --from=build /wheels /wheels\nRUN pip install --no-cache-dir /wheels/* && rm -rf /wheels\nCOPY --chown=app app/ /srv/app/\nUSER app\nCMD ["uvicorn", "app.main:create_app", "--factory", "--host", "0.0.0.0", "--port", "8000"]\n'
    return [
        session(
            P,
            "a 1.4 GB Python image",
            [
                turn(
                    "The payments-api image is 1.4 GB. Make it smaller with a multi-stage build and run as non-root.",
                    [
                        bash(
                            "docker images payments-api --format '{{.Tag}}\\t{{.Size}}' | head -3",
                            "2026.11.12\t1.41GB\n2026.11.05\t1.40GB\n2026.10.29\t1.38GB\n",
                            description="Current image sizes",
                        ),
                        read(
                            P,
                            "docker/python.Dockerfile",
                            'FROM python:3.11\nWORKDIR /srv\nCOPY . .\nRUN apt-get update && apt-get install -y build-essential libpq-dev\nRUN pip install -r requirements.txt\nCMD ["uvicorn", "app.main:create_app", "--factory", "--host", "0.0.0.0"]',
                        ),
                        write(P, "docker/python.Dockerfile", dockerfile, create=False),
                        bash(
                            "docker build -f docker/python.Dockerfile -t payments-api:slim ../payments-api",
                            "#12 exporting to image\n#12 writing image sha256:4be1c0f2d9a8 done\n#12 naming to docker.io/library/payments-api:slim done\n",
                            description="Build the new image",
                        ),
                        bash(
                            "docker images payments-api:slim --format '{{.Size}}'",
                            "212MB\n",
                            description="New size",
                        ),
                        commit(
                            "Multi-stage, non-root Python image", 1, 12, 6, branch="ops/slim-image"
                        ),
                    ],
                    "The image is 212 MB instead of 1.41 GB: wheels are built in a throwaway stage, the "
                    "runtime is python:3.11-slim without compilers, and the app runs as the 'app' user.",
                ),
            ],
        )
    ]


def cluster_secrets() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "how secrets reach the payments pods",
            [
                turn(
                    "Audit how the payments secrets get into the cluster; someone said the gateway key is a plain env var in the deploy workflow.",
                    [
                        bash(
                            "kubectl get secrets -n payments",
                            "NAME                 TYPE     DATA   AGE\ngateway-credentials  Opaque   2      41d\npayments-db          Opaque   3      41d\n",
                            description="Secrets in the namespace",
                        ),
                        read(
                            P,
                            "k8s/payments/deployment.yaml",
                            "        env:\n          - name: GATEWAY_API_KEY\n            valueFrom:\n              secretKeyRef: {name: gateway-credentials, key: api-key}\n          - name: DATABASE_URL\n            valueFrom:\n              secretKeyRef: {name: payments-db, key: url}",
                        ),
                        bash(
                            "gh run view 8812734411 --log | grep -n 'AWS_ACCESS_KEY_ID' | head -3",
                            "412:deploy\tConfigure AWS\t2026-11-19T10:02:11Z AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
                            description="Does the deploy log leak anything?",
                        ),
                        bash(
                            "vault kv get -field=rotated_at secret/payments/gateway",
                            "2026-08-02T09:14:00Z\n",
                            description="When was the gateway key last rotated?",
                        ),
                        plan(
                            "# Secrets for the payments namespace\n\n- deploy workflow: OIDC role assumption instead of static AWS keys (nothing to print)\n- External Secrets Operator syncs gateway-credentials and payments-db from Vault every hour\n- rotate the gateway key now (last rotated 2026-08-02) and then every 90 days\n- mask AWS_* in the workflow with ::add-mask:: until OIDC is live"
                        ),
                    ],
                    "The pods read the gateway key from a Kubernetes secret, not a plain env var, but the "
                    "deploy workflow prints the static AWS access key in its log. Decision: OIDC for the "
                    "deploy role and External Secrets from Vault.\nNext: rotate the leaked AWS key today.",
                ),
            ],
        )
    ]


def oomkilled_job() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "nightly features job OOMKilled",
            [
                turn(
                    "The ml-pipeline nightly features job gets OOMKilled since last week. Check the cronjob.",
                    [
                        bash(
                            "kubectl -n ml get pods --field-selector status.phase=Failed",
                            "NAME                           READY   STATUS      RESTARTS   AGE\nnightly-features-29391-x7k2p   0/1     OOMKilled   0          7h\nnightly-features-29390-b2m9q   0/1     OOMKilled   0          31h\n",
                            description="Failed pods",
                        ),
                        bash(
                            "kubectl -n ml describe pod nightly-features-29391-x7k2p | grep -A4 'Last State'",
                            "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n    Limits:\n      memory:  4Gi\n",
                            description="Why did it die?",
                        ),
                        read(
                            P,
                            "k8s/ml/nightly-cronjob.yaml",
                            "            resources:\n              requests: {cpu: '2', memory: 2Gi}\n              limits: {memory: 4Gi}",
                        ),
                        edit(
                            P,
                            "k8s/ml/nightly-cronjob.yaml",
                            "              requests: {cpu: '2', memory: 2Gi}\n              limits: {memory: 4Gi}",
                            "              requests: {cpu: '2', memory: 3Gi}\n              limits: {memory: 6Gi}",
                            line=31,
                        ),
                        bash(
                            "kubectl apply -f k8s/ml/nightly-cronjob.yaml",
                            "cronjob.batch/nightly-features configured\n",
                            description="Apply",
                        ),
                        commit(
                            "Give the nightly features job 6Gi until the lazy join ships",
                            1,
                            2,
                            2,
                            branch="ops/nightly-memory",
                        ),
                    ],
                    "The features job hits its 4Gi limit (exit 137) on the pandas join. Raised the limit to "
                    "6Gi as a stopgap.\nRemaining: once ml-pipeline's lazy polars join ships, bring the limit back down.",
                ),
            ],
        )
    ]


def certificate_expiry() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "webshop certificate not renewing",
            [
                turn(
                    "We got an alert that the shop.example TLS certificate expires in 6 days. Why isn't cert-manager renewing it?",
                    [
                        bash(
                            "kubectl get certificate -A",
                            "NAMESPACE   NAME           READY   SECRET             AGE\npayments    api-tls        True    api-tls            88d\nwebshop     shop-tls       False   shop-tls           84d\n",
                            description="Certificates",
                        ),
                        bash(
                            "kubectl -n webshop describe certificaterequest shop-tls-7x2kq | tail -4",
                            "  Warning  Failed  12m  cert-manager-challenges  Accepting challenge authorization failed: acme: authorization error for shop.example: 403 urn:ietf:params:acme:error:unauthorized: Invalid response from http://shop.example/.well-known/acme-challenge/Zq3…: 404\n",
                            description="Why did the request fail?",
                        ),
                        read(
                            P,
                            "k8s/webshop/ingress.yaml",
                            "metadata:\n  annotations:\n    nginx.ingress.kubernetes.io/force-ssl-redirect: 'true'\n    nginx.ingress.kubernetes.io/configuration-snippet: |\n      location /.well-known/ { return 404; }",
                        ),
                        edit(
                            P,
                            "k8s/webshop/ingress.yaml",
                            "    nginx.ingress.kubernetes.io/configuration-snippet: |\n      location /.well-known/ { return 404; }",
                            "    # no snippet: it answered 404 for the ACME HTTP-01 challenge path",
                            line=7,
                        ),
                        bash(
                            "kubectl apply -f k8s/webshop/ingress.yaml && kubectl -n webshop get certificate shop-tls -w --request-timeout=120s",
                            "ingress.networking.k8s.io/shop configured\nNAME       READY   SECRET     AGE\nshop-tls   False   shop-tls   84d\nshop-tls   True    shop-tls   84d\n",
                            description="Apply and watch the certificate",
                        ),
                        commit(
                            "Stop the webshop ingress from blocking ACME challenges",
                            1,
                            1,
                            2,
                            branch="fix/acme-challenge",
                        ),
                    ],
                    "A configuration snippet added in September answered 404 for everything under "
                    "/.well-known/, including the ACME HTTP-01 challenge. Without it the certificate renewed "
                    "within a minute (READY True).",
                ),
            ],
        )
    ]


def staging_quota() -> list[dict[str, Any]]:
    return [
        session(
            P,
            "a resource quota for staging",
            [
                turn(
                    "Staging ate the whole node pool twice this month. Add a ResourceQuota and default limits to the staging namespace.",
                    [
                        bash(
                            "kubectl top pods -n staging --sort-by=memory | head -5",
                            "NAME                               CPU(cores)   MEMORY(bytes)\nload-test-runner-6c9f8d7b5-q2w8n   3412m        11802Mi\npayments-api-7d4b9c8f6-k9x2z       212m         612Mi\nwebshop-ssr-5f7c6d9b8-m3n4p        98m          401Mi\n",
                            description="Who uses the memory?",
                        ),
                        write(
                            P,
                            "k8s/staging/quota.yaml",
                            "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: staging-quota\n  namespace: staging\nspec:\n  hard:\n    requests.cpu: '8'\n    requests.memory: 16Gi\n    limits.memory: 24Gi\n---\napiVersion: v1\nkind: LimitRange\nmetadata:\n  name: staging-defaults\n  namespace: staging\nspec:\n  limits:\n    - type: Container\n      default: {memory: 512Mi, cpu: 500m}\n      defaultRequest: {memory: 256Mi, cpu: 100m}\n",
                        ),
                        bash(
                            "kubectl apply -f k8s/staging/quota.yaml",
                            "resourcequota/staging-quota created\nlimitrange/staging-defaults created\n",
                            description="Apply",
                        ),
                        commit(
                            "ResourceQuota and default limits for staging",
                            1,
                            23,
                            0,
                            branch="ops/staging-quota",
                            created=["k8s/staging/quota.yaml"],
                        ),
                    ],
                    "Staging now has a 16Gi request / 24Gi limit quota and containers get 512Mi by default; "
                    "the load-test runner alone was using 11.8 GiB.",
                ),
            ],
        )
    ]
