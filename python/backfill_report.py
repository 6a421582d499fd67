"""Tell the backfill manager how far training got, and hear when it stops a pod.

One file, the Python standard library only (Python 3.8+): copy it next to
your training script, or into your image. Under backfill every `tensorflow`
container gets

* ``BACKFILL_REPORT_URL``: the URL to POST progress to;
* ``BACKFILL_REPORT_CA``: the PEM of the CA of that HTTPS endpoint;
* a ServiceAccount token for the audience ``backfill.dev`` in
  ``/var/run/secrets/backfill.dev/token``, renewed by the kubelet;
* its pod's annotations in ``/etc/backfill/annotations``, where the
  operator's stop notice (``backfill.dev/stop-at``) appears before it stops
  the pod itself.

Without ``BACKFILL_REPORT_URL`` (on a laptop, under another operator, or a
manager with reports off) every function here does nothing, so the same
script runs anywhere::

    import backfill_report

    backfill_report.report(step)                   # progress
    backfill_report.report(step, checkpoint=True)  # a checkpoint of `step` is durable
    if backfill_report.stop_noticed():             # the operator will stop this pod
        save(); backfill_report.report(step, checkpoint=True)  # ... and now it may at once

``report`` never raises into the training loop: a report that cannot be
delivered is logged (logger ``backfill_report``) and ``report`` returns
False. Keras users add ``backfill_report.ReportCallback()`` after their
``ModelCheckpoint`` or ``BackupAndRestore``; users of
``tf.distribute.experimental.PreemptionCheckpointHandler`` pass
``backfill_report.termination_config(...)``. See docs/colocation.md,
section 3, for the contract and examples.
"""

import json
import logging
import os
import random
import signal
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.client import HTTPException
from typing import Callable, Dict, List, NamedTuple, Optional

# ReportCallback is left out: a star import would import TensorFlow.
__all__ = [
    "ReportError",
    "StopNotice",
    "enabled",
    "is_chief",
    "report",
    "stop_notice",
    "stop_noticed",
    "stopping",
    "termination_config",
    "watch_sigterm",
]

URL_ENV = "BACKFILL_REPORT_URL"
CA_ENV = "BACKFILL_REPORT_CA"
# Where the operator mounts the token and the annotations. Module
# attributes, read at each call: a test or an unusual mount may change them.
TOKEN_FILE = "/var/run/secrets/backfill.dev/token"
ANNOTATIONS_FILE = "/etc/backfill/annotations"
STOP_AT_ANNOTATION = "backfill.dev/stop-at"
STOP_REASON_ANNOTATION = "backfill.dev/stop-reason"

# The exit code for a stop: 128 + SIGTERM. Under restartPolicy ExitCode,
# 128-255 restart the replica and 1-127 fail the job.
EXIT_RESTARTABLE = 143

# The longest wait between two tries, whatever Retry-After asks.
_MAX_DELAY = 10.0

log = logging.getLogger("backfill_report")


