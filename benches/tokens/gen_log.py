"""A deterministic 2 MB server log for the token benchmark's log tasks.

`make_log(seed)` returns the log's text and the facts its task checks: the lines an
answer must show. Same seed, same bytes (Python's `random.Random` is stable across
versions for `randrange`/`choice`). Seeds: 26 has one ERROR with a backtrace; 27 has
request timeouts (the task asks for the first); 28 has server restarts (the task asks
for the last).
"""

from __future__ import annotations

import random

TARGET_BYTES = 2_000_000
PATHS = ["/api/items", "/api/users", "/api/orders", "/static/app.js", "/health", "/api/search"]
WORKERS = 8


def _stamp(n: int) -> str:
    s = 36_000 + n // 3
    return f"2026-11-23T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{(n * 37) % 1000:03d}"


def _request(rng: random.Random, n: int) -> str:
    path = rng.choice(PATHS)
    if path.startswith("/api/") and rng.random() < 0.7:
        path += f"/{rng.randrange(1, 5000)}"
    return (f"{_stamp(n)} INFO  [worker-{rng.randrange(WORKERS)}] request {n} "
            f"{rng.choice(['GET', 'GET', 'GET', 'POST', 'PUT'])} {path} -> {rng.choice([200, 200, 200, 201, 304, 404])} "
            f"in {rng.randrange(1, 400)} ms")


def _backtrace(n: int) -> list[str]:
    return [
        f"{_stamp(n)} ERROR [worker-5] request {n} POST /api/orders/4711: "
        "The value NIL is not of type NUMBER when binding SB-KERNEL::X",
        "Backtrace for: #<SB-THREAD:THREAD \"worker-5\" RUNNING {1004C8A3B3}>",
        "0: (SB-KERNEL:TWO-ARG-+ NIL 1)",
        "1: (SHOP::ORDER-TOTAL #<SHOP::ORDER 4711>)",
        "2: (SHOP::PRICE-ORDER #<SHOP::ORDER 4711> :CURRENCY :EUR)",
        "3: (SHOP::HANDLE-POST-ORDER #<HUNCHENTOOT:REQUEST {1004C8B0C3}>)",
        "4: ((:METHOD HUNCHENTOOT:HANDLE-REQUEST (HUNCHENTOOT:ACCEPTOR T)) #<SHOP::ACCEPTOR (host *, port 8080)> #<HUNCHENTOOT:REQUEST {1004C8B0C3}>) [fast-method]",
        "5: ((:METHOD HUNCHENTOOT:PROCESS-REQUEST (T)) #<HUNCHENTOOT:REQUEST {1004C8B0C3}>) [fast-method]",
        "6: (HUNCHENTOOT::DO-WITH-ACCEPTOR-REQUEST-COUNT-INCREMENTED #<SHOP::ACCEPTOR (host *, port 8080)> #<FUNCTION (LAMBDA NIL :IN HUNCHENTOOT:PROCESS-CONNECTION) {1004C8B10B}>)",
        "7: ((:METHOD HUNCHENTOOT:PROCESS-CONNECTION (HUNCHENTOOT:ACCEPTOR T)) #<SHOP::ACCEPTOR (host *, port 8080)> #<USOCKET:STREAM-USOCKET {1004C89F23}>) [fast-method]",
        "8: ((FLET SB-THREAD::WITH-MUTEX-THUNK :IN SB-THREAD::RUN))",
        f"{_stamp(n)} INFO  [worker-5] request {n} POST /api/orders/4711 -> 500 in 3 ms",
    ]


def make_log(seed: int) -> tuple[str, dict]:
    """The log's text and the task's facts: `event` (the line) and `lines` (to show)."""
    rng = random.Random(seed)
    lines: list[str] = []
    n = 0
    special_at = {26: [0.61], 27: [0.43, 0.52, 0.77, 0.81], 28: [0.12, 0.47, 0.88]}[seed]
    size, marks = 0, []
    while size < TARGET_BYTES:
        n += 1
        if special_at and size >= special_at[0] * TARGET_BYTES:
            special_at.pop(0)
            if seed == 26:
                block = _backtrace(n)
            elif seed == 27:
                block = [f"{_stamp(n)} WARN  [worker-{rng.randrange(WORKERS)}] request {n} GET /api/search "
                         f"timed out after 30000 ms (upstream db-{rng.randrange(3)})"]
            else:
                block = [f"{_stamp(n)} INFO  [main] server restarted (pid {4000 + n % 997}, "
                         f"generation {len(marks) + 2})"]
            marks.append(len(lines))
            lines += block
        else:
            lines.append(_request(rng, n))
        size += len(lines[-1]) + 1
    if seed == 26:
        first = marks[0]
        event, show = lines[first], lines[first - 3: first + 13]
    elif seed == 27:
        first = marks[0]
        event, show = lines[first], lines[first - 5: first + 1]
    else:
        last = marks[-1]
        event, show = lines[last], lines[last: last + 6]
    return "\n".join(lines) + "\n", {"event": event, "event_line": lines.index(event) + 1, "lines": show}
