"""What ``SummaryWriter`` logs besides numbers and graphs: images (and matplotlib figures),
hyperparameter sessions, precision-recall curves and embeddings for the projector. Each builds
TensorBoard's own protobufs, laid out as PyTorch's writer lays them out, so runs written by
either show alike. Needs the ``tensorboard`` package (which brings Pillow for PNG encoding)."""
from __future__ import annotations

import io
import math
import os

import numpy as np

_MIN_COUNT = 1e-7   # keeps precision and recall finite where no example reaches a threshold


# -- images -------------------------------------------------------------------------------------
def image_grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile N images (N, C, H, W) into one (C, H * rows, W * cols) canvas, row by row; gray
    images become RGB."""
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, axis=1)
    if nchw.ndim != 4 or nchw.shape[1] not in (3, 4):
        raise ValueError(f"images must have 1, 3 or 4 channels, got shape {nchw.shape}")
    n, c, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols) if n else 0
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=nchw.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = nchw[i]
    return canvas


def to_hwc(a: np.ndarray, dataformats: str) -> np.ndarray:
    """``a`` laid out as ``dataformats`` (letters of N, C, H, W) as one H x W x C image; a batch
    is tiled into a grid and one channel repeated into three."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW") or not set("HW") <= set(fmt):
        raise ValueError(f"dataformats must name H and W once each, and may add N and C, got "
                         f"{dataformats!r}")
    if a.ndim != len(fmt):
        raise ValueError(f"size of input tensor and input format are different. tensor shape: "
                         f"{a.shape}, input_format: {dataformats}")
    if len(fmt) == 4:
        return image_grid(a.transpose([fmt.index(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        if "C" not in fmt:
            raise ValueError(f"a 3-d image must be laid out with C, H and W, got {dataformats!r}")
        hwc = a.transpose([fmt.index(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    return np.stack([a.transpose([fmt.index(c) for c in "HW"])] * 3, axis=2)


def _uint8(hwc: np.ndarray) -> np.ndarray:
    # PyTorch's rule: uint8 images are taken as they are, anything else as values in [0, 1]
    if hwc.dtype == np.uint8:
        return hwc
    return (hwc.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)


def png(hwc: np.ndarray) -> bytes:
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(hwc if hwc.shape[2] != 1 else hwc[:, :, 0]).save(buf, format="PNG")
    return buf.getvalue()


def image_value(summary_pb2, tag: str, a: np.ndarray, dataformats: str):
    hwc = _uint8(to_hwc(a, dataformats))
    h, w, c = hwc.shape
    return summary_pb2.Summary.Value(tag=tag, image=summary_pb2.Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=png(hwc)))


def figure_to_chw(figure, close: bool) -> np.ndarray:
    """A matplotlib figure rendered to an RGB (3, H, W) uint8 array."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError as e:
        raise ImportError("add_figure needs matplotlib: pip install matplotlib") from e
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    w, h = canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)
    if close:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))


# -- hyperparameters ----------------------------------------------------------------------------
def hparams_summaries(summary_pb2, hparam_dict, metric_dict, domain_discrete=None):
    """The experiment, session-start and session-end summaries of one hyperparameter run."""
    from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
    from tensorboard.plugins.hparams import metadata as hp

    domain_discrete = {} if domain_discrete is None else domain_discrete
    if not isinstance(domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing else")
    for k, values in domain_discrete.items():
        if (k not in hparam_dict or not isinstance(values, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in values)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if hasattr(v, "detach") or isinstance(v, np.ndarray):   # a tensor: its first value
            v = float(np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v)
                      .reshape(-1)[0])
        discrete = domain_discrete.get(k)
        if isinstance(v, bool):   # before int: a bool is an int to Python
            start.hparams[k].bool_value = v
            kind, field = api_pb2.DATA_TYPE_BOOL, "bool_value"
        elif isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            kind, field = api_pb2.DATA_TYPE_FLOAT64, "number_value"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, field = api_pb2.DATA_TYPE_STRING, "string_value"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        info = api_pb2.HParamInfo(name=k, type=kind)
        if discrete is not None:
            from google.protobuf import struct_pb2
            info.domain_discrete.CopyFrom(struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in discrete]))
        infos.append(info)

    def summary(tag, **data):
        content = plugin_data_pb2.HParamsPluginData(version=hp.PLUGIN_DATA_VERSION, **data)
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name=hp.PLUGIN_NAME, content=content.SerializeToString()))
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=meta)])

    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=[
        api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS)
    return (summary(hp.EXPERIMENT_TAG, experiment=experiment),
            summary(hp.SESSION_START_INFO_TAG, session_start_info=start),
            summary(hp.SESSION_END_INFO_TAG, session_end_info=end))


# -- precision-recall curves --------------------------------------------------------------------
def pr_curve(labels, predictions, num_thresholds, weights=None) -> np.ndarray:
    """(6, num_thresholds): true/false positives, true/false negatives, precision, recall at
    thresholds i / (num_thresholds - 1), from predictions in [0, 1] and 0/1 labels."""
    labels = np.asarray(labels, dtype=np.float64).reshape(-1)
    predictions = np.asarray(predictions, dtype=np.float64).reshape(-1)
    if labels.shape != predictions.shape:
        raise ValueError(f"labels and predictions must have the same number of elements, got "
                         f"{labels.size} and {predictions.size}")
    w = 1.0 if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    buckets = np.floor(predictions * (num_thresholds - 1)).astype(np.int64)
    span = (0, num_thresholds - 1)
    tp_b, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=labels * w)
    fp_b, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=(1 - labels) * w)
    tp = np.cumsum(tp_b[::-1])[::-1]   # examples scored at or above each threshold
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(_MIN_COUNT, tp + fp)
    recall = tp / np.maximum(_MIN_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve_value(summary_pb2, tensor_pb2, shape_proto, tag, data, num_thresholds):
    from tensorboard.compat.proto import types_pb2
    from tensorboard.plugins.pr_curve import metadata
    meta = metadata.create_summary_metadata(display_name="", description="",
                                            num_thresholds=num_thresholds)
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT,
                                    float_val=data.astype(np.float32).reshape(-1).tolist(),
                                    tensor_shape=shape_proto(list(data.shape)))
    return summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)


# -- embeddings ---------------------------------------------------------------------------------
def _encode(tag: str) -> str:
    # a tag becomes one folder name: %, / and \ escaped as %xx
    for ch in "%/\\":
        tag = tag.replace(ch, f"%{ord(ch):02x}")
    return tag


def write_embedding(log_dir, mat, metadata, label_img, global_step, tag, metadata_header):
    """The projector's files for one embedding under ``log_dir``; returns its config entry."""
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import (
        EmbeddingInfo,
        ProjectorConfig,
    )
    if mat.ndim != 2:
        raise ValueError("mat should be 2D, where mat.size(0) is the number of data points")
    step = str(0 if global_step is None else int(global_step)).zfill(5)
    subdir = f"{step}/{_encode(tag)}"
    path = os.path.join(log_dir, subdir)
    os.makedirs(path, exist_ok=True)
    info = EmbeddingInfo(tensor_name=f"{tag}:{step}", tensor_path=subdir + "/tensors.tsv")
    if metadata is not None:
        if len(metadata) != mat.shape[0]:
            raise ValueError(f"#labels should equal with #data points: got {len(metadata)} "
                             f"labels for {mat.shape[0]} points")
        if metadata_header is None:
            lines = [str(m) for m in metadata]
        else:
            if any(len(row) != len(metadata_header) for row in metadata):
                raise ValueError("#labels should equal with #headers: every metadata row needs "
                                 f"{len(metadata_header)} values")
            lines = ["\t".join(str(e) for e in row) for row in [metadata_header, *metadata]]
        with open(os.path.join(path, "metadata.tsv"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        info.metadata_path = subdir + "/metadata.tsv"
    if label_img is not None:
        if label_img.ndim != 4 or label_img.shape[0] != mat.shape[0]:
            raise ValueError(f"label_img must be (N, C, H, W) with N = {mat.shape[0]} data "
                             f"points, got shape {label_img.shape}")
        grid = image_grid(label_img, ncols=math.ceil(label_img.shape[0] ** 0.5)).transpose(1, 2, 0)
        square = np.zeros((grid.shape[1], grid.shape[1], grid.shape[2]), dtype=np.float64)
        square[:grid.shape[0]] = grid        # the projector expects a square sprite sheet
        png_bytes = png((square * 255).clip(0, 255).astype(np.uint8)[:, :, :3])
        with open(os.path.join(path, "sprite.png"), "wb") as f:
            f.write(png_bytes)
        info.sprite.image_path = subdir + "/sprite.png"
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    with open(os.path.join(path, "tensors.tsv"), "w", encoding="utf-8") as f:
        f.writelines("\t".join(str(v) for v in row.tolist()) + "\n" for row in mat)
    config = ProjectorConfig(embeddings=[info])
    # one file for the whole run; each embedding appends its entry
    with open(os.path.join(log_dir, "projector_config.pbtxt"), "a", encoding="utf-8") as f:
        f.write(text_format.MessageToString(config))
    return info