class ReportError(Exception):
    """A report the manager did not accept, or that could not be sent.

    ``status`` is the HTTP status of the last answer, None when there was
    none (no connection, no token, a bad argument).
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def enabled() -> bool:
    """True when this process runs under backfill with reports on."""
    return bool(os.environ.get(URL_ENV))


def report(
    step: int,
    epoch: Optional[int] = None,
    checkpoint: bool = False,
    *,
    raise_errors: bool = False,
    attempts: int = 4,
    backoff: float = 0.5,
    timeout: float = 5.0
) -> bool:
    """POSTs the training's progress to the manager.

    step is the global step (an int >= 0); epoch, if given, the epoch;
    checkpoint=True says a checkpoint covering this step is durable now
    (written and visible to every replica), which also answers a stop
    notice: the operator then stops the pod at once.

    The URL, CA and token are read afresh at each call (the kubelet renews
    the token). Connection errors, 429 and 5xx answers are tried again,
    ``attempts`` times in all, after ``backoff`` seconds doubling each time
    (or what Retry-After says, at most 10 s); 400, 401, 403, 404 and 413
    are not, their plain-text reason is logged.

    Returns True when the manager accepted the report, False when it did
    not, could not be reached, or reports are off (no BACKFILL_REPORT_URL).
    Never raises, unless raise_errors=True: then a failure raises
    ReportError.
    """
    url = os.environ.get(URL_ENV, "")
    if not url:
        return False
    try:
        body = _body(step, epoch, checkpoint)
        token = _token()
        context = _ssl_context(os.environ.get(CA_ENV, ""))
    except (ValueError, OSError, ssl.SSLError) as err:
        return _failed("backfill: cannot report step %r: %s" % (step, err), None, raise_errors)

    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),  # the manager is in the cluster: never through a proxy
        urllib.request.HTTPSHandler(context=context),
    )
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    delay = backoff
    status: Optional[int] = None
    why = ""
    for attempt in range(1, max(1, attempts) + 1):
        retry_after: Optional[float] = None
        try:
            with opener.open(request, timeout=timeout) as answer:
                answer.read()
                return True
        except urllib.error.HTTPError as err:
            status, why = err.code, _reason(err)
            if err.code != 429 and err.code < 500:
                break
            retry_after = _retry_after(err)
        except urllib.error.URLError as err:
            status, why = None, str(err.reason)
            if isinstance(err.reason, ssl.SSLCertVerificationError):
                why += " (is BACKFILL_REPORT_CA the CA of BACKFILL_REPORT_URL?)"
                break
        except (OSError, ValueError, HTTPException) as err:  # timeouts, resets, malformed answers
            status, why = None, "%s: %s" % (type(err).__name__, err)
        if attempt < attempts:
            wait = retry_after if retry_after is not None else delay * random.uniform(0.5, 1.0)
            time.sleep(min(max(wait, 0.0), _MAX_DELAY))
            delay *= 2
    what = "checkpoint at step %d" % step if checkpoint else "step %d" % step
    answer = "HTTP %d: %s" % (status, why) if status is not None else why
    # After SIGTERM the pod is being deleted, and the manager takes no
    # more reports from it: expected, not worth a warning.
    level = logging.INFO if status == 403 and _sigterm.is_set() else logging.WARNING
    return _failed("backfill: the report of %s was not accepted: %s" % (what, answer), status, raise_errors, level)


def _body(step: int, epoch: Optional[int], checkpoint: bool) -> bytes:
    if not _is_count(step):
        raise ValueError("step must be an int >= 0, not %r" % (step,))
    fields: Dict[str, object] = {"step": int(step), "checkpoint": bool(checkpoint)}
    if epoch is not None:
        if not _is_count(epoch):
            raise ValueError("epoch must be an int >= 0 or None, not %r" % (epoch,))
        fields["epoch"] = int(epoch)
    return json.dumps(fields).encode("utf-8")


def _is_count(n: object) -> bool:
    """An int >= 0, numpy and TensorFlow integers included; not a bool."""
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        return False
    return n.__index__() >= 0  # type: ignore[attr-defined]


def _token() -> str:
    with open(TOKEN_FILE, encoding="utf-8") as f:
        token = f.read().strip()
    if not token:
        raise ValueError("the token file %s is empty" % TOKEN_FILE)
    if any(c.isspace() or not c.isprintable() for c in token):
        raise ValueError("the token file %s holds more than a token" % TOKEN_FILE)
    return token


def _ssl_context(ca_pem: str) -> ssl.SSLContext:
    """Verifies the manager against its CA; without one, the system's."""
    if not ca_pem.strip():
        return ssl.create_default_context()
    context = ssl.create_default_context(cadata=ca_pem)
    # Python 3.13 turns on X.509 strict checks, which refuse some
    # self-signed CAs a cluster makes; the CA is pinned here, not public.
    context.verify_flags &= ~getattr(ssl, "VERIFY_X509_STRICT", 0)
    return context


def _reason(err: urllib.error.HTTPError) -> str:
    try:
        text = err.read(512).decode("utf-8", "replace").strip()
    except Exception:
        text = ""
    return text or str(err.reason)


def _retry_after(err: urllib.error.HTTPError) -> Optional[float]:
    value = err.headers.get("Retry-After") if err.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


_last_warning: Dict[str, float] = {}
_warning_lock = threading.Lock()


def _failed(message: str, status: Optional[int], raise_errors: bool, level: int = logging.WARNING) -> bool:
    if raise_errors:
        raise ReportError(message, status)
    # The same failure every few steps is logged once a minute.
    key = message if status is None else "%s:%d" % (message.split(":", 1)[0], status)
    now = time.monotonic()
    with _warning_lock:
        last = _last_warning.get(key)
        if last is not None and now - last < 60:
            return False
        _last_warning[key] = now
    log.log(level, "%s", message)
    return False


