"""Stage 0, fetch: a source's URL -> the page's bytes, politely.

:class:`Fetcher` wraps one httpx client for a whole refresh:

* a descriptive User-Agent naming the project (``FetchConfig.user_agent``);
* conditional requests: the ETag and Last-Modified of the snapshot in force
  go out as ``If-None-Match`` / ``If-Modified-Since``; a 304 is "not modified"
  only as the answer to them (a 304 to an unconditional request, or naming
  other validators, fails the source, as does any final status but 200);
* timeouts (``timeout`` seconds for connect, read, write and pool);
* retries with exponential backoff (tenacity) on timeouts, connection
  errors, truncated bodies and HTTP 408/425/429/5xx, honouring
  ``Retry-After`` (seconds or an HTTP date); a ``Retry-After`` longer than
  ``max_retry_after`` fails the source at once instead of blocking the run;
* a per-host rate limit (``rate_limit`` requests per second, raised to the
  site's robots.txt ``Crawl-delay``), applied to every request including
  redirects and robots.txt itself;
* robots.txt (urllib.robotparser, RFC 9309 reading: a 4xx robots.txt allows
  everything, an unreachable one disallows everything);
* a maximum page size, checked against ``Content-Length`` and again while
  the body streams in (decoded bytes, so a compression bomb stops early too).

MediaWiki sites (hosts listed in ``schema/mediawiki_sites.json`` or in
``FetchConfig.mediawiki_apis``) are fetched through the API
(``action=parse``, ``formatversion=2``) rather than by scraping the skin; the
parsed HTML is wrapped in a minimal UTF-8 document and is the page.

Every failure raises :class:`~pipeline.errors.FetchError` naming the source
id and the URL, with a reason a person can act on.
"""

from __future__ import annotations

import concurrent.futures
import email.utils
import html
import json
import re
import time
import urllib.robotparser
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import tenacity

from . import __version__
from .corpus import DEFAULT_MAX_PAGE_BYTES, Source
from .encoding import decode_bytes, encoding_name
from .errors import FetchError
from .records import utc_now
from .schema import mediawiki_sites

DEFAULT_USER_AGENT = (f"rulings/{__version__} (Yu-Gi-Oh! OCG rulings corpus pipeline; scheduled refresh; "
                      f"python-httpx/{httpx.__version__})")
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
# Header charsets worth re-encoding from; any other is left to the page's own declaration and its bytes.
SAFE_HEADER_CHARSETS = frozenset({"gb18030", "cp950", "big5hkscs", "iso8859-1", "cp1252", "shift_jis", "euc_jp",
                                  "euc_kr"})
HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([\w.:-]+)""", re.I)
RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


@lru_cache(maxsize=1)
def default_mediawiki_apis() -> dict[str, str]:
    """``schema/mediawiki_sites.json``: host (``*.`` wildcards allowed) -> API URL
    (``{host}`` is replaced by the page's host)."""
    return dict(mediawiki_sites())


@dataclass(frozen=True)
class FetchConfig:
    """How to fetch. Times are seconds; ``rate_limit`` is requests per second
    per host (0: no limit); ``retries`` counts attempts after the first."""

    user_agent: str = DEFAULT_USER_AGENT
    timeout: float = 30.0  # between two reads of a response
    retries: int = 3
    backoff: float = 2.0
    backoff_max: float = 60.0
    max_retry_after: float = 60.0  # a longer Retry-After fails the source at once
    max_crawl_delay: float = 30.0  # a robots.txt Crawl-delay over this fails the source: no waiting for hours
    max_response_seconds: float = 120.0  # a whole response, first byte to last (a trickling server is cut off)
    source_deadline: float = 600.0  # all of one source: robots.txt, retries, waits
    deadline: float = 3600.0  # the whole run: sources not fetched by then fail
    rate_limit: float = 1.0
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    respect_robots: bool = True
    mediawiki_apis: Mapping[str, str] = field(default_factory=default_mediawiki_apis)
    sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class FetchResult:
    """One fetched page: ``status`` 200 with ``data``, or 304 with ``data`` None."""

    source_id: str
    url: str  # the URL requested (the API URL for a MediaWiki page)
    status: int
    data: bytes | None
    etag: str | None
    last_modified: str | None
    attempts: int
    fetched_at: str = ""  # UTC, ISO 8601

    @property
    def not_modified(self) -> bool:
        return self.status == 304


class _RetryableStatus(Exception):
    """An HTTP status worth retrying; ``retry_after`` in seconds or None."""

    def __init__(self, status: int, retry_after: float | None):
        self.status = status
        self.retry_after = retry_after
        super().__init__(f"HTTP {status}")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` -> seconds to wait (``delay-seconds`` or an HTTP date); None if absent or invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def mediawiki_request(url: str, apis: Mapping[str, str]) -> tuple[str, dict[str, str]] | None:
    """The API URL and ``action=parse`` parameters for a MediaWiki article URL
    (``/wiki/Title`` or ``?title=Title``), or None when the host is not a
    known MediaWiki site."""
    parts = urlsplit(url)
    host = parts.netloc.lower()
    api = apis.get(host)
    if api is None:
        api = next((v for k, v in apis.items() if k.startswith("*.") and host.endswith(k[1:])), None)
    if api is None:
        return None
    title = parse_qs(parts.query).get("title", [""])[0]
    if not title and "/wiki/" in parts.path:
        title = unquote(parts.path.split("/wiki/", 1)[1])
    if not title:
        return None
    params = {"action": "parse", "page": title.replace("_", " "), "prop": "text", "formatversion": "2",
              "format": "json", "redirects": "1", "disableeditsection": "1", "disablelimitreport": "1"}
    return api.replace("{host}", parts.netloc), params


def mediawiki_page(body: bytes, source_id: str, url: str) -> bytes:
    """An ``action=parse`` JSON answer -> a UTF-8 HTML page; FetchError if it is an error or malformed."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FetchError(f"MediaWiki API answer is not JSON: {exc}", source_id=source_id, place=url) from None
    if isinstance(data, dict) and "error" in data:
        err = data["error"] if isinstance(data["error"], dict) else {}
        raise FetchError(f"MediaWiki API error {err.get('code', '?')}: {err.get('info', '')}",
                         source_id=source_id, place=url)
    parsed = data.get("parse") if isinstance(data, dict) else None
    text = parsed.get("text") if isinstance(parsed, dict) else None
    if not isinstance(text, str):
        raise FetchError("MediaWiki API answer has no parse.text (formatversion=2)", source_id=source_id, place=url)
    title = html.escape(str(parsed.get("title", "")))
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f"<body>{text}</body></html>\n").encode("utf-8")


def _to_utf8(body: bytes, headers: httpx.Headers, source_id: str = "") -> bytes:
    """Re-encode a text page as UTF-8 when the HTTP header declares another
    charset (the snapshot keeps no headers). The declaration is checked
    against the bytes like a ``<meta charset>`` is
    (:func:`pipeline.encoding.decode_bytes`): UTF-8 served as ISO-8859-1 (a
    common server default, and Latin-1 decodes any bytes) stays UTF-8. A
    charset no page should use (UTF-7, UTF-16/32 without BOM) or an unknown
    one is ignored: the page's own declaration and the bytes decide."""
    declared = HEADER_CHARSET.search(headers.get("content-type", ""))
    charset = encoding_name(declared.group(1)) if declared else None
    if charset not in SAFE_HEADER_CHARSETS:
        return body
    try:
        return decode_bytes(body, source_id, charset).text.encode("utf-8")
    except (LookupError, UnicodeError):
        return body  # normalize's own charset detection takes over


def _unexpected_status(status: int, headers: httpx.Headers) -> str:
    """Why a final status other than 200 (or a 304 to a conditional
    request) fails a source: 204, 206, a 3xx that could not be followed, a
    4xx or 5xx left after the retries."""
    reason = f"HTTP {status} {httpx.codes.get_reason_phrase(status)}".rstrip()
    if 300 <= status < 400:
        where = headers.get("location")
        return (f"{reason} without a Location header to follow" if not where else
                f"{reason} to {where!r}, which could not be followed")
    if status < 300:
        return f"{reason}: the fetcher expects 200 with the page (or 304 to a conditional request); no snapshot stored"
    return reason


def _weak_etag(tag: str) -> str:
    """An entity tag without its weakness prefix (RFC 9110 weak comparison)."""
    tag = tag.strip()
    return tag[2:] if tag.startswith(("W/", "w/")) else tag


def _http_date(value: str | None) -> float | None:
    """An HTTP date as a POSIX timestamp, or None when absent or unreadable."""
    try:
        when = email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None
    return when.timestamp() if when is not None and when.tzinfo is not None else None


def _check_not_modified(etag: str | None, last_modified: str | None, answer_etag: str | None,
                        answer_lm: str | None, source_id: str, url: str) -> None:
    """Raise FetchError unless a 304 answers the conditional request made
    with the stored snapshot's validators (``etag``, ``last_modified``): a
    304 to a request that sent neither ``If-None-Match`` nor
    ``If-Modified-Since`` says nothing about any snapshot, and one whose
    ``ETag`` differs from the one sent, or whose ``Last-Modified`` is later
    than the one sent, names content no stored snapshot holds."""
    if not etag and not last_modified:
        raise FetchError("HTTP 304 Not Modified to a request that sent no If-None-Match / If-Modified-Since (a 304 "
                         "only answers a conditional request); no snapshot stored", source_id=source_id, place=url)
    if etag and answer_etag and _weak_etag(answer_etag) != _weak_etag(etag):
        raise FetchError(f"HTTP 304 Not Modified with ETag {answer_etag!r}, not the {etag!r} sent in If-None-Match: it "
                         "matches no stored snapshot", source_id=source_id, place=url)
    sent, answered = _http_date(last_modified), _http_date(answer_lm)
    if sent is not None and answered is not None and answered > sent:
        raise FetchError(f"HTTP 304 Not Modified with Last-Modified {answer_lm!r}, later than the {last_modified!r} "
                         "sent in If-Modified-Since: it matches no stored snapshot", source_id=source_id, place=url)


CRAWL_DELAY = re.compile(r"^\s*crawl-delay\s*:\s*([^\s#]+)", re.I)


def _crawl_delays(lines: list[str]) -> float | None:
    """The largest Crawl-delay of a robots.txt, read as a float (inf for
    an absurd one), or None: urllib.robotparser reads whole numbers only."""
    delays = []
    for line in lines:
        m = CRAWL_DELAY.match(line)
        if m:
            try:
                delays.append(float(m.group(1)))
            except ValueError:
                continue
    return max(delays) if delays else None


class Fetcher:
    """Fetches pages for one refresh run; use as a context manager.

    Every wait (rate limit, Crawl-delay, retry backoff, Retry-After) and every
    read is bounded by the source's deadline and the run's
    (:attr:`FetchConfig.source_deadline`, :attr:`FetchConfig.deadline`): a
    scheduled job always finishes. Every request, redirects included, goes
    through the rate limit and robots.txt of its own origin."""

    def __init__(self, config: FetchConfig | None = None):
        self.config = config or FetchConfig()
        self._last_request: dict[str, float] = {}
        self._interval: dict[str, float] = {}
        self._robots: dict[str, urllib.robotparser.RobotFileParser | str] = {}
        self._run_deadline = time.monotonic() + self.config.deadline
        self._source_deadline = self._run_deadline
        self._source_id = ""
        # Requests run in threads so a response that outlasts its time can be abandoned (_get_once).
        self._requests = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="rulings-fetch")
        self._client = httpx.Client(
            headers={"User-Agent": self.config.user_agent}, timeout=self.config.timeout,
            follow_redirects=True, event_hooks={"request": [self._before_request]})

    def __enter__(self) -> "Fetcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._requests.shutdown(wait=False, cancel_futures=True)  # an abandoned request ends with its server
        self._client.close()

    # ----------------------------------------------------------------- politeness

    def _check_deadline(self, place: str, waiting: float = 0.0) -> None:
        """FetchError when ``waiting`` more seconds would pass the source's or the run's deadline."""
        now = time.monotonic()
        if now + waiting > self._run_deadline:
            raise FetchError(f"the run's deadline ({self.config.deadline:g} s, --deadline) is reached",
                             source_id=self._source_id, place=place)
        if now + waiting > self._source_deadline:
            raise FetchError(f"the source's deadline ({self.config.source_deadline:g} s, --source-deadline) is "
                             "reached", source_id=self._source_id, place=place)

    def _sleep(self, seconds: float) -> None:
        self._check_deadline("waiting", seconds)
        self.config.sleep(seconds)

    def _before_request(self, request: httpx.Request) -> None:
        """Every request, redirects included: robots.txt of its origin, then the rate limit."""
        url = str(request.url)
        if self.config.respect_robots and request.url.path != "/robots.txt":
            self._check_robots(url, self._source_id)
        self._throttle(request)

    def _throttle(self, request: httpx.Request) -> None:
        """Wait until the host's interval has passed since its last request."""
        host = request.url.netloc.decode("ascii", "replace")
        base = 1.0 / self.config.rate_limit if self.config.rate_limit > 0 else 0.0
        interval = max(base, self._interval.get(host, 0.0))
        last = self._last_request.get(host)
        if last is not None and interval > 0:
            wait = last + interval - time.monotonic()
            if wait > 0:
                self._sleep(wait)
        self._last_request[host] = time.monotonic()

    def _check_robots(self, url: str, source_id: str) -> None:
        """Raise FetchError when the site's robots.txt disallows ``url`` for our agent."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            self._robots[origin] = self._read_robots(origin, source_id)
        robots = self._robots[origin]
        if isinstance(robots, str):
            raise FetchError(f"robots.txt unreachable ({robots}); not fetching (RFC 9309)",
                             source_id=source_id, place=url)
        if not robots.can_fetch(self.config.user_agent, url):
            raise FetchError(f"disallowed by {origin}/robots.txt for user agent {self.config.user_agent!r}",
                             source_id=source_id, place=url)
        delay = robots.crawl_delay(self.config.user_agent)
        # robotparser reads whole seconds only: a delay it could not read (45.5, 1e400) counts at its largest.
        unread = getattr(robots, "max_crawl_delay", None)
        if delay is None and unread:
            delay = unread
        if delay:
            if float(delay) > self.config.max_crawl_delay:
                raise FetchError(f"{origin}/robots.txt asks a Crawl-delay of {float(delay):g} s, over the limit of "
                                 f"{self.config.max_crawl_delay:g} s (--max-crawl-delay); not fetched",
                                 source_id=source_id, place=url)
            self._interval[parts.netloc] = float(delay)

    def _read_robots(self, origin: str, source_id: str) -> urllib.robotparser.RobotFileParser | str:
        """The parsed robots.txt, or a string saying why it is unreachable."""
        parser = urllib.robotparser.RobotFileParser(origin + "/robots.txt")
        try:
            status, body, _, _ = self._get_with_retries(origin + "/robots.txt", {}, source_id, ROBOTS_MAX_BYTES)
        except FetchError as exc:
            return exc.message
        if status >= 400:
            parser.allow_all = True  # no robots.txt (or not for us): everything is allowed
        else:
            lines = body.decode("utf-8", "replace").splitlines()
            parser.parse(lines)
            parser.max_crawl_delay = _crawl_delays(lines)
        return parser

    # ----------------------------------------------------------------- fetching

    def fetch(self, source: Source, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        """Fetch ``source.url`` (through the MediaWiki API when its host is a
        known wiki), conditionally on the validators of the snapshot in force.

        Raises FetchError for robots.txt refusals, HTTP errors, timeouts,
        connection failures, truncated or oversized bodies and malformed API
        answers, after the configured retries.
        """
        self._source_id = source.id
        self._source_deadline = min(self._run_deadline, time.monotonic() + self.config.source_deadline)
        self._check_deadline(source.url)
        if not source.url.startswith(("http://", "https://")):
            raise FetchError(f"URL {source.url!r} is not http(s)", source_id=source.id, place="manifest url")
        wiki = mediawiki_request(source.url, self.config.mediawiki_apis)
        url, params = wiki if wiki else (source.url, None)
        try:
            request_url = str(httpx.URL(url, params=params))
        except httpx.InvalidURL as exc:
            raise FetchError(f"invalid URL: {exc}", source_id=source.id, place="manifest url") from None
        headers = {}  # robots.txt is checked for every request, redirects included (_before_request)
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        fetched_at = utc_now()
        status, body, response_headers, attempts = self._get_with_retries(request_url, headers, source.id)
        result_etag, result_lm = response_headers.get("etag"), response_headers.get("last-modified")
        if status == 304:
            _check_not_modified(etag, last_modified, result_etag, result_lm, source.id, request_url)
            return FetchResult(source.id, request_url, 304, None, result_etag or etag, result_lm or last_modified,
                               attempts, fetched_at)
        if status != 200:
            raise FetchError(_unexpected_status(status, response_headers), source_id=source.id, place=request_url)
        if wiki:
            body = mediawiki_page(body, source.id, request_url)
        return FetchResult(source.id, request_url, status, body, result_etag, result_lm, attempts, fetched_at)

    def _get_with_retries(self, url: str, headers: dict, source_id: str,
                          limit: int | None = None) -> tuple[int, bytes, httpx.Headers, int]:
        """GET with retries: (status, body, headers, attempts); FetchError when the retries are spent."""
        cfg = self.config
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda e: isinstance(e, (_RetryableStatus, *RETRYABLE_ERRORS))),
            stop=tenacity.stop_after_attempt(cfg.retries + 1) | self._stop_on_long_retry_after,
            wait=self._wait, sleep=self._sleep, reraise=True)
        attempts = 0
        try:
            for attempt in retrying:
                with attempt:
                    attempts += 1
                    status, body, response_headers = self._get_once(url, headers, source_id,
                                                                    limit or cfg.max_page_bytes)
                    body = _to_utf8(body, response_headers, source_id)
        except _RetryableStatus as exc:
            if exc.retry_after is not None and exc.retry_after > cfg.max_retry_after:
                reason = (f"HTTP {exc.status} with Retry-After {exc.retry_after:g} s, over the limit of "
                          f"{cfg.max_retry_after:g} s; try again later")
            else:
                reason = f"HTTP {exc.status} after {attempts} attempt{'s' if attempts > 1 else ''}"
            raise FetchError(reason, source_id=source_id, place=url) from None
        except httpx.TimeoutException as exc:
            raise FetchError(f"timed out ({type(exc).__name__}, limit {cfg.timeout:g} s) after {attempts} "
                             f"attempt{'s' if attempts > 1 else ''}", source_id=source_id, place=url) from None
        except httpx.RemoteProtocolError as exc:
            raise FetchError(f"truncated or malformed response after {attempts} attempt{'s' if attempts > 1 else ''}"
                             f": {exc}", source_id=source_id, place=url) from None
        except httpx.HTTPError as exc:
            raise FetchError(f"{type(exc).__name__}: {exc or 'request failed'} (after {attempts} attempt"
                             f"{'s' if attempts > 1 else ''})", source_id=source_id, place=url) from None
        return status, body, response_headers, attempts

    def _get_once(self, url: str, headers: dict, source_id: str, limit: int) -> tuple[int, bytes, httpx.Headers]:
        """One GET within :attr:`FetchConfig.max_response_seconds` (and the
        deadlines), headers included: the request runs in a worker thread and
        is abandoned when its time is up, since httpx's timeouts bound only
        the gap between two reads and a server may trickle its headers.
        Raises _RetryableStatus, httpx errors or FetchError."""
        self._check_deadline(url)
        budget = min(self.config.max_response_seconds,
                     min(self._run_deadline, self._source_deadline) - time.monotonic())
        future = self._requests.submit(self._get_once_now, url, headers, source_id, limit)
        try:
            return future.result(timeout=max(budget, 0.0))
        except concurrent.futures.TimeoutError:
            future.cancel()
            self._check_deadline(url)
            raise FetchError(f"the response took over {self.config.max_response_seconds:g} s "
                             "(--max-response-seconds; still sending its headers or body)",
                             source_id=source_id, place=url) from None

    def _get_once_now(self, url: str, headers: dict, source_id: str, limit: int) -> tuple[int, bytes, httpx.Headers]:
        """One GET, its body streamed under ``limit`` bytes (none read for a
        304 or an error status)."""
        with self._client.stream("GET", url, headers=headers) as response:
            status = response.status_code
            if status in RETRY_STATUSES:
                raise _RetryableStatus(status, parse_retry_after(response.headers.get("retry-after")))
            if status != 200:
                return status, b"", response.headers
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise FetchError(f"page is {declared} bytes (Content-Length), over the limit of {limit} bytes",
                                 source_id=source_id, place=url)
            chunks, total = [], 0
            cut_off = time.monotonic() + self.config.max_response_seconds
            for chunk in response.iter_bytes():
                total += len(chunk)
                if total > limit:
                    raise FetchError(f"page is over the limit of {limit} bytes (stopped reading at byte {total})",
                                     source_id=source_id, place=url)
                if time.monotonic() > cut_off:
                    raise FetchError(f"the response took over {self.config.max_response_seconds:g} s "
                                     f"(--max-response-seconds; {total} bytes read)", source_id=source_id, place=url)
                self._check_deadline(url)
                chunks.append(chunk)
            return status, b"".join(chunks), response.headers

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """``Retry-After`` when the server sent one, else exponential backoff."""
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _RetryableStatus) and exc.retry_after is not None:
            return exc.retry_after
        return min(self.config.backoff_max, self.config.backoff * 2 ** (state.attempt_number - 1))

    def _stop_on_long_retry_after(self, state: tenacity.RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        return (isinstance(exc, _RetryableStatus) and exc.retry_after is not None
                and exc.retry_after > self.config.max_retry_after)
