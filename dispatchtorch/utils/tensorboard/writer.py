"""SummaryWriter and FileWriter with PyTorch's behaviour: the default runs/DATE_HOST
log_dir, purge_step, add_scalars' one sub-directory per scalar, close and reopen."""
from __future__ import annotations

import os
import time

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as S


class FileWriter:
    """One event file in log_dir, written by tensorboard's asynchronous writer."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


class SummaryWriter:
    """Scalars, histograms, text and images to TensorBoard event files. The other
    add_* methods of PyTorch's writer are absent (docs/dropin.md)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_"
                                   + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step, self.max_queue = purge_step, max_queue
        self.flush_secs, self.filename_suffix = flush_secs, filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = S.default_bins()

    def _get_file_writer(self):
        """The main writer, made again after close() (as PyTorch's)."""
        if self.all_writers is None or self.file_writer is None:
            fw = self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                               self.filename_suffix)
            self.all_writers = {fw.get_logdir(): fw}
            if self.purge_step is not None:       # TensorBoard hides steps >= purge_step
                fw.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                fw.add_event(Event(step=self.purge_step,
                                   session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._get_file_writer().add_summary(
            S.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each scalar in its own run, log_dir/<main_tag>_<tag>, under main_tag."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = root + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(path)
            if fw is None:
                fw = self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs,
                                                         self.filename_suffix)
            fw.add_summary(S.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(S.histogram(tag, values, bins, max_bins),
                                            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(S.text(tag, text_string), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Needs pillow (as PyTorch's)."""
        self._get_file_writer().add_summary(S.image(tag, img_tensor, dataformats),
                                            global_step, walltime)

    def flush(self):
        for fw in (self.all_writers or {}).values():
            fw.flush()

    def close(self):
        if self.all_writers is None:
            return
        for fw in self.all_writers.values():
            fw.flush()
            fw.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