# --- The stop notice ------------------------------------------------------


class StopNotice(NamedTuple):
    """The operator's notice that it will stop this pod.

    reason is why (e.g. TFJobSuspended, TFJobSucceeded); at is when the pod
    gets SIGTERM (None if the annotation cannot be read as a time). A
    checkpoint reported after the notice lets the operator stop the pod at
    once, before ``at``.
    """

    reason: str
    at: Optional[datetime]


def stop_notice(path: Optional[str] = None) -> Optional[StopNotice]:
    """The operator's stop notice of this pod, or None while there is none.

    Reads the downward-API file (/etc/backfill/annotations) the kubelet
    keeps current; cheap enough to call every step or every second.
    """
    annotations = _annotations(path or ANNOTATIONS_FILE)
    if STOP_AT_ANNOTATION not in annotations:
        return None
    return StopNotice(annotations.get(STOP_REASON_ANNOTATION, ""), _parse_time(annotations[STOP_AT_ANNOTATION]))


def stop_noticed(path: Optional[str] = None) -> bool:
    """True once the operator announced it will stop this pod."""
    return stop_notice(path) is not None


def _annotations(path: str) -> Dict[str, str]:
    """Parses the kubelet's format: one key="Go-quoted value" per line."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if not sep:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            try:
                value = json.loads(value)
            except ValueError:
                value = value[1:-1]
        out[key.strip()] = value
    return out


def _parse_time(value: str) -> Optional[datetime]:
    """An RFC 3339 time as the operator writes it, 2026-03-14T12:00:15Z."""
    value = value.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


_sigterm = threading.Event()


def watch_sigterm() -> bool:
    """Catches SIGTERM so that ``stopping()`` sees it, instead of dying.

    Preemption, eviction and the operator's own stops send SIGTERM, then
    SIGKILL after the pod's grace period (60 s by default under backfill).
    Call it from the main thread, before training; after it, the process
    no longer ends on SIGTERM by itself: save, report and exit (143) when
    ``stopping()`` says so. A handler installed before is still called.
    Returns False (and changes nothing) off the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        log.warning("backfill: watch_sigterm() must be called from the main thread")
        return False
    previous = signal.getsignal(signal.SIGTERM)

    def handler(signum, frame):
        _sigterm.set()
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, handler)
    return True


def stopping(path: Optional[str] = None) -> bool:
    """True once this pod got SIGTERM (see watch_sigterm) or a stop notice."""
    return _sigterm.is_set() or stop_noticed(path)


# --- Distributed training -------------------------------------------------


def is_chief() -> bool:
    """True for the replica that writes the checkpoint: the chief (or
    master), else worker 0 of a cluster without one, or a process without
    TF_CONFIG. Reporting from it alone is enough: reports are per job."""
    try:
        config = json.loads(os.environ.get("TF_CONFIG", "") or "{}")
    except ValueError:
        return True
    task = config.get("task") or {}
    kind, index = task.get("type", ""), task.get("index", 0)
    if not kind:
        return True
    if kind in ("chief", "master"):
        return True
    cluster = config.get("cluster") or {}
    return kind == "worker" and index == 0 and not cluster.get("chief") and not cluster.get("master")


def termination_config(
    step: Optional[Callable[[], int]] = None, grace_period: int = 0, exit_code: int = EXIT_RESTARTABLE
) -> object:
    """A tf.distribute.experimental.TerminationConfig for backfill.

    For tf.distribute.experimental.PreemptionCheckpointHandler (TF 2.10+,
    MultiWorkerMirroredStrategy): the handler saves when this pod got
    SIGTERM or the operator's stop notice, then reports the checkpoint (the
    chief, with step(), e.g. ``lambda: handler.total_run_calls``) and exits
    with exit_code, 143 by default, which restartPolicy ExitCode restarts
    (the handler's own default, 42, would fail the job). grace_period 0
    saves at once: the notice and the pod's grace period are short. Being
    explicit also stops the handler from polling the GCE metadata server
    instead of watching SIGTERM on GCE GPU machines.
    """
    import tensorflow as tf

    watch_sigterm()

    def exit_fn():
        if step is not None and is_chief():
            report(int(step()), checkpoint=True)
        sys.exit(exit_code)

    return tf.distribute.experimental.TerminationConfig(
        termination_watcher_fn=stopping, exit_fn=exit_fn, grace_period=grace_period
    )


