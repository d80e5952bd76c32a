"""The progress line of a streaming command (`translate`, `parse`)."""

import datetime
import time


class ProgressLine:
    """`VERB N/TOTAL lines [####......] P%, R sentences/s, ETA H:MM:SS`.

    On a terminal one line redrawn in place (`\\r`); on any other stream (a
    log file) one line at most every `interval` seconds, and the last one.

    Args:
        stream: a text stream (e.g. `sys.stderr`).
        total: int or `None`. Number of lines, for the bar and the ETA.
        interval: float. Seconds between lines off a terminal. Defaults to
            `10.0`.
        verb: str. The line's first word. Defaults to `"translated"`.
    """

    def __init__(self, stream, total=None, interval=10.0, verb="translated"):
        self.stream = stream
        self.verb = verb
        self.total = total
        self.interval = interval
        self.redraw = getattr(stream, "isatty", lambda: False)()
        self.start = time.monotonic()
        self.done = 0
        self.shown = None  # the `done` of the last line shown
        self.last = None  # and when it was shown
        self.width = 0

    def update(self, lines):
        """Counts `lines` more lines done and shows the progress if due."""
        self.done += lines
        now = time.monotonic()
        if self.redraw or self.last is None or now - self.last >= self.interval:
            self._show(now)

    def close(self):
        """Shows the final count and ends the line."""
        if self.shown != self.done:
            self._show(time.monotonic())
        if self.redraw:
            self.stream.write("\n")
            self.stream.flush()

    def _show(self, now):
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        text = f"{self.verb} {self.done}"
        if self.total:
            filled = min(20, 20 * self.done // self.total)
            percent = 100 * self.done // self.total
            text += f"/{self.total} lines [{'#' * filled}{'.' * (20 - filled)}]"
            text += f" {percent}%"
        else:
            text += " lines"
        text += f", {rate:.1f} sentences/s"
        if self.total and 0 < rate and self.done < self.total:
            eta = datetime.timedelta(seconds=round((self.total - self.done) / rate))
            text += f", ETA {eta}"
        if self.redraw:
            self.width = max(self.width, len(text))
            self.stream.write(f"\r{text.ljust(self.width)}")
        else:
            self.stream.write(f"{text}\n")
        self.stream.flush()
        self.shown, self.last = self.done, now
