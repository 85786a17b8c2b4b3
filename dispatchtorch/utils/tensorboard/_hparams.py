"""The hparams plugin's three summaries, as PyTorch's: the experiment (hyperparameter
and metric names, discrete domains), the session start (the values), the session end
(success)."""
from __future__ import annotations

import logging

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata

from ..._tensor import Tensor
from ._convert import to_numpy

logger = logging.getLogger(__name__)

# value type: (HParamInfo type, the struct_pb2.Value field); checked in this order, so a
# bool is a number (a bool is an int), as in PyTorch
_KINDS = ((int, float), "DATA_TYPE_FLOAT64", "number_value"), \
         (str, "DATA_TYPE_STRING", "string_value"), (bool, "DATA_TYPE_BOOL", "bool_value")


def _summary(tag, **content):
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME,
                                                                  content=data))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """(experiment, session start, session end) summaries; None values are skipped."""
    from tensorboard.plugins.hparams import metadata as M
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo
    for name, d in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(d, dict):
            logger.warning(f"parameter: {name} should be a dictionary, nothing logged.")
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, "
                        "nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of "
                            f"same type as hparam_dict[{k}].")
    infos, start = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            setattr(start.hparams[k], "number_value", to_numpy(v)[0])
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        kind = next((kind for kind in _KINDS if isinstance(v, kind[0])), None)
        if kind is None:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        _, type_name, field = kind
        setattr(start.hparams[k], field, v)
        domain = None if k not in domains else struct_pb2.ListValue(
            values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(type_name), domain_discrete=domain))
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (_summary(M.EXPERIMENT_TAG, experiment=experiment),
            _summary(M.SESSION_START_INFO_TAG, session_start_info=start),
            _summary(M.SESSION_END_INFO_TAG,
                     session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))