# --- Keras ----------------------------------------------------------------

_callback_class = None


def _make_callback_class():
    """Builds ReportCallback on first use, so that importing this module
    does not import TensorFlow."""
    global _callback_class
    if _callback_class is not None:
        return _callback_class
    try:
        import tensorflow as tf

        base = tf.keras.callbacks.Callback
    except ImportError:
        try:
            import keras
        except ImportError as err:
            raise ImportError("backfill_report.ReportCallback needs TensorFlow (or Keras)") from err
        base = keras.callbacks.Callback

    class ReportCallback(base):  # type: ignore[misc,valid-type]
        """Reports a Keras fit's progress to the backfill manager.

        Place it after the callback that saves checkpoints:

            callbacks=[tf.keras.callbacks.BackupAndRestore(backup_dir),
                       backfill_report.ReportCallback(every_n_steps=200)]

        Keras calls callbacks in list order, so at the end of each epoch
        the checkpoint is written before this callback reports it
        (checkpoint_on_epoch_end, for ModelCheckpoint and BackupAndRestore
        with their default save_freq="epoch"; not for save_best_only,
        which does not save every epoch). For any other save, call
        ``checkpoint_saved()`` right after it. Every every_n_steps steps,
        at most every min_interval seconds, it reports progress. The step
        is the optimizer's iteration count, which a restore brings back;
        the epoch is Keras's, counted from 1 as Keras prints it.

        chief_only (default): only the replica that writes the checkpoint
        reports; the others stay quiet.
        """

        def __init__(self, every_n_steps=100, min_interval=10.0, checkpoint_on_epoch_end=True, chief_only=True):
            super().__init__()
            self.every_n_steps = max(1, int(every_n_steps))
            self.min_interval = float(min_interval)
            self.checkpoint_on_epoch_end = checkpoint_on_epoch_end
            self._on = enabled() and (is_chief() or not chief_only)
            self._batches = 0
            self._epoch: Optional[int] = None
            self._last_step = 0  # the step of the last report
            self._last_time = float("-inf")

        def step(self) -> int:
            """The global step: the optimizer's iterations, else batches seen."""
            iterations = getattr(getattr(self.model, "optimizer", None), "iterations", None)
            if iterations is not None:
                try:
                    return int(iterations.numpy())
                except (AttributeError, TypeError, ValueError):
                    pass
            return self._batches

        def checkpoint_saved(self, step: Optional[int] = None) -> bool:
            """Reports that a checkpoint of step (default: now) is durable."""
            if not self._on:
                return False
            step = self.step() if step is None else step
            self._last_step, self._last_time = step, time.monotonic()
            return report(step, self._epoch, checkpoint=True)

        def on_epoch_begin(self, epoch, logs=None):
            self._epoch = epoch + 1

        def on_train_batch_end(self, batch, logs=None):
            self._batches += 1
            if not self._on:
                return
            step = self.step()
            now = time.monotonic()
            if step - self._last_step < self.every_n_steps or now - self._last_time < self.min_interval:
                return
            self._last_step, self._last_time = step, now
            report(step, self._epoch, attempts=2)  # the next report supersedes a lost one

        def on_epoch_end(self, epoch, logs=None):
            if self.checkpoint_on_epoch_end:
                self.checkpoint_saved()

        def on_train_end(self, logs=None):
            if self._on and self.step() != self._last_step:
                report(self.step(), self._epoch, attempts=2)

    _callback_class = ReportCallback
    return ReportCallback


def __getattr__(name):
    # Module attribute hook (PEP 562): ReportCallback imports TensorFlow
    # only when it is first asked for.
    if name == "ReportCallback":
        return _make_callback_class()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def _main(argv: List[str]) -> int:
    """Reports from a shell: python3 backfill_report.py STEP [--epoch N] [--checkpoint]."""
    import argparse

    parser = argparse.ArgumentParser(description="Report training progress to the backfill manager.")
    parser.add_argument("step", type=int)
    parser.add_argument("--epoch", type=int)
    parser.add_argument("--checkpoint", action="store_true", help="a checkpoint covering STEP is durable now")
    args = parser.parse_args(argv)
    if not enabled():
        print("backfill_report: %s is not set: nothing reported" % URL_ENV, file=sys.stderr)
        return 0
    try:
        report(args.step, args.epoch, args.checkpoint, raise_errors=True)
    except ReportError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
