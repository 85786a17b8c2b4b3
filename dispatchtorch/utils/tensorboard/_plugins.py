"""Summaries of TensorBoard's plugins, as PyTorch's writer builds them: PR curves (a
6 x thresholds float tensor), the custom-scalars layout and meshes (one tensor per
vertices / faces / colors)."""
from __future__ import annotations

import json

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ..._tensor import Tensor
from ._convert import to_numpy


def _dims(shape):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in shape])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """tp, fp, tn, fn, precision and recall stacked; more than 127 thresholds is 127
    (PyTorch's cap)."""
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
    num_thresholds = min(num_thresholds, 127)
    data = np.stack([to_numpy(x) if isinstance(x, Tensor) else x
                     for x in (tp, fp, tn, fn, precision, recall)])
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="pr_curves",
        content=PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=_dims(data.shape[:2]))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)
    return pr_curve_raw(tag, *compute_curve(labels, predictions, num_thresholds, weights),
                        num_thresholds=num_thresholds)


def compute_curve(labels, predictions, num_thresholds, weights=None):
    """TensorBoard's counts: predictions bucketed into num_thresholds, counted from the
    top threshold down."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    labels = labels.astype(np.float64)
    hist = dict(bins=num_thresholds, range=(0, num_thresholds - 1))
    tp = np.cumsum(np.histogram(buckets, weights=labels * weights, **hist)[0][::-1])[::-1]
    fp = np.cumsum(np.histogram(buckets, weights=(1.0 - labels) * weights,
                                **hist)[0][::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    return tp, fp, tn, fn, tp / np.maximum(1e-7, tp + fp), tp / np.maximum(1e-7, tp + fn)


def custom_scalars(layout):
    """{category: {chart: ["Multiline" | "Margin", tags]}} as the plugin's Layout."""
    from tensorboard.plugins.custom_scalar import layout_pb2 as L
    categories = []
    for category, charts in layout.items():
        made = []
        for title, (kind, tags) in ((t, (m[0], m[1])) for t, m in charts.items()):
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                made.append(L.Chart(title=title, margin=L.MarginChartContent(series=[
                    L.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])])))
            else:
                made.append(L.Chart(title=title, multiline=L.MultilineChartContent(tag=tags)))
        categories.append(L.Category(title=category, chart=made))
    proto = TensorProto(dtype="DT_STRING", tensor_shape=TensorShapeProto(),
                        string_val=[L.Layout(category=categories).SerializeToString()])
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=meta)])


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """One float tensor value per given part, all carrying the parts' bitmask and the
    JSON of config_dict (keys sorted)."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
    config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(t, kind) for t, kind in ((vertices, MeshPluginData.VERTEX),
                                       (faces, MeshPluginData.FACE),
                                       (colors, MeshPluginData.COLOR)) if t is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for t, kind in parts:
        a = np.asarray(to_numpy(t) if not isinstance(t, (list, tuple)) else t)
        meta = metadata.create_summary_metadata(tag, display_name, kind, components,
                                                list(a.shape), description,
                                                json_config=config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=a.reshape(-1).tolist(),
                            tensor_shape=_dims([a.shape[0], a.shape[1], a.shape[2]]))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto,
                                    metadata=meta))
    return Summary(value=values)
