"""SummaryWriter's images, figures, hyperparameter runs, PR curves and embeddings: written,
read back with TensorBoard's own reader, and (where PyTorch is installed) compared with what
PyTorch's writer puts in the same files."""
from __future__ import annotations

import glob
import importlib.util
import io
import os
import re

import numpy as np
import pytest

import gpugrad

pytestmark = pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None,
                                reason="tensorboard not installed (pip install tensorboard)")


def accumulator(path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(path), size_guidance={"images": 0, "scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def pixels(image_event) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(image_event.encoded_image_string)).convert("RGB"))


def writer(path):
    from gpugrad.utils.tensorboard import SummaryWriter
    return SummaryWriter(str(path))


def hparams_events(run_dir):
    """(step, tag, HParamsPluginData) of every hparams summary in ``run_dir``."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.plugins.hparams import plugin_data_pb2
    (path,) = glob.glob(os.path.join(str(run_dir), "events*"))
    return [(e.step, v.tag, plugin_data_pb2.HParamsPluginData.FromString(
                v.metadata.plugin_data.content))
            for e in EventFileLoader(path).Load() if e.HasField("summary")
            for v in e.summary.value if v.metadata.plugin_data.plugin_name == "hparams"]


# -- images -------------------------------------------------------------------------------------
def test_image_pixels_and_layouts(tmp_path):
    chw = np.array([[[0.0, 0.5], [1.0, 2.0]],          # R (2.0 clips to 255)
                    [[0.25, 0.0], [0.0, -1.0]],        # G (-1 clips to 0)
                    [[1.0, 1.0], [0.0, 0.1]]], np.float32)
    with writer(tmp_path) as w:
        w.add_image("chw", gpugrad.tensor(chw), 1)
        w.add_image("hwc", gpugrad.tensor(chw.transpose(1, 2, 0)), 2, dataformats="HWC")
        w.add_image("hw", np.array([[0, 255], [128, 7]], np.uint8), 3, dataformats="HW")
    acc = accumulator(tmp_path)
    (chw_event,), (hwc_event,), (hw_event,) = (acc.Images(t) for t in ("chw", "hwc", "hw"))
    expected = np.array([[[0, 63, 255], [127, 0, 255]],
                         [[255, 0, 0], [255, 0, 25]]], np.uint8)   # float * 255, truncated
    np.testing.assert_array_equal(pixels(chw_event), expected)
    np.testing.assert_array_equal(pixels(hwc_event), expected)
    assert (chw_event.step, chw_event.width, chw_event.height) == (1, 2, 2)
    # uint8 images are taken as they are; one channel is shown as gray
    np.testing.assert_array_equal(pixels(hw_event)[:, :, 0], [[0, 255], [128, 7]])
    np.testing.assert_array_equal(pixels(hw_event)[:, :, 2], [[0, 255], [128, 7]])


def test_images_are_tiled_eight_to_a_row(tmp_path):
    batch = np.zeros((10, 1, 2, 3), np.float32)
    for i in range(10):
        batch[i] = i / 10
    with writer(tmp_path) as w:
        w.add_images("batch", batch, 0)
        w.add_images("nhwc", batch.transpose(0, 2, 3, 1), 0, dataformats="NHWC")
    acc = accumulator(tmp_path)
    grid = pixels(acc.Images("batch")[0])
    assert grid.shape == (4, 24, 3)                  # 2 rows x 8 columns of 2 x 3 images
    assert grid[0, 0, 0] == 0 and grid[0, 3, 0] == 25 and grid[2, 0, 0] == 204   # 8th: 0.8
    assert grid[2, 6, 0] == 0                        # past the 10th image: the empty canvas
    np.testing.assert_array_equal(pixels(acc.Images("nhwc")[0]), grid)


def test_image_format_errors(tmp_path):
    with writer(tmp_path) as w:
        with pytest.raises(ValueError, match=re.escape(
                "size of input tensor and input format are different. tensor shape: (2, 3), "
                "input_format: CHW")):
            w.add_image("x", np.zeros((2, 3)))
        with pytest.raises(ValueError, match="dataformats must name H and W once each"):
            w.add_image("x", np.zeros((2, 3)), dataformats="HH")
        with pytest.raises(ValueError, match="images must have 1, 3 or 4 channels"):
            w.add_images("x", np.zeros((2, 2, 3, 3)))


def test_figure_is_logged_as_its_rendered_image(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=50)
    fig.patch.set_facecolor((1.0, 0.0, 0.0))
    with writer(tmp_path) as w:
        w.add_figure("fig", fig, 4)
        assert not plt.fignum_exists(fig.number)     # close=True closes it
        figs = [plt.figure(figsize=(1, 1), dpi=20) for _ in range(2)]
        w.add_figure("figs", figs, 5, close=False)
        assert all(plt.fignum_exists(f.number) for f in figs)
        plt.close("all")
    acc = accumulator(tmp_path)
    image = pixels(acc.Images("fig")[0])
    assert image.shape == (50, 100, 3)
    np.testing.assert_array_equal(image[0, 0], [255, 0, 0])
    assert pixels(acc.Images("figs")[0]).shape == (20, 40, 3)


# -- hyperparameters ----------------------------------------------------------------------------
def test_hparams_run_has_the_plugin_summaries_and_metrics(tmp_path):
    from tensorboard.plugins.hparams import api_pb2
    with writer(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "bs": 32, "opt": "sgd", "nesterov": True,
                       "decay": gpugrad.tensor([0.5]), "skipped": None},
                      {"acc": 0.9, "loss": gpugrad.tensor(0.25)}, run_name="r1",
                      global_step=7)
    (exp_step, exp_tag, exp), (_, start_tag, start), (_, end_tag, end) = \
        hparams_events(tmp_path / "r1")
    assert (exp_tag, start_tag, end_tag) == ("_hparams_/experiment", "_hparams_/session_start_info",
                                             "_hparams_/session_end_info")
    assert exp_step == 7
    infos = {i.name: i.type for i in exp.experiment.hparam_infos}
    assert infos == {"lr": api_pb2.DATA_TYPE_FLOAT64, "bs": api_pb2.DATA_TYPE_FLOAT64,
                     "opt": api_pb2.DATA_TYPE_STRING, "nesterov": api_pb2.DATA_TYPE_BOOL,
                     "decay": api_pb2.DATA_TYPE_FLOAT64}
    assert [m.name.tag for m in exp.experiment.metric_infos] == ["acc", "loss"]
    values = start.session_start_info.hparams
    assert values["lr"].number_value == 0.1 and values["bs"].number_value == 32
    assert values["opt"].string_value == "sgd" and values["nesterov"].bool_value is True
    assert values["decay"].number_value == 0.5 and "skipped" not in values
    assert end.session_end_info.status == api_pb2.STATUS_SUCCESS
    acc = accumulator(tmp_path / "r1")
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(7, 0.25)]


def test_hparams_discrete_domains_and_errors(tmp_path):
    with writer(tmp_path) as w:
        w.add_hparams({"opt": "sgd", "lr": 0.1}, {"acc": 1.0}, run_name="r",
                      hparam_domain_discrete={"opt": ["sgd", "adam"], "lr": [0.1, 0.01]})
        with pytest.raises(TypeError, match=re.escape(
                "hparam_dict and metric_dict should be dictionary.")):
            w.add_hparams({"lr": 0.1}, [("acc", 1.0)])
        with pytest.raises(TypeError, match=re.escape(
                "parameter: hparam_domain_discrete[lr] should be a list of same type as "
                "hparam_dict[lr].")):
            w.add_hparams({"lr": 0.1}, {"acc": 1.0}, hparam_domain_discrete={"lr": ["a"]})
        with pytest.raises(ValueError, match="value should be one of int, float, str, bool"):
            w.add_hparams({"lr": [0.1]}, {"acc": 1.0})
    exp = hparams_events(tmp_path / "r")[0][2].experiment
    domains = {i.name: [getattr(v, v.WhichOneof("kind")) for v in i.domain_discrete.values]
               for i in exp.hparam_infos}
    assert domains == {"opt": ["sgd", "adam"], "lr": [0.1, 0.01]}


# -- precision-recall curves --------------------------------------------------------------------
def test_pr_curve_counts_at_each_threshold(tmp_path):
    from tensorboard.util import tensor_util
    labels = np.array([1, 0, 1, 1, 0])
    predictions = np.array([0.9, 0.8, 0.4, 0.1, 0.0])
    with writer(tmp_path) as w:
        w.add_pr_curve("pr", gpugrad.tensor(labels), gpugrad.tensor(predictions), 2,
                       num_thresholds=3)
    (event,) = accumulator(tmp_path).Tensors("pr")
    data = tensor_util.make_ndarray(event.tensor_proto)
    # thresholds 0, 0.5, 1: scores at or above each count as positive
    np.testing.assert_allclose(data, [[3, 1, 0],                 # true positives
                                      [2, 1, 0],                 # false positives
                                      [0, 1, 2],                 # true negatives
                                      [0, 2, 3],                 # false negatives
                                      [0.6, 0.5, 0],             # precision
                                      [1, 1 / 3, 0]], rtol=1e-6)  # recall
    assert event.step == 2


def test_pr_curve_weights_and_threshold_cap(tmp_path):
    from tensorboard.util import tensor_util
    with writer(tmp_path) as w:
        w.add_pr_curve("w", [1, 0], [1.0, 1.0], num_thresholds=2, weights=gpugrad.tensor([2, 3]))
        w.add_pr_curve("capped", [1, 0], [0.5, 0.5], num_thresholds=500)
        with pytest.raises(ValueError, match="labels and predictions must have the same number"):
            w.add_pr_curve("bad", [1, 0, 1], [0.5, 0.5])
    acc = accumulator(tmp_path)
    data = tensor_util.make_ndarray(acc.Tensors("w")[0].tensor_proto)
    np.testing.assert_allclose(data[:2], [[2, 2], [3, 3]])
    assert tensor_util.make_ndarray(acc.Tensors("capped")[0].tensor_proto).shape == (6, 127)


# -- embeddings ---------------------------------------------------------------------------------
def test_embedding_files_for_the_projector(tmp_path):
    mat = np.array([[1.5, 2.0], [3.0, -1.0], [0.0, 0.25]], np.float32)
    thumbs = np.ones((3, 3, 2, 2), np.float32)
    with writer(tmp_path) as w:
        w.add_embedding(gpugrad.tensor(mat), metadata=["a", "b", 3], label_img=thumbs,
                        global_step=4, tag="emb/x")
        w.add_embedding(mat[:2], metadata=[["a", 1], ["b", 2]], metadata_header=["name", "n"])
        with pytest.raises(ValueError, match=re.escape("#labels should equal with #data points")):
            w.add_embedding(mat, metadata=["a"])
        with pytest.raises(ValueError, match="mat should be 2D"):
            w.add_embedding(mat[0])
    sub = tmp_path / "00004" / "emb%2fx"
    assert (sub / "tensors.tsv").read_text() == "1.5\t2.0\n3.0\t-1.0\n0.0\t0.25\n"
    assert (sub / "metadata.tsv").read_text() == "a\nb\n3\n"
    assert (tmp_path / "00000" / "default" / "metadata.tsv").read_text() == \
        "name\tn\na\t1\nb\t2\n"
    from PIL import Image
    sprite = np.asarray(Image.open(sub / "sprite.png"))
    assert sprite.shape == (4, 4, 3)                 # 2 x 2 grid of 2 x 2 thumbnails
    assert sprite[:2].min() == 255 and sprite[2:, :2].min() == 255 and sprite[2:, 2:].max() == 0
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "emb/x:00004"' in config and 'tensor_name: "default:00000"' in config
    assert 'image_path: "00004/emb%2fx/sprite.png"' in config
    assert "single_image_dim: 2" in config


# -- against PyTorch's writer --------------------------------------------------------------------
def test_files_match_pytorch_writer(tmp_path):
    torch = pytest.importorskip("torch")
    tb = pytest.importorskip("torch.utils.tensorboard")
    from tensorboard.util import tensor_util
    rng = np.random.default_rng(0)
    img, batch = rng.random((3, 5, 7)), rng.random((10, 3, 4, 4))
    labels, scores = rng.integers(0, 2, 50), rng.random(50)
    mat, names = rng.random((4, 3)).astype(np.float32), ["a", "b", "c", "d"]
    thumbs = rng.random((4, 3, 2, 2)).astype(np.float32)
    for name, cls, lib in (("torch", tb.SummaryWriter, torch), ("gpugrad", None, gpugrad)):
        w = cls(str(tmp_path / name)) if cls else writer(tmp_path / name)
        w.add_image("img", img, 1)
        w.add_images("batch", batch, 2)
        w.add_pr_curve("pr", labels, scores, 3)
        w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"acc": 0.5}, run_name="hp")
        w.add_embedding(lib.from_numpy(mat), metadata=names, label_img=lib.from_numpy(thumbs),
                        global_step=1)
        w.close()
    ours, theirs = accumulator(tmp_path / "gpugrad"), accumulator(tmp_path / "torch")
    for tag in ("img", "batch"):
        np.testing.assert_array_equal(pixels(ours.Images(tag)[0]), pixels(theirs.Images(tag)[0]))
    assert ours.SummaryMetadata("pr") == theirs.SummaryMetadata("pr")
    np.testing.assert_allclose(tensor_util.make_ndarray(ours.Tensors("pr")[0].tensor_proto),
                               tensor_util.make_ndarray(theirs.Tensors("pr")[0].tensor_proto))
    assert ([(s, t, str(d)) for s, t, d in hparams_events(tmp_path / "gpugrad" / "hp")]
            == [(s, t, str(d)) for s, t, d in hparams_events(tmp_path / "torch" / "hp")])
    for f in ("projector_config.pbtxt", "00001/default/tensors.tsv",
              "00001/default/metadata.tsv", "00001/default/sprite.png"):
        assert (tmp_path / "gpugrad" / f).read_bytes() == (tmp_path / "torch" / f).read_bytes(), f
