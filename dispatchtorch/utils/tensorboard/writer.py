"""SummaryWriter and FileWriter with PyTorch's behaviour: the default runs/DATE_HOST
log_dir, purge_step, add_scalars' one sub-directory per scalar, add_hparams' sub-run,
close and reopen."""
from __future__ import annotations

import os
import time

from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import _plugins as P
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

    def add_onnx_graph(self, graph, walltime=None):
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """A (GraphDef, RunMetadata) pair: the graph, then the metadata tagged step1."""
        graph, stats = graph_profile
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        self.add_event(Event(tagged_run_metadata=TaggedRunMetadata(
            tag="step1", run_metadata=stats.SerializeToString())), None, walltime)


class SummaryWriter:
    """PyTorch's SummaryWriter on tensorboard's event files (docs/dropin.md)."""

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

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """The three hparams summaries and each metric as a scalar, in a run of their own:
        log_dir/<run_name or time.time()>, so runs compare side by side."""
        from ._hparams import hparams
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for summary in summaries:
                w.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(S.scalar(tag, scalar_value, new_style, double_precision), global_step,
                  walltime)

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
        self._add(S.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(S.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                  bucket_counts), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._add(S.tensor_proto(tag, tensor), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(S.text(tag, text_string), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Needs pillow (as PyTorch's)."""
        self._add(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch as one image: a grid of 8 columns."""
        self._add(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """Boxes as [x1, y1, x2, y2] rows; labels of another count than the boxes are
        dropped (as PyTorch's)."""
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            labels = labels if len(labels) == box_tensor.shape[0] else None
        self._add(S.image(tag, img_tensor, rescale, dataformats, box_tensor, labels),
                  global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Needs matplotlib: a figure drawn by Agg (a list of them as a grid)."""
        from ._images import figure_to_image
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats="NCHW" if isinstance(figure, list) else "CHW")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """NTCHW as a GIF; needs moviepy with moviepy.editor (moviepy < 2), as PyTorch's."""
        self._add(S.video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._add(S.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_onnx_graph(self, prototxt):
        """The graph of an ONNX file (needs onnx)."""
        from ._onnx_graph import load_onnx_graph
        self._get_file_writer().add_onnx_graph(load_onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's forward as captured by dispatchtorch's tracer, in eval mode
        (_graph.py); use_strict_trace is TorchScript's and changes nothing here."""
        from ._graph import graph
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose))

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Files for the projector: _embedding.py."""
        from ._embedding import add_embedding
        add_embedding(self, mat, metadata, label_img, global_step, tag, metadata_header)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        self._add(P.pr_curve(tag, S.to_numpy(labels), S.to_numpy(predictions),
                             num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        self._add(P.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                 true_negative_counts, false_negative_counts, precision,
                                 recall, num_thresholds, weights), global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self._add(P.custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._add(P.custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout):
        """{category: {chart: ["Multiline" | "Margin", tags]}}: charts of add_scalar tags."""
        self._add(P.custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        self._add(P.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

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
